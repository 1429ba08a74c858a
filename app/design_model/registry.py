"""The method table of the design-model server and the context every method receives.

Revit-side (``revit_methods``, ``rebar``) and Rhino-side (``rhino_methods``) modules register
their methods here with ``@method(name, effect, summary, params=..., result=..., example=...)``:
the one declaration of what a method takes, gives and does. ``rpc`` looks names up in
``METHODS``, their effects (``app.actions.effects``) in ``EFFECTS`` (``call_effect``: what one call
does, which the one authorization question reads: a read-only token may call what reads, and
anything with ``dryRun: true``) and their declarations in ``SPECS``, which
``validate`` checks every call against and ``catalog`` publishes as ``rpc.discover``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.actions.effects import READ, Effect
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


@dataclass(frozen=True)
class Param:
    """One named parameter: its JSON Schema, whether it must be given, what it means."""

    name: str
    schema: dict[str, Any]
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Spec:
    """A method's declaration: what it does, takes (``params``) and answers (``result``).

    ``one_of`` lists groups of parameters of which exactly one must be given (how a call names
    its targets); the first name of a group is the one an error names, as seed 001 did.
    ``example`` is the params of one working call against the demo model.
    """

    name: str
    effect: Effect
    summary: str
    params: tuple[Param, ...]
    result: dict[str, Any]
    example: dict[str, Any]
    one_of: tuple[tuple[str, ...], ...] = ()
    description: str = ""
    # create_* methods: ``confirm: true`` is required unless ``dryRun: true``.
    confirm: bool = False


Handler = Callable[[Ctx, Params], dict[str, Any]]
METHODS: dict[str, Handler] = {}
EFFECTS: dict[str, Effect] = {}  # what each method does, declared where it is registered
SPECS: dict[str, Spec] = {}  # the whole declaration, for validation and rpc.discover


def method(name: str, effect: Effect, summary: str, *, params: tuple[Param, ...] = (),
           result: dict[str, Any] | None = None, example: dict[str, Any] | None = None,
           one_of: tuple[tuple[str, ...], ...] = (), description: str = "",
           confirm: bool = False) -> Callable[[Handler], Handler]:
    if not isinstance(effect, Effect):
        raise TypeError(f"design-model method {name}: effect must be an Effect")
    spec = Spec(name, effect, summary, tuple(params), result or {"type": "object"},
                example if example is not None else {}, tuple(one_of), description, confirm)
    declared = {p.name for p in spec.params}
    for group in spec.one_of:
        if not set(group) <= declared:
            raise ValueError(f"design-model method {name}: one_of names undeclared params "
                             f"{sorted(set(group) - declared)}")

    def register(fn: Handler) -> Handler:
        if name in METHODS:
            raise RuntimeError(f"design-model method {name} registered twice")
        METHODS[name] = fn
        EFFECTS[name] = effect
        SPECS[name] = spec
        return fn

    return register


def call_effect(name: str, params: Any) -> Effect | None:
    """What one call of ``name`` does: its declared effect, except that a dry run
    (``dryRun: true``) of a method that writes only reads. None for an unknown method."""
    effect = EFFECTS.get(name)
    if effect is not None and effect.writes and isinstance(params, dict) \
            and params.get("dryRun") is True:
        return READ
    return effect
