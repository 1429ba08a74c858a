"""The data layer: the only code that talks to the database driver, through SQLAlchemy's and
psycopg's public APIs.

Two verbs:

- ``read(query)`` and ``read_many(*queries)`` (``app.db.reads``): a ``Query`` is a statement,
  its parameters and how its rows become the caller's answer; ``read_many`` returns every
  answer to its caller, in order, sent in one pipeline on PostgreSQL and one after another on
  SQLite.
- ``writing()`` (``app.db.session``): the block every change goes in, one transaction,
  committed at its end. While the app serves a call, what is read outside a block runs in
  autocommit: a request that only reads sends no BEGIN, COMMIT or ROLLBACK.

Names load on first use (``app.extensions`` imports ``app.db.session`` for the session class).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.db.reads import Query, read, read_many, rows_of, value_of
    from app.db.session import WriteOutsideBlock, serving, writing

_PUBLIC = {"Query": "reads", "read": "reads", "read_many": "reads",
           "rows_of": "reads", "value_of": "reads", "WriteOutsideBlock": "session",
           "serving": "session", "writing": "session"}
__all__ = ["Query", "WriteOutsideBlock", "read", "read_many", "rows_of",
           "serving", "value_of", "writing"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"app.db.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'app.db' has no attribute {name!r}")
