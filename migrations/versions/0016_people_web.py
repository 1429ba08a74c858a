"""people's web: a person's own time zone for the times pages show

Revision ID: 0016_people_web
Revises: 0009_recipe_governance
"""
from alembic import op
import sqlalchemy as sa


revision = '0016_people_web'
down_revision = '0009_recipe_governance'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('timezone', sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('timezone')
