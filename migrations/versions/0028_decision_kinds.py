"""decision kinds (placeholder: the real migration comes from the decision-kinds branch)

Revision ID: 0028_decision_kinds
Revises: 0027_automations
"""

revision = "0028_decision_kinds"
down_revision = "0027_automations"
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
