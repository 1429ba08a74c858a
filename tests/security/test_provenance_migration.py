"""Rows made before provenance was recorded: the migration attributes the tokens an app's OAuth
token minted through MCP (the agent-activity log names the token that ran ``create_api_token``),
revokes those of an app already disconnected, and a later disconnect ends the rest."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.script import ScriptDirectory
from flask_migrate import upgrade

from app.extensions import db
from tests.conftest import make_app

MINE = "0021_provenance"


def _stored(column: sa.Column[Any], value: Any) -> Any:
    """A UUID as the column keeps it (SQLite's reflected CHAR(32): its hex)."""
    if isinstance(value, uuid.UUID) and not isinstance(column.type, sa.Uuid):
        return value.hex
    return value


def _value(column: sa.Column[Any]) -> Any:
    kind = column.type
    if isinstance(kind, sa.Uuid) or column.name == "id" or column.name.endswith("_id"):
        return uuid.uuid4()
    if isinstance(kind, sa.DateTime):
        return datetime.now(UTC)
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.Integer | sa.Float | sa.Numeric):
        return 0
    if isinstance(kind, sa.JSON):
        return {}
    return "x"


def _insert(conn: sa.Connection, table: sa.Table, **values: Any) -> dict[str, Any]:
    """A row with ``values`` and something valid in every other required column."""
    row = {c.name: _value(c) for c in table.columns
           if not c.nullable and c.server_default is None and c.name not in values}
    row.update(values)
    conn.execute(table.insert().values(**{k: _stored(table.c[k], v) for k, v in row.items()}))
    return row


def test_tokens_an_app_minted_before_are_found_and_end_with_it(tmp_path: Path) -> None:
    app = make_app(f"sqlite:///{tmp_path / 'before.db'}", tmp_path)
    with app.app_context():
        script = ScriptDirectory.from_config(app.extensions["migrate"].migrate.get_config())
        # The schema just before the provenance migration: every revision it builds on.
        for before in script.get_revision(MINE).down_revision:  # type: ignore[union-attr]
            upgrade(revision=before)
        meta = sa.MetaData()
        meta.reflect(bind=db.engine)
        tables = meta.tables
        now = datetime.now(UTC)
        with db.engine.begin() as conn:
            pat = _insert(conn, tables["users"], handle="pat", user_type="human")["id"]
            gone = _insert(conn, tables["oauth_grants"], user_id=pat, revoked_at=now)["id"]
            live = _insert(conn, tables["oauth_grants"], user_id=pat)["id"]
            tokens = {}
            for name, grant in (("gone", gone), ("live", live)):
                tokens[name] = _insert(conn, tables["api_tokens"], user_id=pat,
                                       oauth_grant_id=grant, token_hash=f"h-{name}",
                                       created_at=now - timedelta(hours=1))["id"]
            own = _insert(conn, tables["api_tokens"], user_id=pat, token_hash="h-own",
                          created_at=now - timedelta(days=3))["id"]
            minted = {}
            for name, at in (("gone", now - timedelta(minutes=30)),
                             ("live", now - timedelta(minutes=10))):
                minted[name] = _insert(conn, tables["api_tokens"], user_id=pat,
                                       token_hash=f"m-{name}",
                                       created_at=at - timedelta(milliseconds=3))["id"]
                _insert(conn, tables["mcp_tool_calls"], user_id=pat, token_id=tokens[name],
                        tool="execute_action", action="create_api_token", outcome="ok",
                        created_at=at)
            session = _insert(conn, tables["mcp_sessions"], id="s-live", user_id=pat,
                              token_id=tokens["live"])["id"]
        upgrade(revision="heads")

        from app.models import ApiToken
        from app.models.mcp import McpSession
        from app.oauth import store

        def row(token_id: uuid.UUID) -> ApiToken:
            found = db.session.get(ApiToken, token_id, populate_existing=True)
            assert found is not None
            return found

        assert row(minted["gone"]).made_by_grant_id == gone
        assert row(minted["gone"]).revoked_at is not None  # its app was disconnected already
        assert row(minted["live"]).made_by_token_id == tokens["live"]
        assert row(minted["live"]).revoked_at is None
        assert row(own).made_by_token_id is None and row(own).revoked_at is None
        assert db.session.get(McpSession, session).grant_id == live
        store.revoke_grant(live, "disconnected")
        db.session.commit()
        assert row(minted["live"]).revoked_at is not None
        assert row(own).revoked_at is None
        assert db.session.get(McpSession, session, populate_existing=True).ended_at is not None
        db.session.remove()
        db.engine.dispose()
