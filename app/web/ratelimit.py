"""Rate limits in three tiers (per token, per person, per studio), kept by the ``limits`` library
in this process's memory or, when ``HARMONIC_RATE_LIMIT_STORAGE`` names one, in Redis shared by
every process and host.

Every request that arrives with a Bearer token (pages, actions, ``/mcp``, ``/rpc``,
``/design-model/rpc``) spends one unit of its token's budget and one of the budget of each
person it is made for (``Identity.made_for``): the person behind the token (an agent's owner,
so all of a person's tokens, agents and connected apps share one budget) and, in a
representation session, its principal (so everyone acting for a person shares theirs too).
A request whose path names a studio (``/studios/<handle>/...``) also spends one unit of that
studio's budget, counted on in-process hops too (an MCP tool calling a studio's page), since
that is how MCP agents reach a studio. An exhausted budget answers 429 with ``Retry-After``.

Each tier is a rate per minute and a burst (``HARMONIC_RATE_LIMIT[_PERSON|_STUDIO]`` and
``HARMONIC_RATE_BURST[_PERSON|_STUDIO]``), kept as a sliding window: at most ``burst`` requests
in any ``burst / rate`` minutes, which allows ``burst`` at once and ``rate`` per minute in the
long run. A rate of 0 turns that tier off.

When the shared storage cannot be reached the request is let through and the failure logged
(once a minute): a Redis outage must not take every agent door down with it.
In-process dispatch carries a trusted identity instead of a Bearer header, so one MCP request
costs its token one unit, not one per hop.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from math import floor
from typing import Any

from limits import RateLimitItemPerSecond
from limits.storage import SlidingWindowCounterSupport, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from werkzeug.exceptions import TooManyRequests

log = logging.getLogger("harmonic.ratelimit")

_STUDIO_PATH = re.compile(r"^/studios/([^/]+)")


@dataclass(frozen=True)
class Tier:
    name: str
    rate_setting: str
    burst_setting: str
    refusal: str  # "too many requests <refusal> (N per minute)"


TOKEN = Tier("token", "HARMONIC_RATE_LIMIT", "HARMONIC_RATE_BURST", "for this token")
PERSON = Tier("person", "HARMONIC_RATE_LIMIT_PERSON", "HARMONIC_RATE_BURST_PERSON",
              "for this person (their tokens, their agents, their apps and everyone acting "
              "for them)")
STUDIO = Tier("studio", "HARMONIC_RATE_LIMIT_STUDIO", "HARMONIC_RATE_BURST_STUDIO",
              "in this studio")
# Per client address, for a door anyone may use without credentials (OAuth registration).
REGISTER = Tier("register", "HARMONIC_RATE_LIMIT_REGISTER", "HARMONIC_RATE_BURST_REGISTER",
                "from this address")


def window(per_minute: int, burst: int) -> RateLimitItemPerSecond:
    """``burst`` requests per ``burst / per_minute`` minutes (at least one second)."""
    burst = max(1, burst)
    return RateLimitItemPerSecond(burst, max(1, round(burst * 60 / per_minute)))


class LocalStorage(Storage, SlidingWindowCounterSupport):
    """The budgets of this process, behind ``limits``' public interface for storages of one's
    own (``Storage`` with ``SlidingWindowCounterSupport``), with its sliding-window arithmetic.

    ``limits``' own in-memory storage sweeps expired counters from a timer thread that a hit
    starts again, so sparse requests each start a thread. Here an expired counter is dropped
    when read, and the rest swept inline at most once a second (it only frees memory). One lock
    makes a window's check and its count one step: no hit is let in and taken back."""

    STORAGE_SCHEME = None  # made directly, never from a URI
    SWEEP_SECONDS = 1.0

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False,
                 **options: float | str | bool) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._counts: dict[str, list[float]] = {}  # key -> [count, when it expires]
        self._lock = threading.Lock()
        self._next_sweep = 0.0

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return ValueError

    def _count(self, key: str, now: float) -> int:
        found = self._counts.get(key)
        return int(found[0]) if found is not None and found[1] > now else 0

    def _add(self, key: str, expiry: float, amount: int, now: float) -> int:
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_SECONDS
            self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
        found = self._counts.get(key)
        if found is None or found[1] <= now:
            found = self._counts[key] = [0, now + expiry]
        found[0] += amount
        return int(found[0])

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        with self._lock:
            return self._add(key, expiry, amount, time.time())

    def get(self, key: str) -> int:
        return self._count(key, time.time())

    def get_expiry(self, key: str) -> float:
        found = self._counts.get(key)
        return found[1] if found is not None else time.time()

    def check(self) -> bool:
        return True

    def reset(self) -> int | None:
        with self._lock:
            count, self._counts = len(self._counts), {}
        return count

    def clear(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)

    @staticmethod
    def _keys(key: str, expiry: int, now: float) -> tuple[str, str]:
        """The previous and the current window's counters of ``key``."""
        return f"{key}/{int((now - expiry) / expiry)}", f"{key}/{int(now / expiry)}"

    def _window(self, key: str, expiry: int, now: float) -> tuple[int, float, int, float, str]:
        previous_key, current_key = self._keys(key, expiry, now)
        previous, current = self._count(previous_key, now), self._count(current_key, now)
        previous_ttl = (1 - (((now - expiry) / expiry) % 1)) * expiry if previous else 0.0
        current_ttl = (1 - ((now / expiry) % 1)) * expiry + expiry
        return previous, previous_ttl, current, current_ttl, current_key

    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int,
                                     amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = time.time()
        with self._lock:
            previous, previous_ttl, current, _ttl, current_key = self._window(key, expiry, now)
            if floor(previous * previous_ttl / expiry + current) + amount > limit:
                return False
            # The counter lives two windows: it is the previous one during the next.
            self._add(current_key, 2 * expiry, amount, now)
            return True

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        with self._lock:
            return self._window(key, expiry, time.time())[:4]

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        for found in self._keys(key, expiry, time.time()):
            self.clear(found)


