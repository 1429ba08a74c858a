"""The MCP ``search`` tool: the search of ``/search`` for an agent, answering with links.

Each result is a ``resource_link`` to its page as ``harmonic://page/…`` (``resources/read``
serves it, ``navigate`` opens its path), after a text block listing the results in Markdown;
``structuredContent`` carries the same results. Who may see what is exactly the pages' rule
(``app.search.pages.run``).
"""

from __future__ import annotations

from typing import Any

from app.actions.effects import READ
from app.core import changes
from app.extensions import db
from app.mcp import content
from app.mcp.content import ToolError, ToolResult
from app.mcp.context import ToolContext
from app.mcp.registry import tool
from app.models import User
from app.search import engine, highlight, pages, query
from app.services.errors import DomainError
from app.web import loaders, markdown

HIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string"}, "title": {"type": "string"},
        "path": {"type": "string", "description": "The page; navigate opens it"},
        "uri": {"type": "string", "description": "harmonic://page/… for resources/read"},
        "studio": {"type": "string"}, "author": {"type": "string"},
        "snippet": {"type": "string", "description": "Matching words between ** **"},
        "updated_at": {"type": "string"},
    },
    "required": ["kind", "title", "path", "uri"],
}

DESCRIPTION = (
    "Search the notes, comments, decisions and their options, commitments, floorplans, "
    "playbooks and workflows you may read, best matches first, and get links to them. "
    "Every word and \"quoted phrase\" must occur; filters: kind:decision (note, comment, "
    "decision, option, commitment, floorplan, playbook, workflow; a comma list for several), "
    "status:open or status:closed (by deadline; a recipe's draft/reviewed/approved/retired), "
    "author:@alice, studio:team. Example: 'lunch kind:decision status:open'. Open a result "
    "with navigate(path) or resources/read(uri).")


@tool("search", DESCRIPTION, input_schema={
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": query.MAX_LENGTH,
                  "description": "Words, \"phrases\" and filters, e.g. "
                                 "'lunch kind:decision status:open author:@alice'"},
        "studio": {"type": "string", "description": "Search only this studio (its handle)"},
        "page": {"type": "integer", "minimum": 1, "description": "Page of results (from 1)"},
        "limit": {"type": "integer", "minimum": 1, "maximum": engine.MAX_LIMIT,
                  "description": f"Results a page (default {engine.DEFAULT_LIMIT})"},
    },
    "required": ["query"],
    "additionalProperties": False,
}, output_schema={
    "type": "object",
    "properties": {
        "query": {"type": "string"}, "page": {"type": "integer"},
        "results": {"type": "array", "items": HIT_SCHEMA},
        "next_page": {"type": "integer", "description": "Ask for this page for more"},
    },
    "required": ["query", "page", "results"],
}, effect=READ, title="Search")
def search(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    if user is None:
        raise ToolError("search needs a signed-in caller: send a Bearer token")
    text = str(args.get("query") or "")
    ctx.audit["path"] = "/search"
    try:
        studio = None
        if args.get("studio"):
            handle = str(args["studio"]).strip().strip("/")
            # The studio page's own loader: membership and gates exactly as on the web.
            studio = pages.in_request(f"/studios/{handle}/search", loaders.studio_ctx,
                                      "studio_search", user, handle, "/search").studio
        results = pages.run(text, user, studio, args.get("page"), args.get("limit"))
    except DomainError as exc:
        raise ToolError(exc.message) from None
    hits = [{"kind": h.kind, "title": highlight.plain(h.title), "path": h.path,
             "uri": changes.page_uri(h.path), "studio": h.studio_handle or "",
             "author": f"@{h.author_handle}" if h.author_handle else "",
             # One line, Markdown-escaped like every field of a page.
             "snippet": highlight.to_markdown(h.snippet, markdown.inline),
             "updated_at": h.updated_at.isoformat()} for h in results.hits]
    lines = [f"Search results for {text!r} (page {results.page}):", ""]
    first = (results.page - 1) * results.limit + 1
    for number, (hit, found) in enumerate(zip(results.hits, hits, strict=True), start=first):
        where = f" in {hit.studio_handle}" if hit.studio_handle else ""
        lines.append(f"{number}. [{markdown.inline(found['title'])}]({hit.path}) - "
                     f"{hit.kind}{where}")
        if found["snippet"]:
            lines.append(f"   > {found['snippet']}")
    if not hits:
        lines += results.notes or ["Nothing found."]
    structured: dict[str, Any] = {"query": text, "page": results.page, "results": hits}
    if results.has_next:
        structured["next_page"] = results.page + 1
        lines += ["", f"More: search again with page={results.page + 1}."]
    blocks = [content.text("\n".join(lines))]
    blocks += [content.link(found["uri"], name=found["path"], title=found["title"],
                            description=f"{found['kind']}: {highlight.plain(hit.snippet)[:200]}",
                            mime_type="text/markdown")
               for hit, found in zip(results.hits, hits, strict=True)]
    return ToolResult(content=blocks, structured=structured)
