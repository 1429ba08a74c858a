"""What an agent reads to learn how to work here: the guide and the URL map.

One source for every door that teaches an agent: the MCP resource ``harmonic://context``, the
web's ``/llms.txt`` and ``/llms-full.txt``, so they never disagree. The URL map is read from
the two registries (``app.core.sitemap`` for pages, ``app.actions.registry`` for the actions a
page can offer), never written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.actions.registry import ACTIONS, actions_at
from app.core import sitemap

GUIDE = """\
# Working in Harmonic

Harmonic serves the same URLs to people (HTML) and to you (Markdown with a YAML frontmatter
listing the actions available on that page). Use `navigate(path)` to open a page (a full URL
of this app works too) and `execute_action(action, params)` to act on it. A URL you share opens
the same page for a person. A file such as a floorplan's `.png` comes back as an image.

## Actions

Each page lists the actions you can take there right now, with typed parameters; only those
can run there (state and your membership decide). `<page>/actions` lists them and
`<page>/actions/<name>` describes one. An action that creates something answers with its
location. Errors name the parameter that was wrong. Ids in URLs are 8 hex characters (full
UUIDs work too).
"""

SUMMARY = ("Harmonic is a place where a team, people and AI agents side by side, writes notes, "
           "makes decisions by acceptance voting, gathers commitments that go ahead once they "
           "reach critical mass, and works in cycles. Every page has one URL for people (HTML) "
           "and agents (Markdown with the page's actions).")

HTTP_DOOR = """\
## Reading and acting over HTTP

- Ask for any page with `Accept: text/markdown` (or add `.md` to its path) and
  `Authorization: Bearer <token>`. A person creates a token on their settings page
  (`/u/<handle>/settings/tokens`); the token's scopes (read, write) bound what it may do.
- The answer is Markdown whose YAML frontmatter lists the actions offered on that page, each
  with its parameters as JSON Schema (`input_schema`).
- `POST <page>/actions/<name>` with a JSON body of the parameters runs one; it answers with the
  result and, for something created, its location.
- `Accept: application/json` gives the same page as JSON.
- Markdown answers carry `x-markdown-tokens`, an estimate of their size in tokens.

## Over MCP

- Streamable HTTP at `/mcp` (a Bearer token, or sign in through OAuth where the server offers
  it), or `bin/mcp-server` on stdio with `HARMONIC_API_TOKEN` set.
- Tools `navigate` and `execute_action` reach these same pages; read the resource
  `harmonic://context` first.
"""


def url_map() -> str:
    """Every page of the app and the actions it can offer, read from the two registries."""
    lines = ["## URL map", "", "| Path | Page | Actions it can offer |", "| --- | --- | --- |"]
    return "\n".join(lines + [line for line, _name in _map_rows()])


def actions_reference() -> str:
    """Every action once: where it is offered, its signature, effect and description."""
    lines = ["## Actions", ""]
    for act in sorted(ACTIONS.values(), key=lambda a: a.name):
        pages = ", ".join(f"`{p.replace('_', ' ')}`" for p in act.pages)
        effect = act.effect.kind + (", idempotent" if act.effect.idempotent else "")
        lines += [f"### `{act.signature()}`", "", act.description, "",
                  f"Effect: {effect}. Offered on: {pages}.", ""]
        for param in act.params:
            schema = param.json_schema()
            kind = schema.get("type", "value")
            need = "required" if param.required else "optional"
            about = schema.get("description") or ""
            lines.append(f"- `{param.name}` ({kind}, {need}){': ' + about if about else ''}")
        if act.params:
            lines.append("")
    return "\n".join(lines)


# Skills (the MCP skills extension): what an agent learns for one kind of work. Each SKILL.md is
# written from a skill's steps below plus the URL map rows, actions and tool descriptions of the
# pages and tools it names, so a skill and harmonic://context are one source.

@dataclass(frozen=True)
class Skill:
    name: str  # lowercase letters, digits and single hyphens: the skill's URI ends in it
    title: str
    description: str
    steps: str
    pages: tuple[str, ...]  # page names (app.core.sitemap)
    tools: tuple[str, ...]  # MCP tool names


SKILLS = (
    Skill("studio-collaboration", "Collaborate in a studio",
          "Work with a team in a Harmonic studio: see what is open, write notes, decide by "
          "acceptance voting, and commit once enough people join.",
          """\
1. `navigate("/studios")` lists your studios; `navigate("/studios/<handle>")` is the overview:
   pinned items, this cycle's decisions and commitments (each marked open or closed), recent
   activity and notes. That one call is usually enough to know what is going on.
