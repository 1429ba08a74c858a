"""MCP sessions, their outbox, pending server-to-client requests, cancellations, tool-call audit.

Revision ID: 0003_mcp
Revises: 0001_core
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0003_mcp"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "mcp_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("token_id", sa.Uuid(), nullable=True),
        sa.Column("protocol_version", sa.String(length=16), nullable=False),
        sa.Column("client_name", sa.String(length=200), nullable=False),
        sa.Column("client_capabilities", sa.Text(), nullable=False),
        sa.Column("log_level", sa.String(length=16), nullable=False),
        sa.Column("current_path", sa.Text(), nullable=True),
        sa.Column("subscriptions", sa.Text(), nullable=False),
        sa.Column("has_outbox", sa.Boolean(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("last_seen_at", utc, nullable=False),
        sa.Column("ended_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_mcp_sessions_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_sessions")),
    )
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mcp_sessions_user_id"), ["user_id"], unique=False)

    op.create_table(
        "mcp_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["mcp_sessions.id"],
                                name=op.f("fk_mcp_outbox_session_id_mcp_sessions")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_outbox")),
    )
    with op.batch_alter_table("mcp_outbox", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mcp_outbox_session_id"), ["session_id"],
                              unique=False)

    op.create_table(
        "mcp_client_requests",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("method", sa.String(length=64), nullable=False),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("answered_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["session_id"], ["mcp_sessions.id"],
                                name=op.f("fk_mcp_client_requests_session_id_mcp_sessions")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_client_requests")),
        sa.UniqueConstraint("session_id", "request_id",
                            name="uq_mcp_client_requests_session_request"),
    )

    op.create_table(
        "mcp_cancellations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["mcp_sessions.id"],
                                name=op.f("fk_mcp_cancellations_session_id_mcp_sessions")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_cancellations")),
    )
    with op.batch_alter_table("mcp_cancellations", schema=None) as batch_op:
        batch_op.create_index("ix_mcp_cancellations_session_request",
                              ["session_id", "request_id"], unique=False)

    op.create_table(
        "mcp_tool_calls",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("token_id", sa.Uuid(), nullable=True),
        sa.Column("session_id", sa.String(length=64), nullable=True),
        sa.Column("transport", sa.String(length=8), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("action", sa.String(length=128), nullable=True),
        sa.Column("param_names", sa.Text(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_mcp_tool_calls_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_tool_calls")),
    )
    with op.batch_alter_table("mcp_tool_calls", schema=None) as batch_op:
        batch_op.create_index("ix_mcp_tool_calls_user_created", ["user_id", "created_at"],
                              unique=False)


def downgrade():
    with op.batch_alter_table("mcp_tool_calls", schema=None) as batch_op:
        batch_op.drop_index("ix_mcp_tool_calls_user_created")
    op.drop_table("mcp_tool_calls")
    with op.batch_alter_table("mcp_cancellations", schema=None) as batch_op:
        batch_op.drop_index("ix_mcp_cancellations_session_request")
    op.drop_table("mcp_cancellations")
    op.drop_table("mcp_client_requests")
    with op.batch_alter_table("mcp_outbox", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mcp_outbox_session_id"))
    op.drop_table("mcp_outbox")
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mcp_sessions_user_id"))
    op.drop_table("mcp_sessions")
