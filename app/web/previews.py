"""Previews for editors: Markdown rendered by the app's own sanitizing renderer, unsaved.

``POST /preview/markdown`` takes ``text`` (a form field or JSON) and answers the HTML the page
would show once saved, so a note's live preview and its page never disagree. It stores
nothing, yet it is a POST with the form's CSRF token: it is only for signed-in people and
agents with a read token.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from app.services import notes
from app.services.errors import Invalid
from app.web import markdown
from app.web.auth import signed_in_reader

bp = Blueprint("previews", __name__)


def _text() -> str:
    if request.mimetype == "application/json":
        body = request.get_json(silent=True)
        value = body.get("text") if isinstance(body, dict) else None
    else:
        value = request.form.get("text")
    if not isinstance(value, str):
        raise Invalid("send the Markdown to preview as 'text'",
                      errors=[{"param": "text", "message": "is required"}])
    if len(value) > notes.TEXT_MAX:
        raise Invalid("the text is too long to preview",
                      errors=[{"param": "text", "message": f"at most {notes.TEXT_MAX} characters"}])
    return value


@bp.post("/preview/markdown")
def markdown_preview() -> Response:
    signed_in_reader()
    response = Response(str(markdown.to_html(_text())), mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
