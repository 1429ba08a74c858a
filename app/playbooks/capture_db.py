"""The database capture store (``PLAYBOOK_CAPTURE_STORE=database``): capture lines as
append-only rows of ``capture_lines``, for hosts that share a database but no disk.

Each line is written on its own short connection and committed at once, as the folder store's
``write`` hands a line to the OS at once: a recorded call is kept whatever becomes of the
transaction of the request that made it, and a line is never half written (one row, one
INSERT). Reading a session's rows in id order and joining them gives ``capture.jsonl`` byte for
byte as the folder store would have written it (``app.playbooks.capture.export``).
"""

from __future__ import annotations

from sqlalchemy import func, insert, select

from app.extensions import db
from app.models.base import utcnow
from app.models.captures import CaptureLine


def append(session_id: str, line: bytes) -> None:
    with db.engine.begin() as conn:
        conn.execute(insert(CaptureLine).values(session_id=session_id, line=line.decode("ascii"),
                                                created_at=utcnow()))


def lines(session_id: str) -> list[str]:
    with db.engine.connect() as conn:
        return list(conn.execute(select(CaptureLine.line)
                                 .where(CaptureLine.session_id == session_id)
                                 .order_by(CaptureLine.id)).scalars())


def last_written(session_id: str) -> float | None:
    """Unix time of the session's newest line, or None when it has none."""
    with db.engine.connect() as conn:
        newest = conn.execute(select(func.max(CaptureLine.created_at))
                              .where(CaptureLine.session_id == session_id)).scalar()
    if newest is None:
        return None
    return float(newest.timestamp())
