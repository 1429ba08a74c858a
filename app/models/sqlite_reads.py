"""SQLite column values parsed once per stored text.

SQLite keeps a UUID as 32 hex characters and a time as text, and every row read turns each of
its UUID columns (id, studio, author, ...) back into a ``uuid.UUID`` and each time into an aware
datetime: a studio home of ~200 rows parsed 500-650 UUIDs and ~400 times, the most expensive
steps of reading a row. The same rows come back on every page and both values are immutable,
so a parsed value is shared, keyed by its stored text (bounded: a map is emptied when full).
PostgreSQL's driver returns both ready-made and is left alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import Uuid
from sqlalchemy.engine import Engine

SHARED_READS_MAX = 32_768


def shared_reads(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse`` (a column's result processor) remembering its answer per stored value."""
    seen: dict[Any, Any] = {}

    def read(value: Any) -> Any:
        if value is None:
            return None
        found = seen.get(value)
        if found is None:
            if len(seen) >= SHARED_READS_MAX:
                seen.clear()
            found = seen[value] = parse(value)
        return found

    return read


_parsed_uuid = shared_reads(uuid.UUID)


class _SharedUuid(Uuid):
    """``Uuid`` as SQLite reads it, parsing each distinct text once (``_parsed_uuid``)."""

    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        if not self.as_uuid or (dialect.supports_native_uuid and self.native_uuid):
            return super().result_processor(dialect, coltype)
        return _parsed_uuid


def share_sqlite_uuids(engine: Engine) -> None:
    """Have ``engine`` (SQLite only) read UUID columns through ``_parsed_uuid``. Set on the
    engine's own dialect before its first statement, so no other engine is touched. (Times:
    ``UTCDateTime`` in ``app.models.base`` uses ``shared_reads`` itself.)"""
    if engine.dialect.name != "sqlite":
        return
    engine.dialect.colspecs = {**engine.dialect.colspecs, Uuid: _SharedUuid}
