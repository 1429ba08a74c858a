"""placeholder for 0025_mail (replaced at merge)

Revision ID: 0025_mail
Revises: 0024_deadlines_webhooks
"""

revision = "0025_mail"
down_revision = "0024_deadlines_webhooks"
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
