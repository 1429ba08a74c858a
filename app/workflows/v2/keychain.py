"""Credentials by name: ``auth: <name>``, ``credential: <name>`` and ``keychain.<name>``.

A document names a credential and never holds it. The material is the operator's: the secret
of that name (``app.workflows.secrets``: only names listed in ``WORKFLOWS_SECRETS``, read from
``WORKFLOWS_SECRET_PROVIDER``), either a URL or DSN (``postgresql://…``, ``host=… dbname=…``)
or a JSON object (``{"host", "port", "user", "password", "database"}``, NoETL's field names
``db_host``, ``db_user``… too). Its values are secrets: they are redacted wherever a run's
records go.
"""

from __future__ import annotations

import json
from typing import Any

from app.workflows import secrets
from app.workflows.tools import StepError

# A JSON credential's fields for a PostgreSQL connection, under the names people give them.
_FIELDS = {"host": ("host", "db_host", "hostname"), "port": ("port", "db_port"),
           "user": ("user", "username", "db_user"),
           "password": ("password", "db_password", "pass"),
           "dbname": ("dbname", "database", "db_name", "db")}


def credential(name: str) -> Any:
    """The credential ``name``: a JSON object's value as an object, anything else as text."""
    try:
        value = secrets.get(str(name))
    except secrets.SecretError as exc:
        raise StepError(str(exc)) from None
    text = value.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            raise StepError(f"credential '{name}' is neither a DSN nor a JSON object") from None
        if isinstance(parsed, dict):
            return parsed
    return value


def postgres_dsn(name: str) -> str:
    """A PostgreSQL connection string for the credential ``name``."""
    from psycopg.conninfo import (  # lazy: the driver only for PostgreSQL
        make_conninfo,
    )

    value = credential(name)
    if isinstance(value, str):
        if value.startswith("postgresql+"):
            value = "postgresql" + value[value.index(":"):]
        if value.startswith(("postgresql://", "postgres://")) or "=" in value:
            return value
        raise StepError(f"credential '{name}' is not a PostgreSQL DSN or connection object")
    fields: dict[str, Any] = {}
    for field, names in _FIELDS.items():
        found = next((value[n] for n in names if value.get(n) not in (None, "")), None)
        if found is not None:
            fields[field] = str(found)
    if "host" not in fields or "dbname" not in fields:
        raise StepError(f"credential '{name}' names no host and database")
    return make_conninfo("", **fields)
