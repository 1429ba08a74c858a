"""Commitments over HTTP: critical mass, idempotent joins, limits that close, settings rules,
the progress bar in HTML and Markdown."""

from __future__ import annotations

import re

from tests.helpers import action_names, join_studio, parse_md


def new_commitment(agent, **params):  # type: ignore[no-untyped-def]
    params.setdefault("title", "Clean the park on Saturday")
    params.setdefault("critical_mass", 3)
    r = agent.act("/studios/team/commit", "create_commitment", **params)
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.json["location"]


def body(agent, path: str) -> str:  # type: ignore[no-untyped-def]
    return parse_md(agent.get(path).get_data(as_text=True))[1]


def test_create_validates_critical_mass_and_limit(studio) -> None:  # type: ignore[no-untyped-def]
    front, _ = parse_md(studio.get("/studios/team/commit").get_data(as_text=True))
    params = next(a for a in front["actions"] if a["name"] == "create_commitment")["params"]
    assert [(p["name"], p["required"]) for p in params] == [
        ("title", True), ("description", False), ("critical_mass", True), ("deadline", False),
        ("limit", False), ("join", False)]
    for bad in (0, -2, 1.5, "3"):
        r = studio.act("/studios/team/commit", "create_commitment", title="x", critical_mass=bad)
        assert r.status_code == 422, bad
        assert r.json["error"]["errors"][0]["param"] == "critical_mass"
    r = studio.act("/studios/team/commit", "create_commitment", title="x", critical_mass=3,
                   limit=2)
    assert r.status_code == 422
    assert r.json["error"]["errors"][0]["param"] == "limit"
    r = studio.act("/studios/team/commit", "create_commitment", title="x", critical_mass=3,
                   deadline="yesterday")
    assert r.status_code == 422


def test_join_progress_and_critical_mass(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob, carol = join_studio(make_agent, "bob"), join_studio(make_agent, "carol")
    path = new_commitment(studio, deadline="3d")
    text = body(studio, path)
    assert "Status: Pending." in text
    assert "[____________________] 0/3" in text
    assert "3 more participants needed to reach critical mass (3)." in text
    assert "join_commitment" in action_names(bob.get(path).get_data(as_text=True))
    r = bob.act(path, "join_commitment")
    assert r.status_code == 200 and r.json["result"]["joined"] == 1
    assert "[######______________] 1/3" in body(bob, path)
    # Joined: no longer offered; a repeat (an agent's retry) is accepted and counts once.
    assert "join_commitment" not in action_names(bob.get(path).get_data(as_text=True))
    again = bob.act(path, "join_commitment")
    assert again.status_code == 200 and again.json["result"]["joined"] == 1
    assert "already joined" in again.json["message"]
    assert carol.act(path, "join_commitment").status_code == 200
    assert studio.act(path, "join_commitment").status_code == 200
    text = body(carol, path)
    assert "Status: Critical mass achieved." in text and "[####################] 3/3" in text
    assert "## Participants (3)" in text
    html = carol.get(path, accept="text/html").get_data(as_text=True)
    assert 'role="progressbar"' in html and 'aria-valuenow="3"' in html
    assert 'style="width: 100%"' in html


def test_limit_closes_the_commitment(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob, carol = join_studio(make_agent, "bob"), join_studio(make_agent, "carol")
    path = new_commitment(studio, critical_mass=1, limit=2)
    assert bob.act(path, "join_commitment").status_code == 200
    assert carol.act(path, "join_commitment").status_code == 200
    text = body(studio, path)
    assert "| Closed |" in text and "Critical mass achieved" in text
    assert "join_commitment" not in action_names(studio.get(path).get_data(as_text=True))
    r = studio.act(path, "join_commitment")
    assert r.status_code == 409
    assert "## Participants (2)" in body(studio, path)


def test_failed_when_closed_below_critical_mass(studio, make_agent, app) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from app.extensions import db
    from app.models.base import utcnow
    from app.models.collab import Commitment

    path = new_commitment(studio, critical_mass=5, deadline="1h")
    assert studio.act(path, "join_commitment").status_code == 200
    with app.app_context():  # time passes: the deadline is behind us
        item = db.session.query(Commitment).one()
        item.deadline = utcnow() - timedelta(minutes=1)
        db.session.commit()
    text = body(studio, path)
    assert "Status: Failed to reach critical mass." in text
    assert "Failed to reach critical mass: 4 more were needed." in text
    assert studio.act(path, "join_commitment").status_code == 200  # joined before: a no-op
    late = join_studio(make_agent, "dora")
    assert late.act(path, "join_commitment").status_code == 409


def test_settings_rules(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = new_commitment(studio, critical_mass=3, deadline="2d")
    settings = f"{path}/settings"
    assert bob.act(settings, "update_commitment_settings", title="mine").status_code == 403
    assert set(action_names(bob.get(settings).get_data(as_text=True))) == {"pin_commitment"}
    # Nobody joined: lowering is fine.
    assert studio.act(settings, "update_commitment_settings", critical_mass=2).status_code == 200
    assert bob.act(path, "join_commitment").status_code == 200
    r = studio.act(settings, "update_commitment_settings", critical_mass=1)
    assert r.status_code == 409
    assert "lower the critical mass" in r.json["error"]["message"]
    assert studio.act(settings, "update_commitment_settings", critical_mass=4).status_code == 200
    r = studio.act(settings, "update_commitment_settings", title="Clean the big park",
                   description="Bring gloves", deadline="5d")
    assert r.status_code == 200
    text = body(studio, path)
    assert "# Commitment: Clean the big park" in text and "[#####_______________] 1/4" in text
    # A limit at the current count closes it at once.
    r = studio.act(settings, "update_commitment_settings", limit=1)
    assert r.status_code == 422  # below the critical mass of 4
    assert studio.act(settings, "update_commitment_settings", critical_mass=4,
                      limit=4).status_code == 200
    assert bob.act(settings, "pin_commitment").status_code == 200
    assert "unpin_commitment" in action_names(bob.get(settings).get_data(as_text=True))


def test_edit_form_starts_from_current_values_and_resubmits_unchanged(studio, client) -> None:  # type: ignore[no-untyped-def]
    path = new_commitment(studio, critical_mass=2, deadline="2060-06-01T12:00:00Z", limit=5)
    html = studio.get(f"{path}/settings", accept="text/html").get_data(as_text=True)
    form = html.split('data-action="update_commitment_settings"', 1)[1].split("</form>", 1)[0]
    values = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
    assert values["critical_mass"] == "2" and values["limit"] == "5"
    assert values["deadline"] == "2060-06-01T12:00"  # the studio's zone is UTC
    # Posting the prefilled deadline back leaves the deadline exactly where it was.
    r = studio.act(f"{path}/settings", "update_commitment_settings",
                   deadline=values["deadline"])
    assert r.status_code == 200
    assert "2060-06-01 12:00 UTC" in body(studio, path)
