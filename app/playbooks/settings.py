"""Operator settings of the playbook proxy, read from app config first, then the environment.

``PLAYBOOK_UPSTREAM``          URL of the JSON-RPC upstream; empty = the embedded design-model
                               server, called in-process
``PLAYBOOK_UPSTREAMS``         allow-list for that URL (comma list; default ``loopback``), same
                               entry forms as the design-model server's allow-list
``PLAYBOOK_TIMEOUT``           seconds per upstream HTTP call (default 10)
``PLAYBOOK_JOB_TIMEOUT``       seconds to follow a queued job to its end (default 60)
``PLAYBOOK_AUTH``              ``off`` lets loopback callers use /teach, /rpc, /replay without a
                               token, only while the app binds a loopback HOST (default on)
``PLAYBOOK_REDACT_PATTERNS``   extra regular expressions whose matches are redacted (comma list)
``PLAYBOOK_VOLATILE``          parameter names made required variables in recipes (comma list;
                               default count, spacing, spacingMm, diameter, barCount)
``PLAYBOOK_CAPTURE_FSYNC``     ``interval`` (default): capture lines reach the disk by a group
                               fsync at most a tenth of a second later, off the request path;
                               ``always``: each line is fsynced before the call answers (several
                               ms per call). A process crash loses no written line either way;
                               see app.playbooks.capture. Any other value means ``always``
``PLAYBOOK_CAPTURE_STORE``     where capture lines live: ``folder`` (default; capture.jsonl in
                               the session folder, which every host must share) or
                               ``database`` (append-only rows; for hosts sharing a database but
                               no disk; exporting gives the same capture.jsonl byte for byte).
                               Any other value means ``folder``
``PLAYBOOK_DRYRUN_METHODS``    write methods of a *remote* upstream known to honour
                               ``dryRun: true`` (comma list; default none), besides those whose
                               params the upstream's own catalog (``rpc.discover``) lists
                               ``dryRun`` for. The embedded server honours it for every write;
                               a remote one may not (RevitMCP rolls back only high-risk
                               methods), so other writes are never sent during a dry run, and
                               a real run holding such a write is refused before any call
                               (its caps could not be checked before writing)
``PLAYBOOK_CAPS``              the caps of a recipe that declares none (comma list of
                               ``maxCreated=N``, ``maxUpdated=N``, ``maxDeleted=N``,
                               ``maxCandidates=N``; default maxCreated=50, maxUpdated=100,
                               maxDeleted=10). Every write step of every replay is held to
                               them, key by key, unless its recipe declares that key in its
                               ``caps`` (which its review shows). An entry that is not a
                               known key with a whole number of at least 0 is ignored: the
                               default stays
``PLAYBOOK_DRYRUN_WINDOW``     seconds a successful dry run stays good for: the first real run
                               of a recipe version with given arguments needs a dry run of the
                               same version and arguments, by the same caller, this recent
                               (default 900, a quarter of an hour)
``PLAYBOOK_TEACHER_REPLAY``    ``on`` (default): the teacher may replay their own captured
                               session's recipe for real before it is approved (after a dry
                               run), as seed 000's quick start does; ``off``: only approved
                               versions replay for real, whoever asks
``PLAYBOOK_TEACH_IDLE``        seconds a teach session may go without a recorded call before it
                               is stopped (default 7200, two hours; ``off`` never): a session
                               whose client went away (a stdio agent that exited) does not
                               stay "teaching" for ever
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.core import netpolicy
from app.core.config import app_config, in_app

DEFAULT_VOLATILE = ("count", "spacing", "spacingMm", "diameter", "barCount")
# Small on purpose: a recipe that needs more says so in its caps, where its review shows it.
DEFAULT_CAPS = (("maxCreated", 50), ("maxUpdated", 100), ("maxDeleted", 10))
CAP_KEYS = ("maxCreated", "maxUpdated", "maxDeleted", "maxCandidates")
NAMES = ("PLAYBOOK_UPSTREAM", "PLAYBOOK_UPSTREAMS", "PLAYBOOK_TIMEOUT", "PLAYBOOK_JOB_TIMEOUT",
         "PLAYBOOK_AUTH", "PLAYBOOK_REDACT_PATTERNS", "PLAYBOOK_VOLATILE",
         "PLAYBOOK_DRYRUN_METHODS", "PLAYBOOK_CAPTURE_FSYNC", "PLAYBOOK_DRYRUN_WINDOW",
         "PLAYBOOK_TEACHER_REPLAY", "PLAYBOOK_TEACH_IDLE", "PLAYBOOK_CAPTURE_STORE",
         "PLAYBOOK_CAPS")


@dataclass(frozen=True)
class Settings:
    upstream: str | None
    allowed: tuple[str, ...]
    timeout: float
    job_timeout: float
    auth: bool
    redact_patterns: tuple[str, ...]
    volatile: tuple[str, ...]
    dryrun_methods: tuple[str, ...]
    data_dir: str
    capture_fsync: str = "interval"
    dryrun_window: float = 900.0
    teacher_replay: bool = True
    teach_idle: float | None = 7200.0  # None: teach sessions never expire
    default_caps: tuple[tuple[str, int], ...] = DEFAULT_CAPS


def _raw(name: str, config: Mapping[str, Any] | None = None) -> str | None:
    config = app_config() if config is None else config
    if config.get(name) not in (None, ""):
        return str(config[name])
    value = os.environ.get(name)
    return value if value not in (None, "") else None


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _seconds(value: str | None, default: float) -> float:
    try:
        return max(0.05, float(value)) if value is not None else default
    except ValueError:
        return default


def current() -> Settings:
    """The settings as the app config and the environment say now (remembered per distinct
    set of raw values: this runs on every proxied and every MCP call, and building one costs
    more than reading the values)."""
    config = app_config()
    data_dir = config["HARMONIC_DATA_DIR"] if in_app() else os.path.abspath(
        os.environ.get("HARMONIC_DATA_DIR") or "instance/data")
    return _build(str(data_dir), *(_raw(name, config) for name in NAMES))


@lru_cache(maxsize=64)  # bounded: tests and operators change settings, rarely
def _build(data_dir: str, *raw: str | None) -> Settings:
    values = dict(zip(NAMES, raw, strict=True))
    return Settings(
        upstream=values["PLAYBOOK_UPSTREAM"],
        allowed=netpolicy.parse_allow_list(values["PLAYBOOK_UPSTREAMS"] or "loopback"),
        timeout=_seconds(values["PLAYBOOK_TIMEOUT"], 10.0),
        job_timeout=_seconds(values["PLAYBOOK_JOB_TIMEOUT"], 60.0),
        auth=(values["PLAYBOOK_AUTH"] or "on").lower() not in ("off", "false", "0"),
        redact_patterns=_split(values["PLAYBOOK_REDACT_PATTERNS"]),
        volatile=_split(values["PLAYBOOK_VOLATILE"]) or DEFAULT_VOLATILE,
        dryrun_methods=_split(values["PLAYBOOK_DRYRUN_METHODS"]),
        data_dir=data_dir,
        capture_fsync=_fsync_mode(values["PLAYBOOK_CAPTURE_FSYNC"]),
        dryrun_window=_seconds(values["PLAYBOOK_DRYRUN_WINDOW"], 900.0),
        teacher_replay=(values["PLAYBOOK_TEACHER_REPLAY"] or "on").lower()
        not in ("off", "false", "0"),
        teach_idle=_idle(values["PLAYBOOK_TEACH_IDLE"]),
        default_caps=_caps(values["PLAYBOOK_CAPS"]),
    )


def _caps(value: str | None) -> tuple[tuple[str, int], ...]:
    """The default caps: the built-in ones overlaid by each well-formed ``key=N`` entry (a
    malformed entry never lifts a cap: the built-in value stays)."""
    caps = dict(DEFAULT_CAPS)
    for entry in _split(value):
        key, _, number = (part.strip() for part in entry.partition("="))
        if key in CAP_KEYS and number.isdigit():
            caps[key] = int(number)
    return tuple((key, caps[key]) for key in CAP_KEYS if key in caps)


def _idle(value: str | None) -> float | None:
    if value is not None and value.strip().lower() in ("off", "false", "never", "0"):
        return None
    return _seconds(value, 7200.0)


def _fsync_mode(value: str | None) -> str:
    # A misspelt value must not weaken durability: anything but "interval" fsyncs every line.
    return "interval" if (value or "interval").strip().lower() == "interval" else "always"
