"""A person's grants page, /u/<handle>/settings/grants: the grants they gave (with who acts
for them now) and the ones they received (with the session they are in), and the forms to
grant, revoke, start and end (``app.actions.grants``)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint

from app.actions import Context
from app.actions.grants import grantable
from app.actions.registry import ACTIONS
from app.services import grants, studios
from app.web import loaders
from app.web.core_pages import settings_nav
from app.web.pages import Page, page

bp = Blueprint("grants", __name__)

# The choices the grant form offers, each a comma list of actions (the Markdown and MCP doors
# take any list of grantable actions).
PRESETS = ("vote,add_comment", "vote", "add_comment", "create_note", "create_decision",
           "add_option", "join_commitment", "send_heartbeat")


def preset_words() -> dict[str, str]:
    """Each preset in people's words: its actions' titles."""
    found = {}
    for preset in PRESETS:
        names = preset.split(",")
        if all(grantable(n) for n in names):
            found[preset] = "; ".join(ACTIONS[n].title() for n in names)
    return found


def titles(names: list[str]) -> list[str]:
    return [ACTIONS[n].title() if n in ACTIONS else n for n in names]


@page(bp, "user_grants", "/u/<user_handle>/settings/grants",
      loaders.user_page("user_grants", "/settings/grants"))
def user_grants(ctx: Context) -> Page:
    subject = ctx.item
    return Page(ctx, "Acting for others", "users/grants",
                {"subject": subject, "given": grants.given(subject),
                 "received": grants.received(subject),
                 "acting_for_me": grants.sessions_for(subject),
                 "my_session": grants.active_for(subject.id),
                 "studios": {s.handle: s.name for s in studios.studios_of(subject)},
                 "presets": preset_words(), "titles": titles, "now": datetime.now(UTC)},
                nav=settings_nav(ctx))