2. Write a note with `create_note` on `/studios/<handle>/note`; comment on any item with
   `add_comment` on its page; confirm you read a note with `confirm_read`.
3. Decide: `create_decision` on `/studios/<handle>/decide` takes the question and its
   `options` at once. Vote on the decision's page with one `vote` call carrying `votes`: a list
   of `{option_title, accept, prefer}`. Accept every option you could live with and prefer the
   ones you want; the most accepted wins. A closed decision refuses votes and says since when.
4. Commit: `create_commitment` on `/studios/<handle>/commit` with `critical_mass` (and
   `join: true` to count yourself); others `join_commitment` on its page. It goes ahead once
   the critical mass joins.
5. Cycles (`/studios/<handle>/cycles`) show what falls in a day, a week or a month.
""",
          ("studios", "studio", "studio_team", "studio_join", "note_new", "note", "note_edit",
           "decision_new", "decision", "commitment_new", "commitment", "cycles", "cycle",
           "backlinks"),
          ("navigate", "execute_action")),
    Skill("floorplan-drawing", "Draw and change a floorplan",
          "Create a studio's floorplan, add and move rooms with typed actions or the floorplan "
          "tools, and see the stored plan drawn as an image.",
          """\
1. `create_floorplan` on `/studios/<handle>/floorplans` (a name, and DSL text if you have it);
   its result names the plan as `studio/name`.
2. On the plan's page, `add_room` takes `name`, `size: {width, height}` and
   `position: {x, y}` (or a `relativePosition` to an anchor room); `add_connection`, `move_room`
   and the others are listed there with their schemas. Every change stores a new version.
3. `render_floorplan` with `plan: "studio/name"` (and an optional `version`) draws the stored
   plan as PNG image content; with `dsl` it draws text you have not stored.
4. `validate_floorplan` checks DSL text and reports every problem with its line and column;
   `modify_floorplan` applies typed operations to DSL text without storing it.
""",
          ("floorplans", "floorplan", "floorplan_versions"),
          ("render_floorplan", "validate_floorplan", "modify_floorplan", "execute_action")),
    Skill("recipe-teaching", "Teach and replay a recipe",
          "Record your calls to the design-model server as a playbook, turn them into a recipe "
          "with variables, and replay it safely with a dry run first.",
          """\
1. `teach_start` with a name: your following calls are captured, for this MCP session (or your
   token, when stateless). `upstream_call` reaches the design-model server; its `method` is an
   enum of the catalog, and `rpc.discover` describes every method's parameters.
2. `teach_stop` writes the capture and makes a draft recipe from it.
3. `replay` with the playbook's `session_id` (or a `recipe_path`) and `args` runs it: a dry run
   by default, stating in words each write it would make. Replay for real with
   `dry_run: false`; writes ask for confirmation.
4. The playbook's page shows the capture, the recipe's steps and variables, and its runs.
""",
          ("playbooks", "playbook", "playbook_run"),
          ("teach_start", "teach_stop", "replay", "upstream_call")),
    Skill("workflow-running", "Run a workflow",
          "Start one of the app's workflows with its inputs and follow its run's events until "
          "it finishes.",
          """\
1. `navigate("/workflows")` lists the workflows; a workflow's page lists its inputs and offers
   `run_workflow`, which runs it with them (the `run_workflow(workflow, inputs)` tool does too).
2. Running answers with the run's page (`/runs/<id>`): its state, steps and events. Subscribe to
   the run's events resource (or read the page again) to follow it; every event has a number,
   so nothing is missed.
3. A client that declares the tasks extension gets a task from the `run_workflow` tool: the run
   itself. `tasks/get` shows its steps done out of all, then its result; `tasks/cancel` cancels
   it, and its remaining steps do not run.
""",
          ("workflows", "workflow", "run"),
          ("navigate", "execute_action", "run_workflow")),
)


def url_rows(pages: tuple[str, ...]) -> str:
    """The URL map restricted to ``pages``."""
    wanted = set(pages)
    rows = [line for line, name in _map_rows() if name in wanted]
    return "\n".join(["| Path | Page | Actions it can offer |", "| --- | --- | --- |", *rows])


def _map_rows() -> list[tuple[str, str]]:
    rows = []
    for name, page_rule in sitemap.pages():
        rule = page_rule.replace("<", "{").replace(">", "}")
        actions = ", ".join(f"`{a.name}`" for a in actions_at(name)) or "-"
        rows.append((f"| `{rule}` | {name.replace('_', ' ')} | {actions} |", name))
    return rows
