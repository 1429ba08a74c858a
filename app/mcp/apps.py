"""MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``): interactive views a host shows next to a
tool's result, as ``ui://`` resources of type ``text/html;profile=mcp-app``.

Two views, each one self-contained HTML document (its script and style inline, nothing loaded
from anywhere else) written from ``templates/mcp_apps/``:

- ``ui://harmonic/floorplan-viewer``, linked from ``render_floorplan``: the drawing with pan and
  zoom, the room list, a room's metadata on click, and edits (rename, resize, label) made by
  asking the host to call ``execute_action`` on the plan's page (a stored plan: a new version)
  or ``modify_floorplan`` (DSL text: new text, drawn again);
- ``ui://harmonic/decision-view``, linked from ``show_decision`` (below): the options with
  their counts and the caller's own votes, and a vote cast in place through ``execute_action``.

A view talks only to its host (JSON-RPC over ``postMessage``: ``ui/initialize``, the tool
result as ``ui/notifications/tool-result``, ``tools/call`` proxied by the host), so its
declared CSP (``_meta.ui.csp``) names no outside origin, and the document carries its own
Content-Security-Policy allowing only its own inline script and style (by hash). Every string
from the server (room names, labels, option titles) reaches the page as text
(``textContent``, attribute values), never as markup. A client without Apps ignores the
``_meta`` and gets the text and image it always got.

Negotiated as the extension says: only a client that declares ``io.modelcontextprotocol/ui``
with our view type (``app.mcp.negotiate.shows_apps``) sees a tool's ``_meta.ui`` in tools/list,
and only it is offered app-only tools (``_meta.ui.visibility == ["app"]``, for a view's own
calls); every other client gets the same tools without them, and the same text and image.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

from app.actions.collab import BALLOT_ACTIONS
from app.actions.effects import READ
from app.db import read_many
from app.extensions import db
from app.mcp import content, harmonic
from app.mcp.content import ToolError, ToolResult
from app.mcp.context import ToolContext
from app.mcp.info import APP_MIME, UI_EXTENSION
from app.mcp.registry import resource, tool
from app.models import User
from app.services import decision_kinds, decisions, items, studios

EXTENSION, MIME = UI_EXTENSION, APP_MIME
FLOORPLAN_VIEW = "ui://harmonic/floorplan-viewer"
DECISION_VIEW = "ui://harmonic/decision-view"
ASSETS = Path(__file__).resolve().parents[2] / "templates" / "mcp_apps"

# Nothing outside the document: no fetches, no remote images, scripts, fonts or frames.
CSP: dict[str, list[str]] = {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                             "baseUriDomains": []}
RESOURCE_META: dict[str, Any] = {"ui": {"csp": CSP, "prefersBorder": True}}


def tool_meta(view: str) -> dict[str, Any]:
    """A tool's ``_meta`` linking it to ``view``: hosts with Apps show its results there."""
    return {"ui": {"resourceUri": view}}


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@cache
def html(name: str) -> str:
    """The view ``name``: its template with the shared bridge and its own script and style
    inlined, under a policy that allows exactly those (hashes) and images from data: URLs."""
    page = (ASSETS / f"{name}.html").read_text(encoding="utf-8")
    script = (ASSETS / "bridge.js").read_text(encoding="utf-8") + "\n" + \
        (ASSETS / f"{name}.js").read_text(encoding="utf-8")
    style = (ASSETS / "view.css").read_text(encoding="utf-8")
    policy = ("default-src 'none'; script-src " + _digest(script) + "; style-src "
              + _digest(style) + "; img-src data:; connect-src 'none'; frame-src 'none'; "
              "object-src 'none'; base-uri 'none'; form-action 'none'")
    # str.replace with fixed markers: the assets are ours and hold no user data.
    return (page.replace("<!--CSP-->", f'<meta http-equiv="Content-Security-Policy" '
                                       f'content="{policy}">')
            .replace("<!--STYLE-->", f"<style>{style}</style>")
            .replace("<!--SCRIPT-->", f"<script>{script}</script>"))


def _contents(uri: str, name: str) -> list[dict[str, Any]]:
    return [{**content.resource_text(uri, html(name), MIME), "_meta": RESOURCE_META}]


@resource(FLOORPLAN_VIEW, "floorplan-viewer",
          "Interactive floorplan viewer (MCP Apps): pan and zoom, the room list, a room's "
          "metadata, edits through the host", mime_type=MIME, title="Floorplan viewer",
          meta=RESOURCE_META)
