"""placeholder for 0024_deadlines_webhooks (replaced at merge)

Revision ID: 0024_deadlines_webhooks
Revises: 0023_form_receipts
"""

revision = "0024_deadlines_webhooks"
down_revision = "0023_form_receipts"
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
