"""capture store: playbook capture lines in the database (PLAYBOOK_CAPTURE_STORE=database)

Revision ID: 0015_capture_store
Revises: 0009_recipe_governance
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0015_capture_store"
down_revision = "0009_recipe_governance"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "capture_lines",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True,
                  nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_capture_lines")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("capture_lines", schema=None) as batch_op:
        batch_op.create_index("ix_capture_lines_session_id_id", ["session_id", "id"],
                              unique=False)


def downgrade():
    with op.batch_alter_table("capture_lines", schema=None) as batch_op:
        batch_op.drop_index("ix_capture_lines_session_id_id")
    op.drop_table("capture_lines")
