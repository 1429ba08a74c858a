"""Webhooks: a URL told about every change in a studio, signed, sent by the job queue.

Registration: a person registers a URL for every studio they belong to, a studio admin one for
the studio. The URL must pass the outbound allow-list ``WEBHOOKS_ALLOW`` (``app.core.netpolicy``,
the same evaluation as every other outbound call: ``loopback``, a host, ``host:port`` or an
origin; names are never resolved, so a private address is refused unless it is listed). It is
checked again before every attempt, so narrowing the list stops deliveries at once.

Events: each action executed on a studio page adds one delivery per matching webhook, in the
action's own transaction (``events``), with the action, the actor, the page and the changed
resources (the change-event URIs). A webhook only hears of studios its owner is a member of.

Signing: the same HMAC-SHA256 with the webhook's secret (``whsec_…``, shown once at creation
and kept as issued, because a hash could not sign) over ``"<unix seconds>.<body>"``, sent two
ways: ``X-Harmonic-Signature: sha256=<hex>`` with ``X-Harmonic-Timestamp: <unix seconds>``, and
``Harmonic-Signature: t=<unix seconds>,v1=<hex>`` for the receivers written before. Receivers
recompute it over the raw body, compare in constant time and reject old timestamps.

Formats (``FORMATS``, one per webhook): Harmonic's own JSON, or the message shapes Slack,
Discord, Microsoft Teams and Matrix take (``formats``); the body sent is what is signed.

Delivery: after the action commits, each new delivery is enqueued as a run of the workflow job
queue (``app.workflows.enqueue_calls``), which ``bin/worker`` (or the in-process worker) runs.
A failed attempt (a connection error or a status outside 2xx) is logged (``WebhookAttempt``)
and the next one enqueued as a delayed run after the retry schedule's next interval
(``WEBHOOKS_RETRY_SCHEDULE``, scaled by ``WEBHOOKS_RETRY_SCALE``) until ``WEBHOOKS_MAX_ATTEMPTS``.
Redelivering (an action) sends a delivery once more now. Deliveries are at least once:
``Harmonic-Delivery`` carries the delivery id for receivers to deduplicate. A delivery whose
enqueueing was lost (the process died right after the commit) is picked up by the next
delivery step or by ``flask notifications sweep``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import delete as sa_delete
from sqlalchemy import or_, select, update

from app.core import netpolicy, outbound
from app.core.config import base_url
from app.db import writing
from app.extensions import db
from app.models import Membership, Studio, User
from app.models.base import utcnow
from app.models.notifications import Webhook, WebhookAttempt, WebhookDelivery
from app.notifications import formats, settings
from app.notifications.staged import Staged
from app.services import revocation
from app.services.errors import Conflict, Forbidden, NotFound, invalid_param
from app.workflows import CallStep, callable_step, enqueue_calls

STEP = "notifications.deliver_webhook"
SIGNATURE_HEADER = "Harmonic-Signature"
SHA256_HEADER = "X-Harmonic-Signature"
TIMESTAMP_HEADER = "X-Harmonic-Timestamp"
FORMATS = formats.FORMATS
ORPHAN_AFTER = timedelta(seconds=30)
LOG_SIZE = 50
STAGED = Staged("webhooks")  # the deliveries of this transaction, enqueued once it committed


# Signing ---------------------------------------------------------------------------------------

def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def digest(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 with ``secret`` over ``"<timestamp>.<body>"``."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body,
                    hashlib.sha256).hexdigest()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``Harmonic-Signature`` header value for ``body`` sent at ``timestamp``."""
    return f"t={timestamp},v1={digest(secret, timestamp, body)}"


