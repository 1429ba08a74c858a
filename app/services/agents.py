"""Agent accounts a person owns: they make one here, see it (with its tokens' last use) in
their settings, give it new tokens and revoke it.

Revoking an agent revokes every token it holds, so it can no longer reach any door, and ends
everything it made (its MCP sessions, tasks, runs, teach sessions, webhooks, and the tokens and
agents its tokens made: ``app.services.revocation``); what it did stays, attributed to it, and
a new token brings it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app.extensions import db
from app.models import ApiToken, User
from app.services import accounts, revocation, tokens
from app.services.errors import Forbidden, invalid_param


@dataclass(frozen=True)
class AgentRow:
    """One agent in its owner's settings."""

    agent: User
    active_tokens: int
    last_used_at: datetime | None

    @property
    def revoked(self) -> bool:
        return self.active_tokens == 0


def create_agent(owner: User, handle: str, name: str, scopes: str = "read,write",
                 expires: str = "90d") -> tuple[User, ApiToken, str]:
    """A new agent account owned by ``owner`` and its first token (plaintext shown once)."""
    if owner.user_type != "human":
        raise Forbidden("an agent cannot own agents: its person makes them")
    agent = accounts.create_user(handle, name or handle, user_type="ai_agent")
    agent.owner_id = owner.id
    token, plaintext = tokens.create_token(agent, name=f"{agent.handle} (by {owner.handle})",
                                           scopes=scopes, expires=expires)
    return agent, token, plaintext


def agents_of(owner: User) -> list[AgentRow]:
    now = datetime.now(UTC)
    found = db.session.scalars(select(User).options(selectinload(User.tokens))
                               .where(User.owner_id == owner.id).order_by(User.handle))
    rows = []
    for agent in found:
        used = [t.last_used_at for t in agent.tokens if t.last_used_at is not None]
        rows.append(AgentRow(agent, sum(1 for t in agent.tokens if t.is_active(now)),
                             max(used) if used else None))
    return rows


def owned(owner: User, handle: str) -> User:
    handle = (handle or "").strip().lstrip("@").lower()
    agent = db.session.scalar(select(User).where(User.handle == handle,
                                                 User.owner_id == owner.id).limit(1))
    if agent is None:
        raise invalid_param("handle", f"you own no agent @{handle}")
    return agent


def new_token(owner: User, handle: str, scopes: str = "read,write",
              expires: str = "90d") -> tuple[ApiToken, str]:
    agent = owned(owner, handle)
    return tokens.create_token(agent, name=f"{agent.handle} (by {owner.handle})", scopes=scopes,
                               expires=expires)


def revoke(owner: User, handle: str) -> int:
    """Revoke every active token of the agent and end everything it made
    (``app.services.revocation``); the number of its tokens revoked."""
    agent = owned(owner, handle)
    now = datetime.now(UTC)
    count = 0
    for token in agent.tokens:
        if token.is_active(now):
            token.revoked_at = now
            count += 1
    db.session.flush()
    revocation.end(tokens={t.id for t in agent.tokens}, agents={agent.id})
    return count
