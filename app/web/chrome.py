"""What every HTML page shares: the studio's navigation, the person's time zone and the one
way a time is shown (relative, exact on hover), and humane labels for generated forms.

Templates reach these as Jinja globals and filters (registered in ``app.web.init_app``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from flask import g
from flask_wtf.csrf import generate_csrf
from jinja2 import pass_context
from jinja2.runtime import Context as JinjaContext
from markupsafe import Markup, escape

from app.core import sitemap
from app.services import deadlines

# The studio's sections (its name, first in the bar, leads to its home), in the order a
# person meets them: (label, path under the studio or an
# absolute path, page name that must exist). Entries whose page is not registered (a feature
# left out) are skipped, so the navigation never links to a 404.
STUDIO_LINKS: list[tuple[str, str, str]] = [
    ("Notes", "/notes", "studio_notes"),
    ("Decisions", "/decisions", "studio_decisions"),
    ("Commitments", "/commitments", "studio_commitments"),
    ("Cycles", "/cycles", "cycles"),
    ("Floorplans", "/floorplans", "floorplans"),
    ("Playbooks", "@/playbooks", "playbooks"),
    ("Workflows", "@/workflows", "workflows"),
    ("Team", "/team", "studio_team"),
    ("Settings", "/settings", "studio_settings"),
]


# The header's links for a signed-in person (base.html.j2: the inbox and the menu under their
# name), which a Markdown page's nav line lists too, so an agent reading Markdown finds its
# inbox as a person does: (label, path with {me} for their handle, page name that must exist).
HEADER_LINKS: list[tuple[str, str, str]] = [
    ("Studios", "/studios", "studios"),
    ("Search", "/search", "search"),
    ("Inbox", "/inbox", "inbox"),
    ("Settings", "/u/{me}/settings", "user_settings"),
    ("API tokens", "/u/{me}/settings/tokens", "user_tokens"),
    ("Agent activity", "/u/{me}/agent-activity", "agent_activity"),
    ("Playbooks", "/playbooks", "playbooks"),
    ("Workflows", "/workflows", "workflows"),
]


def header_links(handle: str) -> list[tuple[str, str]]:
    """(label, href) of the header's links for the person ``handle``, those whose page is
    registered (a feature left out is not linked)."""
    known = {name for name, _rule in sitemap.pages()}
    return [(label, path.replace("{me}", handle)) for label, path, page in HEADER_LINKS
            if page in known]


def studio_links(studio: Any, current_path: str) -> list[tuple[str, str, bool]]:
    """(label, href, is the current section) for a studio's navigation bar."""
    known = {name for name, _rule in sitemap.pages()}
    base = f"/studios/{studio.handle}"
    out = []
    for label, sub, page in STUDIO_LINKS:
        if page not in known:
            continue
        href = sub[1:] if sub.startswith("@") else base + sub
        out.append((label, href, current_path == href or current_path.startswith(href + "/")))
    return out


# Time ---------------------------------------------------------------------------------------

def zone_names() -> list[str]:
    """Every IANA zone a person may choose, sorted (for the settings select)."""
    return sorted(z for z in available_timezones() if "/" in z or z == "UTC")


def _zone(name: str | None) -> ZoneInfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def viewer_zone(studio: Any = None) -> ZoneInfo:
    """The person's own zone, else the studio's, else UTC: one zone for a whole page."""
    # Asked once per time shown: answered once per request for the same person and studio
    # zone names, from ``g`` looked up once (each lookup through its proxy costs more than the
    # rest of this function).
    store = g._get_current_object()
    user = getattr(store, "user", None)
    key = (getattr(user, "timezone", None), getattr(studio, "timezone", None))
    known = getattr(store, "_viewer_zone", None)
    if known is not None and known[0] == key:
        return known[1]
    zone = _zone(key[0]) or _zone(key[1]) or ZoneInfo("UTC")
    store._viewer_zone = (key, zone)
    return zone


def csrf_token() -> str:
    """flask-wtf's ``generate_csrf`` (the same token), looked up once per request: a table
    with a form on every row (the team page) called it once per row, each reading settings."""
    token = g.get("_csrf_token_once")
    if token is None:
        token = g._csrf_token_once = generate_csrf()
    return str(token)


def relative(moment: datetime, now: datetime | None = None) -> str:
    """"in 2 days", "3 hours ago", "just now"."""
    now = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - now
    seconds = abs(delta.total_seconds())
    future = delta > timedelta(0)
    if seconds < 45:
        return "just now"
    for size, unit in ((60 * 60 * 24 * 365, "year"), (60 * 60 * 24 * 30, "month"),
                       (60 * 60 * 24 * 7, "week"), (60 * 60 * 24, "day"), (60 * 60, "hour"),
                       (60, "minute")):
        if seconds >= size * 0.95:
            count = max(1, round(seconds / size))
            text = f"{count} {unit}{'' if count == 1 else 's'}"
            return f"in {text}" if future else f"{text} ago"
    return "just now"


