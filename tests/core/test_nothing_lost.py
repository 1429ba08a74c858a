"""Nothing a person typed is lost, over HTTP with a browser's cookies: a form rendered once is
accepted once (its one-time key's receipt: Back and submit again shows what the first submit
made), and a form posted after its session ended comes back, through signing in again, with
what was typed (never from another site's page)."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient

from tests.helpers import open_studio

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
KEY = re.compile(r'name="form_key" value="([^"]+)"')
RESUME = re.compile(r'name="resume" value="([^"]+)"')
ORIGIN = {"Origin": "http://localhost"}  # the test client's own host: a form of this site
NOTE_FORM = "/studios/team/note"
CREATE = f"{NOTE_FORM}/actions/create_note"


def signed_in(app: Flask, handle: str, password: str) -> FlaskClient:
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    r = browser.post("/login", data={"login": handle, "password": password,
                                     "csrf_token": CSRF.search(page).group(1)})  # type: ignore[union-attr]
    assert r.status_code == 303
    return browser


def drawn(browser: FlaskClient, path: str) -> tuple[str, str]:
    """A form page as drawn: its CSRF token and its create_note form's one-time key."""
    html = browser.get(path).get_data(as_text=True)
    return CSRF.search(html).group(1), KEY.search(html).group(1)  # type: ignore[union-attr]


def notes_titled(app: Flask, title: str) -> int:
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models import Note

    with app.app_context():
        return int(db.session.scalar(select(func.count()).select_from(Note).where(
            Note.title == title)) or 0)


