"""Settings for Harmonic, read from the environment with sane defaults.

Every setting the app reads is listed in ``SETTINGS`` so the README table and the code
cannot disagree about names or defaults.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | None
    description: str


SETTINGS: tuple[Setting, ...] = (
    Setting("DATABASE_URL", None, "SQLAlchemy URL; default sqlite:///<instance>/harmonic.db"),
    Setting("SECRET_KEY", None, "session signing key; generated once into <instance>/secret_key"),
    Setting("HARMONIC_DATA_DIR", None, "capture logs and files; default <instance>/data"),
    Setting("HARMONIC_INSTANCE", None, "the instance folder; default ./instance"),
    Setting("HARMONIC_BASE_URL", None,
            "the public URL of this app (scheme://host[:port]): the OAuth issuer and every "
            "absolute URL it writes; default http://HOST:PORT (127.0.0.1 for a bind to every "
            "address)"),
    Setting("HOST", "127.0.0.1", "address bin/dev and bin/serve bind to"),
    Setting("PORT", "5000", "port bin/dev and bin/serve bind to"),
    Setting("HARMONIC_WORKERS", "2", "gunicorn worker processes bin/serve starts"),
    Setting("HARMONIC_THREADS", "8", "threads per worker (requests served at once by each)"),
    Setting("HARMONIC_RUNNING", "2", "requests of one process that run at once; another waits "
                                     "for one of them to end, up to HARMONIC_RUN_WAIT_MS "
                                     "(0: all of HARMONIC_THREADS at once)"),
    Setting("HARMONIC_RUN_WAIT_MS", "10", "milliseconds a request waits its turn before it "
                                          "runs anyway"),
    Setting("HARMONIC_TIMEOUT", "60", "seconds a silent worker lives before it is replaced"),
    Setting("HARMONIC_GRACEFUL_TIMEOUT", "30", "seconds to finish requests on stop or reload"),
    Setting("HARMONIC_KEEPALIVE", "5", "seconds an idle client connection stays open"),
    Setting("HARMONIC_ACCESS_LOG", "-", "bin/serve's access log: a file, '-' (stdout) or 'off'"),
    Setting("HARMONIC_DB_POOL_SIZE", "5", "database connections each process keeps open"),
    Setting("HARMONIC_DB_MAX_OVERFLOW", "10", "extra connections a process may open at peaks"),
    Setting("HARMONIC_MAX_BODY", str(1024 * 1024), "largest accepted request body, in bytes"),
    Setting("HARMONIC_RATE_LIMIT", "12000",
            "requests per minute per API token (0 turns this tier off)"),
    Setting("HARMONIC_RATE_BURST", "2000", "requests a token may send at once before the limit"),
    Setting("HARMONIC_RESTORE_DAYS", "30",
            "days a deleted note, comment, decision, commitment or option can be restored"),
    Setting("HARMONIC_STUDIO_DELETE_GRACE_DAYS", "7",
            "days a deleted studio's admins can still restore it"),
    Setting("HARMONIC_RATE_LIMIT_PERSON", "24000",
            "requests per minute per person: all of their tokens, their agents' and their "
            "connected apps', and everyone acting for them in a representation session, "
            "together (0 is off)"),
    Setting("HARMONIC_RATE_BURST_PERSON", "4000", "requests a person may send at once"),
    Setting("HARMONIC_RATE_LIMIT_STUDIO", "60000",
            "requests per minute naming one studio, from every token (0 is off)"),
    Setting("HARMONIC_RATE_BURST_STUDIO", "10000", "requests naming one studio at once"),
    Setting("HARMONIC_RATE_LIMIT_STORAGE", "memory://",
            "where budgets are kept: memory:// (per process) or redis://host:port/db (shared)"),
    Setting("HARMONIC_RATE_LIMIT_PREFIX", "harmonic", "prefix of the budget keys in Redis"),
    Setting("HARMONIC_STREAM_PORT", "", "port of the GET /mcp stream endpoint bin/serve starts "
                                        "(uvicorn); empty: none"),
    Setting("HARMONIC_STREAM_KEEPALIVE", "15", "seconds between keep-alive comments on a stream"),
    Setting("HARMONIC_STREAMS_PER_TOKEN", "8",
            "open GET /mcp streams a token may hold in one stream process (0: no bound)"),
    Setting("HARMONIC_CACHE_SECONDS", "60",
            "seconds a process may keep what it caches, a resolved API token (0 to 3600; 0 "
            "reads it every time); a change through the app reaches every process at once "
            "(the change feed), one made by hand in the database within this time"),
    Setting("HARMONIC_PASSWORD_HASH", "scrypt",
            "how new passwords are hashed: scrypt[:N:r:p] or pbkdf2:sha256[:iterations] "
            "(werkzeug's methods); the default is werkzeug's scrypt, whose cost is the point "
            "of it; a lower cost is for test suites, never for people's passwords"),
    Setting("HARMONIC_MCP_AUTH", "on", "'off' disables the /mcp token (loopback binds only)"),
    Setting("HARMONIC_ALLOWED_ORIGINS", "", "extra Origin values accepted by /mcp (comma list)"),
    Setting("HARMONIC_ALLOWED_HOSTS", "", "extra Host values accepted by /mcp (comma list)"),
    Setting("HARMONIC_RATE_LIMIT_REGISTER", "10",
            "OAuth client registrations per minute from one client address (0 is off)"),
    Setting("HARMONIC_RATE_BURST_REGISTER", "10",
            "OAuth client registrations one address may make at once"),
    Setting("HARMONIC_OUTBOUND_MAX", "16",
            "calls to other servers (webhooks, upstreams, client metadata…) one process makes "
            "at once; one more is refused at once (0: no bound)"),
    Setting("HARMONIC_OAUTH_CLIENT_HOSTS", "",
            "hosts whose OAuth client metadata documents may be fetched even on a private "
            "address; an entry with a scheme (http://127.0.0.1:8123) also admits plain http"),
)


def env(name: str) -> str | None:
    """The environment value of a known setting, falling back to its default."""
    for setting in SETTINGS:
        if setting.name == name:
            value = os.environ.get(name)
            return value if value not in (None, "") else setting.default
    raise KeyError(f"unknown setting {name}")


def _secret_key(instance: Path) -> str:
    """SECRET_KEY from the environment, else one generated once and kept in the instance."""
    configured = os.environ.get("SECRET_KEY")
    if configured:
        return configured
    path = instance / "secret_key"
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_hex(32)
    # Write-then-rename so two processes starting together never read half a key.
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(key)
    os.chmod(tmp, 0o600)
    if not path.exists():
        os.replace(tmp, path)
    else:
        tmp.unlink()
    return path.read_text().strip()


def build_config(instance_path: str, overrides: dict | None = None) -> dict:
    """The Flask config mapping for an app whose instance folder is ``instance_path``."""
    instance = Path(instance_path)
    instance.mkdir(parents=True, exist_ok=True)
    overrides = dict(overrides or {})
    database_url = overrides.pop("DATABASE_URL", None) or env("DATABASE_URL")
    if not database_url:
        database_url = f"sqlite:///{instance / 'harmonic.db'}"
    data_dir = overrides.pop("HARMONIC_DATA_DIR", None) or env("HARMONIC_DATA_DIR")
    config = {
        "SQLALCHEMY_DATABASE_URI": normalize_database_url(database_url),
        "SECRET_KEY": overrides.pop("SECRET_KEY", None) or _secret_key(instance),
        "HARMONIC_DATA_DIR": str(Path(data_dir or instance / "data").resolve()),
        "HARMONIC_BASE_URL": base_url(env("HARMONIC_BASE_URL"), env("HOST"), env("PORT")),
        "MAX_CONTENT_LENGTH": whole_number("HARMONIC_MAX_BODY", 1024 * 1024),
        "HARMONIC_RATE_LIMIT": whole_number("HARMONIC_RATE_LIMIT", 0),
        "HARMONIC_RATE_BURST": whole_number("HARMONIC_RATE_BURST", 1),
        "HARMONIC_RESTORE_DAYS": whole_number("HARMONIC_RESTORE_DAYS", 30),
        "HARMONIC_STUDIO_DELETE_GRACE_DAYS": whole_number("HARMONIC_STUDIO_DELETE_GRACE_DAYS", 7),
        "HARMONIC_RATE_LIMIT_PERSON": whole_number("HARMONIC_RATE_LIMIT_PERSON", 0),
        "HARMONIC_RATE_BURST_PERSON": whole_number("HARMONIC_RATE_BURST_PERSON", 1),
        "HARMONIC_RATE_LIMIT_STUDIO": whole_number("HARMONIC_RATE_LIMIT_STUDIO", 0),
        "HARMONIC_RATE_BURST_STUDIO": whole_number("HARMONIC_RATE_BURST_STUDIO", 1),
        "HARMONIC_RATE_LIMIT_REGISTER": whole_number("HARMONIC_RATE_LIMIT_REGISTER", 10),
        "HARMONIC_RATE_BURST_REGISTER": whole_number("HARMONIC_RATE_BURST_REGISTER", 10),
        "HARMONIC_OUTBOUND_MAX": whole_number("HARMONIC_OUTBOUND_MAX", 16),
        "HARMONIC_RATE_LIMIT_STORAGE": rate_limit_storage(env("HARMONIC_RATE_LIMIT_STORAGE")),
        "HARMONIC_RATE_LIMIT_PREFIX": env("HARMONIC_RATE_LIMIT_PREFIX") or "harmonic",
        "HARMONIC_STREAM_KEEPALIVE": whole_number("HARMONIC_STREAM_KEEPALIVE", 15) or 15,
        "HARMONIC_STREAMS_PER_TOKEN": whole_number("HARMONIC_STREAMS_PER_TOKEN", 8),
        "HARMONIC_MCP_AUTH": (env("HARMONIC_MCP_AUTH") or "on").lower() != "off",
        "HARMONIC_CACHE_SECONDS": copy_seconds(
            "HARMONIC_CACHE_SECONDS", env("HARMONIC_CACHE_SECONDS"),
            "a token changed by hand in the database must be honoured within the hour"),
        "HARMONIC_PASSWORD_HASH": password_hash_method(env("HARMONIC_PASSWORD_HASH")),
        "HARMONIC_HOST": env("HOST"),
        "HARMONIC_ALLOWED_ORIGINS": _split(env("HARMONIC_ALLOWED_ORIGINS")),
        "HARMONIC_ALLOWED_HOSTS": _split(env("HARMONIC_ALLOWED_HOSTS")),
        "HARMONIC_OAUTH_CLIENT_HOSTS": _split(env("HARMONIC_OAUTH_CLIENT_HOSTS")),
        "SQLALCHEMY_ENGINE_OPTIONS": _engine_options(database_url),
        "WTF_CSRF_TIME_LIMIT": None,
    }
    config.update(overrides)
    config.update(cookie_settings(str(config["HARMONIC_BASE_URL"] or "")))
    return config


def cookie_settings(base: str) -> dict[str, object]:
    """The session and remember-me cookies: never sent along with another site's request that
    changes something (``SameSite=Lax``), never read by scripts, and only over https when the
    app is served over https (``HARMONIC_BASE_URL``)."""
    secure = base.startswith("https://")
    return {"SESSION_COOKIE_SAMESITE": "Lax", "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SECURE": secure, "REMEMBER_COOKIE_SAMESITE": "Lax",
            "REMEMBER_COOKIE_HTTPONLY": True, "REMEMBER_COOKIE_SECURE": secure}


def base_url(configured: str | None, host: str | None, port: str | None) -> str:
    """``HARMONIC_BASE_URL`` checked (an http(s) origin), or the address the app serves on:
    ``http://HOST:PORT``, with 127.0.0.1 for a bind to every address."""
    if configured:
        url = configured.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path \
                or parts.query or parts.fragment or parts.username is not None:
            raise SettingError("HARMONIC_BASE_URL must be an http(s) origin such as "
                               f"https://harmonic.example.org, not {configured!r}")
        return url
    name = (host or "127.0.0.1").strip()
    if name in ("", "0.0.0.0", "::", "[::]"):
        name = "127.0.0.1"
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{(port or '5000').strip()}"


