"""Email as a channel: staged in the transaction that caused it, sent by the job queue.

Staging (``stage``, from the action's observer): one ``MailMessage`` per notification whose
recipient has a confirmed address, wants that type by email and is a member of the studio it
comes from, in the action's own transaction, so it commits with the change or not at all.
Nothing is staged while no SMTP server is configured. A person who chose the daily digest
gets the row ``held``; ``digest`` (``flask mail digest``, run daily by cron or the like)
gathers each person's held rows into one email, at most one per day.

Sending: after the transaction commits, each message is enqueued as a run of the workflow job
queue (as webhook deliveries are), so the action never waits on the SMTP server. Before each
attempt the message is checked again (still a member, still wanted, address still confirmed;
else it is dropped, not sent). A failed attempt raises a transient StepError: the queue
retries it with its backoff up to ``MAIL_MAX_ATTEMPTS``. A message whose enqueueing was lost
(the process died right after the commit) is picked up by the next sending step or by
``flask mail sweep``.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from app.db import conflicts, writing
from app.extensions import db
from app.models import Membership, User
from app.models.base import utcnow
from app.models.notifications import MailMessage
from app.notifications import compose, preferences, settings, smtp
from app.notifications.inbox import Draft
from app.notifications.staged import Staged
from app.workflows import CallStep, StepError, callable_step, enqueue_calls

STEP = "notifications.send_mail"
ORPHAN_AFTER = timedelta(seconds=30)
STAGED = Staged("mail")  # the emails of this transaction, sent once it has committed
log = logging.getLogger("harmonic.mail")


# Staging, in the causing transaction ------------------------------------------------------------

def stage(drafts: list[Draft]) -> list[uuid.UUID]:
    """Stage the emails these notifications call for (see the module's docstring)."""
    if not drafts or not smtp.enabled():
        return []
    user_ids = {d.user_id for d in drafts}
    users = {u.id: u for u in db.session.scalars(select(User).where(
        User.id.in_(user_ids), User.email.is_not(None), User.email_verified_at.is_not(None)))}
    if not users:
        return []
    choices = preferences.chosen(users, {d.kind for d in drafts})
    studios = {d.studio_id for d in drafts if d.studio_id is not None}
    members = {(uid, sid) for uid, sid in db.session.execute(
        select(Membership.user_id, Membership.studio_id).where(
            Membership.user_id.in_(users), Membership.studio_id.in_(studios)))} \
        if studios else set()
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for d in drafts:
        user = users.get(d.user_id)
        if user is None or not preferences.wants(choices, d.user_id, d.kind, "email"):
            continue
        if d.studio_id is None or (d.user_id, d.studio_id) not in members:
            continue  # never to someone outside the studio it is about
        ident = uuid.uuid4()
        rows.append({"id": ident, "short_id": ident.hex[:8], "user_id": d.user_id,
                     "studio_id": d.studio_id, "key": f"n:{d.key}"[:140],
                     "purpose": "notification", "kind": d.kind, "text": d.text[:500],
                     "path": d.path[:300], "status": "held" if user.email_digest else "pending",
                     "attempts": 0, "enqueued": False, "error": "", "created_at": now})
    if not rows:
        return []
    statement = conflicts.insert(MailMessage).values(rows) \
        .on_conflict_do_nothing(index_elements=["user_id", "key"]) \
        .returning(MailMessage.id, MailMessage.status)
    with writing():
        staged = [(ident, status) for ident, status in db.session.execute(statement)]
    pending = [ident for ident, status in staged if status == "pending"]
    STAGED.add(*pending)
    return pending


def stage_confirmation(user: User) -> uuid.UUID | None:
    """Stage the email with the signed link that confirms the person's new address."""
    if not user.email or not smtp.enabled():
        return None
    row = MailMessage(user_id=user.id, key=f"confirm:{uuid.uuid4().hex[:16]}",
                      purpose="confirm", kind="", text="", path="", status="pending",
                      attempts=0, enqueued=False, error="")
    row.assign_ids()
    db.session.add(row)
    db.session.flush()
    STAGED.add(row.id)
    return row.id


# The daily digest -------------------------------------------------------------------------------

def digest(now: datetime | None = None) -> int:
    """Gather each person's held notifications into one email for the day (``now``'s UTC
    date); a person already sent that day's digest gets none. Returns how many were made."""
    day = (now or utcnow()).date().isoformat()
    holders = list(db.session.scalars(select(MailMessage.user_id)
                                      .where(MailMessage.status == "held").distinct()))
    db.session.commit()
    made: list[uuid.UUID] = []
    for user_id in holders:
        ident = uuid.uuid4()
        row = {"id": ident, "short_id": ident.hex[:8], "user_id": user_id,
               "key": f"digest:{day}", "purpose": "digest", "kind": compose.ALL, "text": "",
               "path": "", "status": "pending", "attempts": 0, "enqueued": False,
               "error": "", "created_at": utcnow()}
        with writing():
            inserted = db.session.execute(
                conflicts.insert(MailMessage).values([row])
                .on_conflict_do_nothing(index_elements=["user_id", "key"])
                .returning(MailMessage.id)).scalar()
            if inserted is not None:
                db.session.execute(update(MailMessage).where(
                    MailMessage.user_id == user_id, MailMessage.status == "held")
                    .values(status="digested", digest_id=inserted))
        db.session.commit()
        if inserted is not None:
            made.append(inserted)
    if made:
        enqueue(made)
    return len(made)


# Sending through the job queue ------------------------------------------------------------------

def enqueue(ids: list[uuid.UUID]) -> int:
    """Start one queue run per message (after its transaction committed)."""
    attempts = max(1, int(settings.get_float("MAIL_MAX_ATTEMPTS")))
    rows = list(db.session.execute(select(MailMessage.id, MailMessage.short_id,
                                          MailMessage.user_id)
                                   .where(MailMessage.id.in_(ids),
                                          MailMessage.enqueued.is_(False))))
    db.session.commit()  # end the read before the queue writes (see webhooks.enqueue)
    for ident, short_id, user_id in rows:
        enqueue_calls(f"email {short_id}", [CallStep("send", STEP, {"message": str(ident)},
                                                     max_attempts=attempts)], user_id=user_id)
        with writing():
            db.session.execute(update(MailMessage).where(MailMessage.id == ident)
                               .values(enqueued=True))
    return len(rows)


def sweep(older_than: timedelta = ORPHAN_AFTER) -> int:
    """Enqueue messages committed but never enqueued (their process died in between)."""
    ids = list(db.session.scalars(select(MailMessage.id).where(
        MailMessage.status == "pending", MailMessage.enqueued.is_(False),
        MailMessage.created_at < utcnow() - older_than).limit(500)))
    return enqueue(ids) if ids else 0


def _not_allowed(row: MailMessage, user: User) -> str | None:
    """Why the message may not be sent now, or None."""
    if row.purpose == "confirm":
        return None if user.email else "the person removed their address"
    if preferences.verified_address(user) is None:
        return "the person has no confirmed address"
    if row.purpose == "notification":
        if not preferences.wants(preferences.chosen([user.id], [row.kind]), user.id, row.kind,
                                 "email"):
            return f"the person no longer wants {row.kind} by email"
        member = db.session.scalar(select(Membership.user_id).where(
            Membership.user_id == user.id, Membership.studio_id == row.studio_id))
        if member is None:
            return "the person is not a member of the studio any more"
    return None


def _message(row: MailMessage, user: User) -> Any:
    address = user.email or ""
    if row.purpose == "confirm":
        return compose.confirmation(user, address)
    if row.purpose == "digest":
        rows = list(db.session.scalars(select(MailMessage).where(MailMessage.digest_id == row.id)
                                       .order_by(MailMessage.created_at)))
        return compose.digest(user, address, rows, row.key.partition(":")[2])
    return compose.notification(row, user, address)


def send(message_id: uuid.UUID, max_attempts: int) -> dict[str, Any]:
    """One attempt at sending one message; raises StepError (transient) when it failed."""
    row = db.session.get(MailMessage, message_id)
    if row is None:
        return {"skipped": "no such message"}
    if row.status not in ("pending", "retrying"):
        return {"skipped": f"already {row.status}"}
    user = db.session.get(User, row.user_id)
    reason = "the account is gone" if user is None else _not_allowed(row, user)
    if reason or user is None:
        row.status, row.error = "dropped", reason or ""
        db.session.commit()
        return {"skipped": reason}
    email = _message(row, user)
    short_id = row.short_id
    db.session.commit()  # no snapshot held open while the SMTP server is talked to
    error = ""
    try:
        smtp.send(email)
    except (smtp.MailError, ValueError) as exc:
        error = str(exc)[:500]
    row = db.session.get(MailMessage, message_id)
    if row is None:
        return {"skipped": "deleted while it was being sent"}
    row.attempts += 1
    row.error = error
    if not error:
        row.status, row.sent_at = "sent", utcnow()
    else:
        row.status = "failed" if row.attempts >= max_attempts else "retrying"
    db.session.commit()
    if error:
        log.warning("email %s, attempt %d: %s", short_id, row.attempts, error)
        raise StepError(f"email {short_id}: {error}", permanent=False)
    return {"sent": short_id, "attempt": row.attempts}


def _send_step(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The queue's step: first enqueue any orphaned messages, then try this one."""
    sweep()
    return send(uuid.UUID(str(args["message"])),
                max(1, int(settings.get_float("MAIL_MAX_ATTEMPTS"))))


def register_step() -> None:
    callable_step(STEP)(_send_step)
