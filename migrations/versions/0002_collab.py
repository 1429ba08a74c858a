"""Decisions, options, votes, commitments, participants and heartbeats.

Revision ID: 0002_collab
Revises: 0001_core
"""
from alembic import op
import sqlalchemy as sa

import app.models.base


revision = "0002_collab"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('commitments',
    sa.Column('studio_id', sa.Uuid(), nullable=False),
    sa.Column('title', sa.String(length=256), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('critical_mass', sa.Integer(), nullable=False),
    sa.Column('participant_limit', sa.Integer(), nullable=True),
    sa.Column('created_by_id', sa.Uuid(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('short_id', sa.String(length=8), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('deadline', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_commitments_created_by_id_users')),
    sa.ForeignKeyConstraint(['studio_id'], ['studios.id'], name=op.f('fk_commitments_studio_id_studios')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_commitments'))
    )
    with op.batch_alter_table('commitments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_commitments_short_id'), ['short_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_commitments_studio_id'), ['studio_id'], unique=False)

    op.create_table('decisions',
    sa.Column('studio_id', sa.Uuid(), nullable=False),
    sa.Column('question', sa.String(length=500), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('options_open', sa.Boolean(), nullable=False),
    sa.Column('created_by_id', sa.Uuid(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('short_id', sa.String(length=8), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('deadline', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_decisions_created_by_id_users')),
    sa.ForeignKeyConstraint(['studio_id'], ['studios.id'], name=op.f('fk_decisions_studio_id_studios')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_decisions'))
    )
    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decisions_short_id'), ['short_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_decisions_studio_id'), ['studio_id'], unique=False)

    op.create_table('heartbeats',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('studio_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('cycle_start', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('expires_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['studio_id'], ['studios.id'], name=op.f('fk_heartbeats_studio_id_studios')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_heartbeats_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heartbeats')),
    sa.UniqueConstraint('studio_id', 'user_id', 'cycle_start', name=op.f('uq_heartbeats_studio_id'))
    )
    with op.batch_alter_table('heartbeats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_heartbeats_user_id'), ['user_id'], unique=False)

    op.create_table('commitment_participants',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('commitment_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('committed_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['commitment_id'], ['commitments.id'], name=op.f('fk_commitment_participants_commitment_id_commitments')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_commitment_participants_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_commitment_participants')),
    sa.UniqueConstraint('commitment_id', 'user_id', name=op.f('uq_commitment_participants_commitment_id'))
    )
    op.create_table('decision_options',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('decision_id', sa.Uuid(), nullable=False),
    sa.Column('title', sa.String(length=256), nullable=False),
    sa.Column('random_id', sa.Integer(), nullable=False),
    sa.Column('created_by_id', sa.Uuid(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_decision_options_created_by_id_users')),
    sa.ForeignKeyConstraint(['decision_id'], ['decisions.id'], name=op.f('fk_decision_options_decision_id_decisions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_decision_options')),
    sa.UniqueConstraint('decision_id', 'title', name=op.f('uq_decision_options_decision_id'))
    )
    op.create_table('decision_votes',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('decision_id', sa.Uuid(), nullable=False),
    sa.Column('option_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('accepted', sa.Boolean(), nullable=False),
    sa.Column('preferred', sa.Boolean(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['decision_id'], ['decisions.id'], name=op.f('fk_decision_votes_decision_id_decisions')),
    sa.ForeignKeyConstraint(['option_id'], ['decision_options.id'], name=op.f('fk_decision_votes_option_id_decision_options')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_decision_votes_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_decision_votes')),
    sa.UniqueConstraint('option_id', 'user_id', name=op.f('uq_decision_votes_option_id'))
    )
    with op.batch_alter_table('decision_votes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decision_votes_decision_id'), ['decision_id'], unique=False)


def downgrade():
    with op.batch_alter_table('decision_votes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decision_votes_decision_id'))

    op.drop_table('decision_votes')
    op.drop_table('decision_options')
    op.drop_table('commitment_participants')
    with op.batch_alter_table('heartbeats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_heartbeats_user_id'))

    op.drop_table('heartbeats')
    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decisions_studio_id'))
        batch_op.drop_index(batch_op.f('ix_decisions_short_id'))

    op.drop_table('decisions')
    with op.batch_alter_table('commitments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_commitments_studio_id'))
        batch_op.drop_index(batch_op.f('ix_commitments_short_id'))

    op.drop_table('commitments')
