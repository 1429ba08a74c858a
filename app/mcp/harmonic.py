"""Harmonic's own MCP surface: navigate, execute_action, harmonic://context, pages as
resources, and a stand-up prompt.

Nothing here re-implements a page or an action: every call is an in-process request through
the app (``app.core.dispatch``) as the caller, so authorization, validation and rendering are
exactly those of a browser or an HTTP agent at the same URL.

Navigation state: a 2025-era session remembers the page ``navigate`` opened (its
``current_path``), so ``execute_action`` may leave out ``path``. A 2026-era request has no
session: ``navigate`` answers with the path and every action there with its parameters, which
is all the next call needs, and ``execute_action`` must name the ``path``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import yaml
from flask import current_app

from app.actions.effects import DESTRUCTIVE, READ, Effect
from app.actions.registry import ACTIONS
from app.actions.summary import action_summary
from app.core import agent_guide, changes, config, declared
from app.core.dispatch import dispatch
from app.extensions import db
from app.mcp import audit, content
from app.mcp.content import ToolError, ToolResult
from app.mcp.context import ToolContext
from app.mcp.registry import PromptArgument, prompt, resource, resource_template, tool
from app.mcp.skills import uri_of
from app.models import User
from app.services import studios
from app.services.errors import Forbidden, NotFound

MAX_REDIRECTS = 5
# libyaml's parser (C) when PyYAML has it; the same safe subset either way.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ACTIONS_SUFFIX = re.compile(r"/actions(?:/[^/?#]*)?/?$")
TEXT_MIMES = frozenset({"application/json", "application/yaml", "application/x-ndjson"})

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"}, "description": {"type": "string"},
        "params": {"type": "array", "items": {"type": "object"}},
        "effect": {"enum": ["read", "write", "destructive"],
                   "description": "What running it does (app.actions.effects)"},
        "idempotent": {"type": "boolean",
                       "description": "A repeat with the same parameters has no second effect"},
        "annotations": {"type": "object", "description": "MCP-style hints for this action"},
        "inputSchema": {"type": "object",
                        "description": "The parameters as JSON Schema (2020-12)"},
    },
    "required": ["name"],
}


class Page:
    """A dispatched response: status, path, body and, for a Markdown page, the frontmatter's
    actions. Not every URL is a page: ``<plan>.png`` answers an image (``mime``, ``body``)."""

    def __init__(self, path: str, status: int, text: str,
                 meta: dict[str, Any] | None = None, mime: str = "text/markdown",
                 body: bytes = b"") -> None:
        self.path, self.status, self.text = path, status, text
        self.mime, self.body = mime or "text/markdown", body
        # The dispatch hands over the data the frontmatter was rendered from; parse only text
        # that came without it.
        self.meta = meta if meta is not None else (_frontmatter(text) if self.is_page else {})
        actions = self.meta.get("actions")
        self.actions: list[dict[str, Any]] = [a for a in actions or [] if isinstance(a, dict)]

    @property
    def is_page(self) -> bool:
        """A Markdown page (with actions), as opposed to a file such as an image."""
        return self.mime == "text/markdown"

    @property
    def is_text(self) -> bool:
        """Text that reads as such (Markdown, JSON, SVG); False for bytes such as a PNG."""
        mime = self.mime
        return (mime.startswith("text/") or mime in TEXT_MIMES
                or mime.endswith(("+xml", "+json")))

    @property
    def title(self) -> str:
        return str(self.meta.get("title") or "")

    def action_names(self) -> list[str]:
        return [str(a.get("name")) for a in self.actions]


def _frontmatter(text: str) -> dict[str, Any]:
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}
    try:
        data = yaml.load(text[4:end], Loader=_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def own_origins(origin: str = "") -> list[str]:
    """The origins whose absolute URLs are this app's: HARMONIC_BASE_URL's, and over HTTP the
    one the client reached /mcp at (``ToolContext.origin``)."""
    found = []
    for url in (current_app.config.get("HARMONIC_BASE_URL") or "", origin):
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            found.append(f"{parts.scheme}://{parts.netloc.lower()}")
    return list(dict.fromkeys(found))


def normalize_path(value: str, origin: str = "") -> str:
    """A path of this app from a path or an absolute URL of this app (see ``own_origins``);
    ToolError otherwise. Nothing is ever fetched from another site."""
    value = (value or "").strip()
    if not value:
        raise ToolError("path is empty; try /studios")
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        origins = own_origins(origin)
        netlocs = {urlsplit(o).netloc for o in origins}
        if parts.scheme not in ("http", "https") or parts.netloc.lower() not in netlocs:
            ours = " or ".join(origins) or "this app's address"
            raise ToolError(f"{value} is not a URL of this app, and Harmonic fetches no other "
                            f"site. Give a path such as /studios, or a URL starting with {ours}")
    path = parts.path or "/"
    if "\\" in path or "\x00" in path:
        raise ToolError("the path contains characters that cannot be in a URL path")
    path = posixpath.normpath("/" + path.lstrip("/"))
    if path == "/mcp" or path.startswith("/mcp/"):
        raise ToolError("/mcp is the MCP endpoint itself, not a page")
    return path + (f"?{parts.query}" if parts.query else "")


def fetch(ctx: ToolContext, path: str) -> Page:
    """GET ``path`` as Markdown as the caller, following redirects inside the app."""
    for _ in range(MAX_REDIRECTS):
        result = dispatch("GET", path, ctx.identity, accept="text/markdown")
        location = result.headers.get("Location")
        if result.status in (301, 302, 303, 307, 308) and location:
            path = normalize_path(location)
            continue
        mime = result.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        return Page(path, result.status, result.text, result.frontmatter, mime, result.body)
    raise ToolError(f"too many redirects from {path}")


def action_effect(name: Any) -> Effect | None:
    """The declared effect of the action ``name`` (None when no action has that name)."""
    act = ACTIONS.get(name) if isinstance(name, str) else None
    return act.effect if act is not None else None


def _with_annotations(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each listed action (the frontmatter shows its effect) with the MCP hints it derives and
    its parameters' JSON Schema as ``inputSchema``, the name MCP gives a tool's."""
    out = []
    for act in actions:
        entry = dict(act)
        schema = entry.pop("input_schema", None)
        if isinstance(schema, dict):
            entry["inputSchema"] = schema
        hints = _hints(act.get("name"))
        if hints is not None:
            entry["annotations"] = hints
        out.append(entry)
    return out


