"""Settings read from the environment: a value that cannot be used is refused by name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import SettingError, build_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["HARMONIC_DB_POOL_SIZE", "HARMONIC_DB_MAX_OVERFLOW",
                                  "HARMONIC_MAX_BODY", "HARMONIC_RATE_LIMIT"])
@pytest.mark.parametrize("value", ["abc", "1.5", "-3"])
def test_a_bad_number_names_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        name: str, value: str) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingError) as caught:
        build_config(str(tmp_path))
    assert name in str(caught.value) and repr(value) in str(caught.value)


def test_good_numbers_reach_the_pool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    monkeypatch.setenv("HARMONIC_DB_POOL_SIZE", " 7 ")
    options = build_config(str(tmp_path))["SQLALCHEMY_ENGINE_OPTIONS"]
    assert options["pool_size"] == 7 and options["max_overflow"] == 10


def test_the_wsgi_entry_point_exits_with_the_message_not_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "HARMONIC_INSTANCE": str(tmp_path),
           "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/test",
           "HARMONIC_DB_POOL_SIZE": "lots"}
    done = subprocess.run([sys.executable, "-c", "import wsgi"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "HARMONIC_DB_POOL_SIZE must be a whole number, not 'lots'" in done.stderr
    assert "Traceback" not in done.stderr
