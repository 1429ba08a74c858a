"""provenance: which token and OAuth grant made a token, an agent, a webhook, a task, a teach
session, a workflow run; the kind of identity a task or a run acts as; an MCP session's grant

Revision ID: 0021_provenance
Revises: 0020_vote_recent_index, 0006_workflows, 0008_change_events, 0012_membership,
0013_notifications, 0014_oauth, 0018_mcp_tasks

Revoking an OAuth grant or an agent ends what its tokens made (``app.services.revocation``),
following these columns. Rows from before them are filled where the database can tell:

- an MCP session's grant, from its token;
- the tokens and agents an OAuth grant's or an agent's token made through MCP
  ``execute_action`` (``create_api_token``, ``create_agent``, ``create_agent_token``): the
  audit log (``mcp_tool_calls``) names the token that ran the action, and the audit row was
  written in the action's own transaction, so the new token or agent is the newest one of that
  person created in the minute before it. Such tokens whose grant is revoked already are
  revoked now, as the grant's revocation would have done.

Tasks, runs, webhooks and teach sessions made before this revision stay unattributed: nothing
recorded says which token made them.
"""
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision = "0021_provenance"
# A merge of the branches whose tables it adds to and whose columns its backfill reads: MCP
# sessions and the audit log (0003, under 0008), workflow runs, agent owners, webhooks, OAuth
# grants, MCP tasks.
down_revision = ("0020_vote_recent_index", "0006_workflows", "0008_change_events",
                 "0012_membership", "0013_notifications", "0014_oauth", "0018_mcp_tasks")
branch_labels = None
depends_on = None

MADE = ("api_tokens", "users", "webhooks", "mcp_tasks", "playbooks", "workflow_runs")
ACTING = ("mcp_tasks", "workflow_runs")
MINTING = ("create_api_token", "create_agent", "create_agent_token")
WINDOW = timedelta(minutes=1)


def upgrade():
    for table in MADE:
        for column in ("made_by_token_id", "made_by_grant_id"):
            op.add_column(table, sa.Column(column, sa.Uuid(), nullable=True))
            op.create_index(f"ix_{table}_{column}", table, [column])
    for table in ACTING:
        op.add_column(table, sa.Column("caller_kind", sa.String(length=16), nullable=False,
                                       server_default="person"))
    op.add_column("mcp_sessions", sa.Column("grant_id", sa.Uuid(), nullable=True))
    op.create_index("ix_mcp_sessions_grant_id", "mcp_sessions", ["grant_id"])
    _backfill(op.get_bind())


