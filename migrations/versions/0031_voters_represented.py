"""decision votes: the voters' index covers who voted for whom

Revision ID: 0031_voters_represented
Revises: 0030_work_in_sessions

The decision page lists its voters with whether someone voted for them (representation,
migration 0026): the voters' index gains ``representative_id``, so the list reads the
index alone again instead of visiting every vote's row.
"""
from alembic import op

revision = "0031_voters_represented"
down_revision = "0030_work_in_sessions"
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index("ix_decision_votes_voters", table_name="decision_votes")
    op.create_index("ix_decision_votes_voters", "decision_votes",
                    ["decision_id", "user_id", "created_at", "representative_id"])


def downgrade():
    op.drop_index("ix_decision_votes_voters", table_name="decision_votes")
    op.create_index("ix_decision_votes_voters", "decision_votes",
                    ["decision_id", "user_id", "created_at"])
