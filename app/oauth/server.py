"""The Authlib authorization server, wired to ``app.oauth.store``.

Authlib does the protocol: request validation, client authentication, the authorization-code
and refresh-token grants, PKCE (``S256`` only: a missing or ``plain`` challenge is refused at the
authorization endpoint), dynamic client registration (RFC 7591), revocation (RFC 7009) and the
``iss`` of the authorization response (RFC 9207). This module supplies what it leaves to us:
clients (registered, or a Client ID Metadata Document), storage, the resource indicator
(RFC 8707: the only resource is this server's /mcp) and the token format (opaque random
strings stored hashed; the access token an API-token row).
"""

from __future__ import annotations

import secrets as _secrets
from typing import Any
from urllib.parse import urlsplit

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin, InvalidGrantError, InvalidRequestError, grants
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import (
    ClientRegistrationEndpoint,
    InvalidClientMetadataError,
    InvalidRedirectURIError,
)
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter
from flask import Flask, g, request

from app.core import config, netpolicy, resource
from app.extensions import db
from app.models import User
from app.models.oauth import OAuthCode, OAuthGrant, OAuthRefreshToken
from app.oauth import cimd, store
from app.services import tokens

AUTH_METHODS = ["none", "client_secret_post"]
GRANT_TYPES = ["authorization_code", "refresh_token"]


def issuer() -> str:
    """This server as an issuer (RFC 8414 §2): ``HARMONIC_BASE_URL``, never the ``Host`` a
    client sent."""
    return config.base_url()


def own_bases() -> list[str]:
    return [issuer()]


class InvalidTargetError(OAuth2Error):
    """RFC 8707 §2: the resource is not one this server issues tokens for."""

    error = "invalid_target"


# -- clients ---------------------------------------------------------------------------------

class Client(ClientMixin):
    """A registered client or one described by its metadata document, as Authlib reads it."""

    def __init__(self, client_id: str, metadata: dict[str, Any],
                 secret_hash: str | None = None) -> None:
        self.client_id, self.metadata, self.secret_hash = client_id, metadata, secret_hash

    @property
    def name(self) -> str:
        name = self.metadata.get("client_name")
        return name.strip()[:200] if isinstance(name, str) and name.strip() else self.client_id

    @property
    def auth_method(self) -> str:
        method = self.metadata.get("token_endpoint_auth_method")
        return method if isinstance(method, str) else "none"

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # always named and matched exactly

    def get_allowed_scope(self, scope: str | None) -> str | None:
        asked = (scope or " ".join(resource.SCOPES)).split()
        granted = [s for s in resource.SCOPES if s in asked]
        return " ".join(granted) if granted else None

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        uris = self.metadata.get("redirect_uris") or []
        return isinstance(uris, list) and redirect_uri in uris  # exact string match

    def check_client_secret(self, client_secret: str) -> bool:
        return bool(self.secret_hash) and _secrets.compare_digest(
            tokens.digest(client_secret), self.secret_hash or "")

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in GRANT_TYPES


def query_client(client_id: str) -> Client | None:
    if len(client_id) > 2048 or any(ord(ch) < 32 or ord(ch) == 127 for ch in client_id):
        return None  # no client has such an id (and PostgreSQL refuses NUL in a query)
    if cimd.is_metadata_url(client_id):
        if g.get("user") is None and not store.has_dealt_with(client_id):
            # Nobody signed in asked for it and no person ever consented to this client: an
            # anonymous request must not make the server fetch a URL of its choosing.
            raise ClientRefused("a client metadata document is fetched only for a signed-in "
                                "person, or for a client someone already consented to")
        try:
            document = cimd.fetch(client_id)
        except cimd.Refused as exc:
            raise ClientRefused(str(exc)) from None
        # A metadata document cannot hold a secret: such clients are public.
        return Client(client_id, {**document, "token_endpoint_auth_method": "none"})
    row = store.registered_client(client_id)
    if row is None:
        return None
    return Client(row.client_id, row.client_metadata, row.secret_hash)


class ClientRefused(InvalidRequestError):
    """A client_id URL we will not fetch (private address, not https…): said to the person,
    never redirected (no redirect URI can be trusted without the document)."""

    error = "invalid_client"


# -- codes and tokens ------------------------------------------------------------------------

class CodeRecord:
    """An authorization code as Authlib's grant reads it."""

    def __init__(self, row: OAuthCode) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = row.code_challenge_method

    def get_redirect_uri(self) -> str:
        return self.row.redirect_uri

    def get_scope(self) -> str:
        return self.row.scopes


