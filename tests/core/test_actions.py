"""Each core action on its success path and its error paths (422, 403, 404, 409)."""

from __future__ import annotations

from tests.helpers import action_names, parse_md


def note_of(alice, **params):  # type: ignore[no-untyped-def]
    r = alice.act("/studios/team/note", "create_note", **params)
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.json["location"]


def test_create_note_returns_201_with_location_and_the_page_shows_it(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", text="# Heading\nbody", deadline="3d")
    assert r.status_code == 201
    assert r.headers["Location"].endswith(r.json["location"])
    page = studio.get(r.json["location"])
    front, body = parse_md(page.get_data(as_text=True))
    assert front["title"] == "Heading"
    assert "# Heading\nbody" in body


def test_create_note_markdown_success_page(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", accept="text/markdown", text="hi")
    assert r.status_code == 201
    text = r.get_data(as_text=True)
    assert "# Action Success: `create_note`" in text
    assert "Location: [/studios/team/n/" in text


def test_validation_lists_every_bad_parameter(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", title=7, deadline="someday", bogus=1)
    assert r.status_code == 422
    problems = {e["param"]: e["message"] for e in r.json["error"]["errors"]}
    assert set(problems) == {"title", "text", "deadline", "bogus"}
    assert problems["text"] == "is required"
    assert problems["deadline"].startswith("not a date-time")
    assert "unknown parameter" in problems["bogus"]
    r = studio.act("/studios/team/note", "create_note", text="x", deadline="someday")
    assert r.status_code == 422
    assert r.json["error"]["errors"][0]["param"] == "deadline"


def test_confirm_read_disappears_then_comes_back_as_reconfirm(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = note_of(studio, text="v1")
    bob = make_agent("bob")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    assert "confirm_read" in action_names(bob.get(path).get_data(as_text=True))
    assert bob.act(path, "confirm_read").status_code == 200
    assert "confirm_read" not in action_names(bob.get(path).get_data(as_text=True))
    again = bob.act(path, "confirm_read")
    assert again.status_code == 409
    assert studio.act(f"{path}/edit", "update_note", text="v2").status_code == 200
    page = bob.get(path, accept="text/html").get_data(as_text=True)
    assert "Confirm I read it again" in page  # the page says the note changed since
    assert bob.act(path, "confirm_read").status_code == 200
    history = bob.get(path).get_data(as_text=True)
    assert history.count(": read_confirmation") == 2


def test_only_the_creator_edits(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = note_of(studio, text="mine")
    bob = make_agent("bob")
    bob.act("/studios/team/join", "join_studio")
    assert "update_note" not in action_names(bob.get(f"{path}/edit").get_data(as_text=True))
    r = bob.act(f"{path}/edit", "update_note", text="hijack")
    assert r.status_code == 403
    assert "creator" in r.json["error"]["message"]
    assert "mine" in studio.get(path).get_data(as_text=True)


def test_non_member_gets_403_with_join_link(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = note_of(studio, text="private")
    carol = make_agent("carol")
    for target in ("/studios/team", path):
        r = carol.get(target)
        assert r.status_code == 403
        assert "(/studios/team/join)" in r.get_data(as_text=True)
    r = carol.act("/studios/team/note", "create_note", text="x")
    assert r.status_code == 403 and r.json["error"]["link"] == "/studios/team/join"


def test_unknown_action_is_404_listing_valid_ones(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "add_option", title="x")
    assert r.status_code == 404
    assert r.json["error"]["actions"] == ["create_note"]
    r = studio.act("/no/such/page", "anything")
    assert r.status_code == 404


def test_comments_and_pins(studio) -> None:  # type: ignore[no-untyped-def]
    path = note_of(studio, text="pin me")
    r = studio.act(path, "add_comment", text="first!")
    assert r.status_code == 201 and "#comment-" in r.json["location"]
    assert "Comments (1)" in studio.get(path).get_data(as_text=True)
    assert studio.act(f"{path}/settings", "pin_note").status_code == 200
    assert action_names(studio.get(f"{path}/settings").get_data(as_text=True)) == [
        "unpin_note", "delete_note"]
    assert studio.act(f"{path}/settings", "pin_note").status_code == 409
    home = studio.get("/studios/team").get_data(as_text=True)
    assert "## Pinned\n\n* note: [pin me]" in home
    assert studio.act(f"{path}/settings", "unpin_note").status_code == 200
    assert "Nothing pinned." in studio.get("/studios/team").get_data(as_text=True)
    # Pins name their items newest first, in both formats; a deleted item's pin shows nothing.
    decision = studio.act("/studios/team/decide", "create_decision", question="Pinned too?")
    assert decision.status_code == 201
    for pinned, action in ((path, "pin_note"), (decision.json["location"], "pin_decision")):
        assert studio.act(f"{pinned}/settings", action).status_code == 200
    home = studio.get("/studios/team").get_data(as_text=True)
    assert (f"## Pinned\n\n* decision: [Pinned too?]({decision.json['location']})\n"
            f"* note: [pin me]({path})") in home
    html = studio.get("/studios/team", accept="text/html").get_data(as_text=True)
    assert f'<a href="{path}">pin me</a>' in html
    assert studio.act(f"{path}/settings", "delete_note").status_code == 200
    home = studio.get("/studios/team").get_data(as_text=True)
    assert "pin me" not in home and "Pinned too?" in home


def test_links_and_backlinks(studio) -> None:  # type: ignore[no-untyped-def]
    target = note_of(studio, text="target")
    note_of(studio, text=f"see http://127.0.0.1:5000{target} and also {target}")
    note_of(studio, text=f"again {target}, and a foreign https://evil.example{target}")
    page = studio.get(target).get_data(as_text=True)
    assert "## Backlinks" in page
    board = studio.get("/studios/team/backlinks").get_data(as_text=True)
    assert "| note: [target](" in board and "| 2 |" in board


def test_an_item_page_names_and_links_each_source_and_its_comments(studio) -> None:  # type: ignore[no-untyped-def]
    """Backlinks of every kind, by title and path, in both formats; a deleted source leaves
    them; comments come with their authors, oldest first."""
    target = note_of(studio, text="target", title="Target")
    linking = note_of(studio, text=f"see {target}", title="Linking note")
    gone = note_of(studio, text=f"also {target}", title="Deleted soon")
    decision = studio.act("/studios/team/decide", "create_decision", question="Which way?",
                          description=f"Read {target} first")
    assert decision.status_code == 201
    assert studio.act(target, "add_comment", text="first!").status_code == 201
    assert studio.act(target, "add_comment", text="second, see above").status_code == 201
    assert studio.act(gone, "delete_note").status_code == 200
    page = studio.get(target).get_data(as_text=True)
    backlinks = page.split("## Backlinks", 1)[1].split("## Comments", 1)[0]
    assert f"* [Linking note]({linking})" in backlinks
    assert f"* [Which way?]({decision.json['location']})" in backlinks
    assert "Deleted soon" not in backlinks
    comments = page.split("## Comments (2)", 1)[1]
    assert comments.index("first!") < comments.index("second, see")
    assert comments.count("### Alice") == 2
    html = studio.get(target, accept="text/html").get_data(as_text=True)
    assert f'<a href="{linking}">Linking note</a>' in html
    assert f'<a href="{decision.json["location"]}">Which way?</a>' in html
    assert "Deleted soon" not in html and html.count('class="comment"') == 2


def test_studio_create_join_and_settings(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/new", "create_studio", name="Lab", handle="lab",
                   join_policy="invite", tempo="daily", timezone="Europe/Paris",
                   heartbeats_required=False)
    assert r.status_code == 201 and r.json["location"] == "/studios/lab"
    assert studio.act("/studios/new", "create_studio", name="Again",
                      handle="lab").status_code == 409
    bad = studio.act("/studios/new", "create_studio", name="X", handle="Bad Handle!",
                     timezone="Mars/Olympus", tempo="hourly")
    assert bad.status_code == 422
    assert {e["param"] for e in bad.json["error"]["errors"]} == {"handle", "tempo"}
    bad = studio.act("/studios/new", "create_studio", name="X", handle="ok-one",
                     timezone="Mars/Olympus")
    assert bad.status_code == 422 and bad.json["error"]["errors"][0]["param"] == "timezone"
    dave = make_agent("dave")
    assert dave.act("/studios/lab/join", "join_studio").status_code == 403
    assert dave.act("/studios/lab/join", "join_studio", code="wrong").status_code == 403
    invite = studio.act("/studios/lab/settings", "create_invite", expires="1d")
    assert invite.status_code == 201
    code = invite.json["result"]["code"]
    assert dave.act("/studios/lab/join", "join_studio", code=code).status_code == 200
    assert "join_studio" not in action_names(dave.get("/studios/lab/join").get_data(as_text=True))
    # dave is a member, not an admin: settings are visible but not editable.
    assert action_names(dave.get("/studios/lab/settings").get_data(as_text=True)) == []
    assert dave.act("/studios/lab/settings", "update_studio_settings",
                    name="Mine").status_code == 403
    ok = studio.act("/studios/lab/settings", "update_studio_settings", name="Lab 2",
                    tempo="monthly")
    assert ok.status_code == 200
    assert "| tempo | monthly |" in studio.get("/studios/lab/settings").get_data(as_text=True)


def test_profile_and_tokens_actions(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/u/alice/settings", "update_profile", name="Alice A.")
    assert r.status_code == 200
    assert "# Alice A." in studio.get("/u/alice").get_data(as_text=True)
    r = studio.act("/u/alice/settings/tokens", "create_api_token", name="robot",
                   scopes="read", expires="1d")
    assert r.status_code == 201
    plaintext = r.json["result"]["token"]
    assert studio.client.get("/studios/team", headers={
        "Authorization": f"Bearer {plaintext}", "Accept": "text/markdown"}).status_code == 200
    listing = studio.get("/u/alice/settings/tokens").get_data(as_text=True)
    assert plaintext not in listing and r.json["result"]["prefix"] in listing
    bob = make_agent("bob")
    assert bob.get("/u/alice/settings").status_code == 403
    assert bob.act("/u/alice/settings/tokens", "create_api_token", name="x").status_code == 403
