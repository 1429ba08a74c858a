"""Revoking an OAuth grant or an agent ends everything it made.

What a grant's or an agent's tokens made is found through the provenance columns
(``app.models.provenance``: ``made_by_token_id``, ``made_by_grant_id``; an MCP session's
``token_id`` and ``grant_id``), and everything an agent account holds through its ``user_id``.
``end`` follows them, over and over, since what was made may have made more:

- in the caller's transaction: the tokens they made and every token of the agents they made
  are revoked (the token cache forgets at once, as for any token change), then each feature's
  ender runs (``ends``): MCP sessions end, MCP tasks are cancelled, teach sessions stop,
  webhooks are switched off;
- once that transaction has committed: what lives on the job queue's own connection (workflow
  runs: ``after_commit``) is cancelled there.

What it did (notes, votes, recipes) stays, attributed to whoever did it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, or_, select, update
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import ApiToken, User
from app.services.listeners import Listeners

log = logging.getLogger(__name__)
PENDING = "harmonic.revocation_pending"  # Session.info: what to end after the commit


@dataclass
class Ended:
    """What a revocation ended: tokens, OAuth grants and agent accounts."""

    tokens: set[uuid.UUID] = field(default_factory=set)
    grants: set[uuid.UUID] = field(default_factory=set)
    agents: set[uuid.UUID] = field(default_factory=set)

    def made(self, token_column: Any, grant_column: Any, user_column: Any = None) -> Any:
        """A condition on a table: its row was made by one of them, or belongs to an agent."""
        found = []
        if self.tokens:
            found.append(token_column.in_(self.tokens))
        if self.grants:
            found.append(grant_column.in_(self.grants))
        if self.agents and user_column is not None:
            found.append(user_column.in_(self.agents))
        return or_(*found) if found else None


Ender = Callable[[Ended], None]
ENDERS: Listeners[Ender] = Listeners()  # run in the revoking transaction
AFTER: Listeners[Ender] = Listeners()  # run once it has committed, each in its own transaction
# Register a feature's ender (decorators): ``ends`` in the revoking transaction,
# ``after_commit`` for one that needs its own transaction, after the revoking one commits.
ends, after_commit = ENDERS.add, AFTER.add


def end(tokens: set[uuid.UUID] | None = None, grants: set[uuid.UUID] | None = None,
        agents: set[uuid.UUID] | None = None) -> Ended:
    """End what these tokens, grants and agent accounts made (they are revoked already, or are
    being revoked in this transaction); return everything that ended."""
    ended = Ended(set(tokens or ()), set(grants or ()), set(agents or ()))
    now = datetime.now(UTC)
    while True:
        made = ended.made(ApiToken.made_by_token_id, ApiToken.made_by_grant_id, ApiToken.user_id)
        new_agents = set()
        agent_made = ended.made(User.made_by_token_id, User.made_by_grant_id)
        if agent_made is not None:
            new_agents = set(db.session.scalars(
                select(User.id).where(User.user_type == "ai_agent", agent_made))) - ended.agents
        ended.agents |= new_agents
        condition = or_(made, ApiToken.user_id.in_(new_agents)) if new_agents else made
        if condition is None:
            break
        new_tokens = set(db.session.scalars(select(ApiToken.id).where(condition))) - ended.tokens
        if not new_tokens and not new_agents:
            break
        ended.tokens |= new_tokens
        if new_tokens:
            db.session.execute(update(ApiToken).where(ApiToken.id.in_(new_tokens),
                                                      ApiToken.revoked_at.is_(None))
                               .values(revoked_at=now))
    for ender in ENDERS:
        ender(ended)
    if AFTER:
        session = db.session()
        session.info.setdefault(PENDING, []).append(ended)
    return ended


@event.listens_for(Session, "after_commit")
def _run_after(session: Session) -> None:
    for ended in session.info.pop(PENDING, []):
        for ender in AFTER:
            try:
                ender(ended)
            except Exception:  # the revocation itself is committed; say what was left running
                log.exception("could not end everything made by %s", ended)


@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop(PENDING, None)
