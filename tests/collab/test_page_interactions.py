"""The people's forms over HTTP: a whole ballot in one form post, options typed at creation,
the close confirmation page, leaving a commitment, the Markdown preview, a note's history with
its differences, and revoking a token from its row. Bad input is refused, never a 500."""

from __future__ import annotations

import re

from tests.helpers import action_names, join_studio, parse_md


def form_post(agent, path: str, data: dict[str, str], accept: str = "application/json"):  # type: ignore[no-untyped-def]
    """A form-encoded POST (as a browser's form sends it), authenticated by the agent's token."""
    return agent.client.post(path, data=data, headers=agent.headers(accept))


def create_with_options(agent, *titles: str):  # type: ignore[no-untyped-def]
    data = {"question": "Which day?", "options_open": "true"}
    for i, title in enumerate(titles):
        data[f"options[{i}]"] = title
    return form_post(agent, "/studios/team/decide/actions/create_decision", data)


def ballot(options: dict[str, tuple[bool, bool]]) -> dict[str, str]:
    data: dict[str, str] = {}
    for i, (title, (accept, prefer)) in enumerate(options.items()):
        data[f"votes[{i}][option_title]"] = title
        data[f"votes[{i}][accept]"] = "true" if accept else "false"
        data[f"votes[{i}][prefer]"] = "true" if prefer else "false"
    return data


