"""playbooks: teach sessions and replay runs

Revision ID: 0005_playbooks
Revises: 0001_core
"""
from alembic import op
import sqlalchemy as sa

import app.models.base


revision = '0005_playbooks'
down_revision = '0001_core'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('playbooks',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('short_id', sa.String(length=8), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('session_id', sa.String(length=120), nullable=False),
    sa.Column('owner', sa.String(length=120), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('upstream', sa.String(length=300), nullable=False),
    sa.Column('teaching', sa.Boolean(), nullable=False),
    sa.Column('entries', sa.Integer(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('stopped_at', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_playbooks_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_playbooks')),
    sa.UniqueConstraint('session_id', name=op.f('uq_playbooks_session_id'))
    )
    with op.batch_alter_table('playbooks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_playbooks_owner'), ['owner'], unique=False)
        batch_op.create_index(batch_op.f('ix_playbooks_short_id'), ['short_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_playbooks_user_id'), ['user_id'], unique=False)

    op.create_table('playbook_runs',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('short_id', sa.String(length=8), nullable=False),
    sa.Column('playbook_id', sa.Uuid(), nullable=True),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('recipe_name', sa.String(length=200), nullable=False),
    sa.Column('dry_run', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('args', sa.JSON(), nullable=False),
    sa.Column('steps', sa.JSON(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('finished_at', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['playbook_id'], ['playbooks.id'], name=op.f('fk_playbook_runs_playbook_id_playbooks')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_playbook_runs_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_playbook_runs'))
    )
    with op.batch_alter_table('playbook_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_playbook_runs_playbook_id'), ['playbook_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_playbook_runs_short_id'), ['short_id'], unique=True)


def downgrade():
    with op.batch_alter_table('playbook_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playbook_runs_short_id'))
        batch_op.drop_index(batch_op.f('ix_playbook_runs_playbook_id'))
    op.drop_table('playbook_runs')
    with op.batch_alter_table('playbooks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playbooks_user_id'))
        batch_op.drop_index(batch_op.f('ix_playbooks_short_id'))
        batch_op.drop_index(batch_op.f('ix_playbooks_owner'))
    op.drop_table('playbooks')
