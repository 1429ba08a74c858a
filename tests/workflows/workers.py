"""Starting real ``bin/worker`` processes against the test database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parents[2]


def start_worker(app: Flask, tmp: Path, name: str, **settings: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKFLOWS_", "LLM_"))}
    env.update({
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "HARMONIC_INSTANCE": str(tmp / "instance"), "SECRET_KEY": "test-secret",
        "HARMONIC_DATA_DIR": str(tmp / "data"), "WORKFLOWS_WORKER": "off",
        "WORKFLOWS_LEASE_SECONDS": "1.5", "WORKFLOWS_POLL_SECONDS": "0.05",
        "WORKFLOWS_RETRY_SECONDS": "0.05", "HARMONIC_WORKER_LOG": "WARNING",
        **settings,
    })
    log = open(tmp / f"{name}.log", "wb")  # noqa: SIM115  (closed with the process)
    return subprocess.Popen([sys.executable, str(ROOT / "bin" / "worker"), "--id", name,
                             "--import", "tests.workflows.probe"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
