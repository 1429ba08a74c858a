"""deadlines that act, webhooks done right: when a decision's or commitment's close was handled
and its 24-hour reminder sent; a webhook's payload format; a delivery
sent again by hand

Revision ID: 0024_deadlines_webhooks
Revises: 0023_form_receipts
"""
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0024_deadlines_webhooks"
down_revision = "0023_form_receipts"
branch_labels = None
depends_on = None

ITEMS = ("decisions", "commitments")


def upgrade():
    for table in ITEMS:
        op.add_column(table, sa.Column("closed_at", UTCDateTime(), nullable=True))
        op.add_column(table, sa.Column("reminded_at", UTCDateTime(), nullable=True))
        # The worker's sweep looks for open items by deadline.
        op.create_index(f"ix_{table}_closed_deadline", table, ["closed_at", "deadline"])
        # What closed or came within a day before this revision is not news any more: only
        # deadlines still ahead are acted on (and reminded of) when they come.
        rows = sa.table(table, sa.column("deadline", UTCDateTime()),
                        sa.column("closed_at", UTCDateTime()))
        op.execute(rows.update().where(rows.c.deadline <= datetime.now(UTC))
                   .values(closed_at=rows.c.deadline))
    op.add_column("webhooks", sa.Column("format", sa.String(length=16), nullable=False,
                                        server_default="json"))
    op.add_column("webhook_deliveries", sa.Column("redeliver", sa.Boolean(), nullable=False,
                                                  server_default=sa.false()))


def downgrade():
    op.drop_column("webhook_deliveries", "redeliver")
    op.drop_column("webhooks", "format")
    for table in ITEMS:
        op.drop_index(f"ix_{table}_closed_deadline", table_name=table)
        op.drop_column(table, "reminded_at")
        op.drop_column(table, "closed_at")
