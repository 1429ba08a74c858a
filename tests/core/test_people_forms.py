"""The HTML door for people, over HTTP: generated forms with humane labels and structured
fields, what those forms submit is accepted, a refused form comes back with the input (the
Markdown and JSON doors keep their error formats), times in the viewer's zone, and the chrome's
links (home's Markdown twin, an actions page's footer, the cycles page's header)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.actions.form_fields import nest as denest
from app.web.chrome import humane, relative

PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12)
  }
"""


def html_form(agent, path: str, action: str, data: dict[str, str]):  # type: ignore[no-untyped-def]
    """A person's form post (as a browser sends it) with the agent's credentials."""
    return agent.client.post(f"{path}/actions/{action}", data=data,
                             headers={"Authorization": f"Bearer {agent.token}",
                                      "Accept": "text/html"})


def test_labels_read_as_words() -> None:
    assert humane("relativePosition") == "Relative position"
    assert humane("new_name") == "New name"
    assert humane("anchorRoom") == "Anchor room"
    assert humane("dsl") == "DSL"
    assert humane("critical_mass", "How many") == "How many"


def test_relative_times() -> None:
    now = datetime(2026, 11, 26, 12, tzinfo=UTC)
    assert relative(now + timedelta(days=2), now) == "in 2 days"
    assert relative(now - timedelta(hours=3), now) == "3 hours ago"
    assert relative(now + timedelta(seconds=10), now) == "just now"


def test_bracketed_names_nest() -> None:
    assert denest({"size[width]": "4", "size[height]": "3", "name": "K"}) == {
        "size": {"width": "4", "height": "3"}, "name": "K"}


