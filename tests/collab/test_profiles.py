"""A person's profile page (/u/<handle>, HTML and Markdown) lists only the studios the viewer
may see: the open ones, and those the viewer belongs to. An invite-only studio is its
members' business, and so is a studio that stops taking anyone who asks."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

SECRET = "/studios/secret"
TEAM = "/studios/team"


@pytest.fixture
def people(app: Flask, studio, make_agent) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """alice: admin of the open 'team' and the invite-only 'secret'; bob: invited into
    'secret'; carol: in no studio."""
    from app.extensions import db
    from app.models import User
    from app.services import studios

    with app.app_context():
        alice = db.session.query(User).filter(User.handle == "alice").one()
        studios.create_studio(alice, handle="secret", name="Secret", join_policy="invite",
                              heartbeats_required=False)
        db.session.commit()
    bob, carol = make_agent("bob"), make_agent("carol")
    assert studio.act(f"{SECRET}/team", "invite_member", handle="bob").status_code == 201
    assert bob.act(f"{SECRET}/join", "join_studio").status_code == 200
    return {"alice": studio, "bob": bob, "carol": carol}


def _listed(agent: Any, accept: str) -> set[str]:
    page = agent.get("/u/alice", accept=accept)
    text = page.get_data(as_text=True)
    assert page.status_code == 200, text
    return {path for path in (SECRET, TEAM) if f"({path})" in text or f'"{path}"' in text}


@pytest.mark.parametrize("accept", ["text/html", "text/markdown"])
def test_a_profile_lists_only_studios_the_viewer_may_see(people: dict[str, Any],
                                                         accept: str) -> None:
    assert _listed(people["carol"], accept) == {TEAM}
    assert _listed(people["bob"], accept) == {SECRET, TEAM}
    assert _listed(people["alice"], accept) == {SECRET, TEAM}
    # A studio that turns invite-only leaves every outsider's view of the profile at once.
    changed = people["alice"].act(f"{TEAM}/settings", "update_studio_settings",
                                  join_policy="invite")
    assert changed.status_code == 200, changed.get_data(as_text=True)
    assert _listed(people["carol"], accept) == set()
    assert _listed(people["bob"], accept) == {SECRET}
