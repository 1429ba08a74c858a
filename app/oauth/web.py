"""The authorization server's routes and metadata, and the connected-apps page's wiring.

``/.well-known/oauth-protected-resource[/mcp]`` (RFC 9728) and
``/.well-known/oauth-authorization-server`` (RFC 8414) describe us; ``/oauth/authorize`` asks a
signed-in person to consent (or remembers that they did); ``/oauth/token``, ``/oauth/register``
and ``/oauth/revoke`` are Authlib's endpoints. The authorization endpoint never redirects
before Authlib validated the client and its exact redirect URI: until then an error is a page.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import OAuth2Error
from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    g,
    jsonify,
    redirect,
    render_template,
    request,
)
from flask_login import current_user
from werkzeug.exceptions import TooManyRequests
from werkzeug.wrappers import Response as WerkzeugResponse

from app.core import resource
from app.db import writing
from app.extensions import csrf, db
from app.oauth import cimd, pages, store
from app.oauth import server as oauth_server
from app.web import ratelimit

bp = Blueprint("oauth", __name__)


def _server() -> Any:
    return current_app.extensions["harmonic.oauth"]


def _cors(response: Response) -> Response:
    # Metadata and the token-side endpoints carry no cookie credentials: any origin may read
    # them (browser-based MCP clients need that). The authorization endpoint gets no CORS.
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Access-Control-Allow-Headers"] = "Content-Type, Authorization, " \
                                                       "MCP-Protocol-Version"
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    return response


# -- metadata --------------------------------------------------------------------------------

def protected_resource_metadata() -> dict[str, Any]:
    base = oauth_server.issuer()
    return {"resource": resource.mcp_url(base), "authorization_servers": [base],
            "scopes_supported": list(resource.SCOPES), "bearer_methods_supported": ["header"],
            "resource_name": "Harmonic"}


@bp.route("/.well-known/oauth-protected-resource", methods=["GET", "OPTIONS"])
@bp.route("/.well-known/oauth-protected-resource/mcp", methods=["GET", "OPTIONS"])
def resource_metadata() -> Response:
    return _cors(jsonify(protected_resource_metadata()))


def authorization_server_metadata() -> dict[str, Any]:
    base = oauth_server.issuer()
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "scopes_supported": list(resource.SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": oauth_server.GRANT_TYPES,
        "token_endpoint_auth_methods_supported": oauth_server.AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": oauth_server.AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
    }


@bp.route("/.well-known/oauth-authorization-server", methods=["GET", "OPTIONS"])
def server_metadata() -> Response:
    return _cors(jsonify(authorization_server_metadata()))


# -- token-side endpoints (no cookies, no CSRF: clients authenticate themselves) -------------

@bp.route("/oauth/token", methods=["POST", "OPTIONS"])
@csrf.exempt
@writing()
def token() -> Response:
    if request.method == "OPTIONS":
        return _cors(Response(status=204))
    return _cors(_server().create_token_response())


@bp.route("/oauth/register", methods=["POST", "OPTIONS"])
@csrf.exempt
@writing()
def register() -> Response:
    if request.method == "OPTIONS":
        return _cors(Response(status=204))
    refusal = _registration_refusal()
    if refusal is not None:
        return _cors(refusal)
    return _cors(_server().create_endpoint_response("client_registration"))


def _registration_error(status: int, error: str, description: str, **headers: str) -> Response:
    response = jsonify({"error": error, "error_description": description})
    response.status_code = status
    response.headers.update(headers)
    response.headers["Cache-Control"] = "no-store"
    return response


def _registration_refusal() -> Response | None:
    """429 past the per-address rate; 400 (RFC 7591 §3.2.2) for a body that is not JSON or is
    larger than any client's metadata."""
    limiter = ratelimit.limiter_for(current_app.config, current_app.extensions)
    try:
        ratelimit.check_address(current_app.config, limiter, ratelimit.REGISTER,
                                request.remote_addr)
    except TooManyRequests as exc:
        return _registration_error(429, "temporarily_unavailable", str(exc.description),
                                   **{"Retry-After": str(exc.retry_after)})
    if request.mimetype != "application/json":
        return _registration_error(400, "invalid_client_metadata",
                                   "send the client metadata as application/json")
    limit = oauth_server.MAX_REGISTRATION_BYTES
    if (request.content_length or 0) > limit or len(request.get_data(cache=True)) > limit:
        return _registration_error(400, "invalid_client_metadata",
                                   f"the registration is larger than {limit} bytes")
    return None


