"""The Flask glue of identity: who is asking this request, flask-login and CSRF.

``load_identity`` runs before every request and sets ``g.identity`` (an
``app.core.identity.Identity``, its ``kind`` included) and ``g.user``: from an in-process
dispatch (the environ's ``IDENTITY_KEY``, set by our own code only), a Bearer token, or a
browser session. ``authorize`` asks the one authorization question for this request's caller;
``signed_in_reader`` asks, for a route that is not a page, what a page's GET asks.
"""

from __future__ import annotations

import uuid

from flask import current_app, g, request
from flask_login import current_user
from flask_login.config import COOKIE_NAME as REMEMBER_COOKIE

from app.actions.effects import READ, Effect
from app.core import authorization, token_cache
from app.core import identity as core_identity
from app.core.identity import IDENTITY_KEY, Identity
from app.extensions import csrf, db, login_manager, view_name
from app.models import User
from app.services.errors import Unauthorized
from app.web import limits, ratelimit

# Endpoints whose view loads the person itself, with its own first read (``app.web.pages``:
# a studio page reads the person, the studio, the membership and the item in one statement).
LOADS_ITS_PERSON: set[str] = set()


@login_manager.user_loader
def _load_user(user_id: str) -> User | None:
    try:
        return db.session.get(User, uuid.UUID(user_id))
    except ValueError:
        return None


def _limit(identity: Identity, outer: bool = True) -> None:
    # Budgets per token, person and studio, shared across processes when the storage is Redis.
    limiter = ratelimit.limiter_for(current_app.config, current_app.extensions)
    ratelimit.check(current_app.config, limiter, identity, request.path, outer=outer)


def _may_have_login() -> bool:
    """Whether the request carries a cookie a browser login lives in (the session or the
    remember-me cookie). Without either, flask-login can only answer "anonymous", and asking
    it costs a hash of the client's address and agent (its session protection) per request:
    most of an agent's anonymous /mcp call on loopback."""
    if "HTTP_COOKIE" not in request.environ:
        return False
    cookies = request.cookies
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    return bool(cookies) and (
        app.session_interface.get_cookie_name(app) in cookies
        or app.config.get("REMEMBER_COOKIE_NAME", REMEMBER_COOKIE) in cookies)


def load_identity() -> None:
    # The request and g themselves, once: every use of their proxies looks them up again, and
    # this runs before every request.
    req = request._get_current_object()  # type: ignore[attr-defined]
    ctx = g._get_current_object()
    ctx.identity = None
    ctx.user = None
    limits.check_request()  # body size and NUL characters, before anything touches the database
    trusted = req.environ.get(IDENTITY_KEY)
    if isinstance(trusted, Identity):
        ctx.identity = trusted
        _limit(trusted, outer=False)
    elif req.headers.get("Authorization"):
        plaintext = core_identity.bearer_token(req.headers.get("Authorization"))
        if plaintext is None:
            raise Unauthorized("use 'Authorization: Bearer <token>'", reason="missing")
        # The person comes with a token read from the database; a token reused from the
        # per-process cache comes without, and the person is loaded below unless the view
        # needs only the identity.
        ctx.identity, ctx.user = token_cache.resolve(plaintext)
        _limit(ctx.identity)
    elif _may_have_login() and current_user.is_authenticated:
        # A person's form post may run in a representation session they are in (only what
        # writes asks: a page read runs as themselves).
        ctx.identity = Identity(user_id=current_user.id, via="session",
                                kind="agent" if current_user.user_type == "ai_agent"
                                else "person",
                                representing=token_cache.representing_of(current_user.id)
                                if req.method == "POST" else None)
    identity = ctx.identity
    core_identity.act_as(identity)  # what this request makes is recorded as made by its token
    if identity is not None and ctx.user is None and (
            req.blueprint not in core_identity.IDENTITY_ONLY
            and req.endpoint not in LOADS_ITS_PERSON):
        ctx.user = db.session.get(User, identity.user_id)
        if ctx.user is None:
            raise Unauthorized("the account behind this identity no longer exists",
                               reason="account_gone")
    if req.method not in ("GET", "HEAD", "OPTIONS"):
        # Cookie sessions need CSRF protection; token and in-process callers cannot be forged
        # by a third-party page, because browsers never attach those credentials by themselves.
        # An anonymous JSON request has nobody to act as and cannot come from a third-party
        # form (JSON needs a CORS preflight): it goes on to its honest 401, not a CSRF error.
        anonymous_json = identity is None and req.mimetype == "application/json"
        if (identity is None or identity.via == "session") and not anonymous_json:
            # Views and blueprints marked with csrf.exempt() (agent-only JSON endpoints).
            view = current_app.view_functions.get(req.endpoint or "")
            if not {req.blueprint, view and view_name(view)} & csrf.exempted:
                csrf.protect()


def authorize(effect: Effect | None, what: str | None = None, studio: str | None = None) -> None:
    """The one authorization question (``app.core.authorization``) for this request's caller;
    anonymous callers meet the page's own rules."""
    authorization.authorize(g.get("identity"), effect, what, studio)


def signed_in_reader() -> User:
    """The person asking a route that is not a page (a file, a fragment, a preview), asked what
    a page's GET asks: signed in, and allowed to read."""
    user = g.get("user")
    if user is None:
        raise Unauthorized("sign in or send 'Authorization: Bearer <token>'")
    authorize(READ)
    return user
