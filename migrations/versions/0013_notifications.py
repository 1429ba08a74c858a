"""notifications: inboxes, per-studio notification levels, webhooks and their delivery log

Revision ID: 0013_notifications
Revises: 0009_recipe_governance
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = "0013_notifications"
down_revision = "0009_recipe_governance"
branch_labels = None
depends_on = None


def upgrade():
    utc = app.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "notifications",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=True),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("key", sa.String(length=120), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("path", sa.String(length=300), nullable=False),
        sa.Column("actor_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("read_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_notifications_user_id_users")),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"],
                                name=op.f("fk_notifications_studio_id_studios")),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"],
                                name=op.f("fk_notifications_actor_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
        sa.UniqueConstraint("user_id", "key", name=op.f("uq_notifications_user_id")),
    )
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_notifications_short_id"), ["short_id"], unique=True)
        batch_op.create_index("ix_notifications_user_read", ["user_id", "read_at"], unique=False)

    op.create_table(
        "notification_settings",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_notification_settings_user_id_users")),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"],
                                name=op.f("fk_notification_settings_studio_id_studios")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_settings")),
        sa.UniqueConstraint("user_id", "studio_id",
                            name=op.f("uq_notification_settings_user_id")),
    )

    op.create_table(
        "webhooks",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("studio_id", sa.Uuid(), nullable=True),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.String(length=80), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"],
                                name=op.f("fk_webhooks_owner_id_users")),
        sa.ForeignKeyConstraint(["studio_id"], ["studios.id"],
                                name=op.f("fk_webhooks_studio_id_studios")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhooks_short_id"), ["short_id"], unique=True)
        batch_op.create_index(batch_op.f("ix_webhooks_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhooks_studio_id"), ["studio_id"], unique=False)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("short_id", sa.String(length=8), nullable=False),
        sa.Column("webhook_id", sa.Uuid(), nullable=False),
        sa.Column("event", sa.String(length=80), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("enqueued", sa.Boolean(), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("finished_at", utc, nullable=True),
        sa.ForeignKeyConstraint(["webhook_id"], ["webhooks.id"],
                                name=op.f("fk_webhook_deliveries_webhook_id_webhooks")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_short_id"), ["short_id"],
                              unique=True)
        batch_op.create_index("ix_webhook_deliveries_webhook_created",
                              ["webhook_id", "created_at"], unique=False)
        batch_op.create_index("ix_webhook_deliveries_status", ["status"], unique=False)

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("started_at", utc, nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["delivery_id"], ["webhook_deliveries.id"],
                                name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"],
                              unique=False)


def downgrade():
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))
    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_status")
        batch_op.drop_index("ix_webhook_deliveries_webhook_created")
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_short_id"))
    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhooks_studio_id"))
        batch_op.drop_index(batch_op.f("ix_webhooks_owner_id"))
        batch_op.drop_index(batch_op.f("ix_webhooks_short_id"))
    op.drop_table("webhooks")
    op.drop_table("notification_settings")
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.drop_index("ix_notifications_user_read")
        batch_op.drop_index(batch_op.f("ix_notifications_short_id"))
    op.drop_table("notifications")
