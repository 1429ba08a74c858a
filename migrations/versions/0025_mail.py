"""mail: notifications by email (the outgoing messages), per-type channel preferences, a
person's confirmed address and their daily-digest choice

Revision ID: 0025_mail
Revises: 0024_deadlines_webhooks
"""
import sqlalchemy as sa
from alembic import op

from app.models.base import UTCDateTime

revision = "0025_mail"
down_revision = "0024_deadlines_webhooks"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("email_verified_at", UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("email_digest", sa.Boolean(), server_default=sa.false(),
                                      nullable=False))

    op.create_table(
        "notification_preferences",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_notification_preferences_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_preferences")),
        sa.UniqueConstraint("user_id", "kind", "channel",
                            name=op.f("uq_notification_preferences_user_id")),
    )

    op.create_table(
        "mail_messages",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=True),
        sa.Column("key", sa.String(length=140), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("path", sa.String(length=300), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("enqueued", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("sent_at", UTCDateTime(), nullable=True),
        sa.Column("digest_id", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_mail_messages_user_id_users")),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"],
                                name=op.f("fk_mail_messages_studio_id_studios")),
        sa.ForeignKeyConstraint(["digest_id"], ["mail_messages.id"],
                                name=op.f("fk_mail_messages_digest_id_mail_messages")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_messages")),
        sa.UniqueConstraint("user_id", "key", name=op.f("uq_mail_messages_user_id")),
    )
    with op.batch_alter_table("mail_messages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mail_messages_short_id"), ["short_id"], unique=True)
        batch_op.create_index("ix_mail_messages_status", ["status"], unique=False)


def downgrade():
    with op.batch_alter_table("mail_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_mail_messages_status")
        batch_op.drop_index(batch_op.f("ix_mail_messages_short_id"))
    op.drop_table("mail_messages")
    op.drop_table("notification_preferences")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("email_digest")
        batch_op.drop_column("email_verified_at")
