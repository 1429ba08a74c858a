"""The method table of the design-model server and the context every method receives.

Revit-side (``revit_methods``, ``rebar``) and Rhino-side (``rhino_methods``) modules register
their methods here with ``@method(name, effect)``; ``rpc`` looks names up in ``METHODS`` and
their effects (``app.actions.effects``) in ``EFFECTS``: a read-only token may call what reads,
and anything with ``dryRun: true``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.actions.effects import Effect
from app.design_model.protocol import Params


@dataclass
class Ctx:
    """What a method may use: the model name, the database session and the upstream policy."""

    model: str
    session: Session
    allowed_upstreams: tuple[str, ...] = ("loopback",)
    upstream_timeout: float = 10.0
    # Methods set this when they wrote something, so the dispatcher knows to commit.
    wrote: bool = field(default=False)


Handler = Callable[[Ctx, Params], dict[str, Any]]
METHODS: dict[str, Handler] = {}
EFFECTS: dict[str, Effect] = {}  # what each method does, declared where it is registered


def method(name: str, effect: Effect) -> Callable[[Handler], Handler]:
    if not isinstance(effect, Effect):
        raise TypeError(f"design-model method {name}: effect must be an Effect")

    def register(fn: Handler) -> Handler:
        if name in METHODS:
            raise RuntimeError(f"design-model method {name} registered twice")
        METHODS[name] = fn
        EFFECTS[name] = effect
        return fn

    return register
