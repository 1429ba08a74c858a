"""What an agent reads to learn how to work here: the guide and the URL map.

One source for every door that teaches an agent: the MCP resource ``harmonic://context``, the
web's ``/llms.txt`` and ``/llms-full.txt``, so they never disagree. The URL map is read from
the two registries (``app.core.sitemap`` for pages, ``app.actions.registry`` for the actions a
page can offer), never written by hand.
"""

from __future__ import annotations

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
    from app.actions.registry import actions_at
    from app.core import sitemap

    lines = ["## URL map", "", "| Path | Page | Actions it can offer |", "| --- | --- | --- |"]
    for name, page_rule in sitemap.pages():
        rule = page_rule.replace("<", "{").replace(">", "}")
        actions = ", ".join(f"`{a.name}`" for a in actions_at(name)) or "-"
        lines.append(f"| `{rule}` | {name.replace('_', ' ')} | {actions} |")
    return "\n".join(lines)


def actions_reference() -> str:
    """Every action once: where it is offered, its signature, effect and description."""
    from app.actions.registry import ACTIONS

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
