"""Shared column helpers: UUID primary keys with an 8-hex short id, and timestamps."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy
from sqlalchemy import DateTime, String, TypeDecorator, bindparam, select
from sqlalchemy.orm import Mapped, declared_attr, mapped_column

from app.extensions import Base, db

if TYPE_CHECKING:
    # Flask-SQLAlchemy builds db.Model at run time from Base's body plus its own mixins, which
    # a type checker cannot follow; for types, a model is a Base.
    Model = Base
else:
    Model = db.Model

SHORT_ID = re.compile(r"^[0-9a-f]{8}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


# SQLite keeps a UUID as 32 hex characters and a time as text, and every row read turns each
# of its UUID columns and times back into objects: the most expensive steps of reading a row
# there. The same rows come back on every page and both values are immutable, so SQLite's
# parsed values are shared, per stored text (bounded: a map is emptied when full). This is
# where SQLite's type processing lives; PostgreSQL's driver returns both ready-made.
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


class Uuid(sqlalchemy.Uuid):
    """The models' UUID columns: SQLAlchemy's ``Uuid``, read on SQLite through one parse per
    distinct stored text (``shared_reads``)."""

    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        if not self.as_uuid or (dialect.supports_native_uuid and self.native_uuid):
            return super().result_processor(dialect, coltype)
        return _parsed_uuid


class UTCDateTime(TypeDecorator):
    """Timezone-aware datetimes on every backend (SQLite drops tzinfo on the way back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):  # type: ignore[no-untyped-def]
        if value is not None:
            if value.tzinfo is None:
                value = value.replace(tzinfo=UTC)
            value = value.astimezone(UTC)
        return value

    def process_result_value(self, value, dialect):  # type: ignore[no-untyped-def]
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value

    # SQLite stores text: one parse per distinct stored time (see shared_reads), shared by
    # every column of this type (they all read the same way).
    _sqlite_reads: ClassVar[Callable[[Any], Any] | None] = None

    def result_processor(self, dialect, coltype):  # type: ignore[no-untyped-def]
        if dialect.name == "postgresql":
            # Every column of this type is a timestamptz there (its migrations say so), which
            # psycopg returns aware already: nothing to do, so no call per value read.
            return None
        process = super().result_processor(dialect, coltype)
        if dialect.name != "sqlite" or process is None:
            return process
        if UTCDateTime._sqlite_reads is None:
            UTCDateTime._sqlite_reads = shared_reads(process)
        return UTCDateTime._sqlite_reads


class IdMixin:
    """A UUID primary key plus its first 8 hex characters, unique, used in URLs."""

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)

    @declared_attr
    def short_id(cls) -> Mapped[str]:  # noqa: N805
        return mapped_column(String(8), unique=True, index=True, nullable=False)

    def assign_ids(self) -> None:
        """Pick a UUID whose short id is free in this table (collisions are rare but real)."""
        model = type(self)
        while True:
            candidate = uuid.uuid4()
            short = candidate.hex[:8]
            exists = db.session.scalar(select(model.id).where(model.short_id == short).limit(1))
            if exists is None:
                self.id = candidate
                self.short_id = short
                return


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    # A new row's updated_at equals its created_at exactly, so "edited" means edited.
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=lambda ctx: ctx.get_current_parameters()["created_at"],
        onupdate=utcnow, nullable=False,
    )


class SoftDeleteMixin:
    """A deletable item: deleted items leave every list, page and search but can be restored
    within the restore window (``app.services.deletion``). The shared convention for search
    indexes and other readers: a row whose ``deleted_at`` is set is gone."""

    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    deleted_by_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)


_BY_SHORT_ID: dict[Any, Any] = {}


def find_by_id(model, ident: str):  # type: ignore[no-untyped-def]
    """Look up ``model`` by an 8-hex short id or a full UUID; None when neither matches."""
    ident = (ident or "").strip().lower()
    if SHORT_ID.match(ident):
        by_short_id = _BY_SHORT_ID.get(model)
        if by_short_id is None:  # every item page looks its item up: built once per model
            by_short_id = _BY_SHORT_ID[model] = select(model).where(
                model.short_id == bindparam("short_id"))
        return db.session.scalars(by_short_id, {"short_id": ident}).one_or_none()
    try:
        full = uuid.UUID(ident)
    except ValueError:
        return None
    return db.session.get(model, full)
