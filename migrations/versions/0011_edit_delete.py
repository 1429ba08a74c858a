"""edit and delete: soft deletion (deleted_at, deleted_by_id) on notes, decisions, options,
commitments and studios; a studio's deletion request; item revisions (edit history and the
deletion audit); indexes for the studio lists' keyset pagination

Revision ID: 0011_edit_delete
Revises: 0009_recipe_governance, 0002_collab
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0011_edit_delete"
# Also after 0002_collab (it alters decisions, options and commitments): a merge point, so the
# collab branch is not left as a head of its own.
down_revision = ("0009_recipe_governance", "0002_collab")
branch_labels = None
depends_on = None

DELETABLE = ("notes", "decisions", "decision_options", "commitments", "studios")
LISTED = ("notes", "decisions", "commitments")


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    for table in DELETABLE:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("deleted_at", utc, nullable=True))
            batch_op.add_column(sa.Column("deleted_by_id", sa.Uuid(), nullable=True))
            batch_op.create_index(batch_op.f(f"ix_{table}_deleted_at"), ["deleted_at"],
                                  unique=False)
    with op.batch_alter_table("studios", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deletion_requested_at", utc, nullable=True))
        batch_op.add_column(sa.Column("deletion_requested_by_id", sa.Uuid(), nullable=True))
    for table in LISTED:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(f"ix_{table}_studio_created", ["studio_id", "created_at", "id"],
                                  unique=False)

    op.create_table(
        "item_revisions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=False),
        sa.Column("item_type", sa.String(length=24), nullable=False),
        sa.Column("item_id", sa.Uuid(), nullable=False),
        sa.Column("item_label", sa.String(length=300), nullable=False),
        sa.Column("event", sa.String(length=24), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("after", sa.JSON(), nullable=False),
        sa.Column("happened_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"],
                                name=op.f("fk_item_revisions_studio_id_studios")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_item_revisions_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_item_revisions")),
    )
    with op.batch_alter_table("item_revisions", schema=None) as batch_op:
        batch_op.create_index("ix_item_revisions_item", ["item_type", "item_id"], unique=False)
        batch_op.create_index("ix_item_revisions_studio_time", ["studio_id", "happened_at"],
                              unique=False)


def downgrade():
    with op.batch_alter_table("item_revisions", schema=None) as batch_op:
        batch_op.drop_index("ix_item_revisions_studio_time")
        batch_op.drop_index("ix_item_revisions_item")
    op.drop_table("item_revisions")
    for table in LISTED:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(f"ix_{table}_studio_created")
    with op.batch_alter_table("studios", schema=None) as batch_op:
        batch_op.drop_column("deletion_requested_by_id")
        batch_op.drop_column("deletion_requested_at")
    for table in DELETABLE:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_deleted_at"))
            batch_op.drop_column("deleted_by_id")
            batch_op.drop_column("deleted_at")
