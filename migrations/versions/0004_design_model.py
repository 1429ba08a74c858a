"""design model: Revit-side elements and Rhino-side objects

Revision ID: 0004_design_model
Revises: 0001_core
"""
from alembic import op
import sqlalchemy as sa

import app.models.base


revision = '0004_design_model'
down_revision = '0001_core'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('design_elements',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('model', sa.String(length=80), nullable=False),
    sa.Column('element_id', sa.Integer(), nullable=False),
    sa.Column('unique_id', sa.String(length=120), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('category', sa.String(length=80), nullable=False),
    sa.Column('family', sa.String(length=120), nullable=False),
    sa.Column('type_name', sa.String(length=120), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('level', sa.String(length=80), nullable=True),
    sa.Column('mark', sa.String(length=80), nullable=True),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('location', sa.JSON(), nullable=True),
    sa.Column('vertices', sa.JSON(), nullable=False),
    sa.Column('submeshes', sa.JSON(), nullable=False),
    sa.Column('materials', sa.JSON(), nullable=False),
    sa.Column('transform', sa.JSON(), nullable=False),
    sa.Column('snapshot_stamp', sa.String(length=64), nullable=False),
    sa.Column('geom_hash', sa.String(length=64), nullable=False),
    sa.Column('selected', sa.Boolean(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_design_elements')),
    sa.UniqueConstraint('model', 'element_id', name='uq_design_elements_model_element_id'),
    sa.UniqueConstraint('model', 'unique_id', name='uq_design_elements_model_unique_id')
    )
    with op.batch_alter_table('design_elements', schema=None) as batch_op:
        batch_op.create_index('ix_design_elements_model_category', ['model', 'category'],
                              unique=False)

    op.create_table('design_rhino_objects',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('model', sa.String(length=80), nullable=False),
    sa.Column('unique_id', sa.String(length=120), nullable=False),
    sa.Column('element_id', sa.Integer(), nullable=True),
    sa.Column('vertices', sa.JSON(), nullable=False),
    sa.Column('submeshes', sa.JSON(), nullable=False),
    sa.Column('materials', sa.JSON(), nullable=False),
    sa.Column('baseline', sa.JSON(), nullable=False),
    sa.Column('current', sa.JSON(), nullable=False),
    sa.Column('snapshot_stamp', sa.String(length=64), nullable=True),
    sa.Column('geom_hash', sa.String(length=64), nullable=True),
    sa.Column('source_url', sa.String(length=500), nullable=True),
    sa.Column('locked', sa.Boolean(), nullable=False),
    sa.Column('selected', sa.Boolean(), nullable=False),
    sa.Column('imported_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_design_rhino_objects')),
    sa.UniqueConstraint('model', 'unique_id', name='uq_design_rhino_objects_model_unique_id')
    )


def downgrade():
    op.drop_table('design_rhino_objects')
    with op.batch_alter_table('design_elements', schema=None) as batch_op:
        batch_op.drop_index('ix_design_elements_model_category')
    op.drop_table('design_elements')