class GrantRecord:
    """The grant behind a token presented for revocation."""

    def __init__(self, grant: OAuthGrant) -> None:
        self.grant = grant

    def check_client(self, client: Client) -> bool:
        return self.grant.client_id == client.get_client_id()


class RefreshRecord(GrantRecord):
    def __init__(self, row: OAuthRefreshToken, grant: OAuthGrant) -> None:
        super().__init__(grant)
        self.row = row

    def get_scope(self) -> str:
        return self.grant.scopes


def _resource_param() -> str | None:
    values = request.values.getlist("resource")
    if len(values) > 1:
        raise InvalidTargetError(description="one resource only: this server's /mcp")
    return values[0] if values else None


class S256Only(CodeChallenge):
    """PKCE required, and only S256 (OAuth 2.1): no challenge, or ``plain``, is refused."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("code_challenge is required (PKCE with S256)")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def validate_authorization_request(self) -> str:
        redirect_uri = str(super().validate_authorization_request())
        wanted = _resource_param_or_error(redirect_uri)
        if wanted is not None and not resource.is_own(wanted, own_bases()):
            raise InvalidTargetError(description=f"this server issues tokens only for "
                                                 f"{resource.mcp_url(issuer())}",
                                     redirect_uri=redirect_uri)
        return redirect_uri

    def save_authorization_code(self, code: str, req: Any) -> None:
        data = req.payload.data
        store.save_code(code, client_id=req.client.get_client_id(), client_name=req.client.name,
                        user_id=req.user.id, redirect_uri=req.payload.redirect_uri,
                        scopes=g.get("oauth_scopes") or req.scope, resource=(data.get("resource")
                                                    or resource.mcp_url(issuer())).rstrip("/"),
                        challenge=data["code_challenge"], method=data["code_challenge_method"])

    def query_authorization_code(self, code: str, client: Client) -> CodeRecord | None:
        row = store.find_code(code, client.get_client_id())
        return CodeRecord(row) if row is not None else None

    def delete_authorization_code(self, authorization_code: CodeRecord) -> None:
        pass  # spent in save_token (kept, marked used: a second use revokes the grant)

    def authenticate_user(self, authorization_code: CodeRecord) -> User | None:
        return db.session.get(User, authorization_code.row.user_id)

    def validate_token_request(self) -> None:
        super().validate_token_request()
        wanted = _resource_param()
        code = self.request.authorization_code
        if wanted is not None and wanted.rstrip("/") != code.row.resource:
            raise InvalidTargetError(description="resource differs from the authorization "
                                                 "request's")


def _resource_param_or_error(redirect_uri: str) -> str | None:
    try:
        return _resource_param()
    except InvalidTargetError as exc:
        exc.redirect_uri = redirect_uri
        raise


class RefreshGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh spends the old one

    def authenticate_refresh_token(self, refresh_token: str) -> RefreshRecord | None:
        client = self.request.client
        found = store.find_refresh(refresh_token, client.get_client_id())
        if found.token is None or found.grant is None:
            return None
        wanted = _resource_param()
        if wanted is not None and wanted.rstrip("/") != found.grant.resource:
            raise InvalidTargetError(description="resource differs from the grant's")
        return RefreshRecord(found.token, found.grant)

    def authenticate_user(self, refresh_token: RefreshRecord) -> User | None:
        return db.session.get(User, refresh_token.grant.user_id)

    def revoke_old_credential(self, refresh_token: RefreshRecord) -> None:
        pass  # spent in save_token, in the same transaction as its successor


def save_token(token: dict[str, Any], req: Any) -> None:
    try:
        if req.payload.grant_type == "authorization_code":
            store.exchange_code(req.authorization_code.row, token["access_token"],
                                token["refresh_token"])
        else:
            record: RefreshRecord = req.refresh_token
            store.rotate(record.row, record.grant, token["access_token"],
                         token["refresh_token"], token.get("scope"))
    except store.Spent:
        db.session.rollback()
        raise InvalidGrantError("this code or refresh token was already used") from None
    db.session.commit()


def _generate(grant_type: str, client: Client, user: User | None = None,
              scope: str | None = None, expires_in: int | None = None,
              include_refresh_token: bool = True) -> dict[str, Any]:
    return {"token_type": "Bearer", "access_token": store.ACCESS_PREFIX + store.new_secret(),
            "refresh_token": store.new_secret(), "scope": scope or "",
            "expires_in": int(store.ACCESS_TTL.total_seconds())}


# -- endpoints -------------------------------------------------------------------------------

class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> GrantRecord | None:
        grant = store.grant_of_token(token_string)
        return GrantRecord(grant) if grant is not None else None

    def revoke_token(self, token: GrantRecord, req: Any) -> None:
        # One grant is one sign-in: revoking either of its tokens ends it (RFC 7009 §2.1 lets
        # the server revoke the related tokens too).
        store.revoke_grant(token.grant.id, "revoked_by_client")
        db.session.commit()


# What one registration may hold: an MCP client names itself and one or two redirect URIs.
MAX_REGISTRATION_BYTES = 16 * 1024
MAX_NAME = 200
MAX_REDIRECT_URIS = 10
MAX_TEXT = 2048  # any other string: a URI, a scope, a contact
MAX_LIST = 10  # any other list: contacts, grant types…


def _bounded(metadata: dict[str, Any]) -> None:
    """InvalidClientMetadataError (or InvalidRedirectURIError) for a registration larger than
    any client needs (RFC 7591 §3.2.2 lets the server refuse metadata values)."""
    name = metadata.get("client_name")
    if isinstance(name, str) and len(name) > MAX_NAME:
        raise InvalidClientMetadataError(f"client_name is longer than {MAX_NAME} characters")
    uris = metadata.get("redirect_uris")
    if isinstance(uris, list) and len(uris) > MAX_REDIRECT_URIS:
        raise InvalidRedirectURIError(f"at most {MAX_REDIRECT_URIS} redirect_uris")
    for key, value in metadata.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and key != "redirect_uris" and len(value) > MAX_LIST:
            raise InvalidClientMetadataError(f"{key} has more than {MAX_LIST} entries")
        for item in values:
            if isinstance(item, str) and len(item) > MAX_TEXT:
                error = (InvalidRedirectURIError if key == "redirect_uris"
                         else InvalidClientMetadataError)
                raise error(f"a value of {key} is longer than {MAX_TEXT} characters")


class Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, req: Any) -> bool:
        return True  # open registration (RFC 7591 §3): clients then need a person's consent

    def get_server_metadata(self) -> dict[str, Any]:
        return {"grant_types_supported": GRANT_TYPES, "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": AUTH_METHODS}

    def extract_client_metadata(self, req: Any) -> dict[str, Any]:
        data = req.payload.data
        if isinstance(data, dict) and data.get("token_endpoint_auth_method") in (
                None, "client_secret_basic"):
            # We take secrets in the form body only (RFC 7591 §3.2.1 lets us choose).
            data["token_endpoint_auth_method"] = "client_secret_post"
        if isinstance(data, dict):
            _bounded(data)  # before Authlib reads it
        metadata = dict(super().extract_client_metadata(req))
        uris = metadata.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            raise InvalidRedirectURIError("redirect_uris is required")
        for uri in uris:
            parts = urlsplit(uri)
            if parts.fragment or not parts.scheme:
                raise InvalidRedirectURIError(f"redirect URI {uri!r} is not absolute")
            if parts.scheme == "http" and not netpolicy.is_loopback(parts.hostname):
                raise InvalidRedirectURIError(f"redirect URI {uri!r}: http only on loopback")
        return metadata

    def generate_client_info(self, req: Any) -> dict[str, Any]:
        info = dict(super().generate_client_info(req))
        info["client_id"] = f"hmc_{_secrets.token_urlsafe(24)}"
        if req.payload.data.get("token_endpoint_auth_method") == "none":
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        else:
            info["client_secret"] = store.new_secret()
        return info

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any],
                    req: Any) -> Client:
        secret = client_info.get("client_secret")
        store.add_client(client_info["client_id"], client_metadata,
                         tokens.digest(secret) if secret else None)
        db.session.commit()
        return Client(client_info["client_id"], client_metadata)


class Issuer(IssuerParameter):
    def get_issuer(self) -> str:
        return issuer()


def make_server(app: Flask) -> AuthorizationServer:
    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.register_token_generator("default", _generate)
    server.register_grant(CodeGrant, [S256Only(required=True)])
    server.register_grant(RefreshGrant)
    server.register_endpoint(Revocation)
    server.register_endpoint(Registration)
    server.register_extension(Issuer())
    return server
