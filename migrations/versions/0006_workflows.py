"""Workflows: runs, the job queue, the event log and the side-effect ledger.

Revision ID: 0006_workflows
Revises: 0001_core
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0006_workflows"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "workflow_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("workflow", sa.String(length=200), nullable=False),
        sa.Column("path", sa.String(length=300), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("compiled", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("started_at", utc, nullable=True),
        sa.Column("finished_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_workflow_runs_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_runs")),
    )
    with op.batch_alter_table("workflow_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_workflow_runs_short_id"), ["short_id"], unique=True)
        batch_op.create_index(batch_op.f("ix_workflow_runs_user_id"), ["user_id"], unique=False)

    op.create_table(
        "workflow_jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("step", sa.String(length=200), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("available_at", utc, nullable=False),
        sa.Column("lease_until", utc, nullable=True),
        sa.Column("worker_id", sa.String(length=120), nullable=True),
        sa.Column("heartbeat_at", utc, nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("finished_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["workflow_runs.id"],
                                name=op.f("fk_workflow_jobs_run_id_workflow_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_jobs")),
        sa.UniqueConstraint("run_id", "step", name="uq_workflow_jobs_run_id_step"),
    )
    with op.batch_alter_table("workflow_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_workflow_jobs_status_available_at", ["status", "available_at"],
                              unique=False)

    op.create_table(
        "workflow_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("step", sa.String(length=200), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("time", utc, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["workflow_runs.id"],
                                name=op.f("fk_workflow_events_run_id_workflow_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_events")),
        sa.UniqueConstraint("run_id", "seq", name="uq_workflow_events_run_id_seq"),
    )

    op.create_table(
        "workflow_effects",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("step", sa.String(length=200), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["workflow_runs.id"],
                                name=op.f("fk_workflow_effects_run_id_workflow_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_effects")),
        sa.UniqueConstraint("key", name=op.f("uq_workflow_effects_key")),
    )
    with op.batch_alter_table("workflow_effects", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_workflow_effects_run_id"), ["run_id"], unique=False)


def downgrade():
    op.drop_table("workflow_effects")
    op.drop_table("workflow_events")
    with op.batch_alter_table("workflow_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_workflow_jobs_status_available_at")
    op.drop_table("workflow_jobs")
    with op.batch_alter_table("workflow_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_workflow_runs_user_id"))
        batch_op.drop_index(batch_op.f("ix_workflow_runs_short_id"))
    op.drop_table("workflow_runs")
