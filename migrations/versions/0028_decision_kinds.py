"""decision kinds: a decision's kind and settings, time poll slots, ballots and participants

Revision ID: 0028_decision_kinds
Revises: 0027_automations
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0028_decision_kinds"
down_revision = "0027_automations"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("decisions") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=20), nullable=False,
                                   server_default="acceptance"))
        batch.add_column(sa.Column("settings", sa.JSON(), nullable=False,
                                   server_default="{}"))
    with op.batch_alter_table("decision_options") as batch:
        batch.add_column(sa.Column("starts_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("minutes", sa.Integer(), nullable=True))
    op.create_table(
        "decision_ballots",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("decision_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("representative_id", sa.Uuid(), nullable=True),
        sa.Column("choices", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("decision_id", "user_id"),
    )
    op.create_index("ix_decision_ballots_decision_id", "decision_ballots", ["decision_id"])
    op.create_table(
        "decision_participants",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("decision_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("representative_id", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("decision_id", "user_id"),
    )
    op.create_index("ix_decision_participants_decision_id", "decision_participants",
                    ["decision_id"])


def downgrade():
    op.drop_index("ix_decision_participants_decision_id", "decision_participants")
    op.drop_table("decision_participants")
    op.drop_index("ix_decision_ballots_decision_id", "decision_ballots")
    op.drop_table("decision_ballots")
    with op.batch_alter_table("decision_options") as batch:
        batch.drop_column("minutes")
        batch.drop_column("starts_at")
    with op.batch_alter_table("decisions") as batch:
        batch.drop_column("settings")
        batch.drop_column("kind")
