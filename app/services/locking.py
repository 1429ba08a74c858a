"""Row locks that serialize concurrent writers on one item, on PostgreSQL and SQLite alike.

PostgreSQL: ``SELECT ... FOR UPDATE`` (or ``FOR SHARE``) on the row. SQLite has no row locks
but lets one writer at a time hold the database: a no-op UPDATE takes that write lock for the
rest of the transaction, which serializes writers the same way.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select, update

from app.db.session import require_block
from app.extensions import db
from app.services.errors import NotFound


def lock_row(model: Any, ident: uuid.UUID, shared: bool = False) -> Any:
    """Lock ``model`` row ``ident`` until the transaction ends and return it freshly read.

    ``shared`` lets other shared holders in (votes on one decision) while keeping out an
    exclusive holder (closing the decision).
    """
    require_block(db.session(), "a row lock")  # it must last until the block's commit
    if db.session.get_bind().dialect.name == "postgresql":
        stmt = select(model).where(model.id == ident).with_for_update(read=shared)
    else:
        if not shared:
            table = model.__table__
            # Setting columns to themselves changes nothing but takes the write lock; naming
            # updated_at keeps its on-update default from firing.
            values = {"id": table.c.id}
            if "updated_at" in table.c:
                values["updated_at"] = table.c.updated_at
            db.session.execute(update(table).where(table.c.id == ident).values(**values))
        stmt = select(model).where(model.id == ident)
    found = db.session.execute(stmt.execution_options(populate_existing=True)).scalar_one_or_none()
    if found is None:
        raise NotFound("that item no longer exists")
    return found
