"""The settings notifications read: app config first, then the environment, then a default."""

from __future__ import annotations

from app.core.config import Settings
from config import Setting

SETTINGS = Settings(
    Setting("WEBHOOKS_ALLOW", "",
            "hosts webhook URLs may point at (comma list: loopback, host, host:port, origin); "
            "empty: no webhook can be registered"),
    Setting("WEBHOOKS_MAX_ATTEMPTS", "6", "delivery attempts before a webhook delivery fails"),
    Setting("WEBHOOKS_RETRY_SCHEDULE", "60,300,1800,7200,86400",
            "seconds before each retry of a failed webhook delivery (comma list; the last "
            "interval again past its end)"),
    Setting("WEBHOOKS_RETRY_SCALE", "1", "multiplies the retry schedule (tests shorten it)"),
    Setting("DEADLINES_SWEEP_SECONDS", "5",
            "how often each worker looks for deadlines that have passed and reminders due"),
    Setting("WEBHOOKS_TIMEOUT", "10", "seconds to wait for a webhook receiver to answer"),
    Setting("HARMONIC_SMTP_URL", "",
            "the SMTP server notifications are mailed through: smtp://host:port (plain), "
            "smtp+starttls://… (upgraded) or smtps://… (TLS from the start), with "
            "user:password@ when it asks for a login; empty: no email is sent"),
    Setting("HARMONIC_MAIL_FROM", "Harmonic <harmonic@localhost>", "who emails come from"),
    Setting("HARMONIC_MAIL_REPLY_DOMAIN", "",
            "the domain whose reply+<token>@ addresses reach `flask mail receive`; empty: "
            "emails carry no Reply-To and replies by email are off"),
    Setting("MAIL_MAX_ATTEMPTS", "5", "sending attempts before an email fails"),
    Setting("MAIL_TIMEOUT", "10", "seconds to wait for the SMTP server"),
)
get, get_float, get_list = SETTINGS.get, SETTINGS.get_float, SETTINGS.get_list