def signed_headers(secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    """Both signature headers: ``X-Harmonic-Signature`` with ``X-Harmonic-Timestamp``, and
    ``Harmonic-Signature`` (the same HMAC) for the receivers written before."""
    return {SHA256_HEADER: f"sha256={digest(secret, timestamp, body)}",
            TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(secret, timestamp, body)}


# Registration ----------------------------------------------------------------------------------

def check_url(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise invalid_param("url", "is required: the http(s) URL to send events to")
    if len(url) > 2000:
        raise invalid_param("url", "is longer than 2000 characters")
    try:
        netpolicy.check_url(url, settings.get_list("WEBHOOKS_ALLOW"), "WEBHOOKS_ALLOW")
    except netpolicy.Refused as exc:
        raise invalid_param("url", f"is refused: {exc.message}") from None
    return url


def check_format(value: str | None) -> str:
    chosen = (value or "json").strip().lower()
    if chosen not in FORMATS:
        raise invalid_param("format", f"must be one of {', '.join(FORMATS)}")
    return chosen


def create(owner: User, url: str, studio: Studio | None = None,
           format: str | None = None) -> Webhook:  # noqa: A002 (the parameter's public name)
    hook = Webhook(owner_id=owner.id, studio_id=studio.id if studio else None,
                   url=check_url(url), secret=new_secret(), active=True,
                   format=check_format(format))
    hook.assign_ids()
    db.session.add(hook)
    db.session.flush()
    return hook


def of_owner(user: User) -> list[Webhook]:
    return list(db.session.scalars(select(Webhook).where(
        Webhook.owner_id == user.id, Webhook.studio_id.is_(None))
        .order_by(Webhook.created_at)))


def of_studio(studio: Studio) -> list[Webhook]:
    return list(db.session.scalars(select(Webhook).where(Webhook.studio_id == studio.id)
                                   .order_by(Webhook.created_at)))


def find_for(user: User, ident: str) -> Webhook:
    """A webhook the caller manages: their own, or one of a studio they administer."""
    ident = (ident or "").strip().lower()[:8]
    hook = db.session.scalar(select(Webhook).where(Webhook.short_id == ident))
    if hook is None:
        raise NotFound(f"no webhook '{ident}'")
    if hook.owner_id == user.id:
        return hook
    if hook.studio_id is not None:
        role = db.session.scalar(select(Membership.role).where(
            Membership.studio_id == hook.studio_id, Membership.user_id == user.id))
        if role == "admin":
            return hook
        if role is not None:
            raise Forbidden("only the studio's admins manage its webhooks")
    raise NotFound(f"no webhook '{ident}'")


def delete(hook: Webhook) -> None:
    ids = select(WebhookDelivery.id).where(WebhookDelivery.webhook_id == hook.id)
    db.session.execute(sa_delete(WebhookAttempt).where(WebhookAttempt.delivery_id.in_(ids)))
    db.session.execute(sa_delete(WebhookDelivery).where(WebhookDelivery.webhook_id == hook.id))
    db.session.delete(hook)
    db.session.flush()


def deliveries(hook: Webhook, limit: int = LOG_SIZE) -> list[tuple[WebhookDelivery,
                                                                     list[WebhookAttempt]]]:
    """The newest deliveries with their attempts (two queries whatever the number)."""
    rows = list(db.session.scalars(select(WebhookDelivery)
                                   .where(WebhookDelivery.webhook_id == hook.id)
                                   .order_by(WebhookDelivery.created_at.desc(),
                                             WebhookDelivery.id.desc()).limit(limit)))
    attempts: dict[uuid.UUID, list[WebhookAttempt]] = {r.id: [] for r in rows}
    if rows:
        for attempt in db.session.scalars(select(WebhookAttempt)
                                          .where(WebhookAttempt.delivery_id.in_(attempts))
                                          .order_by(WebhookAttempt.number)):
            attempts[attempt.delivery_id].append(attempt)
    return [(r, attempts[r.id]) for r in rows]


# Events: staged in the action's transaction ----------------------------------------------------

def stage(studio: Studio, actor: User | None, action: str, page: str, location: str | None,
          changed: list[str], message: str) -> list[uuid.UUID]:
    """One delivery per active webhook that hears of ``studio``: the studio's own, and those of
    people who are members of it (the owner of a studio webhook must still be a member).
    ``actor`` None: nobody did it (a deadline passed)."""
    members = select(Membership.user_id).where(Membership.studio_id == studio.id)
    hooks = list(db.session.scalars(select(Webhook).where(
        Webhook.active.is_(True), Webhook.owner_id.in_(members),
        or_(Webhook.studio_id == studio.id, Webhook.studio_id.is_(None)))))
    if not hooks:
        return []
    base = base_url()
    body = {"actor": ({"handle": actor.handle, "name": actor.name} if actor is not None
                      else None),
            "studio": studio.handle, "page": base + page,
            "location": (base + location) if location else None,
            "changed": changed, "message": message}
    staged = [_staged_delivery(hook, action, body).id for hook in hooks]
    db.session.flush()
    STAGED.add(*staged)
    return staged


def stage_notification(user_id: uuid.UUID, kind: str, text: str, path: str,
                       studio: Studio | None) -> list[uuid.UUID]:
    """One ``notification`` delivery per active personal webhook of ``user_id`` (the webhook
    channel of a person's notification preferences)."""
    hooks = list(db.session.scalars(select(Webhook).where(
        Webhook.active.is_(True), Webhook.owner_id == user_id, Webhook.studio_id.is_(None))))
    body = {"kind": kind, "text": text, "studio": studio.handle if studio is not None else None,
            "location": base_url() + path}
    staged = [_staged_delivery(hook, "notification", body).id for hook in hooks]
    if staged:
        db.session.flush()
        STAGED.add(*staged)
    return staged


def stage_to(studio: Studio, ident: str, event: str, body: dict[str, Any]) -> str:
    """One delivery of ``body`` (with ``id``, ``event`` and ``at`` added) to the studio's active
    webhook ``ident`` (its short id), in this transaction; its delivery's short id. NotFound
    when the studio has no such active webhook."""
    hook = db.session.scalar(select(Webhook).where(
        Webhook.studio_id == studio.id, Webhook.short_id == (ident or "").strip().lower(),
        Webhook.active.is_(True)))
    if hook is None:
        raise NotFound(f"the studio has no active webhook {ident!r}")
    delivery = _staged_delivery(hook, event, {"studio": studio.handle, **body})
    db.session.flush()
    STAGED.add(delivery.id)
    return delivery.short_id


def _staged_delivery(hook: Webhook, event: str, body: dict[str, Any]) -> WebhookDelivery:
    """A pending delivery of ``event`` to ``hook`` in this transaction: ``body`` after the
    delivery's own ``id``, ``event`` and ``at``."""
    delivery = WebhookDelivery(webhook_id=hook.id, event=event[:80], status="pending",
                               attempts=0, enqueued=False, payload={})
    delivery.assign_ids()
    delivery.payload = {"id": delivery.short_id, "event": event, "at": utcnow().isoformat(),
                        **body}
    db.session.add(delivery)
    return delivery


# Sending through the job queue ------------------------------------------------------------------

def enqueue(ids: list[uuid.UUID]) -> int:
    """Start one queue run per delivery (after its transaction committed)."""
    rows = list(db.session.execute(select(WebhookDelivery.id, WebhookDelivery.short_id,
                                          Webhook.owner_id)
                                   .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
                                   .where(WebhookDelivery.id.in_(ids),
                                          WebhookDelivery.enqueued.is_(False))))
    # End the read before the queue writes on its own connection: on SQLite a snapshot older
    # than that write could not be upgraded to the write below.
    db.session.commit()
    for delivery_id, short_id, owner_id in rows:
        _send_later(delivery_id, short_id, owner_id, 0.0)
        with writing():
            db.session.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery_id)
                               .values(enqueued=True))
    return len(rows)


