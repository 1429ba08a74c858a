"""Every core page in HTML, Markdown (Accept and .md suffix) and JSON, as a member."""

from __future__ import annotations

import pytest

from tests.helpers import action_names, parse_md


@pytest.fixture
def world(studio):  # type: ignore[no-untyped-def]
    """alice's studio 'team' with one note; returns (alice, note_path)."""
    r = studio.act("/studios/team/note", "create_note", title="Plan", text="First *plan*")
    assert r.status_code == 201, r.get_data(as_text=True)
    return studio, r.json["location"]


def pages(note_path: str) -> list[tuple[str, list[str]]]:
    """(path, actions alice should see there)."""
    return [
        ("/", []),
        ("/studios", []),
        ("/studios/new", ["create_studio"]),
        ("/studios/team", []),
        ("/studios/team/join", []),
        ("/studios/team/settings", ["update_studio_settings", "create_invite"]),
        ("/studios/team/team", []),
        ("/studios/team/note", ["create_note"]),
        (note_path, ["confirm_read", "add_comment"]),
        (f"{note_path}/edit", ["update_note"]),
        (f"{note_path}/settings", ["pin_note"]),
        ("/studios/team/backlinks", []),
        ("/u/alice", []),
        ("/u/alice/settings", ["update_profile"]),
        ("/u/alice/settings/tokens", ["create_api_token", "revoke_api_token"]),
    ]


def test_every_page_in_markdown(world) -> None:  # type: ignore[no-untyped-def]
    alice, note_path = world
    for path, expected in pages(note_path):
        r = alice.get(path)
        assert r.status_code == 200, (path, r.get_data(as_text=True))
        assert r.mimetype == "text/markdown"
        text = r.get_data(as_text=True)
        front, body = parse_md(text)
        assert front["app"] == "Harmonic" and front["path"] == path
        assert front["title"] and front["timestamp"]
        assert set(expected) <= set(action_names(text)), (path, action_names(text))
        assert body.lstrip().startswith("nav: | [Home](/)")
        assert f"## [Actions]({path.rstrip('/')}/actions)" in body
        for name in action_names(text):
            assert f"({path.rstrip('/')}/actions/{name})" in body


def test_md_suffix_equals_accept_header(world) -> None:  # type: ignore[no-untyped-def]
    alice, note_path = world
    for path, _ in pages(note_path)[1:]:  # "/" has no suffixed form
        r = alice.client.get(f"{path}.md", headers={"Authorization": f"Bearer {alice.token}"})
        assert r.status_code == 200 and r.mimetype == "text/markdown", path
        assert parse_md(r.get_data(as_text=True))[0]["path"] == path


# What a page offers its reader but draws no control for: the author of a note is not asked to
# confirm reading it (agents still may; the Markdown lists it).
NOT_DRAWN = {"confirm_read"}


def test_every_page_in_html_and_json(world) -> None:  # type: ignore[no-untyped-def]
    alice, note_path = world
    for path, expected in pages(note_path):
        r = alice.get(path, accept="text/html")
        assert r.status_code == 200 and r.mimetype == "text/html", path
        html = r.get_data(as_text=True)
        for name in set(expected) - NOT_DRAWN:
            assert f'action="{path.rstrip("/")}/actions/{name}"' in html, (path, name)
        r = alice.get(path, accept="application/json")
        assert r.status_code == 200 and r.is_json, path
        assert r.json["path"] == path
        assert {a["name"] for a in r.json["actions"]} >= set(expected)


def test_actions_index_and_description(world) -> None:  # type: ignore[no-untyped-def]
    alice, note_path = world
    r = alice.get(f"{note_path}/actions")
    assert r.status_code == 200
    body = r.get_data(as_text=True)
    assert f"# Actions for path `{note_path}`" in body
    assert f"({note_path}/actions/add_comment)" in body
    r = alice.get(f"{note_path}/actions/add_comment")
    assert r.status_code == 200
    assert "| `text` | `string (maxLength 100000)` | yes |" in r.get_data(as_text=True)
    r = alice.get(f"{note_path}/actions/add_comment", accept="application/json")
    assert r.json["input_schema"]["required"] == ["text"]
    r = alice.get(f"{note_path}/actions/nonsense")
    assert r.status_code == 404
    assert "`confirm_read`" in r.get_data(as_text=True)


def test_short_and_full_ids(app, world) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models import Note

    alice, note_path = world
    with app.app_context():
        note = db.session.query(Note).one()
        full = str(note.id)
    r = alice.get(f"/studios/team/n/{full}")
    assert r.status_code == 200
    assert parse_md(r.get_data(as_text=True))[0]["path"] == note_path
    assert alice.get("/studios/team/n/deadbeef").status_code == 404
    assert alice.get("/studios/team/n/not-an-id").status_code == 404
    assert alice.get("/studios/nowhere").status_code == 404


def test_anonymous_agent_gets_401_and_person_is_sent_to_login(client, world) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/studios/team", headers={"Accept": "text/markdown"})
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    r = client.get("/studios/team")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login?next=/studios/team")
    assert client.get("/", headers={"Accept": "text/markdown"}).status_code == 200


def test_frontmatter_is_one_yaml_document_of_the_offered_actions(world) -> None:  # type: ignore[no-untyped-def]
    """The frontmatter's action list (written from blocks dumped once per process) is what a
    whole YAML dump of the same data writes, text for text, and lists the same actions with
    the same shapes as ``GET <page>/actions`` in JSON, on page after page (a block reused)."""
    import yaml

    alice, note_path = world
    for path, _ in pages(note_path) * 2:
        text = alice.get(path).get_data(as_text=True)
        head = text[4:].partition("\n---\n")[0] + "\n"
        front, _body = parse_md(text)
        assert yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000) == head
        listed = alice.get(f"{path.rstrip('/')}/actions", accept="application/json").json
        assert front["actions"] == listed["actions"], path
