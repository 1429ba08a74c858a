"""The shared layer: what web, mcp and the feature packages all need, importing none of them.

- ``identity``: who is asking (``Identity``), a token resolved to an identity, scope checks;
- ``dispatch``: the in-process request into our own routes, as a given identity;
- ``jsonrpc``: the one JSON-RPC 2.0 vocabulary (framing, ids, batches, error objects, codes);
- ``netpolicy``: the loopback predicate, "authentication may be off only on loopback", the
  outbound allow-lists, and which addresses are public;
- ``outbound``: every HTTP call to another server (one deadline for the whole call, a size
  cap, a bound on calls at once, public addresses only where asked);
- ``changes``: change events written to the outbox in the action's own transaction and
  delivered to subscribers after commit;
- ``config``, ``sitemap``, ``tool_catalog``: settings, page rules and MCP tools for code that
  may not import the layers that own them;
- ``secrets_text``: what counts as a secret, for captures and the MCP debug log alike;
- ``url_rules``: URL rules that compile their URL builders when first used.

It sits above ``app.actions``, ``app.services`` and ``app.models`` and below everything else.
"""
