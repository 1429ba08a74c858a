"""One pooled HTTP client per process for the calls the app makes to upstream servers.

``httpx.post(...)`` builds a client (and loads the system's CA bundle into a new TLS context,
about 20 ms) and opens a new connection for every call; the playbook proxy made that the bulk
of its added latency. This client keeps connections alive and is shared by threads. (The
playbook proxy's hottest path, a plain-http upstream, goes one step further with keep-alive
connections of the standard library's client; HTTPS upstreams and job polling come here.) It never
stores cookies, so one upstream's cookie is never sent along with another call, and it never
follows redirects (callers pass every other setting per request). A forked process (gunicorn
worker, bin/worker) makes its own, since a connection must not be shared across processes.
"""

from __future__ import annotations

import os
import threading
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx

_lock = threading.Lock()
_client: httpx.Client | None = None
_pid = 0


def client() -> httpx.Client:
    global _client, _pid
    if _client is None or _pid != os.getpid():
        with _lock:
            if _client is None or _pid != os.getpid():
                no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
                _client = httpx.Client(follow_redirects=False, cookies=no_cookies,
                                       limits=httpx.Limits(max_connections=100,
                                                           max_keepalive_connections=20))
                _pid = os.getpid()
    return _client
