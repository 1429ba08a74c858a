"""An action POST's row in the person's call log (``app.mcp.audit``), for the HTTP doors: a
Markdown or JSON POST with a Bearer token, and any POST (an HTML form included) made in a
representation session. The row is the one MCP ``execute_action`` writes (``audit.row``), with
the door in its ``transport``: ``html``, ``md`` or ``json``.

A successful action's row is inserted in the action's own transaction (``store``), so the
change and its record commit together; a refused or failed one gets its row after
(``refused``). An in-process request (MCP ``execute_action``, a recipe or workflow step, an
automation) writes none here: its caller keeps its own record. A person's own browser forms
outside a session are theirs, not calls made for them: they write none either.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from flask import g, request
from werkzeug.exceptions import HTTPException

from app.actions.registry import IGNORED_FORM_FIELDS
from app.core.identity import IDENTITY_KEY, Identity
from app.db import writing
from app.mcp import audit
from app.services.errors import DomainError
from app.web.negotiation import format_of

log = logging.getLogger("harmonic.web")
TOOL = "execute_action"  # the same call as MCP's, through another door


@dataclass
class DoorCall:
    identity: Identity  # the caller, as it came (not the principal it may run as)
    action: str
    path: str  # the page the action is on
    started: float = field(default_factory=time.perf_counter)
    context: str | None = None  # the declared context, as the audit keeps it
    names: list[str] = field(default_factory=list)
    stored: bool = False


def begin(action: str) -> DoorCall | None:
    """The call to record for this action POST, or None when this door records none."""
    identity = g.get("identity")
    if identity is None or IDENTITY_KEY in request.environ:
        return None
    if identity.via != "token" and identity.acting_for() is None:
        return None
    return DoorCall(identity, action, request.path.rsplit("/actions/", 1)[0] or "/")


def params(call: DoorCall | None, raw: dict[str, Any]) -> None:
    if call is not None:
        call.names = sorted(k for k in raw if k not in IGNORED_FORM_FIELDS)


def _values(call: DoorCall, outcome: str, message: str | None) -> dict[str, Any]:
    return audit.row(call.identity, tool=TOOL, door=format_of(request), session_id=None,
                     path=call.path, action=call.action, names=call.names,
                     context=call.context, outcome=outcome, message=message,
                     seconds=time.perf_counter() - call.started)


def store(call: DoorCall | None) -> None:
    """The row of an action that succeeded, in its transaction (just before its commit)."""
    if call is not None:
        audit.insert_row(_values(call, "ok", None))


def committed(call: DoorCall | None) -> None:
    """The action's transaction, its row with it, committed: nothing more to record (a commit
    that failed took the row with it, and ``refused`` writes one after)."""
    if call is not None:
        call.stored = True


def refused(call: DoorCall | None, error: BaseException | None = None) -> None:
    """The row of an action that was refused or failed (``error``; None: refused with a page,
    as a person's form is)."""
    if call is None or call.stored:
        return
    if isinstance(error, DomainError):
        message = error.message
    elif isinstance(error, HTTPException):
        message = error.description or error.name
    else:
        message = "refused" if error is None else "internal error"
    call.stored = True
    try:
        with writing(expire=False):
            audit.insert_row(_values(call, "tool_error", message))
    except Exception:  # the refusal is what the caller must hear, not the log's trouble
        log.exception("could not record the refused call of %s", call.action)
