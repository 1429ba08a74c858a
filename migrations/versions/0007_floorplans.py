"""floorplans: plans shared in a studio and their versions

Revision ID: 0007_floorplans
Revises: 0001_core
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = '0007_floorplans'
down_revision = '0001_core'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('floorplans',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('studio_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('dsl', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_by_id', sa.Uuid(), nullable=False),
    sa.Column('updated_by_id', sa.Uuid(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'],
                            name=op.f('fk_floorplans_created_by_id_users')),
    sa.ForeignKeyConstraint(['studio_id'], ['studios.id'],
                            name=op.f('fk_floorplans_studio_id_studios')),
    sa.ForeignKeyConstraint(['updated_by_id'], ['users.id'],
                            name=op.f('fk_floorplans_updated_by_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_floorplans')),
    sa.UniqueConstraint('studio_id', 'name', name=op.f('uq_floorplans_studio_id'))
    )
    with op.batch_alter_table('floorplans', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_floorplans_studio_id'), ['studio_id'], unique=False)

    op.create_table('floorplan_versions',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('floorplan_id', sa.Uuid(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('dsl', sa.Text(), nullable=False),
    sa.Column('summary', sa.String(length=300), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['floorplan_id'], ['floorplans.id'],
                            name=op.f('fk_floorplan_versions_floorplan_id_floorplans')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'],
                            name=op.f('fk_floorplan_versions_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_floorplan_versions')),
    sa.UniqueConstraint('floorplan_id', 'number', name=op.f('uq_floorplan_versions_floorplan_id'))
    )
    with op.batch_alter_table('floorplan_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_floorplan_versions_floorplan_id'), ['floorplan_id'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('floorplan_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_floorplan_versions_floorplan_id'))
    op.drop_table('floorplan_versions')
    with op.batch_alter_table('floorplans', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_floorplans_studio_id'))
    op.drop_table('floorplans')