def test_options_from_repeated_fields_and_one_ballot_post(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    # Blank fields (the spare rows of the form) are no options.
    r = create_with_options(studio, "Monday", "", "Tuesday", "Friday", "")
    assert r.status_code == 201, r.get_data(as_text=True)
    assert r.json["result"]["options"] == ["Monday", "Tuesday", "Friday"]
    path = r.json["location"]
    r = form_post(studio, f"{path}/actions/vote", ballot({"Monday": (True, False),
                                                          "Tuesday": (True, True),
                                                          "Friday": (False, False)}))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert [v["option_title"] for v in r.json["result"]["votes"]] == ["Monday", "Tuesday",
                                                                      "Friday"]
    r = form_post(bob, f"{path}/actions/vote", ballot({"Monday": (False, False),
                                                       "Tuesday": (True, False),
                                                       "Friday": (True, True)}))
    assert r.status_code == 200
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    # One form for the whole ballot; each checkbox is named with its option.
    assert html.count('data-action="vote"') == 1
    assert 'name="votes[1][accept]"' in html
    assert 'Accept<span class="visually-hidden">: Tuesday' in html
    body = parse_md(studio.get(path).get_data(as_text=True))[1]
    assert "| 1 | Tuesday | 2 | 1 |" in body


def test_bad_ballots_are_refused_with_reasons(studio) -> None:  # type: ignore[no-untyped-def]
    path = create_with_options(studio, "Monday", "Tuesday").json["location"]
    r = form_post(studio, f"{path}/actions/vote", {"votes[0][option_title]": "Monday",
                                                    "votes[0][accept]": "maybe"})
    assert r.status_code == 422
    assert "boolean" in r.json["error"]["errors"][0]["message"]
    r = form_post(studio, f"{path}/actions/vote", {"votes[0][option_title]": "Sunday",
                                                    "votes[0][accept]": "true"})
    assert r.status_code in (404, 409, 422), r.get_data(as_text=True)
    r = form_post(studio, f"{path}/actions/vote", {"votes[0][colour]": "red"})
    assert r.status_code == 422
    r = form_post(studio, f"{path}/actions/vote", {"votes[99999][option_title]": "Monday"})
    assert r.status_code == 422
    r = create_with_options(studio, "Same", "Same")
    assert r.status_code == 422
    # Nothing was recorded by the refused ballots.
    assert "Nobody has voted yet" in studio.get(path, accept="text/html").get_data(as_text=True)


def test_close_asks_first_and_the_outcome_leads(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = create_with_options(studio, "Lisbon", "Oslo").json["location"]
    form_post(studio, f"{path}/actions/vote", ballot({"Oslo": (True, True)}))
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    # The decision page links to the confirmation; it carries no one-click close form.
    assert f'href="{path}/close"' in html and "actions/close_decision" not in html
    confirm = studio.get(f"{path}/close", accept="text/html").get_data(as_text=True)
    assert f'action="{path}/actions/close_decision"' in confirm
    assert "<strong>Oslo</strong>" in confirm
    # Somebody else is told they cannot close it, with no form.
    other = bob.get(f"{path}/close", accept="text/html").get_data(as_text=True)
    assert "actions/close_decision" not in other and "Only the person" in other
    assert studio.get(f"{path}/close").status_code == 200  # Markdown too
    assert studio.act(path, "close_decision").status_code == 200
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    assert html.index('class="outcome"') < html.index("Final results")
    assert 'data-winner="Oslo"' in html and 'data-action="vote"' not in html
    body = parse_md(studio.get(path).get_data(as_text=True))[1]
    assert body.index("## Outcome") < body.index("## Final results")
    assert "Chosen: **Oslo** (accepted by 1, preferred by 1; 1 voted)." in body
    assert "already closed" in studio.get(f"{path}/close", accept="text/html").get_data(
        as_text=True)
    assert studio.get("/studios/team/d/nope/close", accept="text/html").status_code == 404


def test_join_and_leave_a_commitment(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    r = studio.act("/studios/team/commit", "create_commitment", title="Paint", critical_mass=2)
    path = r.json["location"]
    assert "leave_commitment" not in action_names(bob.get(path).get_data(as_text=True))
    assert bob.act(path, "join_commitment").status_code == 200
    assert "leave_commitment" in action_names(bob.get(path).get_data(as_text=True))
    html = bob.get(path, accept="text/html").get_data(as_text=True)
    assert 'data-action="leave_commitment"' in html and 'aria-valuetext="1 of 2 needed"' in html
    r = bob.act(path, "leave_commitment")
    assert r.status_code == 200 and r.json["result"]["joined"] == 0
    # A repeat changes nothing and says so.
    r = bob.act(path, "leave_commitment")
    assert r.status_code == 200 and "were not in it" in r.json["message"]
    assert bob.act(path, "join_commitment").status_code == 200
    assert bob.act(path, "leave_commitment", extra="x").status_code == 422
    assert studio.act(path, "join_commitment").status_code == 200
    r = studio.act(f"{path}/settings", "update_commitment_settings", limit=2)
    assert r.status_code == 200  # full: closes it
    r = bob.act(path, "leave_commitment")
    assert r.status_code == 409 and "final" in r.json["error"]["message"]


def test_markdown_preview(studio, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    r = studio.client.post("/preview/markdown",
                           data={"text": "**hi** <script>alert(1)</script> [x](javascript:x)"},
                           headers=studio.headers("text/html"))
    assert r.status_code == 200 and r.mimetype == "text/html"
    body = r.get_data(as_text=True)
    assert "<strong>hi</strong>" in body
    assert "<script" not in body and 'href="javascript' not in body
    r = studio.post("/preview/markdown", json={"text": "# Title"})
    assert r.status_code == 200 and "<h1>Title</h1>" in r.get_data(as_text=True)
    assert studio.post("/preview/markdown", json={}).status_code == 422
    assert studio.post("/preview/markdown", json={"text": "x" * 100_001}).status_code == 422
    assert studio.post("/preview/markdown", json={"text": "a\x00b"}).status_code == 422
    assert client.post("/preview/markdown", data={"text": "x"}).status_code in (400, 401)
    reader = make_agent("reader", scopes="read")
    assert reader.post("/preview/markdown", json={"text": "x"}).status_code == 200


def test_note_history_shows_the_differences(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", title="Plan",
                   text="line one\nline two\nline three")
    path = r.json["location"]
    assert studio.act(f"{path}/edit", "update_note", text="line one\nline 2\nline three\nfour",
                      deadline="2026-12-03T05:24:50.857919+00:00").status_code == 200
    # The editor shows a deadline as a person picks one: to the minute, in their zone (UTC).
    edit = studio.get(f"{path}/edit", accept="text/html").get_data(as_text=True)
    picker = re.search(r'<input type="datetime-local"[^>]*name="deadline"[^>]*>', edit)
    assert picker is not None and 'value="2026-12-03T05:24"' in picker.group(0), edit
    html = studio.get(f"{path}/history", accept="text/html").get_data(as_text=True)
    assert html.index("Version 2") < html.index("Version 1")
    assert "removed line 2: </span><span aria-hidden=\"true\">- </span>line two" in html
    assert "added line 2: </span><span aria-hidden=\"true\">+ </span>line 2" in html
    assert "2 lines added, 1 removed" in html
    md = parse_md(studio.get(f"{path}/history").get_data(as_text=True))[1]
    assert "```diff" in md and "- line two" in md and "+ four" in md
    assert f"{path}/history" in studio.get(path).get_data(as_text=True)
    outsider = make_agent("eve")
    assert outsider.get(f"{path}/history").status_code == 403
    assert studio.get("/studios/team/n/zzzz/history").status_code == 404


def test_revoke_a_token_from_its_row(app, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    spare = make_agent("alice")  # a second token of alice's
    page = "/u/alice/settings/tokens"
    html = studio.get(page, accept="text/html").get_data(as_text=True)
    assert html.count('data-action="revoke_api_token"') == 2
    assert spare.get("/studios/team").status_code == 200
    # The row's revoke form names the token by its id; the spare one is the newest row.
    token_id = html.split('name="token_id" value="', 1)[1].split('"', 1)[0]
    r = form_post(studio, f"{page}/actions/revoke_api_token", {"token_id": token_id})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert spare.get("/studios/team").status_code == 401
    html = studio.get(page, accept="text/html").get_data(as_text=True)
    assert html.count('data-action="revoke_api_token"') == 1
    assert form_post(studio, f"{page}/actions/revoke_api_token", {"token_id": "nope"}
                     ).status_code == 404


def test_odd_structured_field_names_are_refused_not_crashed(studio) -> None:  # type: ignore[no-untyped-def]
    path = create_with_options(studio, "Monday", "Tuesday").json["location"]
    vote = f"{path}/actions/vote"
    for data in ({"votes[0]": "Monday"}, {"votes[a][b]": "x"}, {"votes[0][option_title][x]": "y"},
                 {"votes[": "x"}, {"votes[0][accept]": "true"}, {"votes[][accept]": "true"}):
        r = form_post(studio, vote, data)
        assert r.status_code == 422, (data, r.status_code, r.get_data(as_text=True)[:300])
    r = form_post(studio, vote, {"votes[0][option_title]": "Monday\x00"})
    assert r.status_code == 422 and r.json["error"]["errors"] == [
        {"param": "votes[0][option_title]", "message": "must not contain NUL characters"}]
    # "options[]" repeated: a browser sends each; the last one reaches the form reader.
    r = form_post(studio, "/studios/team/decide/actions/create_decision",
                  {"question": "Q", "options[]": "Only"})
    assert r.status_code == 201 and r.json["result"]["options"] == ["Only"]
    r = form_post(studio, "/studios/team/decide/actions/create_decision",
                  {"question": "Q", "options[0]": "", "options[1]": " "})
    assert r.status_code == 422  # a blank-looking option is not silently an option


def test_the_token_form_offers_plain_choices(studio) -> None:  # type: ignore[no-untyped-def]
    page = "/u/alice/settings/tokens"
    html = studio.get(page, accept="text/html").get_data(as_text=True)
    assert '<option value="read">only read (read)</option>' in html
    assert html.count('data-action="create_api_token"') == 1
    r = form_post(studio, f"{page}/actions/create_api_token",
                  {"name": "reader", "scopes": "read", "expires": "30d"})
    assert r.status_code == 201 and r.json["result"]["scopes"] == "read"
    r = form_post(studio, f"{page}/actions/create_api_token",
                  {"name": "x", "scopes": "admin", "expires": "30d"})
    assert r.status_code == 422


def _row_titles(html: str, action: str) -> list[str]:
    """The options named by each of the page's forms for ``action`` (one per option row)."""
    forms = re.findall(rf'<form[^>]*data-action="{action}"[^>]*>.*?</form>', html, flags=re.S)
    return [re.search(r'name="option_title" value="([^"]*)"', f).group(1) for f in forms]


def _form(html: str, action: str) -> str:
    found = re.search(rf'<form[^>]*data-action="{action}".*?</form>', html, flags=re.S)
    assert found, f"no {action} form"
    return found.group(0)


def test_a_person_picks_the_option_to_rename_or_delete_from_the_live_ones(  # type: ignore[no-untyped-def]
        app, studio) -> None:
    from bench.sqlcount import page_statements

    r = create_with_options(studio, "Monday", "Tuesday", "Friday")
    path = r.json["location"]
    # The choices are the options the page already read: the HTML page reads no more than the
    # Markdown's (its header's unread count is kept). (Each the fewest of a few warm GETs: a
    # cache may be cold again for one by timing alone.)
    assert page_statements(app, studio.token, path, "text/html") == \
        page_statements(app, studio.token, path, "text/markdown")
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    # Each option that may still change has its own rename and remove controls, on its row.
    for action in ("update_option", "delete_option"):
        assert _row_titles(html, action) == ["Monday", "Tuesday", "Friday"]  # order added
    # The action's own page (for agents and power users) still picks from a select.
    own = studio.get(f"{path}/actions/update_option", accept="text/html")
    assert "<option value=\"Tuesday\">Tuesday</option>" in _form(own.get_data(as_text=True),
                                                                   "update_option")
    renamed = form_post(studio, f"{path}/actions/update_option",
                        {"option_title": "Tuesday", "new_title": "Wednesday"})
    assert renamed.status_code == 200, renamed.get_data(as_text=True)
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    assert _row_titles(html, "delete_option") == ["Monday", "Wednesday", "Friday"]
    # Nothing chosen: refused with the field named, never a 500.
    empty = form_post(studio, f"{path}/actions/delete_option", {"option_title": ""},
                      accept="text/html")
    assert empty.status_code in (400, 422), empty.status_code
    assert "option_title" in empty.get_data(as_text=True) or "Option title" in \
        empty.get_data(as_text=True)

    # An option voted on stays as it is: it is no longer offered.
    voted = form_post(studio, f"{path}/actions/vote", ballot({"Monday": (True, False)}))
    assert voted.status_code == 200, voted.get_data(as_text=True)
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    assert _row_titles(html, "update_option") == ["Wednesday", "Friday"]
    # Once every option has a vote, neither form is offered, to people or agents, and a post
    # says why.
    everything = ballot({"Monday": (True, False), "Wednesday": (False, False),
                         "Friday": (True, True)})
    assert form_post(studio, f"{path}/actions/vote", everything).status_code == 200
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    assert 'data-action="update_option"' not in html and 'data-action="delete_option"' not in html
    names = action_names(studio.get(path).get_data(as_text=True))
    assert "vote" in names and "update_option" not in names and "delete_option" not in names
    fixed = form_post(studio, f"{path}/actions/delete_option", {"option_title": "Friday"})
    assert fixed.status_code == 409, fixed.get_data(as_text=True)
    assert "someone has voted on every option" in fixed.json["error"]["message"]
