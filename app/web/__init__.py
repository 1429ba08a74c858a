"""The web layer: blueprints that build Pages and render them as HTML, Markdown or JSON."""

from __future__ import annotations

from flask import Flask, Response, g
from jinja2 import select_autoescape

import app.actions.ballots  # noqa: F401  registers the ballots of each kind of decision
import app.actions.collab  # noqa: F401  registers decisions, commitments, heartbeats
import app.actions.core  # noqa: F401  registers the core actions
import app.actions.edit_delete  # noqa: F401  registers editing, deleting and restoring
import app.actions.grants  # noqa: F401  registers grants and representation sessions
import app.actions.membership  # noqa: F401  registers roles, invites and agent accounts
import app.actions.outcomes  # noqa: F401  registers a decision's outcome
from app.actions import Context, offered_actions
from app.actions.registry import ACTIONS
from app.services import items
from app.services.errors import NotFound
from app.web import (
    agent_activity,
    agent_web,
    auth,
    chrome,
    collab_pages,
    cookie_sessions,
    core_pages,
    forms,
    framing,
    grant_pages,
    health,
    list_pages,
    markdown,
    membership_pages,
    negotiation,
    pages,
    previews,
    session,
)
from app.web.errors import register_error_handlers
from app.web.negotiation import MarkdownSuffix


def init_app(app: Flask) -> None:
    app.wsgi_app = MarkdownSuffix(app.wsgi_app)  # type: ignore[method-assign]
    cookie_sessions.init_app(app)
    # Escape HTML templates only: Markdown templates produce text, escaped by our own filters.
    app.jinja_env.autoescape = select_autoescape(enabled_extensions=("html.j2", "html"),
                                                 default_for_string=False, default=False)
    app.jinja_env.filters.update(md_html=markdown.to_html, md_inline=markdown.inline,
                                 md_fence=markdown.fence, md_plain=markdown.plain,
                                 dt=chrome.dt_filter,
                                 people=pages.people_text, humane=chrome.humane)
    app.jinja_env.globals.update(item_path=items.path_of, item_title=items.title_of,
                                 deadline_text=chrome.deadline_text,
                                 studio_links=chrome.studio_links,
                                 markdown_href=chrome.markdown_href,
                                 form_fields=forms.fields_for, form_state=pages.form_state,
                                 form_key=pages.form_key, form_guard=pages.form_guard,
                                 action_named=ACTIONS.get,
                                 zone_names=chrome.zone_names, csrf_token=chrome.csrf_token)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.before_request(auth.load_identity)
    app.login_manager.login_view = "session.login"  # type: ignore[attr-defined]
    register_error_handlers(app)
    health.init_app(app)  # /healthz, and 503 (not 500) while the database is unreachable
    negotiation.init_app(app)  # Vary: Accept, x-markdown-tokens
    framing.init_app(app)  # X-Frame-Options and frame-ancestors on every response
    app.register_blueprint(session.bp)
    app.register_blueprint(core_pages.bp)
    app.register_blueprint(collab_pages.bp)
    app.register_blueprint(list_pages.bp)
    app.register_blueprint(agent_activity.bp)
    app.register_blueprint(agent_web.bp)
    app.register_blueprint(previews.bp)
    app.register_blueprint(membership_pages.bp)
    app.register_blueprint(grant_pages.bp)

    @app.context_processor
    def _globals() -> dict[str, object]:
        # "current" is kept for older templates; "viewer" cannot be shadowed by a page's data.
        return {"current": g.get("user"), "viewer": g.get("user") or g.get("chrome_viewer")}

    # An action under a path that is not a page at all: still a teaching 404.
    @app.route("/<path:prefix>/actions/<name>", methods=["GET", "POST"])
    def unknown_page_action(prefix: str, name: str) -> Response:
        ctx = Context(page="", path=f"/{prefix}", user=g.get("user"))
        raise NotFound(f"'{name}' is not a valid action at /{prefix}: there is no such page",
                       actions=[a.name for a in offered_actions(ctx)])
