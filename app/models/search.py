"""The search index: one row per searchable item (``app.search`` keeps it current).

The full-text part of the index is not a column the models can describe: on SQLite it is the
FTS5 table ``search_fts`` (external content over this table, kept in step by triggers), on
PostgreSQL the generated ``tsv`` column with its GIN index. Both are made by the migration;
``schema_filter`` tells Alembic's comparisons to leave them alone.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, Uuid

FTS_TABLE = "search_fts"
TSV_COLUMN = "tsv"


class SearchDocument(Model):
    """What one item says, who may see it and how to reach it.

    Visibility: ``public`` rows (workflow playbooks) are for every signed-in person; others
    belong to a studio (its members see them) and/or an owner (a playbook's teacher).
    ``path`` is absolute when it starts with "/", otherwise relative to the studio's URL (so a
    renamed studio needs no re-index).
    """

    __tablename__ = "search_documents"
    __table_args__ = (UniqueConstraint("kind", "item_id"),
                      Index("ix_search_documents_parent", "parent_kind", "parent_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    item_id: Mapped[str] = mapped_column(String(80), nullable=False)
    studio_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    owner_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    public: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    author_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    parent_kind: Mapped[str | None] = mapped_column(String(24))
    parent_id: Mapped[str | None] = mapped_column(String(80))
    status: Mapped[str | None] = mapped_column(String(16))
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    title: Mapped[str] = mapped_column(String(500), nullable=False, default="")
    body: Mapped[str] = mapped_column(Text, nullable=False, default="")
    path: Mapped[str] = mapped_column(String(300), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


def schema_filter(obj: Any, name: str | None, type_: str, reflected: bool,
                  compare_to: Any) -> bool:
    """Alembic ``include_object``: skip the full-text objects the models do not describe."""
    if type_ == "table" and name is not None and name.startswith(FTS_TABLE):
        return False
    if type_ == "column" and name == TSV_COLUMN and getattr(obj, "table", None) is not None \
            and obj.table.name == SearchDocument.__tablename__:
        return False
    return not (type_ == "index" and name == "ix_search_documents_tsv")
