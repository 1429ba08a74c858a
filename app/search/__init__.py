"""Search: full text over what a person may see, on every door.

Domain modules: ``documents`` (what each kind of item contributes to the index), ``index``
(writing it, in the same transaction as the item: a session hook; and rebuilding it),
``query`` (the query syntax: words, "phrases" and ``kind: status: author: studio:`` filters),
``engine`` (ranked, highlighted, paginated results: SQLite FTS5 or PostgreSQL full text, by
dialect), ``highlight`` (snippet markers to escaped HTML or text).
Adapters: ``web`` (wiring), ``pages`` (``/search``, ``/studios/<h>/search``), ``mcp_tools``
(the ``search`` tool), ``cli`` (``flask search-reindex``).
"""
