"""change events: the outbox every change is recorded in; MCP sessions read it with a cursor

The per-session fan-out (mcp_outbox, mcp_sessions.has_outbox) is gone: a session keeps the id
of the last change event it has seen (mcp_sessions.events_seen) instead.

Revision ID: 0008_change_events
Revises: 0003_mcp
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0008_change_events"
down_revision = "0003_mcp"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "change_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True,
                  nullable=False),
        sa.Column("uri", sa.Text(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_events")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("change_events", schema=None) as batch_op:
        batch_op.create_index("ix_change_events_uri_id", ["uri", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_change_events_created_at"), ["created_at"],
                              unique=False)

    with op.batch_alter_table("mcp_outbox", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mcp_outbox_session_id"))
    op.drop_table("mcp_outbox")
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("events_seen", sa.BigInteger(), nullable=True))
        batch_op.drop_column("has_outbox")


def downgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("has_outbox", sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.drop_column("events_seen")
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
    with op.batch_alter_table("change_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_change_events_created_at"))
        batch_op.drop_index("ix_change_events_uri_id")
    op.drop_table("change_events")