def _send_later(delivery_id: uuid.UUID, short_id: str, owner_id: uuid.UUID,
                delay: float) -> None:
    """One queue run that makes one attempt, ``delay`` seconds from now. Retries are runs of
    their own (see ``deliver``), so the queue's own retry is only for a worker that died."""
    enqueue_calls(f"webhook delivery {short_id}",
                  [CallStep("deliver", STEP, {"delivery": str(delivery_id)}, max_attempts=2,
                            delay=delay)], user_id=owner_id)


def retry_delay(attempts: int) -> float:
    """Seconds before the attempt after ``attempts`` failed ones: the schedule's next interval
    (its last one again past its end), scaled."""
    schedule = [float(part) for part in settings.get_list("WEBHOOKS_RETRY_SCHEDULE")] or [60.0]
    return schedule[min(max(attempts, 1), len(schedule)) - 1] * \
        settings.get_float("WEBHOOKS_RETRY_SCALE")


def schedule_words() -> str:
    """The retry schedule as people read it: '1 minute, 5 minutes, … and 24 hours'."""
    scale = settings.get_float("WEBHOOKS_RETRY_SCALE")
    waits = [float(part) * scale for part in settings.get_list("WEBHOOKS_RETRY_SCHEDULE")]
    words = []
    for seconds in waits[:max(int(settings.get_float("WEBHOOKS_MAX_ATTEMPTS")) - 1, 0)]:
        for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
            if seconds >= size or unit == "second":
                n = round(seconds / size, 1)
                n_text = f"{n:g}"
                words.append(f"{n_text} {unit}{'' if n_text == '1' else 's'}")
                break
    if not words:
        return "never"
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]


def redeliver(hook: Webhook, ident: str) -> WebhookDelivery:
    """Send one of ``hook``'s deliveries again, once, after the caller's transaction commits."""
    ident = (ident or "").strip().lower()[:8]
    delivery = db.session.scalar(select(WebhookDelivery).where(
        WebhookDelivery.webhook_id == hook.id, WebhookDelivery.short_id == ident))
    if delivery is None:
        raise invalid_param("delivery", f"this webhook has no delivery '{ident}' (its log "
                                        "lists them)")
    if not hook.active:
        raise Conflict("the webhook is disabled: enable it to redeliver")
    if delivery.status not in ("delivered", "failed"):
        raise Conflict(f"delivery {delivery.short_id} is still being sent ({delivery.status}): "
                       "redeliver it once it has been delivered or has failed")
    # One more attempt: whatever the count, it is then the last unless it succeeds.
    delivery.status, delivery.finished_at, delivery.enqueued = "pending", None, False
    delivery.redeliver = True
    db.session.flush()
    STAGED.add(delivery.id)
    return delivery