def test_a_form_rendered_once_is_accepted_once(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("pat", password="pat-password")
    open_studio(app, "pat")
    pat = signed_in(app, "pat", "pat-password")
    csrf, key = drawn(pat, NOTE_FORM)
    form = {"csrf_token": csrf, "form_key": key, "title": "Once", "text": "Only once."}
    first = pat.post(CREATE, data=form)
    assert first.status_code == 303
    # Back, and the same form sent again: the first note is shown, with a word why.
    again = pat.post(CREATE, data=form)
    assert again.status_code == 303 and again.headers["Location"] == first.headers["Location"]
    assert "sent before" in pat.get(again.headers["Location"]).get_data(as_text=True)
    assert notes_titled(app, "Once") == 1
    # A form drawn anew is another form: a second note on purpose is made.
    csrf, key = drawn(pat, NOTE_FORM)
    other = pat.post(CREATE, data={**form, "csrf_token": csrf, "form_key": key})
    assert other.status_code == 303 and other.headers["Location"] != first.headers["Location"]
    assert notes_titled(app, "Once") == 2
    # A refused submit leaves no receipt: the corrected form goes through with its key.
    csrf, key = drawn(pat, NOTE_FORM)
    refused = pat.post(CREATE, data={"csrf_token": csrf, "form_key": key, "title": "Fixed",
                                     "text": " "})
    assert refused.status_code == 422
    fixed = pat.post(CREATE, data={"csrf_token": csrf, "form_key": key, "title": "Fixed",
                                   "text": "Now with text."})
    assert fixed.status_code == 303 and notes_titled(app, "Fixed") == 1
    # What may be repeated carries no key: a vote saved again changes it.
    decision = pat.post("/studios/team/decide/actions/create_decision",
                        data={"csrf_token": csrf, "question": "Lunch?", "options[0]": "Soup",
                              "form_key": drawn_key(pat, "/studios/team/decide")})
    page = pat.get(decision.headers["Location"]).get_data(as_text=True)
    vote = page.split('data-action="vote"', 1)[1].split("</form>", 1)[0]
    assert 'name="form_key"' not in vote and 'name="csrf_token"' in vote


def drawn_key(browser: FlaskClient, path: str) -> str:
    return KEY.search(browser.get(path).get_data(as_text=True)).group(1)  # type: ignore[union-attr]


def test_agents_are_not_asked_for_a_form_key(studio) -> None:  # type: ignore[no-untyped-def]
    """The key is a people's form field: an agent's JSON never needs one, and sending one is
    an unknown parameter as before."""
    assert studio.act(NOTE_FORM, "create_note", text="Twice").status_code == 201
    assert studio.act(NOTE_FORM, "create_note", text="Twice").status_code == 201
    refused = studio.act(NOTE_FORM, "create_note", text="Keyed", form_key="a" * 24)
    assert refused.status_code == 422
    assert refused.get_json()["error"]["errors"][0]["param"] == "form_key"


def test_a_note_sent_after_the_session_ended_comes_back_after_signing_in(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("pat", password="pat-password")
    open_studio(app, "pat")
    pat = signed_in(app, "pat", "pat-password")
    csrf, key = drawn(pat, NOTE_FORM)
    typed = {"csrf_token": csrf, "form_key": key, "title": "Kept", "text": "Typed for an hour."}
    # The session ended (a new browser session: no cookie at all).
    ended = app.test_client()
    answer = ended.post(CREATE, data=typed, headers=ORIGIN)
    html = answer.get_data(as_text=True)
    assert answer.status_code == 401
    assert "Your session ended before this was sent" in html
    assert 'action="/login?next=%2Fstudios%2Fteam%2Fnote"' in html
    assert "Typed for an hour." not in html  # carried signed, not shown on the sign-in page
    assert notes_titled(app, "Kept") == 0
    resume = RESUME.search(html).group(1)  # type: ignore[union-attr]
    # A wrong password keeps the form.
    wrong = ended.post("/login?next=/studios/team/note",
                       data={"login": "pat", "password": "nope", "resume": resume,
                             "csrf_token": CSRF.search(html).group(1)})  # type: ignore[union-attr]
    assert wrong.status_code == 401 and RESUME.search(wrong.get_data(as_text=True))
    # Signed in again: the same page, the form as it was sent, its key kept, nothing made yet.
    back = ended.post("/login?next=/studios/team/note",
                      data={"login": "pat", "password": "pat-password", "resume": resume,
                            "csrf_token": CSRF.search(html).group(1)})  # type: ignore[union-attr]
    page = back.get_data(as_text=True)
    assert back.status_code == 200
    assert "the form as you left it" in page
    assert 'value="Kept"' in page and "Typed for an hour.</textarea>" in page
    assert f'name="form_key" value="{key}"' in page
    assert 'data-resumed-path="/studios/team/note"' in page
    assert notes_titled(app, "Kept") == 0
    sent = ended.post(CREATE, data={**typed, "csrf_token": CSRF.search(page).group(1)})  # type: ignore[union-attr]
    assert sent.status_code == 303 and notes_titled(app, "Kept") == 1
    # A forged kept form is not taken.
    forged = app.test_client()
    login = forged.get("/login").get_data(as_text=True)
    landed = forged.post("/login", data={"login": "pat", "password": "pat-password",
                                         "resume": resume[:-4] + "AAAA",
                                         "csrf_token": CSRF.search(login).group(1)})  # type: ignore[union-attr]
    assert landed.status_code == 303


def test_a_form_whose_session_changed_comes_back_on_its_page(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    """Still signed in, but the form's token was another session's (the remember-me cookie
    brought the person back): the same page, the form as it was sent."""
    make_agent("pat", password="pat-password")
    open_studio(app, "pat")
    pat = signed_in(app, "pat", "pat-password")
    _csrf, key = drawn(pat, NOTE_FORM)
    answer = pat.post(CREATE, data={"csrf_token": "from-another-session", "form_key": key,
                                    "title": "Still here", "text": "Kept on its page."},
                      headers=ORIGIN)
    page = answer.get_data(as_text=True)
    assert answer.status_code == 400
    assert "so it was not sent" in page and 'value="Still here"' in page
    assert "Kept on its page.</textarea>" in page and notes_titled(app, "Still here") == 0


def test_another_sites_form_is_not_kept(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("pat", password="pat-password")
    open_studio(app, "pat")
    for headers in ({"Origin": "https://elsewhere.example"}, {}):
        answer = app.test_client().post(CREATE, data={"title": "Planted", "text": "x"},
                                        headers=headers)
        html = answer.get_data(as_text=True)
        assert answer.status_code == 400, headers
        assert 'name="resume"' not in html and "Planted" not in html