# An action's hints by its name: actions are registered once, at import, and never change,
# and every navigate lists a page's actions again. (Shared by results, which are only read.)
_HINTS: dict[str, dict[str, Any]] = {}


def _hints(name: Any) -> dict[str, Any] | None:
    hints = _HINTS.get(name) if isinstance(name, str) else None
    if hints is None:
        effect = action_effect(name)
        if effect is None:
            return None
        hints = _HINTS[name] = effect.annotations()
    return hints


def _lean_text(page: Page) -> str:
    """The page's Markdown without the frontmatter's action list: navigate gives each action
    once in text (the page's ``## Actions`` list) and once, with schemas, in
    structuredContent. The Markdown door keeps the full frontmatter."""
    text = page.text
    end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
    if end < 0 or "actions" not in page.meta:
        return text
    # The frontmatter ends with its "actions:" key (app.web.pages writes it last), the only
    # line that starts with it: cutting there leaves the rest exactly as dumped, without
    # serializing it again.
    cut = text.find("\nactions:", 3, end + 1)
    if cut >= 0 and list(page.meta)[-1] == "actions":
        return f"{text[:cut + 1]}---\n{text[end + 5:]}"
    meta = {key: value for key, value in page.meta.items() if key != "actions"}
    block = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{block}---\n{text[end + 5:]}"


