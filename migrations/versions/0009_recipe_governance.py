"""recipe governance: recipe versions, the audit log, a playbook's studio, run digests

Revision ID: 0009_recipe_governance
Revises: 0005_playbooks
"""
from alembic import op
import sqlalchemy as sa

import app.models.base


revision = '0009_recipe_governance'
down_revision = '0005_playbooks'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('studios', schema=None) as batch_op:
        batch_op.add_column(sa.Column('teacher_replays', sa.Boolean(), nullable=False,
                                      server_default=sa.true()))

    with op.batch_alter_table('playbooks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('studio_id', sa.Uuid(), nullable=True))
        batch_op.create_index(batch_op.f('ix_playbooks_studio_id'), ['studio_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_playbooks_studio_id_studios'), 'studios',
                                    ['studio_id'], ['id'])

    with op.batch_alter_table('playbook_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('recipe_version', sa.String(length=40), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('recipe_digest', sa.String(length=64), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('args_digest', sa.String(length=64), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('state', sa.String(length=16), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('door', sa.String(length=16), nullable=False,
                                      server_default=''))
        batch_op.create_index(batch_op.f('ix_playbook_runs_recipe_digest'), ['recipe_digest'],
                              unique=False)

    op.create_table('playbook_recipe_versions',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('short_id', sa.String(length=8), nullable=False),
    sa.Column('playbook_id', sa.Uuid(), nullable=False),
    sa.Column('version', sa.String(length=40), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('content', sa.JSON(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('author_id', sa.Uuid(), nullable=True),
    sa.Column('author', sa.String(length=120), nullable=False),
    sa.Column('previous_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('reviewed_by_id', sa.Uuid(), nullable=True),
    sa.Column('reviewed_at', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('approved_by_id', sa.Uuid(), nullable=True),
    sa.Column('approved_at', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('retired_at', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['playbook_id'], ['playbooks.id'], name=op.f('fk_playbook_recipe_versions_playbook_id_playbooks')),
    sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_playbook_recipe_versions_author_id_users')),
    sa.ForeignKeyConstraint(['previous_id'], ['playbook_recipe_versions.id'], name=op.f('fk_playbook_recipe_versions_previous_id_playbook_recipe_versions')),
    sa.ForeignKeyConstraint(['reviewed_by_id'], ['users.id'], name=op.f('fk_playbook_recipe_versions_reviewed_by_id_users')),
    sa.ForeignKeyConstraint(['approved_by_id'], ['users.id'], name=op.f('fk_playbook_recipe_versions_approved_by_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_playbook_recipe_versions'))
    )
    with op.batch_alter_table('playbook_recipe_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_playbook_recipe_versions_short_id'), ['short_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_playbook_recipe_versions_playbook_id'), ['playbook_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_playbook_recipe_versions_digest'), ['digest'], unique=False)

    op.create_table('playbook_audit',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('playbook_id', sa.Uuid(), nullable=True),
    sa.Column('version_id', sa.Uuid(), nullable=True),
    sa.Column('run_id', sa.Uuid(), nullable=True),
    sa.Column('event', sa.String(length=24), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('actor', sa.String(length=120), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('created_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['playbook_id'], ['playbooks.id'], name=op.f('fk_playbook_audit_playbook_id_playbooks')),
    sa.ForeignKeyConstraint(['version_id'], ['playbook_recipe_versions.id'], name=op.f('fk_playbook_audit_version_id_playbook_recipe_versions')),
    sa.ForeignKeyConstraint(['run_id'], ['playbook_runs.id'], name=op.f('fk_playbook_audit_run_id_playbook_runs')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_playbook_audit_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_playbook_audit'))
    )
    with op.batch_alter_table('playbook_audit', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_playbook_audit_playbook_id'), ['playbook_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_playbook_audit_created_at'), ['created_at'], unique=False)


def downgrade():
    with op.batch_alter_table('playbook_audit', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playbook_audit_created_at'))
        batch_op.drop_index(batch_op.f('ix_playbook_audit_playbook_id'))
    op.drop_table('playbook_audit')
    with op.batch_alter_table('playbook_recipe_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playbook_recipe_versions_digest'))
        batch_op.drop_index(batch_op.f('ix_playbook_recipe_versions_playbook_id'))
        batch_op.drop_index(batch_op.f('ix_playbook_recipe_versions_short_id'))
    op.drop_table('playbook_recipe_versions')
    with op.batch_alter_table('playbook_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playbook_runs_recipe_digest'))
        batch_op.drop_column('door')
        batch_op.drop_column('state')
        batch_op.drop_column('args_digest')
        batch_op.drop_column('recipe_digest')
        batch_op.drop_column('recipe_version')
    with op.batch_alter_table('playbooks', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_playbooks_studio_id_studios'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_playbooks_studio_id'))
        batch_op.drop_column('studio_id')
    with op.batch_alter_table('studios', schema=None) as batch_op:
        batch_op.drop_column('teacher_replays')
