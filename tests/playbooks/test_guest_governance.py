"""A studio's read-only guest neither reviews the recipes shared with it nor shares a playbook
into it: the playbook page's rules read the same roles as the action registry."""

from __future__ import annotations

from tests.helpers import join_studio, parse_md
from tests.playbooks.test_governance import _taught_and_shared


def test_a_guest_neither_reviews_nor_shares(app, studio, demo, make_agent, data_dir) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    gus = join_studio(make_agent, "gus")
    assert studio.act("/studios/team/team", "change_role", handle="gus",
                      role="guest").status_code == 200
    _session, page = _taught_and_shared(bob)
    front, _text = parse_md(gus.get(page).get_data(as_text=True))
    assert "review_recipe" not in [a["name"] for a in front["actions"]]
    r = gus.act(page, "review_recipe")
    assert r.status_code == 403
    assert "only members of the playbook's studio review" in r.json["error"]["message"]
    # gus's own playbook cannot go into a studio where he is a guest.
    started = gus.post("/teach/start?name=mine").get_json()
    assert gus.post("/teach/stop").status_code == 200
    r = gus.act(f"/playbooks/{started['id']}", "share_playbook", studio="team")
    assert r.status_code == 403 and "guests can read but not write" in r.json["error"]["message"]