class Limiter:
    """The budgets of every tier in one storage (``memory://`` or ``redis://...``)."""

    def __init__(self, uri: str = "memory://", prefix: str = "harmonic") -> None:
        self.uri = uri
        self._storage: Any = (LocalStorage() if uri.startswith("memory://")
                              else storage_from_string(uri, key_prefix=prefix))
        self._strategy = SlidingWindowCounterRateLimiter(self._storage)
        self._lock = threading.Lock()
        self._last_warning = 0.0

    def take(self, tier: Tier, key: str, per_minute: int, burst: int) -> float:
        """Spend one unit of ``key``'s budget in ``tier``: 0 when allowed, else seconds to wait."""
        if per_minute <= 0:
            return 0.0
        item = window(per_minute, burst)
        try:
            if self._strategy.hit(item, tier.name, key):
                return 0.0
            stats = self._strategy.get_window_stats(item, tier.name, key)
        except Exception:  # storage unreachable: let the request through (see the docstring)
            self._warn()
            return 0.0
        return max(1.0, stats.reset_time - time.time())

    def _warn(self) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._last_warning < 60:
                return
            self._last_warning = now
        log.exception("rate limit storage %s failed: requests are let through",
                      self.uri.split("@")[-1])

    def clear(self) -> None:
        self._storage.reset()


def limiter_for(config: Any, extensions: dict[str, Any]) -> Limiter:
    """This app's limiter (one per process), made on first use from the settings."""
    limiter = extensions.get("harmonic.ratelimit")
    if limiter is None:
        limiter = extensions.setdefault("harmonic.ratelimit", Limiter(
            config.get("HARMONIC_RATE_LIMIT_STORAGE") or "memory://",
            config.get("HARMONIC_RATE_LIMIT_PREFIX") or "harmonic"))
    return limiter


def studio_of(path: str) -> str | None:
    """The studio handle a request path names, or None."""
    found = _STUDIO_PATH.match(path)
    return found.group(1) if found else None


def _spend(config: Any, limiter: Limiter, tier: Tier, key: str) -> None:
    per_minute = int(config.get(tier.rate_setting) or 0)
    wait = limiter.take(tier, key, per_minute, int(config.get(tier.burst_setting) or 1))
    if wait > 0:
        seconds = max(1, math.ceil(wait))
        raise TooManyRequests(f"too many requests {tier.refusal} ({per_minute} per minute): "
                              f"retry in {seconds} s", retry_after=seconds)


def check_address(config: Any, limiter: Limiter, tier: Tier, address: str | None) -> None:
    """Spend one unit of ``address``'s budget in ``tier``; TooManyRequests when spent."""
    _spend(config, limiter, tier, address or "unknown")


def check(config: Any, limiter: Limiter, identity: Any, path: str, *,
          outer: bool = True) -> None:
    """Spend one unit of every tier this request counts in; TooManyRequests (429, Retry-After)
    when one is spent. ``outer`` is False for in-process hops: only the studio tier counts."""
    if identity is None or identity.token_id is None:
        return
    if outer:
        _spend(config, limiter, TOKEN, str(identity.token_id))
        for person in identity.made_for():
            _spend(config, limiter, PERSON, str(person))
    studio = studio_of(path)
    if studio is not None:
        _spend(config, limiter, STUDIO, studio)
