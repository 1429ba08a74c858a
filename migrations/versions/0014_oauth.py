"""oauth: clients, grants, codes, refresh tokens, consents; api_tokens gain grant and audience

Revision ID: 0014_oauth
Revises: 0009_recipe_governance
"""
from alembic import op
import sqlalchemy as sa

import app.models.base


revision = '0014_oauth'
down_revision = '0009_recipe_governance'
branch_labels = None
depends_on = None

_dt = app.models.base.UTCDateTime


def upgrade():
    op.create_table('oauth_clients',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('client_id', sa.String(length=64), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=True),
    sa.Column('client_metadata', sa.JSON(), nullable=False),
    sa.Column('created_at', _dt(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_clients')),
    sa.UniqueConstraint('client_id', name=op.f('uq_oauth_clients_client_id')))
    op.create_table('oauth_grants',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('client_id', sa.Text(), nullable=False),
    sa.Column('client_name', sa.String(length=200), nullable=False),
    sa.Column('scopes', sa.String(length=64), nullable=False),
    sa.Column('resource', sa.Text(), nullable=False),
    sa.Column('created_at', _dt(timezone=True), nullable=False),
    sa.Column('revoked_at', _dt(timezone=True), nullable=True),
    sa.Column('revoked_reason', sa.String(length=40), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_oauth_grants_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_grants')))
    op.create_index(op.f('ix_oauth_grants_user_id'), 'oauth_grants', ['user_id'], unique=False)
    op.create_table('oauth_codes',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('client_id', sa.Text(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('redirect_uri', sa.Text(), nullable=False),
    sa.Column('scopes', sa.String(length=64), nullable=False),
    sa.Column('resource', sa.Text(), nullable=False),
    sa.Column('client_name', sa.String(length=200), nullable=False),
    sa.Column('code_challenge', sa.String(length=128), nullable=False),
    sa.Column('code_challenge_method', sa.String(length=8), nullable=False),
    sa.Column('expires_at', _dt(timezone=True), nullable=False),
    sa.Column('used_at', _dt(timezone=True), nullable=True),
    sa.Column('grant_id', sa.Uuid(), nullable=True),
    sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id'],
                            name=op.f('fk_oauth_codes_grant_id_oauth_grants')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_oauth_codes_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_codes')),
    sa.UniqueConstraint('code_hash', name=op.f('uq_oauth_codes_code_hash')))
    op.create_table('oauth_refresh_tokens',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('grant_id', sa.Uuid(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', _dt(timezone=True), nullable=False),
    sa.Column('expires_at', _dt(timezone=True), nullable=False),
    sa.Column('used_at', _dt(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id'],
                            name=op.f('fk_oauth_refresh_tokens_grant_id_oauth_grants')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_refresh_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_oauth_refresh_tokens_token_hash')))
    op.create_index(op.f('ix_oauth_refresh_tokens_grant_id'), 'oauth_refresh_tokens',
                    ['grant_id'], unique=False)
    op.create_table('oauth_consents',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('client_id', sa.String(length=2048), nullable=False),
    sa.Column('scopes', sa.String(length=64), nullable=False),
    sa.Column('created_at', _dt(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'],
                            name=op.f('fk_oauth_consents_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_consents')),
    sa.UniqueConstraint('user_id', 'client_id', name=op.f('uq_oauth_consents_user_id')))
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.add_column(sa.Column('oauth_grant_id', sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column('audience', sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f('ix_api_tokens_oauth_grant_id'), ['oauth_grant_id'],
                              unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_api_tokens_oauth_grant_id_oauth_grants'),
                                    'oauth_grants', ['oauth_grant_id'], ['id'])


def downgrade():
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_api_tokens_oauth_grant_id_oauth_grants'),
                                 type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_api_tokens_oauth_grant_id'))
        batch_op.drop_column('audience')
        batch_op.drop_column('oauth_grant_id')
    op.drop_table('oauth_consents')
    op.drop_index(op.f('ix_oauth_refresh_tokens_grant_id'), table_name='oauth_refresh_tokens')
    op.drop_table('oauth_refresh_tokens')
    op.drop_table('oauth_codes')
    op.drop_index(op.f('ix_oauth_grants_user_id'), table_name='oauth_grants')
    op.drop_table('oauth_grants')
    op.drop_table('oauth_clients')
