"""grants and representation: a person lets a studio member act for them, and what is made
or called in a representation session names both; a call's declared context, and a studio's
setting that requires one

Revision ID: 0026_grants
Revises: 0025_mail
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0026_grants"
down_revision = "0025_mail"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "grants",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=False),
        sa.Column("principal_id", sa.Uuid(), nullable=False),
        sa.Column("grantee_id", sa.Uuid(), nullable=False),
        sa.Column("actions", sa.Text(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"]),
        sa.ForeignKeyConstraint(["principal_id"], ["users.id"]),
        sa.ForeignKeyConstraint(["grantee_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_grants_principal_id", "grants", ["principal_id"])
    op.create_index("ix_grants_grantee", "grants", ["grantee_id", "revoked_at"])
    op.create_table(
        "representations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("grant_id", sa.Uuid(), nullable=False),
        sa.Column("principal_id", sa.Uuid(), nullable=False),
        sa.Column("representative_id", sa.Uuid(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("ends_at", UTCDateTime(), nullable=False),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["grant_id"], ["grants.id"]),
        sa.ForeignKeyConstraint(["principal_id"], ["users.id"]),
        sa.ForeignKeyConstraint(["representative_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_representations_grant_id", "representations", ["grant_id"])
    op.create_index("ix_representations_principal_id", "representations", ["principal_id"])
    op.create_index("ix_representations_representative", "representations",
                    ["representative_id", "ended_at"])
    with op.batch_alter_table("notes") as batch:
        batch.add_column(sa.Column("representative_id", sa.Uuid(), nullable=True))
    with op.batch_alter_table("decision_votes") as batch:
        batch.add_column(sa.Column("representative_id", sa.Uuid(), nullable=True))
    with op.batch_alter_table("mcp_tool_calls") as batch:
        batch.add_column(sa.Column("represented_user_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("context", sa.Text(), nullable=True))
    with op.batch_alter_table("studios") as batch:
        batch.add_column(sa.Column("context_required", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    op.create_index("ix_mcp_tool_calls_represented_created", "mcp_tool_calls",
                    ["represented_user_id", "created_at"])


def downgrade():
    op.drop_index("ix_mcp_tool_calls_represented_created", table_name="mcp_tool_calls")
    with op.batch_alter_table("studios") as batch:
        batch.drop_column("context_required")
    with op.batch_alter_table("mcp_tool_calls") as batch:
        batch.drop_column("context")
        batch.drop_column("represented_user_id")
    with op.batch_alter_table("decision_votes") as batch:
        batch.drop_column("representative_id")
    with op.batch_alter_table("notes") as batch:
        batch.drop_column("representative_id")
    op.drop_index("ix_representations_representative", table_name="representations")
    op.drop_index("ix_representations_principal_id", table_name="representations")
    op.drop_index("ix_representations_grant_id", table_name="representations")
    op.drop_table("representations")
    op.drop_index("ix_grants_grantee", table_name="grants")
    op.drop_index("ix_grants_principal_id", table_name="grants")
    op.drop_table("grants")
