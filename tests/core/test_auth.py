"""Tokens (hashed, scoped, expiring, revocable), CSRF on forms, and people's sessions."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from app.extensions import db
from app.models import ApiToken


def md(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "text/markdown"}


def test_token_failures_are_401_with_bearer_challenge(app, client, studio) -> None:  # type: ignore[no-untyped-def]
    for headers in ({"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"},
                    {"Authorization": "Bearer "}):
        r = client.get("/studios/team", headers={**headers, "Accept": "text/markdown"})
        assert r.status_code == 401, headers
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    with app.app_context():
        token = db.session.query(ApiToken).one()
        assert studio.token not in token.token_hash and token.prefix == studio.token[:12]
        token.expires_at = datetime.now(UTC) - timedelta(seconds=1)
        db.session.commit()
    r = client.get("/studios/team", headers=md(studio.token))
    assert r.status_code == 401 and "expired" in r.get_data(as_text=True)


def test_revoked_token_is_refused_and_last_used_is_recorded(app, client, studio) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/studios/team", headers=md(studio.token)).status_code == 200
    with app.app_context():
        token = db.session.query(ApiToken).one()
        assert token.last_used_at is not None
        token_id = str(token.id)
    r = studio.act("/u/alice/settings/tokens", "revoke_api_token", token_id=token_id)
    assert r.status_code == 200
    r = client.get("/studios/team", headers=md(studio.token))
    assert r.status_code == 401 and "revoked" in r.get_data(as_text=True)


def test_read_scope_cannot_write(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    reader = make_agent("alice", scopes="read")
    assert reader.get("/studios/team").status_code == 200
    r = reader.act("/studios/team/note", "create_note", text="x")
    assert r.status_code == 403 and "write" in r.json["error"]["message"]


def login(client, handle: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    r = client.post("/login", data={"login": handle, "password": password, "csrf_token": csrf})
    assert r.status_code == 303, r.get_data(as_text=True)


def test_signup_login_logout_and_csrf(app, client) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/signup").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    r = client.post("/signup", data={"handle": "erin", "name": "Erin", "password": "short",
                                     "csrf_token": csrf})
    assert r.status_code == 422 and "8+ characters" in r.get_data(as_text=True)
    r = client.post("/signup", data={"handle": "erin", "name": "Erin",
                                     "password": "long-enough-pw", "csrf_token": csrf})
    assert r.status_code == 303
    # Signed in: create a studio through the generated HTML form.
    form_page = client.get("/studios/new").get_data(as_text=True)
    assert 'action="/studios/new/actions/create_studio"' in form_page
    token = re.search(r'name="csrf_token" value="([^"]+)"', form_page).group(1)
    no_csrf = client.post("/studios/new/actions/create_studio",
                          data={"name": "E", "handle": "erin-s"})
    assert no_csrf.status_code == 400 and "form expired" in no_csrf.get_data(as_text=True)
    r = client.post("/studios/new/actions/create_studio",
                    data={"name": "Erin's", "handle": "erin-s", "csrf_token": token,
                          "heartbeats_required": "false", "tempo": ""})
    assert r.status_code == 303 and r.headers["Location"] == "/studios/erin-s"
    assert client.get("/studios/erin-s").status_code == 200
    r = client.post("/logout", data={"csrf_token": token})
    assert r.status_code == 303
    assert client.get("/studios/erin-s").status_code == 302
    bad = client.post("/login", data={"login": "erin", "password": "wrong-password",
                                      "csrf_token": token})
    assert bad.status_code in (400, 401)
    login(client, "erin", "long-enough-pw")
    assert client.get("/studios/erin-s").status_code == 200


def test_login_next_never_leaves_the_site(app, client) -> None:  # type: ignore[no-untyped-def]
    from app.services import accounts

    with app.app_context():
        accounts.create_user("frank", "Frank", password="frank-password")
        db.session.commit()
    page = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    for target in ("https://evil.example/", "//evil.example", "javascript:alert(1)"):
        r = client.post(f"/login?next={target}",
                        data={"login": "frank", "password": "frank-password",
                              "csrf_token": csrf})
        assert r.status_code == 303 and r.headers["Location"] == "/", target


def test_a_tokens_first_use_needs_no_second_connection(app, database_url, studio) -> None:  # type: ignore[no-untyped-def]
    # One pooled connection per process and no overflow: the request holds it from its token's
    # read on, so writing the token's last use on another pooled connection would wait for the
    # pool's timeout and answer a 500 (as forty agents' first calls at once did with the
    # default pool).
    from pathlib import Path

    from tests.conftest import make_app

    narrow = make_app(database_url, Path(app.instance_path), SQLALCHEMY_ENGINE_OPTIONS={
        "pool_size": 1, "max_overflow": 0, "pool_timeout": 2})
    try:
        for _ in range(2):  # the first use writes last_used_at; the second reads it
            r = narrow.test_client().get("/studios/team", headers=md(studio.token))
            assert r.status_code == 200, r.get_data(as_text=True)[:300]
        with narrow.app_context():
            token = db.session.query(ApiToken).one()
            assert token.last_used_at is not None
            db.session.remove()
    finally:
        with narrow.app_context():
            db.engine.dispose()


def test_passwords_are_hashed_with_werkzeugs_scrypt_unless_told_otherwise(app, client) -> None:  # type: ignore[no-untyped-def]
    """The suite hashes at a low cost (tests/conftest.py); people's passwords get the default."""
    from werkzeug.security import check_password_hash

    from app.models import User
    from app.services import accounts
    from config import SettingError, build_config, password_hash_method

    assert password_hash_method(None) == "scrypt"
    assert password_hash_method(" pbkdf2:sha256:600000 ") == "pbkdf2:sha256:600000"
    for refused in ("plain", "md5", "scrypt:0:8:1", "pbkdf2:sha1", "scrypt;rm"):
        with pytest.raises(SettingError, match="HARMONIC_PASSWORD_HASH"):
            password_hash_method(refused)
    assert build_config(app.instance_path, {"SECRET_KEY": "x"})["HARMONIC_PASSWORD_HASH"] == \
        "scrypt"
    saved = app.config["HARMONIC_PASSWORD_HASH"]
    try:
        app.config["HARMONIC_PASSWORD_HASH"] = "scrypt"
        with app.app_context():
            accounts.create_user("quinn", "Quinn", password="quinn-password-1")
            db.session.commit()
            stored = db.session.query(User).filter(User.handle == "quinn").one().password_hash
        # werkzeug's default cost, written into the hash itself.
        assert stored.startswith("scrypt:32768:8:1$")
        assert check_password_hash(stored, "quinn-password-1")
    finally:
        app.config["HARMONIC_PASSWORD_HASH"] = saved
    # A password keeps the method it was hashed with: signing in checks it whatever the setting.
    login(client, "quinn", "quinn-password-1")


def test_a_missing_account_costs_one_check_like_a_wrong_password(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Hashing anew for a missing account would make it take twice a wrong password's time: a
    way to tell which accounts exist."""
    from app.services import accounts

    with app.app_context():
        accounts.create_user("rory", "Rory", password="rory-password-1")
        db.session.commit()
        assert accounts.authenticate("nobody-here", "guess-1") is None  # the stand-in is made
        made, checked = [], []
        monkeypatch.setattr(accounts, "generate_password_hash",
                            lambda *a, **k: made.append(a) or "")
        real_check = accounts.check_password_hash
        monkeypatch.setattr(accounts, "check_password_hash",
                            lambda *a: checked.append(a) or real_check(*a))
        assert accounts.authenticate("nobody-here", "guess-2") is None
        assert accounts.authenticate("rory", "guess-3") is None
        assert accounts.authenticate("rory", "rory-password-1") is not None
    assert made == [] and len(checked) == 3
