"""Ids staged in a transaction (emails, webhook deliveries), handed out only once it has
committed: a rollback forgets them, so nothing a rolled-back transaction made is enqueued."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from app.extensions import db, session_exists


class Staged:
    """The ids of one kind of row, kept in ``Session.info`` under ``harmonic.<name>.*``."""

    def __init__(self, name: str) -> None:
        self._pending = f"harmonic.{name}.pending"  # staged in this transaction
        self._committed = f"harmonic.{name}.committed"  # ... those whose transaction committed
        event.listen(Session, "after_commit", self._on_commit)
        event.listen(Session, "after_soft_rollback", self._on_rollback)

    def add(self, *ids: uuid.UUID) -> None:
        db.session.info.setdefault(self._pending, []).extend(ids)

    def committed_ids(self) -> list[uuid.UUID]:
        """Those whose transaction has committed and are not enqueued yet (taken once)."""
        if not session_exists():  # nothing was committed through a session that was never made
            return []
        return list(db.session().info.pop(self._committed, []))

    def _on_commit(self, session: Session) -> None:
        if session.in_nested_transaction():
            return  # a savepoint released: committed only with the root
        pending = session.info.pop(self._pending, None)
        if pending:
            session.info.setdefault(self._committed, []).extend(pending)

    def _on_rollback(self, session: Session, _previous: Any) -> None:
        session.info.pop(self._pending, None)
