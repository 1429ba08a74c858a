"""A declared context: what a caller says about a call it makes (``context`` on
``execute_action``, a ``context`` object in a Markdown/JSON action POST, or the
``Harmonic-Context`` header holding that object as JSON).

``actor`` is who makes the call (the caller's own handle), ``on_behalf_of`` the person it acts
for (the principal of its representation session; absent when it acts as itself),
``visibility`` who may see what it does (``public``, ``private`` or ``shared``) and
``intention`` why, in a sentence. A context is checked against the real caller and session: a
mismatch is refused with the reason, before anything runs. A studio may require one of every
action an agent or an app runs there, and of every action run for someone
(``Studio.context_required``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.services.errors import Forbidden, Invalid

VISIBILITIES = ("public", "private", "shared")
FIELDS = ("actor", "on_behalf_of", "visibility", "intention")
INTENTION_MAX = 500
HEADER = "Harmonic-Context"
# The JSON Schema of a context, as execute_action's input schema and the docs show it.
SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "Who makes this call, for whom, who may see it and why; checked against "
                   "the caller and its representation session",
    "properties": {
        "actor": {"type": "string", "description": "Your own handle"},
        "on_behalf_of": {"type": "string", "description": "The handle of the person you act "
                         "for in your representation session (omit when acting as yourself)"},
        "visibility": {"type": "string", "enum": list(VISIBILITIES)},
        "intention": {"type": "string", "maxLength": INTENTION_MAX,
                      "description": "Why, in a sentence"}},
    "required": ["actor", "visibility", "intention"],
}


@dataclass(frozen=True)
class Declared:
    actor: str
    on_behalf_of: str | None
    visibility: str
    intention: str

    def record(self) -> str:
        """The context as the audit keeps it (JSON)."""
        return json.dumps({"actor": self.actor, "on_behalf_of": self.on_behalf_of,
                           "visibility": self.visibility, "intention": self.intention},
                          ensure_ascii=False)


def _handle(value: Any) -> str:
    return value.strip().lstrip("@").lower() if isinstance(value, str) else ""


def parse(value: Any) -> Declared:
    """A context from its JSON object (or its JSON text, from the header); Invalid naming every
    bad field."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise Invalid("context must be an object: actor, visibility, intention "
                      "(and on_behalf_of)", errors=[{"param": "context",
                                                     "message": "must be a JSON object"}])
    errors = [{"param": "context", "path": f"context.{key}", "message": "unknown field"}
              for key in value if key not in FIELDS]
    if not _handle(value.get("actor")):
        errors.append({"param": "context", "path": "context.actor",
                       "message": "required: your own handle"})
    if value.get("visibility") not in VISIBILITIES:
        errors.append({"param": "context", "path": "context.visibility",
                       "message": f"one of {', '.join(VISIBILITIES)}"})
    intention = value.get("intention")
    if not isinstance(intention, str) or not intention.strip() \
            or len(intention) > INTENTION_MAX:
        errors.append({"param": "context", "path": "context.intention",
                       "message": f"required: why, in at most {INTENTION_MAX} characters"})
    if value.get("on_behalf_of") is not None and not _handle(value.get("on_behalf_of")):
        errors.append({"param": "context", "path": "context.on_behalf_of",
                       "message": "a handle, or leave it out"})
    if errors:
        raise Invalid("the declared context is not valid: " + "; ".join(
            f"{e['path']}: {e['message']}" for e in errors), errors=errors)
    return Declared(_handle(value["actor"]), _handle(value.get("on_behalf_of")) or None,
                    value["visibility"], intention.strip())  # type: ignore[union-attr]


def mismatch(declared: Declared, caller: str, principal: str | None) -> Forbidden | None:
    """Why ``declared`` does not describe a call by ``caller`` acting for ``principal`` (None:
    as itself), or None when it does."""
    if declared.actor != caller:
        return Forbidden(f"the declared context names @{declared.actor} as the actor, but this "
                         f"call is made by @{caller}", reason="context_mismatch")
    if declared.on_behalf_of != principal:
        if principal is None:
            why = (f"the declared context says you act for @{declared.on_behalf_of}, but you "
                   f"are in no representation session for them (start_representation first)")
        elif declared.on_behalf_of is None:
            why = (f"this call runs for @{principal} in your representation session: declare "
                   f"on_behalf_of: {principal}")
        else:
            why = (f"the declared context says you act for @{declared.on_behalf_of}, but your "
                   f"representation session is for @{principal}")
        return Forbidden(why, reason="context_mismatch")
    return None
