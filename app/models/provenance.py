"""Which credential made a row: the token, and the OAuth grant behind it, that was acting.

Rows that stand for a way to act later (an API token, an agent account, a webhook, an MCP task,
a teach session) carry ``made_by_token_id`` and ``made_by_grant_id`` (``MadeBy``). They are
filled when the row is first flushed, from who is acting now (``acting``), so no handler has to
pass them along: the web layer sets it for every request, the MCP server for every message,
an MCP task and a workflow step for the work they run. A row written as a plain statement (a
workflow run) is given them by its writer, from the identity that starts it.

Revoking a grant or an agent ends what its tokens made by following these columns
(``app.services.revocation``). The grant is kept beside the token because a grant's expired
access tokens are pruned, while what they made must still be found from the grant.

A row a representative makes for its principal (a comment, a vote, under a representation
session: ``app.models.grants``) names the principal as its author and carries the
representative in ``representative_id`` (``Represented``), stamped the same way from
``representing``. Work started in a session and run later (an MCP task, a workflow run)
carries the session itself (``ActsInSession``).
"""

from __future__ import annotations

import uuid
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Mapped, Session, declared_attr, mapped_column

from app.models.base import Uuid


@dataclass(frozen=True)
class Maker:
    token_id: uuid.UUID | None = None
    grant_id: uuid.UUID | None = None


NOBODY = Maker()
_acting: ContextVar[Maker] = ContextVar("harmonic_maker", default=NOBODY)
_representative: ContextVar[uuid.UUID | None] = ContextVar("harmonic_representative",
                                                            default=None)


def acting(token_id: uuid.UUID | None, grant_id: uuid.UUID | None) -> None:
    """Who acts from now on in this context (a request, a message, a job): every context sets
    it before it writes, so nothing is carried over from the one before."""
    _acting.set(Maker(token_id, grant_id) if token_id or grant_id else NOBODY)
    _representative.set(None)


def representing(representative_id: uuid.UUID | None) -> None:
    """Rows written from now on in this context are made by this representative for the
    person they name (None: by that person themselves)."""
    _representative.set(representative_id)


def representative() -> uuid.UUID | None:
    return _representative.get()


class MadeBy:
    """The columns of a row that records who made it."""

    @declared_attr
    def made_by_token_id(cls) -> Mapped[uuid.UUID | None]:  # noqa: N805
        return mapped_column(Uuid, index=True)

    @declared_attr
    def made_by_grant_id(cls) -> Mapped[uuid.UUID | None]:  # noqa: N805
        return mapped_column(Uuid, index=True)


class ActsInSession:
    """The column of a row that stands for work run later (an MCP task, a workflow run)
    started in a representation session: the session, so the work acts for its principal
    within the grant, as the call that started it did, and never for the representative alone
    (``app.core.identity.Identity.session_to_carry``)."""

    @declared_attr
    def representation_id(cls) -> Mapped[uuid.UUID | None]:  # noqa: N805
        return mapped_column(Uuid)


class Represented:
    """The column of a row a representative made for the person it names."""

    @declared_attr
    def representative_id(cls) -> Mapped[uuid.UUID | None]:  # noqa: N805
        return mapped_column(Uuid)


@event.listens_for(Session, "before_flush")
def _stamp(session: Session, _context: Any, _instances: Any) -> None:
    for_whom = _representative.get()
    if for_whom is not None:
        for row in session.new:
            if isinstance(row, Represented) and row.representative_id is None:
                row.representative_id = for_whom
    who = _acting.get()
    if who is NOBODY:
        return
    for row in session.new:
        if isinstance(row, MadeBy) and row.made_by_token_id is None \
                and row.made_by_grant_id is None:
            row.made_by_token_id = who.token_id
            row.made_by_grant_id = who.grant_id
