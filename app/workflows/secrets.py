"""``secrets.<name>`` in templates: values from a secret provider, redacted wherever they go.

Only names listed in ``WORKFLOWS_SECRETS`` can be read; the default provider reads the
environment variable of that name (as written, else upper-cased: ``secrets.pg_dsn`` reads
``pg_dsn`` or ``PG_DSN``). Another provider is a function ``name -> str | None`` registered
in ``PROVIDERS`` and chosen with ``WORKFLOWS_SECRET_PROVIDER``.

A secret's value must never reach the log, an event, a stored result or a page: the runner
passes everything it records through ``redact`` (every allow-listed secret's value becomes
``[redacted]``), and ``LogFilter`` does the same for log records of the workflow loggers.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from app.workflows import settings
from app.workflows.templating import RenderError

REDACTED = "[redacted]"
MIN_LENGTH = 4  # shorter values would redact ordinary words; providers should not hand them out


def _from_environment(name: str) -> str | None:
    return os.environ.get(name) or os.environ.get(name.upper())


PROVIDERS: dict[str, Callable[[str], str | None]] = {"env": _from_environment}


class SecretError(LookupError):
    """A secret that is not allowed, or not set."""


def allowed() -> list[str]:
    return [name.strip() for name in settings.get("WORKFLOWS_SECRETS").split(",")
            if name.strip()]


def _provider() -> Callable[[str], str | None]:
    name = settings.get("WORKFLOWS_SECRET_PROVIDER")
    provider = PROVIDERS.get(name)
    if provider is None:
        raise SecretError(f"unknown secret provider '{name}' (WORKFLOWS_SECRET_PROVIDER; "
                          f"known: {', '.join(sorted(PROVIDERS))})")
    return provider


def get(name: str) -> str:
    names = allowed()
    if name not in names:
        # (the allow-list itself is the operator's: named, never listed)
        raise SecretError(f"secret '{name}' is not allowed: this server's operator allows a "
                          f"secret by adding its name to WORKFLOWS_SECRETS")
    value = _provider()(name)
    if not value:
        raise SecretError(f"secret '{name}' is not set")
    return value


class Secrets(Mapping[str, str]):
    """What templates see as ``secrets``: looked up on use, never listed."""

    def __getitem__(self, name: str) -> str:
        try:
            return get(name)
        except SecretError as exc:
            # Not a KeyError: Jinja would turn that into a vague "undefined" message.
            raise RenderError(str(exc)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(())  # a template cannot enumerate the secrets

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<secrets>"


_PRIVATE_FIELDS = ("pass", "secret", "token", "key")  # parts of a field name that mark it


def _private_fields(value: str) -> list[str]:
    """The private fields of a secret that is a JSON object (a credential's password, say),
    which may turn up on their own where the whole object never does."""
    if not value.lstrip().startswith("{"):
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    if not isinstance(parsed, dict):
        return []
    return [str(v) for k, v in parsed.items()
            if isinstance(v, str | int) and any(p in str(k).lower() for p in _PRIVATE_FIELDS)]


def values() -> list[str]:
    """The values of the allow-listed secrets that are set (and the private fields of those
    that are JSON objects), longest first."""
    try:
        provider = _provider()
    except SecretError:
        return []
    found = {provider(name) for name in allowed()}
    found |= {field for value in list(found) if value for field in _private_fields(value)}
    return sorted((v for v in found if v and len(v) >= MIN_LENGTH), key=len, reverse=True)


def redact(value: Any, known: list[str] | None = None) -> Any:
    """``value`` (strings, dicts, lists) with every secret's value replaced by ``[redacted]``."""
    known = values() if known is None else known
    if not known:
        return value
    if isinstance(value, str):
        for secret in known:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: redact(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, known) for v in value]
    return value


class LogFilter(logging.Filter):
    """Redacts secrets in a record's message (arguments included) before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        known = values()
        if known:
            message = record.getMessage()
            cleaned = redact(message, known)
            if cleaned != message:
                record.msg, record.args = cleaned, None
            if record.exc_info and record.exc_text is None and record.exc_info[1] is not None:
                text = logging.Formatter().formatException(record.exc_info)
                record.exc_text = redact(text, known)
        return True
