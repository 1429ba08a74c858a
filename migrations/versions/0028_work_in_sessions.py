"""work started in a representation session (an MCP task, a workflow run) carries the session,
so it runs for the principal within the grant, or not at all once the session has ended

Revision ID: 0028_work_in_sessions
Revises: 0027_automations
"""
import sqlalchemy as sa
from alembic import op

revision = "0028_work_in_sessions"
down_revision = "0027_automations"
branch_labels = None
depends_on = None


def upgrade():
    for table in ("mcp_tasks", "workflow_runs"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("representation_id", sa.Uuid(), nullable=True))


def downgrade():
    for table in ("mcp_tasks", "workflow_runs"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("representation_id")
