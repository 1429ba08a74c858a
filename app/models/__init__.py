"""SQLAlchemy models. Importing this package registers every table on the metadata."""

from app.extensions import db
from app.models.accounts import ApiToken, User
from app.models.notes import Note, NoteEvent
from app.models.studios import Invite, Link, Membership, Pin, Studio

__all__ = ["db", "ApiToken", "User", "Note", "NoteEvent", "Invite", "Link", "Membership", "Pin",
           "Studio"]

# Feature packages register their tables by adding an import here, one line each.
import app.models.automations  # noqa: E402,F401  (automations and their firings)
import app.models.captures  # noqa: E402,F401  (playbook captures in the database store)
import app.models.changes  # noqa: E402,F401  (the change-event outbox)
import app.models.collab  # noqa: E402,F401  (decisions, commitments, heartbeats)
import app.models.floorplans  # noqa: E402,F401  (shared floorplans and their versions)
import app.models.form_receipts  # noqa: E402,F401  (forms accepted once: their receipts)
import app.models.grants  # noqa: E402,F401  (grants and representation sessions)
import app.models.mcp  # noqa: E402,F401  (MCP sessions, requests, audit)
import app.models.mcp_tasks  # noqa: E402,F401  (MCP tasks: the tasks extension)
import app.models.notifications  # noqa: E402,F401  (inboxes, notification levels, webhooks)
import app.models.oauth  # noqa: E402,F401  (OAuth clients, codes, grants, refresh tokens)
import app.models.playbooks  # noqa: E402,F401  (teach sessions and replay runs)
import app.models.revisions  # noqa: E402,F401  (item edit history and deletion audit)
import app.models.search  # noqa: E402,F401  (the search index)
import app.models.workflows  # noqa: E402,F401  (workflow runs, jobs, events, effects)
from app.models.design_model import DesignElement, RhinoObject  # noqa: E402,F401
