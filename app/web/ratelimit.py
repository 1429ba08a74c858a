"""Per-token rate limits: a token bucket per API token, kept in this process's memory.

Every request that arrives with a Bearer token (pages, actions, ``/mcp``, ``/rpc``,
``/design-model/rpc``) spends one unit from its token's bucket; an empty bucket answers 429 with
``Retry-After``. The bucket refills at ``HARMONIC_RATE_LIMIT`` per minute and holds at most
``HARMONIC_RATE_BURST``; a limit of 0 turns limiting off.

Why memory and not a database row: the check sits on every agent request's hot path, and a
counter row would turn every read into a write (and a lock hot spot under PostgreSQL). The
price is that the limit is per process: with N gunicorn workers a token can spend up to N
times the limit. In-process dispatch (MCP tools calling our own routes) carries a trusted
identity instead of a Bearer header, so one MCP request costs one unit, not one per hop.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from werkzeug.exceptions import TooManyRequests

# Idle buckets are forgotten once this many tokens have one, so memory stays bounded.
MAX_BUCKETS = 10_000


@dataclass
class _Bucket:
    level: float
    stamp: float


class TokenBuckets:
    """Buckets keyed by token id; ``take`` returns 0 when allowed, else seconds to wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[Any, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: Any, per_minute: int, burst: int) -> float:
        if per_minute <= 0:
            return 0.0
        rate = per_minute / 60.0
        capacity = float(max(1, burst))
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= MAX_BUCKETS:
                    self._forget_full(now, rate, capacity)
                bucket = self._buckets[key] = _Bucket(capacity, now)
            bucket.level = min(capacity, bucket.level + (now - bucket.stamp) * rate)
            bucket.stamp = now
            if bucket.level >= 1.0:
                bucket.level -= 1.0
                return 0.0
            return (1.0 - bucket.level) / rate

    def _forget_full(self, now: float, rate: float, capacity: float) -> None:
        # A bucket that has refilled completely holds no information: dropping it is exact.
        for key in [k for k, b in self._buckets.items()
                    if b.level + (now - b.stamp) * rate >= capacity]:
            del self._buckets[key]
        if len(self._buckets) >= MAX_BUCKETS:  # all busy: forget the oldest half
            for key in sorted(self._buckets, key=lambda k: self._buckets[k].stamp)[
                    :MAX_BUCKETS // 2]:
                del self._buckets[key]

    def clear(self) -> None:
        with self._lock:
            self._buckets.clear()


def check(config: Any, buckets: TokenBuckets, token_id: Any) -> None:
    """Spend one request of ``token_id``; TooManyRequests (429, Retry-After) when none is left."""
    per_minute = int(config.get("HARMONIC_RATE_LIMIT") or 0)
    wait = buckets.take(token_id, per_minute, int(config.get("HARMONIC_RATE_BURST") or 1))
    if wait > 0:
        seconds = max(1, math.ceil(wait))
        raise TooManyRequests(f"too many requests for this token ({per_minute} per minute): "
                              f"retry in {seconds} s", retry_after=seconds)