@bp.route("/oauth/revoke", methods=["POST", "OPTIONS"])
@csrf.exempt
@writing()
def revoke() -> Response:
    if request.method == "OPTIONS":
        return _cors(Response(status=204))
    return _cors(_server().create_endpoint_response("revocation"))


# -- the authorization endpoint: consent ----------------------------------------------------

def _refusal_page(error: OAuth2Error) -> Response:
    """An error before a redirect URI was validated: shown to the person, never redirected
    (an authorization endpoint that redirects anywhere is an open redirect)."""
    body = render_template("oauth/error.html.j2", error=error.error,
                           description=error.get_error_description()
                           if hasattr(error, "get_error_description") else error.description)
    return Response(body, status=400, mimetype="text/html")


def _error_redirect(error: OAuth2Error) -> Response:
    if not error.redirect_uri:
        return _refusal_page(error)
    response: Response = _server().handle_error_response(None, error)
    if response.location:  # RFC 9207: iss in error responses too
        response.location = add_params_to_uri(response.location,
                                              {"iss": oauth_server.issuer()})
    return response


def _logo(client: oauth_server.Client) -> str | None:
    """A logo is shown only from the client_id's own https origin (a metadata document's
    site vouches for it); a self-registered client's logo could be anyone's."""
    logo = client.metadata.get("logo_uri")
    if not isinstance(logo, str) or not client.client_id.startswith("https://"):
        return None
    mine, theirs = urlsplit(client.client_id), urlsplit(logo)
    same = theirs.scheme == "https" and theirs.netloc == mine.netloc
    return logo if same else None


@bp.route("/oauth/authorize", methods=["GET", "POST"])
@writing()  # a code is written whenever consent is given, now or remembered
def authorize() -> Any:
    if not current_user.is_authenticated and cimd.is_metadata_url(
            request.values.get("client_id") or ""):
        # The client's document is fetched for a signed-in person only (app.oauth.cimd).
        return _to_sign_in()
    try:
        grant = _server().get_consent_grant(end_user=None)
    except OAuth2Error as error:
        db.session.rollback()
        return _error_redirect(error)
    if not current_user.is_authenticated:
        return _to_sign_in()
    user = g.user
    client: oauth_server.Client = grant.client
    scopes = grant.request.scope or ""
    if request.method == "POST":
        # CSRF was checked by app.web.auth (a cookie session's form).
        if request.form.get("decision") != "allow":
            return _finish(grant, None)
        chosen = " ".join(s for s in scopes.split() if request.form.get(f"grant_{s}"))
        if not chosen:
            return _finish(grant, None)
        g.oauth_scopes = chosen
        if request.form.get("remember"):
            store.remember(user.id, client.client_id, chosen)
        return _finish(grant, user)
    if store.remembered(user.id, client.client_id, scopes):
        g.oauth_scopes = scopes
        return _finish(grant, user)
    redirect_uri = grant.request.payload.redirect_uri or ""
    return render_template("oauth/consent.html.j2", client=client, logo=_logo(client),
                           redirect_host=urlsplit(redirect_uri).netloc, scopes=scopes.split(),
                           user=user)


def _to_sign_in() -> WerkzeugResponse:
    return redirect("/login?next=" + quote(request.full_path, safe=""), code=303)


def _finish(grant: Any, user: Any) -> Response:
    response: Response = _server().create_authorization_response(grant_user=user, grant=grant)
    db.session.commit()
    return response


def init_app(app: Flask) -> None:
    app.extensions["harmonic.oauth"] = oauth_server.make_server(app)
    app.register_blueprint(bp)

    app.register_blueprint(pages.bp)
