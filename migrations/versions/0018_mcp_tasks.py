"""mcp_tasks: durable MCP tasks (the io.modelcontextprotocol/tasks extension)

Revision ID: 0018_mcp_tasks
Revises: 0009_recipe_governance
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0018_mcp_tasks"
down_revision = "0009_recipe_governance"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "mcp_tasks",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("scopes", sa.String(length=200), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("arguments", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.Column("progress", sa.Float(), nullable=True),
        sa.Column("total", sa.Float(), nullable=True),
        sa.Column("input_requests", sa.Text(), nullable=False),
        sa.Column("input_responses", sa.Text(), nullable=False),
        sa.Column("client_capabilities", sa.Text(), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("ttl_ms", sa.Integer(), nullable=False),
        sa.Column("poll_ms", sa.Integer(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("updated_at", utc, nullable=False),
        sa.Column("expires_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_mcp_tasks_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_tasks")),
    )
    with op.batch_alter_table("mcp_tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mcp_tasks_user_id"), ["user_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_mcp_tasks_expires_at"), ["expires_at"],
                              unique=False)


def downgrade():
    with op.batch_alter_table("mcp_tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mcp_tasks_expires_at"))
        batch_op.drop_index(batch_op.f("ix_mcp_tasks_user_id"))
    op.drop_table("mcp_tasks")