def floorplan_viewer(ctx: ToolContext) -> list[dict[str, Any]]:
    return _contents(FLOORPLAN_VIEW, "floorplan")


@resource(DECISION_VIEW, "decision-view",
          "Interactive decision view (MCP Apps): the options, their counts and your votes; "
          "vote in place", mime_type=MIME, title="Decision view", meta=RESOURCE_META)
def decision_view(ctx: ToolContext) -> list[dict[str, Any]]:
    return _contents(DECISION_VIEW, "decision")


# The decision view's tool ------------------------------------------------------------------

DECISION_PATH = re.compile(r"^/studios/([^/]+)/d/([^/]+)$")
OPTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "accepted": {"type": "integer"},
                   "preferred": {"type": "integer"}, "votes": {"type": "integer"},
                   "mine": {"type": "object", "properties": {
                       "accept": {"type": "boolean"}, "prefer": {"type": "boolean"}}}},
    "required": ["title", "accepted", "preferred", "votes", "mine"],
}


@tool(
    "show_decision",
    "Show a decision: its question, its options with their counts (accepted, preferred) and "
    "your own votes, and whether you may vote. The text is the decision's page; a host with "
    "MCP Apps shows it as a view where a person votes in place (execute_action vote on the "
    "same page).",
    input_schema={"type": "object", "properties": {"path": {
        "type": "string", "description": "The decision's page, e.g. /studios/team/d/abcd1234 "
                                         "(or its full URL)"}},
        "required": ["path"], "additionalProperties": False},
    output_schema={"type": "object", "properties": {
        "path": {"type": "string"}, "question": {"type": "string"},
        "closed": {"type": "boolean"},
        "canVote": {"type": "boolean", "description": "vote is offered to you on the page"},
        "options": {"type": "array", "items": OPTION_SCHEMA,
                    "description": "In the order they were added"}},
        "required": ["path", "question", "closed", "canVote", "options"]},
    effect=READ, icon="page", title="Show a decision", meta=tool_meta(DECISION_VIEW),
)
def show_decision(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    path = harmonic.normalize_path(args["path"], ctx.origin).split("?", 1)[0].rstrip("/")
    ctx.audit["path"] = path
    if not DECISION_PATH.match(path):
        raise ToolError(f"{path} is not a decision's page: give one such as "
                        f"/studios/team/d/abcd1234 (a studio's page lists its decisions)")
    # The page itself, as the caller: membership, deletion and gates exactly as on the web.
    page = harmonic.fetch(ctx, path)
    if page.status >= 400:
        raise ToolError(f"GET {page.path} answered {page.status}:\n\n{page.text}")
    found = DECISION_PATH.match(page.path)
    if found is None:  # a redirect away from the decision
        raise ToolError(f"{path} led to {page.path}, which is not a decision's page")
    decision = items.find(studios.get_studio(found.group(1)), "decision", found.group(2))
    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    mine, tally = read_many(decisions.my_votes(decision, user), decisions.results(decision))
    options = []
    for row in decisions.in_order_added(tally):
        vote = mine.get(row.option.id)
        options.append({"title": row.option.title,
                        "accepted": row.accepted,
                        "preferred": row.preferred,
                        "votes": row.votes,
                        "mine": {"accept": bool(vote and vote.accepted),
                                 "prefer": bool(vote and vote.preferred)}})
    structured = {"path": page.path, "question": decision.question,
                  "closed": bool(decision.closed), "canVote": "vote" in page.action_names(),
                  "options": options}
    hint = (f"Current URL: {page.path}\nTo vote: execute_action with action \"vote\", "
            f"path \"{page.path}\" and params {{\"votes\": [{{\"option_title\": ..., "
            f"\"accept\": true, \"prefer\": false}}]}}.")
    if decision.kind != "acceptance":  # the view draws acceptance votes; the page says the rest
        ballot = BALLOT_ACTIONS[decision.kind]
        hint = (f"Current URL: {page.path}\nThis decision is a "
                f"{decision_kinds.LABELS[decision.kind].lower()}: vote with execute_action "
                f"\"{ballot}\" on path \"{page.path}\" (its parameters and results are on the "
                "page below; the view's counts are acceptance votes, which it has none of).")
    return ToolResult(content=[content.text(f"{hint}\n\n{harmonic._lean_text(page)}")],
                      structured=structured)
