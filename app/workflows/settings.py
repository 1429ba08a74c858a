"""The settings workflows read: app config first, then the environment, then a default.

Tests and operators set them either way; the LLM key is read here and nowhere else, so no
code path can copy it into a log or an event by accident.
"""

from __future__ import annotations

from app.core.config import Settings
from config import Setting

SETTINGS = Settings(
    Setting("LLM_GATEWAY_URL", "", "an OpenAI-compatible base URL (…/v1); required by turns"),
    Setting("LLM_API_KEY", "", "Bearer key for the gateway; never logged or stored in events"),
    Setting("LLM_TIMEOUT", "60", "seconds to wait for one chat completion"),
    Setting("WORKFLOWS_HTTP_ALLOW", "",
            "hosts `http` tools may reach (comma list: loopback, host, host:port, origin)"),
    Setting("WORKFLOWS_SQL_URL", "", "database URL `sql` resources read (SELECT only)"),
    Setting("WORKFLOWS_SECRETS", "",
            "names `{{ secrets.<name> }}` may read (comma list); values are redacted everywhere"),
    Setting("WORKFLOWS_SECRET_PROVIDER", "env",
            "where secrets come from: env (the environment variable NAME or its upper case)"),
    Setting("WORKFLOWS_DUCKDB_DIR", "",
            "folder whose files `duckdb` tools may read (nothing else; empty: duckdb is off)"),
    Setting("WORKFLOWS_PYTHON_MODULES", "",
            "modules whose callables `python` tools may name as module:function (comma list)"),
    Setting("WORKFLOWS_PYTHON_INLINE", "off",
            "on: `python` steps may run the code a noetl.io/v2 document writes (in a separate "
            "process, limited as below); off: they are refused"),
    Setting("WORKFLOWS_PYTHON_SECONDS", "30", "time limit of one inline python task (wall "
                                              "clock and CPU)"),
    Setting("WORKFLOWS_PYTHON_MEMORY_MB", "512", "memory limit of one inline python task"),
    Setting("WORKFLOWS_ADMINS", "",
            "handles of the people who may set a workflow's privileged inputs (declared as SQL, "
            "or naming a credential) when they start a run (comma list)"),
    Setting("WORKFLOWS_SQL_SECONDS", "30",
            "statement timeout of noetl.io/v2 `postgres` tasks"),
    Setting("WORKFLOWS_DIR", "examples/workflows", "folder of playbooks listed at /workflows"),
    Setting("WORKFLOWS_LEASE_SECONDS", "30", "how long a leased job is a worker's"),
    Setting("WORKFLOWS_MAX_ATTEMPTS", "3", "attempts before a failing job is dead"),
    Setting("WORKFLOWS_RETRY_SECONDS", "2", "first retry delay; doubles per attempt"),
    Setting("WORKFLOWS_BATCH", "16",
            "jobs a worker leases in one transaction while they are no-op steps"),
    Setting("WORKFLOWS_POLL_SECONDS", "0.5", "how often an idle worker looks for jobs"),
    Setting("WORKFLOWS_WORKER", "auto",
            "in-process worker thread: auto (on for SQLite, off for PostgreSQL), on, off"),
    Setting("WORKFLOWS_CRASH_PAUSE", "0",
            "fault testing: seconds a worker waits after a side effect, before recording it"),
)
get, get_float, get_int, get_list = (SETTINGS.get, SETTINGS.get_float, SETTINGS.get_int,
                                     SETTINGS.get_list)

INLINE_PYTHON_HOW = ("its operator turns it on with WORKFLOWS_PYTHON_INLINE=on (each task then "
                     "runs in a separate process limited by WORKFLOWS_PYTHON_SECONDS and "
                     "WORKFLOWS_PYTHON_MEMORY_MB, reaching only the hosts of "
                     "WORKFLOWS_HTTP_ALLOW)")


def inline_python() -> bool:
    return get("WORKFLOWS_PYTHON_INLINE").strip().lower() in ("on", "1", "true", "yes")