@lru_cache(maxsize=4096)  # a pure function of its arguments, asked for every time shown
def exact(moment: datetime, zone: ZoneInfo) -> str:
    local = moment.astimezone(zone)
    return f"{local.strftime('%a %d %b %Y, %H:%M %Z')} ({zone.key})"


@lru_cache(maxsize=4096)  # a pure function of its arguments, asked for every time shown
def _utc_text(value: datetime, _zone: Any, fmt: str) -> str:
    # ``_zone`` (value's own tzinfo) is in the key: equal instants in two zones format apart.
    return value.strftime(fmt)


@lru_cache(maxsize=4096)  # a pure function of its arguments, asked for every time shown
def _time_tag(value: datetime, zone: ZoneInfo, shape: str) -> tuple[str, str]:
    """The ``<time>`` element's opening tag and, for a date or a time of day, its text (a
    relative text depends on now: the caller adds it)."""
    local = value.astimezone(zone)
    text = local.strftime("%Y-%m-%d") if shape == "date" else \
        local.strftime("%H:%M:%S") if shape == "time" else ""
    # Markup.format's escaping formatter cost more than the rest of the filter: the same
    # escaping, by hand.
    return (f'<time datetime="{escape(value.astimezone(UTC).isoformat(timespec="seconds"))}"'
            f' title="{escape(exact(value, zone))}">', str(escape(text)))


def _render_zone(context: JinjaContext) -> ZoneInfo:
    """The viewer's zone for this render of a template: one zone per page, looked up once
    per render (kept on its EvalContext, which Jinja makes per render and lets extensions
    extend), not once per time shown."""
    found: ZoneInfo | None = getattr(context.eval_ctx, "harmonic_viewer_zone", None)
    if found is None:
        found = viewer_zone(getattr(context.get("ctx"), "studio", None))
        context.eval_ctx.harmonic_viewer_zone = found  # type: ignore[attr-defined]
    return found


@pass_context
def dt_filter(context: JinjaContext, value: datetime | None,
              fmt: str = "%Y-%m-%d %H:%M UTC") -> str:
    """One way to show a time. Markdown templates get the exact UTC text (agents read it);
    HTML gets ``<time>`` with relative text and the exact time, in the viewer's zone, on
    hover. A date-only format stays a date; a time-only one (a run's events) the local time."""
    if value is None:
        return "—"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not context.eval_ctx.autoescape:
        return _utc_text(value, value.tzinfo, fmt)
    zone = _render_zone(context)
    shape = "date" if "%H" not in fmt else "time" if "%Y" not in fmt else "relative"
    head, text = _time_tag(value, zone, shape)
    if shape == "relative":
        # One "now" per render, as one zone: every relative time of a page is read against
        # the same moment (and the clock is asked once, not once per time shown).
        now: datetime | None = getattr(context.eval_ctx, "harmonic_now", None)
        if now is None:
            now = context.eval_ctx.harmonic_now = datetime.now(UTC)  # type: ignore[attr-defined]
        text = str(escape(relative(value, now)))
    return Markup(f"{head}{text}</time>")


def local_input(value: Any, zone: ZoneInfo) -> str:
    """A stored or typed date-time as a datetime-local input value (YYYY-MM-DDTHH:MM), or ""
    when it is no date-time at all (e.g. "none")."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M")
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", value.strip()):
        return value.strip()
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return ""
        return local_input(parsed, zone)
    return ""


# Labels -------------------------------------------------------------------------------------

ACRONYMS = {"dsl": "DSL", "id": "ID", "url": "URL", "uri": "URI", "svg": "SVG", "png": "PNG",
            "json": "JSON", "api": "API", "mcp": "MCP", "x": "x", "y": "y"}


@lru_cache(maxsize=1024)  # a pure function of its arguments, asked for every form field shown
def humane(name: str, title: str | None = None) -> str:
    """A field's label: its schema ``title`` if any, else its name in words
    ("relativePosition" → "Relative position", "new_name" → "New name", "dsl" → "DSL")."""
    if title:
        return title
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ")
    parts = [w.lower() for w in words.split() if w]
    if not parts:
        return name
    shown = [ACRONYMS.get(w, w) for w in parts]
    first = shown[0]
    shown[0] = first if first in ACRONYMS.values() and first not in ("x", "y") \
        else first[:1].upper() + first[1:]
    return " ".join(shown)


def markdown_href(path: str) -> str:
    """A page's Markdown twin ("/" → "/.md", "/studios/team" → "/studios/team.md")."""
    return "/.md" if path in ("", "/") else path.rstrip("/") + ".md"


def deadline_text(item: Any, studio: Any) -> str:
    """An item's deadline in words, in the reader's zone (one zone per page)."""
    return deadlines.describe(item, studio, zone=viewer_zone(studio))
