"""form receipts: a form a person sent is accepted once (Back and submit again shows what the
first submit made)

Revision ID: 0023_form_receipts
Revises: 0022_workflow_subruns
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0023_form_receipts"
down_revision = "0022_workflow_subruns"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "form_receipts",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("location", sa.String(length=1024), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "key"),
    )
    op.create_index("ix_form_receipts_user_created", "form_receipts",
                    ["user_id", "created_at"])


def downgrade():
    op.drop_index("ix_form_receipts_user_created", table_name="form_receipts")
    op.drop_table("form_receipts")
