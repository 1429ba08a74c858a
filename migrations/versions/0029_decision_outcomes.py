"""decision outcomes: the statement a closed decision's creator writes, the option it picks,
its review date and when its people were reminded of it

Revision ID: 0029_decision_outcomes
Revises: 0028_decision_kinds
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0029_decision_outcomes"
down_revision = "0028_decision_kinds"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("decisions") as batch:
        batch.add_column(sa.Column("outcome_statement", sa.Text(), nullable=True))
        batch.add_column(sa.Column("outcome_option_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("outcome_review_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("outcome_reminded_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("outcome_by_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("outcome_at", UTCDateTime(), nullable=True))
        # The workers' sweep looks for review dates that came and were not told yet.
        batch.create_index("ix_decisions_review", ["outcome_reminded_at", "outcome_review_at"])


def downgrade():
    with op.batch_alter_table("decisions") as batch:
        batch.drop_index("ix_decisions_review")
        for column in ("outcome_at", "outcome_by_id", "outcome_reminded_at",
                       "outcome_review_at", "outcome_option_id", "outcome_statement"):
            batch.drop_column(column)