def sweep(older_than: timedelta = ORPHAN_AFTER) -> int:
    """Enqueue deliveries committed but never enqueued (their process died in between)."""
    ids = list(db.session.scalars(select(WebhookDelivery.id).where(
        WebhookDelivery.status == "pending", WebhookDelivery.enqueued.is_(False),
        WebhookDelivery.created_at < utcnow() - older_than).limit(500)))
    return enqueue(ids) if ids else 0


def deliver(delivery_id: uuid.UUID, max_attempts: int) -> dict[str, Any]:
    """One attempt at sending one delivery; when it failed and attempts are left, the next one
    is enqueued after the retry schedule's interval."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None:
        return {"skipped": "no such delivery (its transaction rolled back or it was deleted)"}
    if delivery.status == "delivered":
        return {"skipped": "already delivered"}
    hook = db.session.get(Webhook, delivery.webhook_id)
    if hook is None or not hook.active:
        delivery.status, delivery.finished_at = "failed", utcnow()
        _log(delivery, 0, None, False, "the webhook is disabled")
        db.session.commit()
        return {"skipped": "webhook disabled"}
    method, url, shaped = formats.shape(hook.format, hook.url, delivery.short_id,
                                        delivery.payload)
    body = json.dumps(shaped, separators=(",", ":"), sort_keys=True).encode()
    secret, event_name, short_id = hook.secret, delivery.event, delivery.short_id
    owner_id, last_try = hook.owner_id, delivery.redeliver
    db.session.commit()  # no snapshot held open across the call (see ``enqueue``)
    started = time.monotonic()
    code: int | None = None
    error = ""
    try:
        check_url(url)  # again: the allow-list may have narrowed since registration
        stamp = int(time.time())
        # The receiver's answer matters only for its status: its first bytes are kept.
        response = outbound.fetch(
            method, url, content=body, seconds=settings.get_float("WEBHOOKS_TIMEOUT"),
            max_bytes=64 * 1024, cut=True,
            headers={"Content-Type": "application/json", "User-Agent": "Harmonic-Webhooks",
                     "Harmonic-Event": event_name, "Harmonic-Delivery": short_id,
                     **signed_headers(secret, stamp, body)})
        code = response.status_code
        if not 200 <= code < 300:
            error = f"the receiver answered {code}"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    except Exception as exc:  # an allow-list refusal (Invalid) and the like: recorded, retried
        error = str(getattr(exc, "message", exc))[:500]
    elapsed = int((time.monotonic() - started) * 1000)
    ok = not error
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None:  # deleted with its webhook meanwhile
        return {"skipped": "deleted while it was being sent"}
    delivery.attempts += 1
    delivery.redeliver = False
    retry = not ok and not last_try and delivery.attempts < max_attempts
    if ok:
        delivery.status, delivery.finished_at = "delivered", utcnow()
    elif retry:
        delivery.status = "retrying"
    else:
        delivery.status, delivery.finished_at = "failed", utcnow()
    _log(delivery, elapsed, code, ok, error)
    attempt = delivery.attempts
    db.session.commit()
    if retry:
        delay = retry_delay(attempt)
        _send_later(delivery_id, short_id, owner_id, delay)
        return {"status": code, "attempt": attempt, "error": error, "retry_in": delay}
    return {"status": code, "attempt": attempt, **({"error": error} if error else {})}


def _log(delivery: WebhookDelivery, elapsed: int, code: int | None, ok: bool,
         error: str) -> None:
    db.session.add(WebhookAttempt(delivery_id=delivery.id, number=delivery.attempts,
                                  duration_ms=elapsed, status_code=code, ok=ok, error=error))


def _deliver_step(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The queue's step: first enqueue any orphaned deliveries, then try this one."""
    sweep()
    return deliver(uuid.UUID(str(args["delivery"])),
                   max(1, int(settings.get_float("WEBHOOKS_MAX_ATTEMPTS"))))


def register_step() -> None:
    callable_step(STEP)(_deliver_step)  # the same function again is no conflict


@revocation.ends
def switch_off(ended: revocation.Ended) -> None:
    """A revoked grant's or agent's webhooks stop receiving anything."""
    made = ended.made(Webhook.made_by_token_id, Webhook.made_by_grant_id, Webhook.owner_id)
    if made is not None:
        db.session.execute(update(Webhook).where(made, Webhook.active.is_(True))
                           .values(active=False))