def test_floorplan_form_fields_are_structured_and_accepted(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    path = alice.act("/studios/team/floorplans", "create_floorplan", name="office",
                     dsl=PLAN).get_json()["location"]
    html = alice.get(path, accept="text/html").get_data(as_text=True)
    form = html.split('data-action="add_room"', 1)[1].split("</form>", 1)[0]
    assert 'name="size[width]"' in form and 'type="number"' in form
    # The page's own add-room form: anchor room and direction as selects, labelled in words.
    assert 'name="relativePosition[reference]"' in form and ">Next to room<" in form
    assert "Relativeposition" not in form
    assert "floorplan://" not in html
    assert 'placeholder="JSON"' not in form  # no JSON text areas for objects with fields
    # What the form submits: the nested fields, an untouched optional group, empty selects.
    response = html_form(alice, path, "add_room", {
        "name": "Kitchen", "position[x]": "0", "position[y]": "14", "size[width]": "10",
        "size[height]": "6", "relativePosition[direction]": "", "relativePosition[reference]": "",
        "relativePosition[gap]": "", "walls[top]": "", "label": "", "height": "",
        "floor": "", "parent": ""})
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    page = alice.get(path + ".md").get_data(as_text=True)
    assert "room Kitchen at (0,14) size (10 x 6)" in page
    assert "| Kitchen | f1 | (0, 14) | 10 x 6 | 60 |" in page


def test_a_refused_form_is_the_same_page_with_the_input(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    response = html_form(alice, "/studios/new", "create_studio",
                         {"name": "Hana's studio", "handle": "Bad Handle!", "csrf_token": "x"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'role="alert"' in html and "nothing was saved" in html
    assert 'value="Bad Handle!"' in html and "Hana&#39;s studio" in html
    assert 'id="create_studio-handle-error"' in html
    assert re.search(r'aria-describedby="create_studio-handle-error[^"]*"', html)
    assert "must match" not in html  # the rule in words, not a regular expression
    # Agents' doors are unchanged: JSON and Markdown error bodies.
    as_json = alice.act("/studios/new", "create_studio", name="X", handle="Bad Handle!")
    assert as_json.status_code == 422 and as_json.get_json()["ok"] is False
    assert as_json.get_json()["error"]["errors"][0]["param"] == "handle"
    as_md = alice.act("/studios/new", "create_studio", accept="text/markdown", name="X",
                      handle="Bad Handle!")
    assert as_md.status_code == 422 and as_md.get_data(as_text=True).startswith("---\n")
    # A whitespace-only note: the title typed stays, the message sits by the text.
    response = html_form(alice, "/studios/team/note", "create_note",
                         {"title": "Empty inside", "text": "   "})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'value="Empty inside"' in html and 'id="create_note-text-error"' in html
    assert 'class="flash success"' not in html


def test_times_follow_the_viewers_zone(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    note = alice.act("/studios/team/note", "create_note", title="Hello",
                     text="Hi").get_json()["location"]
    html = alice.get(note, accept="text/html").get_data(as_text=True)
    assert re.search(r'<time datetime="[^"]+" title="[^"]+\(UTC\)">just now</time>', html)
    bad = alice.act("/u/alice/settings", "set_time_zone", timezone="Mars/Olympus")
    assert bad.status_code == 422
    assert alice.act("/u/alice/settings", "set_time_zone",
                     timezone="Pacific/Auckland").status_code == 200
    html = alice.get(note, accept="text/html").get_data(as_text=True)
    assert "(Pacific/Auckland)</" not in html and "(Pacific/Auckland)\">" in html
    settings = alice.get("/u/alice/settings", accept="text/html").get_data(as_text=True)
    assert "<option selected>Pacific/Auckland</option>" in settings
    # Markdown keeps exact UTC times for agents.
    assert "UTC" in alice.get(note).get_data(as_text=True)


def test_chrome_links_lead_somewhere(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    home = alice.get("/", accept="text/html").get_data(as_text=True)
    assert '<link rel="alternate" type="text/markdown" href="/.md">' in home
    assert alice.get("/.md").status_code == 200
    assert alice.get("/.md").get_data(as_text=True).startswith("---\n")
    actions = alice.get("/studios/team/actions", accept="text/html").get_data(as_text=True)
    assert "/actions/actions" not in actions
    cycles = alice.get("/studios/team/cycles", accept="text/html").get_data(as_text=True)
    header = cycles.split("</header>", 1)[0]
    assert 'href="/u/alice"' in header and 'href="/u/"' not in cycles
    for link in ("/playbooks", "/workflows", "/u/alice/agent-activity"):
        assert f'href="{link}"' in header
    studio_page = alice.get("/studios/team", accept="text/html").get_data(as_text=True)
    for section in ("note", "decide", "commit", "cycles", "team", "settings"):
        assert f'href="/studios/team/{section}"' in studio_page



def test_a_deadline_field_is_a_date_time_picker_with_the_value_in_words(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    decision = alice.act("/studios/team/decide", "create_decision", question="When?",
                         deadline="2060-06-01T12:00:00Z").get_json()["location"]
    html = alice.get(f"{decision}/settings", accept="text/html").get_data(as_text=True)
    field = re.search(r'<input type="datetime-local"[^>]*>', html)
    assert field is not None and 'value="2060-06-01T12:00"' in field.group(0)
    assert "Now set to Tue 01 Jun 2060, 12:00 UTC (UTC)" in html
    assert "+00:00" not in html.split("<main", 1)[1].split("</form>", 1)[0]
    # What the picker submits (a local time without a zone) is read in the viewer's zone.
    assert alice.act("/u/alice/settings", "set_time_zone", timezone="Europe/Paris")
    response = html_form(alice, f"{decision}/settings", "update_decision_settings",
                         {"deadline": "2060-06-01T14:00"})
    assert response.status_code == 303, response.get_data(as_text=True)[:500]
    md = alice.get(decision).get_data(as_text=True)
    assert "2060-06-01 14:00 CEST" in md  # read and shown in the person's own zone
    assert alice.act("/u/alice/settings", "set_time_zone", timezone="")
    assert "2060-06-01 12:00 UTC" in alice.get(decision).get_data(as_text=True)


def test_sign_up_refused_keeps_the_input_and_names_the_field(client) -> None:  # type: ignore[no-untyped-def]
    form = client.get("/signup").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token is not None
    response = client.post("/signup", data={"csrf_token": token.group(1), "handle": "Not Ok",
                                            "name": "Hana", "password": "hana-password"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'role="alert"' in html and 'value="Not Ok"' in html and 'value="Hana"' in html
    assert 'id="handle-error"' in html and 'aria-invalid="true"' in html
    assert "hana-password" not in html  # a password is never echoed


def test_a_wrong_invite_code_comes_back_on_the_join_page(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import open_studio

    make_agent("ivo")
    open_studio(app, "ivo", handle="closed", name="Closed")
    ivo = make_agent("ivo")
    assert ivo.act("/studios/closed/settings", "update_studio_settings",
                   join_policy="invite").status_code == 200
    bob = make_agent("bob")
    response = html_form(bob, "/studios/closed/join", "join_studio", {"code": "WRONG-123"})
    assert response.status_code == 403
    html = response.get_data(as_text=True)
    assert 'role="alert"' in html and "No invite has this code" in html
    assert 'id="invite-code" name="code" value="WRONG-123"' in html  # kept, to correct it
    # The same refusal to an agent is its usual JSON error.
    as_json = bob.act("/studios/closed/join", "join_studio", code="WRONG-123")
    assert as_json.status_code == 403 and as_json.get_json()["error"]["kind"] == "forbidden"


def test_a_refused_date_time_comes_back_as_typed_in_the_persons_zone(app, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    assert alice.act("/u/alice/settings", "set_time_zone",
                     timezone="Asia/Tokyo").status_code == 200
    response = html_form(alice, "/studios/team/decide", "create_decision",
                         {"question": "", "deadline": "2060-06-01T09:30"})
    assert response.status_code == 422
    field = re.search(r'<input type="datetime-local"[^>]*name="deadline"[^>]*>',
                      response.get_data(as_text=True))
    assert field is not None and 'value="2060-06-01T09:30"' in field.group(0)
