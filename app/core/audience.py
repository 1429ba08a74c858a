"""Who hears of a change: subscriptions and streams carry only events of resources the subscriber
may read now.

Every door that delivers change events asks here before it sends one: a 2025-11-25 session's
responses (``app.mcp.store.take_updates``) and its ``GET /mcp`` stream, live and replayed
(``app.mcp.stream``), ``subscriptions/listen`` on HTTP and stdio and stdio's subscriptions
(``app.mcp.hearing``).

The rule is the page loaders' own (``app.services.permissions.may_read``): a studio's pages are
read by its members, whatever their role, and by nobody else. So an event of a resource filed
under a studio — ``harmonic://page/studios/<handle>/…``, and what a feature files there
(``add_studio_uris``: ``floorplan://studios/<handle>/…``) — reaches the studio's members only,
as it is when the event is delivered. Whether anyone else may read a resource (a person's
settings, a workflow run) does not change with a studio's membership: it was settled when the
subscription was made, by reading the resource as the subscriber (``resources/subscribe`` and
``subscriptions/listen`` refuse, or leave out, what the caller cannot read). A token revoked
ends the stream it opened (each door resolves the token again, the token cache's second at
most).

Cost: membership is read per studio, not per subscriber. Each process keeps a studio's members
with ``through``, the newest outbox id when they were read (read first, so the members are at
least that new). An event whose id is at most ``through`` is checked against them as they are;
a newer one has the members read again first: one indexed query per studio per new event in a
process, however many subscribers wait for it, and none for the others. So an event reaches
only someone who was a member at a moment no earlier than the event itself: a person removed
from a studio hears of nothing written after the removal, whichever process serves them.
Events given to listeners have no id; their bound (``bound``) is the newest id this process
has seen (the feed's cursor, or a change it wrote itself), which is at least theirs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, current_app, has_app_context
from sqlalchemy import select

from app.core import changes, feed
from app.core.identity import Identity
from app.extensions import db
from app.models import Membership, Studio
from app.services import permissions
from app.services.listeners import Listeners

KEY = "harmonic.audience"
_PAGE = re.compile(r"^harmonic://page/studios/([^/?#]+)")
_RESERVED = frozenset({"new", "actions"})  # /studios/new, /studios/actions: no studio's pages

# uri -> the handle of the studio it is filed under, or None (features add their schemes).
StudioOf = Callable[[str], str | None]
_studio_uris: Listeners[StudioOf] = Listeners()
Event = TypeVar("Event", bound=Sequence[Any])  # (outbox id, URI), a tuple or a row


# Let a resolver say which studio a URI of a feature's is filed under.
add_studio_uris = _studio_uris.add


def studio_of(uri: str) -> str | None:
    """The handle of the studio whose members alone may read ``uri``; None for a resource that
    is no studio's."""
    found = _PAGE.match(uri)
    if found is not None:
        handle = found.group(1).lower()
        return None if handle in _RESERVED else handle
    for resolver in list(_studio_uris):
        handle = resolver(uri)
        if handle is not None:
            return handle.lower()
    return None


@dataclass(frozen=True)
class _Members:
    roles: dict[Any, str]  # user id -> role
    through: int  # the newest change event when they were read


class _Studios:
    """A process's members of the studios it delivers events of (``KEY`` in the app's
    extensions: one per app, so per database)."""

    def __init__(self) -> None:
        self.known: dict[str, _Members] = {}
        self.written = 0  # the newest change event id this process wrote
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def role(self, handle: str, user_id: Any, as_of: int) -> str | None:
        members = self.known.get(handle)
        if members is None or members.through < as_of:
            with self._lock:
                lock = self._locks.setdefault(handle, threading.Lock())
            with lock:  # one read for everyone waiting on this studio
                members = self.known.get(handle)
                if members is None or members.through < as_of:
                    members = self.known[handle] = _read(handle)
        return members.roles.get(user_id)


def _read(handle: str) -> _Members:
    # On a connection of its own: the caller's transaction may be old (a snapshot from before
    # the event), and nothing here may end it.
    with db.engine.connect() as conn:
        through = changes.latest_id(conn)
        rows = conn.execute(select(Membership.user_id, Membership.role)
                            .join(Studio, Studio.id == Membership.studio_id)
                            .where(Studio.handle == handle)).all()
    return _Members({user_id: role for user_id, role in rows}, through)


def _studios() -> _Studios:
    known: _Studios | None = current_app.extensions.get(KEY)
    if known is None:
        known = current_app.extensions.setdefault(KEY, _Studios())
    return known


def hears(identity: Identity | None, uri: str, as_of: int) -> bool:
    """Whether the subscriber ``identity`` may be told of the change of ``uri`` recorded as
    event ``as_of`` (or before it). In an app context."""
    handle = studio_of(uri)
    if handle is None:
        return True
    if identity is None:
        return False  # nobody's pages of a studio are read anonymously
    return permissions.may_read(_studios().role(handle, identity.user_id, as_of))


def audible(identity: Identity | None, events: Sequence[Event],
            as_of: int | None = None) -> list[Event]:
    """The ``events`` ((outbox id, URI) pairs, oldest first) the subscriber may be told of.
    ``as_of`` (default: the newest of them) is the outbox id as of which a member must still
    be one: a replay passes the newest id there is, for "may read now"."""
    if not events:
        return []
    newest = as_of if as_of is not None else max(e[0] for e in events)
    return [e for e in events if hears(identity, e[1], newest)]


# -- the bound of events heard without an id ---------------------------------------------------

def _note_written(ids: list[int]) -> None:
    if ids and has_app_context():
        known = _studios()
        known.written = max(known.written, *ids)


changes.on_written(_note_written)


def bound(app: Flask) -> int:
    """At least the id of any change event this process has handed its listeners so far: its
    own (noted as written, before their commit) and those the feed relayed (its cursor moves
    before it hands them over). Memory only: listeners call it inside someone's commit."""
    relay = feed.running(app)
    known: _Studios | None = app.extensions.get(KEY)
    return max(known.written if known is not None else 0,
               relay.cursor if relay is not None else 0)