def _actions_text(actions: list[dict[str, Any]]) -> str:
    if not actions:
        return "No actions are available on this page."
    lines = []
    for act in actions:
        params = ", ".join(f"{p.get('name')}{'' if p.get('required') else '?'}"
                           for p in act.get("params") or [] if isinstance(p, dict))
        lines.append(f"- {act.get('name')}({params}): {act.get('description', '')}")
    return "\n".join(lines)


@tool(
    "navigate",
    "Open a Harmonic page, as a person would in a browser, and see its content as Markdown "
    "plus the actions you can take there (with their parameters). The page becomes your "
    "current page for execute_action. URLs are shareable: a person opening the same URL sees "
    "the same page. Give either path or url (exactly one). Examples: '/studios', "
    "'/studios/team', '/studios/team/n/abcd1234'. An image (a floorplan's .png) comes back as "
    "image content.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description":
                     "A path such as /studios/team, or a full URL of this app"},
            "url": {"type": "string", "description":
                    "The same as path, by another name: a full URL of this app (as a person "
                    "would share it, e.g. http://127.0.0.1:5000/studios/team) or a path. "
                    "URLs of other sites are refused"},
        },
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}, "status": {"type": "integer"},
                       "title": {"type": "string"},
                       "mimeType": {"type": "string",
                                    "description": "text/markdown for a page; an image's own "
                                                   "type (image/png, image/svg+xml)"},
                       "actions": {"type": "array", "items": ACTION_SCHEMA}},
        "required": ["path", "status", "actions"],
    },
    effect=READ, icon="page",
    title="Navigate",
)
def navigate(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    given = [key for key in ("path", "url") if args.get(key) is not None]
    if len(given) != 1:
        raise ToolError("give exactly one of path or url, e.g. {\"path\": \"/studios\"} or "
                        "{\"url\": \"/studios/team\"}")
    path = normalize_path(args[given[0]], ctx.origin)
    ctx.audit["path"] = path
    page = fetch(ctx, path)
    ctx.audit["path"] = page.path
    ctx.log("debug", f"GET {page.path} answered {page.status}")
    if page.status >= 400:
        raise ToolError(f"GET {page.path} answered {page.status}:\n\n{page.text}")
    if not page.is_page:
        return _file_result(page)
    ctx.session.current_path = page.path
    ctx.session.save()
    structured = {"path": page.path, "status": page.status, "title": page.title,
                  "mimeType": page.mime, "actions": _with_annotations(page.actions)}
    hint = (f"Current URL: {page.path}\nTo act here: execute_action(action, params, "
            f"path=\"{page.path}\") with an action from the Actions list below (each one's "
            f"JSON Schema is in structuredContent.actions[].inputSchema, and at its link).")
    return ToolResult(content=[content.text(f"{hint}\n\n{_lean_text(page)}")],
                      structured=structured)


def _file_result(page: Page) -> ToolResult:
    """A URL that answers a file, not a page: an image as image content, other bytes as an
    embedded blob, SVG and other text as embedded text, each with its real MIME type. It has
    no actions, so the current page stays what it was."""
    structured = {"path": page.path, "status": page.status, "title": "", "mimeType": page.mime,
                  "actions": []}
    uri = changes.page_uri(page.path)
    size = len(page.body)
    note = content.text(f"{page.path} is a file ({page.mime}, {size} bytes), not a page: it has "
                        f"no actions. resources/read {uri} returns it too.")
    if page.is_text:
        block = (content.embedded(uri, page.text, page.mime) if page.mime != "text/plain"
                 else content.text(page.text))
    elif page.mime.startswith("image/"):
        block = content.image(page.body, page.mime)
    elif page.mime.startswith("audio/"):
        block = content.audio(page.body, page.mime)
    else:
        block = content.embedded(uri, page.body, page.mime)
    return ToolResult(content=[note, block], structured=structured)


@tool(
    "execute_action",
    "Run one of the actions offered on a page (the current page unless you pass path). Use "
    "the action names and parameters that navigate showed. Returns the outcome and the URL of "
    "anything created or changed; navigate again to see the updated page.",
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "description": "An action name listed on the page"},
            "params": {"type": "object", "description": "The action's parameters by name",
                       "additionalProperties": True},
            "path": {"type": "string",
                     "description": "The page offering the action (as navigate returned it). "
                                    "Required on a stateless (2026-07-28) connection; in a "
                                    "2025 session the default is the last page navigated to"},
            "context": declared.SCHEMA,
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "action": {"type": "string"},
                       "message": {"type": "string"}, "path": {"type": "string"},
                       "location": {"type": "string"}, "result": {"type": "object"},
                       "next": {"type": "array", "description":
                                "The obvious next steps: each an action with its inputSchema "
                                "and the path to run it at with execute_action",
                                "items": {**ACTION_SCHEMA, "properties": {
                                    **ACTION_SCHEMA["properties"],
                                    "path": {"type": "string"}}}}},
        "required": ["ok", "action", "message", "path"],
    },
    # A write, and at worst a destructive one (it may close a decision or revoke a token): the
    # hints clients see say so. A call's own effect is its action's.
    effect=DESTRUCTIVE, icon="page",
    effect_of=lambda args: action_effect(args.get("action")),
    subject_of=lambda args: args["action"].strip() if isinstance(args.get("action"), str)
    else None,
    title="Execute action",
)
def execute_action(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    action = args["action"].strip()
    params = args.get("params") or {}
    raw_path = args.get("path") or ctx.session.current_path
    ctx.audit["action"] = action
    if not raw_path and ctx.session.stateless:
        raise ToolError("path is required: this connection is stateless (MCP 2026-07-28), so "
                        "there is no current page; pass the path navigate returned")
    if not raw_path:
        raise ToolError("no current page: call navigate first, or pass path")
    path = ACTIONS_SUFFIX.sub("", normalize_path(raw_path, ctx.origin).split("?", 1)[0]) or "/"
    ctx.audit["path"] = path
    if action not in ACTIONS:  # not an action anywhere: say what the page offers instead
        raise _page_refusal(action, path, fetch(ctx, path))
    # No GET of the page first: the action's POST route refuses an action it does not offer
    # (404 or 409, naming those it does) before it reads any parameter or changes anything.
    ctx.progress(1, 2, f"running {action} at {path}")
    ctx.check_cancelled()  # last moment to stop before anything changes
    if args.get("context") is not None:
        # Checked by the action POST against the caller and its session; kept with the call.
        ctx.audit["context"] = declared.parse(args["context"]).record()
        params = {**params, "context": args["context"]}
    for _ in range(MAX_REDIRECTS):
        target = f"{path.rstrip('/')}/actions/{action}"
        result = dispatch("POST", target, ctx.identity, json=params, accept="application/json",
                          before_commit=audit.with_the_change(ctx, "execute_action", args))
        ctx.log("debug", f"POST {target} answered {result.status}")
        body = result.json if isinstance(result.json, dict) else {}
        error = body["error"] if isinstance(body.get("error"), dict) else {}
        if result.status not in (404, 405) or "actions" in error:
            break
        # No page has this action route: read the page as an agent would, following its
        # redirects; run the action where it leads, or say why not.
        page = fetch(ctx, path)
        if page.status >= 400 or page.path == path or action not in page.action_names():
            raise _page_refusal(action, path, page)
        path = ctx.audit["path"] = page.path
    else:
        raise ToolError(f"too many redirects from {path}")
    ctx.progress(2, 2, f"{action} answered {result.status}")
    if result.status in (404, 409) and isinstance(error.get("actions"), list):
        offered = [ACTIONS[n] for n in error["actions"] if n in ACTIONS]
        why = error.get("reason") if result.status == 409 else None
        raise _not_offered(action, path, _summaries(offered),
                           why if isinstance(why, str) else None)
    page_path = body.get("path") if isinstance(body.get("path"), str) else path
    ctx.session.current_path = page_path
    ctx.session.save()
    if result.status >= 400 or not body.get("ok"):
        lines = [f"✗ {action} failed ({result.status}): {error.get('message') or result.text}"]
        lines += [_problem_line(e) for e in error.get("errors") or [] if isinstance(e, dict)]
        raise ToolError("\n".join(lines), structured={
            "ok": False, "action": action, "path": page_path,
            "message": str(error.get("message") or f"HTTP {result.status}"),
            "result": {"error": error}})
    # (The action's own transaction recorded what it changed: app.web.pages.execute_action.)
    location = body.get("location")
    text = [f"✓ {body.get('message', 'done')}", "", f"Current URL: {page_path}"]
    if location:
        text.insert(1, f"Location: {location}")
    if isinstance(body.get("result"), dict) and body["result"]:
        # What the action made (a token shown once, ids, versions, warnings) is read from the
        # text by many clients: structuredContent alone would hide it from them.
        text[1:1] = ["Result:", *_result_lines(body["result"])]
    steps = _with_annotations([s for s in body.get("next") or [] if isinstance(s, dict)])
    if steps:
        text += ["", "Next (execute_action at the path shown; each one's JSON Schema is in "
                     "structuredContent.next[].inputSchema):", *_next_lines(steps)]
    text.append("(Use navigate to see the updated page and its actions.)")
    structured: dict[str, Any] = {"ok": True, "action": action, "path": page_path,
                                  "message": str(body.get("message", ""))}
    if location:
        structured["location"] = location
    if isinstance(body.get("result"), dict):
        structured["result"] = body["result"]
    if steps:
        structured["next"] = steps
    blocks = [content.text("\n".join(text))]
    if location:
        # A URI resources/read serves (the page as Markdown); the path is what a person opens.
        blocks.append(content.link(changes.page_uri(urlsplit(location).path), name=location,
                                   description="what this action created or changed",
                                   mime_type="text/markdown"))
    return ToolResult(content=blocks, structured=structured)


RESULT_TEXT_MAX = 4000  # beyond this a result value is cut in the text (never in structured)


def _result_lines(result: dict[str, Any]) -> list[str]:
    """An action's result data as ``- key: value`` lines (JSON for lists and objects)."""
    lines = []
    for key, value in result.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if len(shown) > RESULT_TEXT_MAX:
            shown = shown[:RESULT_TEXT_MAX] + "… (cut here; structuredContent has all of it)"
        lines.append(f"- {key}: {shown}")
    return lines


def _problem_line(error: dict[str, Any]) -> str:
    """One bad parameter of a refusal, named by its path when it is nested
    (``votes[0].option_title``)."""
    param, path, message = error.get("param"), error.get("path"), str(error.get("message"))
    if isinstance(path, str) and isinstance(param, str) and path.startswith(param):
        where = path[len(param):].lstrip(".")
        if message.startswith(f"{where}: "):
            message = message[len(where) + 2:]
        return f"- {path}: {message}"
    return f"- {param}: {message}"


def _next_lines(steps: list[dict[str, Any]]) -> list[str]:
    """Each next step as a line naming its action, its page and its parameters' shapes."""
    lines = []
    for step in steps:
        params = ", ".join(f"{p.get('name')}{'' if p.get('required') else '?'}: {p.get('type')}"
                           for p in step.get("params") or [] if isinstance(p, dict))
        lines.append(f"- {step.get('name')} at {step.get('path')} ({params}): "
                     f"{step.get('description', '')}")
    return lines


def _summaries(actions: list[Any]) -> list[dict[str, Any]]:
    return [action_summary(a) for a in actions]


def _not_offered(action: str, path: str, actions: list[dict[str, Any]],
                 why: str | None = None) -> ToolError:
    """The refusal of an action the page does not offer now, with the action's own reason
    when it gives one (a closed decision says since when)."""
    names = ", ".join(str(a.get("name")) for a in actions) or "none"
    head = (f"'{action}' is not available at {path}: {why}." if why
            else f"'{action}' is not offered at {path}.")
    result: dict[str, Any] = {"actions": actions}
    if why:
        result["reason"] = why
    return ToolError(f"{head} Actions here: {names}\n\n{_actions_text(actions)}",
                     structured={"ok": False, "action": action, "path": path,
                                 "message": why or "action not offered here",
                                 "result": result})


def _page_refusal(action: str, path: str, page: Page) -> ToolError:
    """Why ``action`` cannot run at ``path``, from the page as an agent reads it."""
    if page.status >= 400:
        return ToolError(f"GET {path} answered {page.status}:\n\n{page.text}")
    return _not_offered(action, page.path, page.actions)


# -- resources -------------------------------------------------------------------------------

@resource("harmonic://context", "context",
          "How to work in Harmonic: the URL map, how actions work, who you are and your studios",
          mime_type="text/markdown", title="Harmonic: how to work here")
def context_resource(ctx: ToolContext) -> str:
    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    lines = [agent_guide.GUIDE, agent_guide.url_map(), "", "## You", ""]
    if user is None:
        lines.append("You are not signed in (anonymous access).")
    else:
        lines.append(f"You are **{user.name}** (`{user.handle}`), profile `/u/{user.handle}`.")
        lines += ["", "## Your studios", ""]
        mine = studios.studios_of(user)
        lines += [f"- [{s.name}](/studios/{s.handle})" for s in mine] or ["(none yet)"]

    lines += ["", "## Skills", "", "Step-by-step guides for one kind of work (`resources/read`, "
              "or `skills/list` with the skills extension):", ""]
    lines += [f"- [{s.title}]({uri_of(s)}): {s.description}" for s in agent_guide.SKILLS]
    if ctx.session.current_path:
        lines += ["", f"Your current page: `{ctx.session.current_path}`"]
    return "\n".join(lines) + "\n"


@resource("harmonic://calls", "calls",
          "Every call made for you, newest first: with your own tokens, by your agents, and by "
          "anyone acting for you under a grant (who called, for whom, what, how it went). "
          "Filter by reading harmonic://page/u/<your handle>/agent-activity?agent=<handle>"
          "&day=today (or yesterday, or YYYY-MM-DD)",
          mime_type="text/markdown", title="Calls made for you")
def calls_resource(ctx: ToolContext) -> Any:
    user = _caller(ctx)
    if user is None:
        raise Forbidden("sign in first: the call log is a person's own")
    return _read(ctx, "harmonic://calls", f"/u/{user.handle}/agent-activity")


def _caller(ctx: ToolContext) -> Any:
    """The caller's User (None when anonymous)."""
    return db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None


def _complete_path(ctx: ToolContext, variable: str, prefix: str,
                   known: dict[str, str] | None = None) -> list[str]:
    # Only studios the caller may see: an invite-only studio's handle is its members' to know.
    paths = ["studios"] + [f"studios/{s.handle}" for s in studios.visible(_caller(ctx))]
    return [p for p in paths if p.startswith(prefix)]


def _complete_url(scheme: str) -> Callable[[ToolContext, str, str, dict[str, str]], list[str]]:
    """A completer of ``{scheme}://{+url}``: this app's origins of that scheme (its base URL,
    the address /mcp is reached at), each followed by the pages the path completer offers."""
    def complete(ctx: ToolContext, variable: str, prefix: str,
                 known: dict[str, str]) -> list[str]:
        origins = []
        for origin in (config.base_url(), ctx.origin):
            parts = urlsplit(origin or "")
            if parts.scheme == scheme and parts.netloc and parts.netloc not in origins:
                origins.append(parts.netloc)
        values = [f"{host}/{path}" for host in origins for path in _complete_path(ctx, "path", "")]
        return [v for v in values if v.startswith(prefix)]

    return complete


@resource_template("harmonic://page/{+path}", "page",
                   "Any Harmonic page as Markdown with its actions, e.g. "
                   "harmonic://page/studios/team; a file such as a floorplan's .png comes "
                   "with its own MIME type", mime_type="text/markdown",
                   title="A Harmonic page", complete=_complete_path)
def page_resource(ctx: ToolContext, uri: str, variables: dict[str, str]) -> Any:
    try:
        path = normalize_path("/" + variables["path"])
    except ToolError as exc:
        raise NotFound(exc.message) from None
    return _read(ctx, uri, path)


def _url_resource(ctx: ToolContext, uri: str, variables: dict[str, str]) -> Any:
    # A URL of another site is refused with the reason (an invalid-params error naming the
    # app's own origins), never fetched.
    return _read(ctx, uri, normalize_path(uri, ctx.origin))


for _scheme in ("http", "https"):
    resource_template(f"{_scheme}://{{+url}}", f"page-url-{_scheme}",
                      "A page of this app by its absolute URL, as a person would share it "
                      "(HARMONIC_BASE_URL's origin, or the address /mcp is reached at); URLs "
                      "of other sites are refused", mime_type="text/markdown",
                      complete=_complete_url(_scheme),
                      title="A Harmonic page by URL")(_url_resource)


def _read(ctx: ToolContext, uri: str, path: str) -> Any:
    """resources/read of a page (Markdown) or a file (its bytes or text, its MIME type)."""
    page = fetch(ctx, path)
    if page.status == 404:
        raise NotFound(f"no page at {path}; navigate to /studios, or read "
                       f"harmonic://page/studios, to see what exists")
    if page.status >= 400:
        raise Forbidden(f"GET {path} answered {page.status}")
    if page.is_page:
        return page.text
    if page.is_text:
        return [content.resource_text(uri, page.text, page.mime)]
    return [content.resource_blob(uri, page.body, page.mime)]


# -- prompts ---------------------------------------------------------------------------------

def _complete_studio(ctx: ToolContext, prefix: str, _context: dict[str, str]) -> list[str]:
    user = _caller(ctx)
    handles = [s.handle for s in (studios.studios_of(user) if user else studios.visible(None))]
    return [h for h in handles if h.startswith(prefix)]


CYCLES = ("today", "yesterday", "this-week", "last-week", "this-month", "last-month")


def _complete_cycle(ctx: ToolContext, prefix: str, _context: dict[str, str]) -> list[str]:
    return [c for c in CYCLES if c.startswith(prefix)]


@prompt("studio_standup",
        "A daily stand-up summary of a studio's cycle: what happened, what is open, what "
        "needs you",
        arguments=(PromptArgument("studio", "The studio handle, e.g. team", required=True,
                                  complete=_complete_studio),
                   PromptArgument("cycle", "The cycle to summarise (default today): today, "
                                  "yesterday, this-week, ...", complete=_complete_cycle),
                   PromptArgument("focus", "Optional: a topic or person to focus on")),
        title="Studio stand-up")
def standup_prompt(ctx: ToolContext, args: dict[str, str]) -> dict[str, Any]:
    handle = args["studio"].strip().strip("/")
    cycle = (args.get("cycle") or "today").strip().strip("/")
    studio_path = normalize_path(f"/studios/{handle}")
    studio = fetch(ctx, studio_path)
    if studio.status >= 400:
        raise NotFound(f"cannot read the studio '{handle}' (HTTP {studio.status})")
    pages = [studio]
    cycle_page = fetch(ctx, normalize_path(f"{studio_path}/cycles/{cycle}"))
    if cycle_page.status < 400:
        pages.insert(0, cycle_page)
    focus = f" Focus on: {args['focus']}." if args.get("focus") else ""
    ask = (f"Write the stand-up summary of the studio '{handle}' for the cycle '{cycle}' from "
           f"the pages below. Three short sections: Done (notes read and written, decisions "
           f"closed), Open (decisions awaiting votes, commitments short of critical mass, with "
           f"their deadlines), and Needs me (what I should read, vote on or join). Link every "
           f"item by its URL.{focus} Use navigate to open items when you need more detail.")
    messages = [{"role": "user", "content": content.text(ask)}]
    messages += [{"role": "user", "content": content.embedded(changes.page_uri(p.path), p.text,
                                                              "text/markdown")} for p in pages]
    return {"description": f"Stand-up for {handle}, {cycle}", "messages": messages}
