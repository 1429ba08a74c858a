"""decision votes: covering indexes for a decision's tally and its voters

Revision ID: 0019_vote_tally_indexes
Revises: 0002_collab

The decision page counts its votes per option and lists its voters by their first vote on
every view; both read only these columns of the decision's votes, so the index answers them
without visiting the table (a 20-option, 50-voter decision: about half the SQLite time).
"""
from alembic import op


revision = "0019_vote_tally_indexes"
down_revision = "0002_collab"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_decision_votes_tally", "decision_votes",
                    ["decision_id", "option_id", "accepted", "preferred"])
    op.create_index("ix_decision_votes_voters", "decision_votes",
                    ["decision_id", "user_id", "created_at"])


def downgrade():
    op.drop_index("ix_decision_votes_voters", table_name="decision_votes")
    op.drop_index("ix_decision_votes_tally", table_name="decision_votes")
