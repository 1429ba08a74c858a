"""OAuth 2.1 authorization for remote MCP clients: the app is its own authorization server.

Domain modules: ``store`` (grants, codes, refresh-token families, consents, registered clients;
no Flask), ``cimd`` (Client ID Metadata Documents fetched through the outbound rules, cached).
Adapters: ``server`` (the Authlib authorization server wired to the store), ``web`` (metadata,
authorize/consent, token, register, revoke routes), ``pages`` (connected apps in a person's
settings, with the revoke action). Access tokens are API tokens (``app.services.tokens``).
"""