def _aware(moment):
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def _backfill(conn):
    meta = sa.MetaData()
    tokens = sa.Table("api_tokens", meta, sa.Column("id", sa.Uuid()),
                      sa.Column("user_id", sa.Uuid()), sa.Column("oauth_grant_id", sa.Uuid()),
                      sa.Column("created_at", sa.DateTime(timezone=True)),
                      sa.Column("revoked_at", sa.DateTime(timezone=True)),
                      sa.Column("made_by_token_id", sa.Uuid()),
                      sa.Column("made_by_grant_id", sa.Uuid()))
    users = sa.Table("users", meta, sa.Column("id", sa.Uuid()), sa.Column("owner_id", sa.Uuid()),
                     sa.Column("user_type", sa.String()),
                     sa.Column("created_at", sa.DateTime(timezone=True)),
                     sa.Column("made_by_token_id", sa.Uuid()),
                     sa.Column("made_by_grant_id", sa.Uuid()))
    sessions = sa.Table("mcp_sessions", meta, sa.Column("token_id", sa.Uuid()),
                        sa.Column("grant_id", sa.Uuid()))
    calls = sa.Table("mcp_tool_calls", meta, sa.Column("user_id", sa.Uuid()),
                     sa.Column("token_id", sa.Uuid()), sa.Column("tool", sa.String()),
                     sa.Column("action", sa.String()), sa.Column("outcome", sa.String()),
                     sa.Column("created_at", sa.DateTime(timezone=True)))
    grants = sa.Table("oauth_grants", meta, sa.Column("id", sa.Uuid()),
                      sa.Column("revoked_at", sa.DateTime(timezone=True)))

    grant_of = sa.select(tokens.c.oauth_grant_id).where(
        tokens.c.id == sessions.c.token_id).scalar_subquery()
    conn.execute(sa.update(sessions).where(sessions.c.token_id.is_not(None))
                 .values(grant_id=grant_of))

    makers = {row.id: row for row in conn.execute(
        sa.select(tokens.c.id, tokens.c.oauth_grant_id, users.c.user_type)
        .join(users, users.c.id == tokens.c.user_id))}
    found = conn.execute(sa.select(calls).where(
        calls.c.tool == "execute_action", calls.c.action.in_(MINTING), calls.c.outcome == "ok",
        calls.c.token_id.is_not(None), calls.c.user_id.is_not(None))
        .order_by(calls.c.created_at)).all()
    taken = set()
    for call in found:
        maker = makers.get(call.token_id)
        if maker is None or (maker.oauth_grant_id is None and maker.user_type != "ai_agent"):
            continue  # a person's own token, or one no longer known: nothing to attribute
        made = {"made_by_token_id": call.token_id, "made_by_grant_id": maker.oauth_grant_id}
        when = _aware(call.created_at)
        if call.action == "create_agent":
            agent = _newest(conn.execute(sa.select(users.c.id, users.c.created_at).where(
                users.c.owner_id == call.user_id, users.c.made_by_token_id.is_(None))),
                when, taken)
            if agent is not None:
                conn.execute(sa.update(users).where(users.c.id == agent).values(**made))
                conn.execute(sa.update(tokens).where(tokens.c.user_id == agent,
                                                     tokens.c.made_by_token_id.is_(None))
                             .values(**made))
            continue
        owners = (sa.select(users.c.id).where(users.c.owner_id == call.user_id)
                  if call.action == "create_agent_token"
                  else sa.select(users.c.id).where(users.c.id == call.user_id))
        token = _newest(conn.execute(sa.select(tokens.c.id, tokens.c.created_at).where(
            tokens.c.user_id.in_(owners), tokens.c.oauth_grant_id.is_(None),
            tokens.c.made_by_token_id.is_(None))), when, taken)
        if token is not None:
            conn.execute(sa.update(tokens).where(tokens.c.id == token).values(**made))

    revoked = sa.select(grants.c.id).where(grants.c.revoked_at.is_not(None))
    now = datetime.now(UTC)
    conn.execute(sa.update(tokens).where(tokens.c.revoked_at.is_(None),
                                         tokens.c.made_by_grant_id.in_(revoked))
                 .values(revoked_at=now))
    agents = sa.select(users.c.id).where(users.c.made_by_grant_id.in_(revoked))
    conn.execute(sa.update(tokens).where(tokens.c.revoked_at.is_(None),
                                         tokens.c.user_id.in_(agents))
                 .values(revoked_at=now))


def _newest(rows, when, taken):
    """The newest row made in the minute before ``when`` and not attributed yet."""
    best = None
    for row in rows:
        made = _aware(row.created_at)
        if row.id in taken or made is None or not when - WINDOW <= made <= when + WINDOW / 60:
            continue
        if best is None or made > best[1]:
            best = (row.id, made)
    if best is None:
        return None
    taken.add(best[0])
    return best[0]


def downgrade():
    op.drop_index("ix_mcp_sessions_grant_id", table_name="mcp_sessions")
    op.drop_column("mcp_sessions", "grant_id")
    for table in ACTING:
        op.drop_column(table, "caller_kind")
    for table in MADE:
        for column in ("made_by_token_id", "made_by_grant_id"):
            op.drop_index(f"ix_{table}_{column}", table_name=table)
            op.drop_column(table, column)
