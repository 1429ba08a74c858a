"""Sending one email through the SMTP server ``HARMONIC_SMTP_URL`` names.

``smtp://host:port`` talks plain SMTP (a local relay), ``smtp+starttls://`` upgrades the
connection first, ``smtps://`` speaks TLS from the first byte (port 465); ``user:password@``
in the URL logs in (percent-encoded, as in any URL). The standard library does the talking.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from app.notifications import settings

SCHEMES = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


class MailError(Exception):
    """The message could not be handed to the SMTP server (worth trying again later)."""


@dataclass(frozen=True)
class Server:
    scheme: str
    host: str
    port: int
    user: str | None
    password: str | None


def server() -> Server | None:
    """The configured server, or None when mail is off."""
    url = settings.get("HARMONIC_SMTP_URL").strip()
    if not url:
        return None
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not parts.hostname:
        raise ValueError(f"HARMONIC_SMTP_URL must be smtp://, smtp+starttls:// or smtps:// "
                         f"with a host, not {scheme or url!r}")
    return Server(scheme, parts.hostname, parts.port or SCHEMES[scheme],
                  unquote(parts.username) if parts.username else None,
                  unquote(parts.password) if parts.password else None)


def enabled() -> bool:
    return bool(settings.get("HARMONIC_SMTP_URL").strip())


def send(message: EmailMessage) -> None:
    """Hand ``message`` to the server; raises MailError when that did not happen."""
    found = server()
    if found is None:
        raise MailError("no SMTP server is configured (HARMONIC_SMTP_URL)")
    timeout = settings.get_float("MAIL_TIMEOUT")
    try:
        connection: smtplib.SMTP
        if found.scheme == "smtps":
            connection = smtplib.SMTP_SSL(found.host, found.port, timeout=timeout,
                                          context=ssl.create_default_context())
        else:
            connection = smtplib.SMTP(found.host, found.port, timeout=timeout)
        with connection:
            if found.scheme == "smtp+starttls":
                connection.starttls(context=ssl.create_default_context())
            if found.user:
                connection.login(found.user, found.password or "")
            connection.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        raise MailError(f"{type(exc).__name__}: {exc}"[:500]) from exc
