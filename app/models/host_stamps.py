"""Change stamps every process of one host reads from memory: a small file beside a SQLite
database, mapped into each process that opens the database.

A process may keep a copy of a row only while nothing changed it elsewhere. Asking the database
costs a read; on SQLite, whose every process is on the one host holding the file, a shared
memory page answers the same question for the price of comparing eight bytes. Each key (a
session id, say) falls in one of ``SLOTS`` slots; whoever changes a row writes a new random
stamp into its key's slot after the change commits (``bump``), and a copy taken under the old
stamp is no longer used. Keys sharing a slot only cost each other a read now and then.

Nothing here is needed for correctness of the database itself: a stamp file that cannot be
made (a read-only directory) or an in-memory database gives no stamps, and callers read every
time, as before. PostgreSQL's processes may be on many hosts, so it gives none either.
"""

from __future__ import annotations

import mmap
import os
import threading
import zlib
from pathlib import Path

from sqlalchemy.engine import Engine

SLOTS = 4096
_WIDTH = 8  # bytes of a stamp
SUFFIX = "-stamps"  # beside SQLite's own "-wal" and "-shm"


class Stamps:
    """The stamp file of one database, mapped shared (read and written by every process)."""

    def __init__(self, path: Path, mode: int = 0o600) -> None:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, mode)
        try:
            size = SLOTS * _WIDTH
            if os.fstat(descriptor).st_size < size:  # new: every process grows it alike
                os.ftruncate(descriptor, size)
            self._map = mmap.mmap(descriptor, size, mmap.MAP_SHARED,
                                  mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(descriptor)  # the mapping keeps the file
        self.path = path

    @staticmethod
    def _slot(key: str) -> int:
        # crc32, not hash(): every process must put a key in the same slot.
        return (zlib.crc32(key.encode()) % SLOTS) * _WIDTH

    def read(self, key: str) -> bytes:
        """The key's stamp now (a copy taken under it is still good while this is unchanged)."""
        at = self._slot(key)
        return self._map[at:at + _WIDTH]

    def bump(self, key: str) -> None:
        """Say the key's row changed: call after the change commits."""
        at = self._slot(key)
        # Random, not a counter: two processes bumping at once cannot write the same value
        # back, and no read-modify-write is needed.
        self._map[at:at + _WIDTH] = os.urandom(_WIDTH)


_OPEN: dict[str, Stamps | None] = {}
_LOCK = threading.Lock()


def for_engine(engine: Engine) -> Stamps | None:
    """The stamp file beside ``engine``'s SQLite database file, None where there is none to be
    had (PostgreSQL, an in-memory database, a directory the process may not write)."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    found = _OPEN.get(database, False)
    if found is False:
        with _LOCK:
            found = _OPEN.get(database, False)
            if found is False:
                file = Path(database).resolve()
                try:
                    # Whoever may write the database may write its stamps.
                    found = Stamps(file.with_name(file.name + SUFFIX),
                                   file.stat().st_mode & 0o666 if file.exists() else 0o600)
                except OSError:
                    found = None
                _OPEN[database] = found
    return found  # type: ignore[return-value]
