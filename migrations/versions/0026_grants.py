"""grants (placeholder: the real revision lands from another branch)

Revision ID: 0026_grants
Revises: 0025_mail
"""

revision = "0026_grants"
down_revision = "0025_mail"
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
