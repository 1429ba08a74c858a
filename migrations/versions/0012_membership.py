"""membership: invite links with a role, use count, revocation and an invitee; agent owners

Existing memberships keep their role (creators were made admins when they created a studio;
anything else becomes member); existing invites become unlimited member invites.

Revision ID: 0012_membership
Revises: 0009_recipe_governance
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0012_membership"
down_revision = "0009_recipe_governance"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("invites", schema=None) as batch_op:
        batch_op.add_column(sa.Column("role", sa.String(length=16), nullable=False,
                                      server_default="member"))
        batch_op.add_column(sa.Column("max_uses", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("uses", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("revoked_at", app.models.base.UTCDateTime(timezone=True),
                                      nullable=True))
        batch_op.add_column(sa.Column("invitee_id", sa.Uuid(), nullable=True))
        batch_op.create_index(batch_op.f("ix_invites_invitee_id"), ["invitee_id"], unique=False)
        batch_op.create_foreign_key(batch_op.f("fk_invites_invitee_id_users"), "users",
                                    ["invitee_id"], ["id"])

    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner_id", sa.Uuid(), nullable=True))
        batch_op.create_index(batch_op.f("ix_users_owner_id"), ["owner_id"], unique=False)
        batch_op.create_foreign_key(batch_op.f("fk_users_owner_id_users"), "users",
                                    ["owner_id"], ["id"])

    # Roles are admin, member or guest: a studio's creator is its admin, anyone else a member.
    op.execute("UPDATE memberships SET role = 'member' "
               "WHERE role NOT IN ('admin', 'member', 'guest')")
    op.execute("UPDATE memberships SET role = 'admin' WHERE EXISTS (SELECT 1 FROM studios "
               "WHERE studios.id = memberships.studio_id "
               "AND studios.created_by_id = memberships.user_id)")


def downgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_users_owner_id_users"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_users_owner_id"))
        batch_op.drop_column("owner_id")

    with op.batch_alter_table("invites", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_invites_invitee_id_users"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_invites_invitee_id"))
        batch_op.drop_column("invitee_id")
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("uses")
        batch_op.drop_column("max_uses")
        batch_op.drop_column("role")