def _engine_options(database_url: str) -> dict:
    """Pool settings. No ``pool_pre_ping``: it costs a round trip per request; connections that
    sat idle are pinged instead (``app.extensions.ping_after_idle``), and one cut while busy
    makes SQLAlchemy replace the pool, so the app recovers from a database restart by itself."""
    options: dict = {}
    if not database_url.startswith("sqlite"):
        options["pool_size"] = whole_number("HARMONIC_DB_POOL_SIZE", 5)
        options["max_overflow"] = whole_number("HARMONIC_DB_MAX_OVERFLOW", 10)
    return options


class SettingError(ValueError):
    """A setting whose value cannot be used; the message names the setting and the value."""


def whole_number(name: str, default: int) -> int:
    """An integer setting, refused with a message that names it rather than a bare int() error."""
    raw = (env(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name} must be a whole number, not {raw!r}") from None
    if value < 0:
        raise SettingError(f"{name} must not be negative, not {raw!r}")
    return value


def copy_seconds(name: str, value: str | None, promise: str) -> float:
    """How long a process may keep its copy of a row (``app.core.kept``) that a change made
    without the app (by hand in the database) would not tell it about: 0 to 3600 seconds, 60
    by default (changes made through the app reach every process through the change feed at
    once; ``promise`` says what the bound is for, for the error)."""
    raw = (value or "60").strip()
    try:
        seconds = float(raw)
    except ValueError:
        raise SettingError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not 0 <= seconds <= 3600:
        raise SettingError(f"{name} must be between 0 and 3600, not {raw!r}: {promise}")
    return seconds


_HASH_METHOD = re.compile(r"scrypt(?::[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*)?"
                          r"|pbkdf2:sha(?:256|512)(?::[1-9][0-9]*)?")


def password_hash_method(value: str | None) -> str:
    """The werkzeug method new passwords are hashed with, refused by name unless it is a salted
    slow hash werkzeug knows (scrypt or pbkdf2, with or without their costs)."""
    method = (value or "scrypt").strip()
    if not _HASH_METHOD.fullmatch(method):
        raise SettingError("HARMONIC_PASSWORD_HASH must be scrypt[:N:r:p] or "
                           f"pbkdf2:sha256[:iterations], not {method!r}")
    return method


def rate_limit_storage(value: str | None) -> str:
    """The rate limit storage URI; refused by name unless it is memory:// or redis(s)://."""
    uri = (value or "memory://").strip()
    if not uri.startswith(("memory://", "redis://", "rediss://", "redis+unix://")):
        raise SettingError("HARMONIC_RATE_LIMIT_STORAGE must be memory:// or a redis:// URL, "
                           f"not {uri!r}")
    return uri


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def normalize_database_url(url: str) -> str:
    """Let users write postgresql:// and still get the psycopg 3 driver we install."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://"):]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return url
