"""automations: a studio's rules (trigger and effect) and the firing gate

Revision ID: 0027_automations
Revises: 0026_grants
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0027_automations"
down_revision = "0026_grants"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "automations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("event", sa.String(length=32), nullable=True),
        sa.Column("schedule", sa.String(length=120), nullable=True),
        sa.Column("secret", sa.String(length=80), nullable=True),
        sa.Column("effect", sa.String(length=16), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("paused_at", UTCDateTime(), nullable=True),
        sa.Column("paused_why", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"]),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_automations_short_id", "automations", ["short_id"], unique=True)
    op.create_index("ix_automations_studio_id", "automations", ["studio_id"])
    op.create_table(
        "automation_firings",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("automation_id", sa.Uuid(), nullable=False),
        sa.Column("trigger_key", sa.String(length=200), nullable=False),
        sa.Column("trigger", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("fired_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["automation_id"], ["automations.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("automation_id", "trigger_key"),
    )
    op.create_index("ix_automation_firings_short_id", "automation_firings", ["short_id"],
                    unique=True)
    op.create_index("ix_automation_firings_rule_fired", "automation_firings",
                    ["automation_id", "fired_at"])
    op.create_index("ix_automation_firings_status", "automation_firings", ["status"])
    op.create_index("ix_automation_firings_run_id", "automation_firings", ["run_id"])


def downgrade():
    op.drop_table("automation_firings")
    op.drop_table("automations")
