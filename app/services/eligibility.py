"""Who may vote on a decision and who may propose its options.

A decision's settings may name them (``decision_kinds``): ``{"role": r}`` (the members with that
role) or ``{"user_ids": [...]}`` (those people, while they are members); without a rule, every
member who may write (guests read only). Proposers without a rule follow ``options_open`` (any
member, else only the creator). The creator may always propose. Every door asks here: the
actions' rules (so a page offers the vote only to who may cast it) and the services again.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import bindparam, func, select

from app.db import Query
from app.db.reads import first_value
from app.models import Membership
from app.models.collab import Decision

ROLE_WORDS = {"admin": "the studio's admins", "member": "members with the member role"}


def _allowed(rule: dict[str, Any] | None, user_id: uuid.UUID, role: str | None) -> bool:
    if role is None or role == "guest":
        return False
    if not rule:
        return True
    if "role" in rule:
        return role == rule["role"]
    return str(user_id) in rule.get("user_ids", [])


def may_vote(decision: Decision, user_id: uuid.UUID, role: str | None) -> str | None:
    """Why this person may not vote on the decision (None: they may)."""
    rule = (decision.settings or {}).get("voters")
    if _allowed(rule, user_id, role):
        return None
    return f"only {describe(rule)} vote on this decision"


def may_propose(decision: Decision, user_id: uuid.UUID, role: str | None) -> str | None:
    """Why this person may not add options to the decision (None: they may)."""
    if role is None or role == "guest":
        return "only members of the studio add options"
    if decision.created_by_id == user_id:
        return None
    rule = (decision.settings or {}).get("proposers")
    if rule:
        if _allowed(rule, user_id, role):
            return None
        return f"only {describe(rule)} (and the decision's creator) add options to it"
    if decision.options_open:
        return None
    return "only the decision's creator can add options to it"


def describe(rule: dict[str, Any] | None) -> str:
    """A rule in words: 'every member', "the studio's admins", 'the 3 people named'."""
    if not rule:
        return "every member"
    if "role" in rule:
        return ROLE_WORDS.get(rule["role"], f"members with the role {rule['role']}")
    count = len(rule.get("user_ids", []))
    return "the person named" if count == 1 else f"the {count} people named"


def eligible(decision: Decision) -> Query[int]:
    """How many may vote on the decision now: its studio's members that its rule admits."""
    rule = (decision.settings or {}).get("voters") or {}
    params: dict[str, Any] = {"studio_id": decision.studio_id}
    if "role" in rule:
        statement, params["role"] = _ELIGIBLE_WITH_ROLE, rule["role"]
    elif "user_ids" in rule:
        statement = _ELIGIBLE_NAMED
        params["user_ids"] = [uuid.UUID(i) for i in rule["user_ids"]]
    else:
        statement = _ELIGIBLE
    return Query(statement, params, _count)


def _count(rows: Any) -> int:
    return int(first_value(rows) or 0)


# Every decision page counts its eligible voters: built once, bound per call.
_ELIGIBLE = select(func.count()).select_from(Membership).where(
    Membership.studio_id == bindparam("studio_id"), Membership.role != "guest")
_ELIGIBLE_WITH_ROLE = _ELIGIBLE.where(Membership.role == bindparam("role"))
_ELIGIBLE_NAMED = _ELIGIBLE.where(Membership.user_id.in_(bindparam("user_ids", expanding=True)))
