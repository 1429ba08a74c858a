"""Search pages: ``/search`` (everything the caller may read) and ``/studios/<h>/search``
(one studio), for people (HTML form and results), agents over HTTP (Markdown with links and a
``next`` link) and MCP (``navigate`` reaches the same routes).

Which studios a person may search is decided as their pages decide it: membership plus the
studio gates (a studio asking for a heartbeat shows nothing else until one is sent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from flask import Blueprint, current_app, has_request_context, request
from sqlalchemy import select
from sqlalchemy.orm import joinedload

from app.actions import Context
from app.core import config
from app.extensions import db
from app.models import Membership, Studio, User
from app.search import engine, query
from app.search.engine import Results
from app.services.errors import DomainError, Invalid
from app.web import loaders
from app.web.core_pages import STUDIO_SECTIONS, studio_nav
from app.web.pages import Page, page

bp = Blueprint("search", __name__)
T = TypeVar("T")
STUDIO_SECTIONS.append(("Search", "search"))


def readable_studios(user: User) -> list[Studio]:
    """The caller's studios whose pages they may open now (membership, then every gate)."""
    found = []
    memberships = db.session.scalars(select(Membership).options(joinedload(Membership.studio))
                                     .where(Membership.user_id == user.id))
    for member in memberships:
        studio = member.studio
        if getattr(studio, "deleted_at", None) is not None:
            continue
        ctx = Context(page="search", path=f"/studios/{studio.handle}/search", user=user,
                      studio=studio, member=member, base_url=config.base_url())
        try:
            in_request(ctx.path, _gates, ctx)
        except DomainError:
            continue
        found.append(studio)
    return found


def in_request(path: str, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` where the studio gates can read a request (they read its arguments):
    the current one, or over stdio (an MCP call with no HTTP request) one for ``path``."""
    if has_request_context():
        return call(*args)
    with current_app.test_request_context(path):
        return call(*args)


def _gates(ctx: Context) -> None:
    for gate in loaders.STUDIO_GATES:
        gate(ctx)


def run(text: str | None, user: User, studio: Studio | None, page_arg: Any = None,
        limit_arg: Any = None) -> Results:
    """Parse and run a search for ``user`` (one studio, or all they may read)."""
    parsed = query.parse(text)
    number, size = engine.page_bounds(page_arg, limit_arg)
    allowed = [studio] if studio is not None else readable_studios(user)
    if studio is not None and parsed.studio and parsed.studio != studio.handle:
        raise Invalid(f"this page searches the studio '{studio.handle}'; search "
                      f"studio:{parsed.studio} at /search",
                      errors=[{"param": "q", "message": "another studio's filter"}])
    return engine.search(parsed, user, [s.id for s in allowed], number, size)


def page_link(base: str, text: str, number: int, limit: int) -> str:
    params: dict[str, Any] = {"q": text}
    if number > 1:
        params["page"] = number
    if limit != engine.DEFAULT_LIMIT:
        params["limit"] = limit
    return f"{base}?{urlencode(params)}"


def _page(ctx: Context, base: str, studio: Studio | None, nav: list[tuple[str, str]]) -> Page:
    text = request.args.get("q", "")
    data: dict[str, Any] = {"q": text, "action": base, "studio": studio, "error": None,
                            "results": None, "next_link": None, "prev_link": None,
                            "syntax": query.FILTERS}
    status = 200
    try:
        results = run(text, ctx.user, studio, request.args.get("page"),
                      request.args.get("limit"))
    except Invalid as exc:
        data["error"], status = exc.message, 422
    else:
        data["results"] = results
        if results.has_next:
            data["next_link"] = page_link(base, text, results.page + 1, results.limit)
        if results.page > 1:
            data["prev_link"] = page_link(base, text, results.page - 1, results.limit)
    title = f"Search {studio.name}" if studio is not None else "Search"
    if text:
        title += f": {text}"
    return Page(ctx, title, "search/results", data, status=status, nav=nav)


@page(bp, "search", "/search", loaders.site_page("search", "/search"))
def search_page(ctx: Context) -> Page:
    return _page(ctx, "/search", None, [("Search", "/search")])


@page(bp, "studio_search", "/studios/<handle>/search",
      loaders.studio_page("studio_search", "/search"))
def studio_search_page(ctx: Context) -> Page:
    base = f"/studios/{ctx.studio.handle}/search"
    return _page(ctx, base, ctx.studio, studio_nav(ctx) + [("Search", base)])
