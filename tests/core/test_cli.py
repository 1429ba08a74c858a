"""The CLI: users, tokens (plaintext alone on the last line), and the idempotent demo seed."""

from __future__ import annotations

from app.extensions import db
from app.models import Note, Studio, User


def test_users_and_tokens(app, client) -> None:  # type: ignore[no-untyped-def]
    runner = app.test_cli_runner()
    r = runner.invoke(args=["users", "create", "--handle", "gail", "--password", "gail-password"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(args=["users", "create", "--handle", "gail"])
    assert r.exit_code != 0 and "taken" in r.output
    r = runner.invoke(args=["tokens", "create", "--user", "gail", "--scopes", "read",
                            "--expires", "30d"])
    assert r.exit_code == 0, r.output
    plaintext = r.output.strip().splitlines()[-1]
    assert plaintext.startswith("hmn_") and " " not in plaintext
    ok = client.get("/", headers={"Authorization": f"Bearer {plaintext}",
                                  "Accept": "text/markdown"})
    assert ok.status_code == 200 and "Logged in as [gail](/u/gail)" in ok.get_data(as_text=True)
    r = runner.invoke(args=["tokens", "create", "--user", "gail", "--scopes", "admin"])
    assert r.exit_code != 0 and "scopes" in r.output
    r = runner.invoke(args=["tokens", "create", "--user", "nobody"])
    assert r.exit_code != 0 and "no user" in r.output


def test_seed_demo_is_idempotent(app, client) -> None:  # type: ignore[no-untyped-def]
    runner = app.test_cli_runner()
    first = runner.invoke(args=["seed-demo"])
    second = runner.invoke(args=["seed-demo"])
    assert first.exit_code == 0 and second.exit_code == 0
    with app.app_context():
        assert db.session.query(User).filter(User.handle == "demo").count() == 1
        assert db.session.query(Studio).filter(Studio.handle == "demo").count() == 1
        assert db.session.query(Note).count() == 2
    token = second.output.strip().splitlines()[-1].removeprefix("HARMONIC_API_TOKEN=")
    r = client.get("/studios/demo.md", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and "Welcome to the demo studio" in r.get_data(as_text=True)
