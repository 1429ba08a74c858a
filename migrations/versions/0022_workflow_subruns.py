"""workflow runs: the run and step a sub-run (a noetl.io/v2 ``playbook`` task) answers to

Revision ID: 0022_workflow_subruns
Revises: 0021_provenance

A ``playbook`` task starts a run of another workflow and its step waits (a job in the state
``waiting``) until that run ends; the ending run releases the job named here, in the
transaction that ends it.
"""
import sqlalchemy as sa
from alembic import op

revision = "0022_workflow_subruns"
down_revision = "0021_provenance"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("workflow_runs", sa.Column("parent_run_id", sa.Uuid(), nullable=True))
    op.add_column("workflow_runs", sa.Column("parent_step", sa.String(length=200), nullable=True))
    op.create_index("ix_workflow_runs_parent_run_id", "workflow_runs", ["parent_run_id"])


def downgrade():
    op.drop_index("ix_workflow_runs_parent_run_id", table_name="workflow_runs")
    with op.batch_alter_table("workflow_runs") as batch:
        batch.drop_column("parent_step")
        batch.drop_column("parent_run_id")
