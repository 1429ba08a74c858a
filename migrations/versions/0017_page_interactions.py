"""note versions: the title and text a note had after each create or update event

Revision ID: 0017_page_interactions
Revises: 0009_recipe_governance
"""
from alembic import op
import sqlalchemy as sa


revision = '0017_page_interactions'
down_revision = '0009_recipe_governance'
branch_labels = None
depends_on = None


def upgrade():
    # Nullable: events written before this revision kept no text, and a read confirmation
    # never has one.
    with op.batch_alter_table('note_events', schema=None) as batch_op:
        batch_op.add_column(sa.Column('title', sa.String(length=256), nullable=True))
        batch_op.add_column(sa.Column('text', sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table('note_events', schema=None) as batch_op:
        batch_op.drop_column('text')
        batch_op.drop_column('title')
