"""The emails themselves: one notification, a day's digest, an address's confirmation link.

Each is plain text with an HTML alternative. A notification's email carries a Reply-To whose
token names the message (so the item) and its recipient, when replies by email are set up
(``HARMONIC_MAIL_REPLY_DOMAIN``), and an unsubscribe link for its type: in the text, and in
``List-Unsubscribe`` with ``List-Unsubscribe-Post`` so mail programs offer one click
(RFC 8058). ``Auto-Submitted`` keeps vacation responders from answering.
"""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.utils import formataddr, formatdate, make_msgid, parseaddr

from markupsafe import Markup, escape

from app.core.config import base_url
from app.models import User
from app.models.notifications import MailMessage
from app.notifications import mail_tokens, settings
from app.notifications.preferences import KIND_WORDS

REPLY_MARKER = "-- Reply above this line to comment --"
ALL = "*"  # an unsubscribe token for every type (a digest's)
# Headers are folded at RFC 5322's hard limit, not at 78: a long List-Unsubscribe URL has no
# space to fold at, and at 78 the library would wrap it in encoded words that mail programs
# do not read as a URL.
POLICY = policy.SMTP.clone(max_line_length=998)


def _one_line(text: str) -> str:
    # A title or name is people's text: a line break in a header would end it (the library
    # refuses one), so headers get it on one line.
    return " ".join(text.split())


def _base(user: User, address: str, subject: str) -> EmailMessage:
    message = EmailMessage(policy=POLICY)
    sender = settings.get("HARMONIC_MAIL_FROM")
    message["From"] = sender
    message["To"] = formataddr((_one_line(user.name), address))
    message["Subject"] = _one_line(subject)
    message["Date"] = formatdate(localtime=False)
    domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
    message["Message-ID"] = make_msgid(domain=domain)
    message["Auto-Submitted"] = "auto-generated"
    return message


def reply_address(row: MailMessage, user: User) -> str | None:
    domain = settings.get("HARMONIC_MAIL_REPLY_DOMAIN").strip().lstrip("@")
    if not domain or not row.path:
        return None
    return f"reply+{mail_tokens.reply_token(row.short_id, user.id)}@{domain}"


def unsubscribe_url(user: User, kind: str) -> str:
    return f"{base_url()}/mail/unsubscribe/{mail_tokens.unsubscribe_token(user.id, kind)}"


def _unsubscribe_headers(message: EmailMessage, url: str) -> None:
    message["List-Unsubscribe"] = f"<{url}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"


def _html(paragraphs: list[Markup]) -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return ('<!doctype html>\n<html><body style="font-family: sans-serif">\n'
            f"{body}\n</body></html>\n")


def notification(row: MailMessage, user: User, address: str) -> EmailMessage:
    link = base_url() + row.path
    stop = unsubscribe_url(user, row.kind)
    what = KIND_WORDS.get(row.kind, row.kind).lower()
    message = _base(user, address, row.text)
    reply = reply_address(row, user)
    if reply:
        message["Reply-To"] = reply
    _unsubscribe_headers(message, stop)
    lines = [REPLY_MARKER, ""] if reply else []
    lines += [row.text, "", f"Open it: {link}", "",
              f"You get this email because you asked to be told when {what}. "
              f"No more of these emails: {stop}"]
    message.set_content("\n".join(lines) + "\n")
    paragraphs = [Markup("<em>{}</em>").format(REPLY_MARKER)] if reply else []
    paragraphs += [escape(row.text), Markup('<a href="{}">Open it</a>').format(link),
                   Markup('<small>You get this email because you asked to be told when {}. '
                          '<a href="{}">No more of these emails</a>.</small>').format(what, stop)]
    message.add_alternative(_html(paragraphs), subtype="html")
    return message


def digest(user: User, address: str, rows: list[MailMessage], day: str) -> EmailMessage:
    count = len(rows)
    message = _base(user, address,
                    f"Your day in Harmonic: {count} notification{'s' if count != 1 else ''}")
    stop_all = unsubscribe_url(user, ALL)
    _unsubscribe_headers(message, stop_all)
    kinds = sorted({r.kind for r in rows})
    lines = [f"What happened on {day}:", ""]
    lines += [f"- {r.text}: {base_url()}{r.path}" for r in rows]
    lines += ["", "No more emails of one type:"]
    lines += [f"- {KIND_WORDS.get(k, k)}: {unsubscribe_url(user, k)}" for k in kinds]
    lines += ["", f"No more notification emails at all: {stop_all}"]
    message.set_content("\n".join(lines) + "\n")
    items = Markup("").join(Markup('<li><a href="{}">{}</a></li>').format(
        base_url() + r.path, r.text) for r in rows)
    stops = Markup(" · ").join(Markup('<a href="{}">{}</a>').format(
        unsubscribe_url(user, k), KIND_WORDS.get(k, k)) for k in kinds)
    message.add_alternative(_html([
        Markup("What happened on {}:").format(day), Markup("<ul>{}</ul>").format(items),
        Markup("<small>No more emails of one type: {}. <a href=\"{}\">No more notification "
               "emails at all</a>.</small>").format(stops, stop_all)]), subtype="html")
    return message


def confirmation(user: User, address: str) -> EmailMessage:
    link = f"{base_url()}/mail/confirm/{mail_tokens.confirm_token(user.id, address)}"
    message = _base(user, address, "Confirm your email address for Harmonic")
    message.set_content(f"Hello {user.name},\n\nTo receive Harmonic's emails at {address} "
                        f"(and to comment by replying to them), open this link within three "
                        f"days:\n\n{link}\n\nIf you did not ask for this, ignore this email.\n")
    message.add_alternative(_html([
        Markup("Hello {},").format(user.name),
        Markup("To receive Harmonic's emails at {} (and to comment by replying to them), "
               '<a href="{}">confirm this address</a> within three days.').format(address, link),
        Markup("If you did not ask for this, ignore this email.")]), subtype="html")
    return message
