"""The README documents every setting the code reads (config.SETTINGS is the one list)."""

from pathlib import Path

from config import SETTINGS


def test_every_setting_is_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    missing = [s.name for s in SETTINGS if f"| `{s.name}` |" not in readme]
    assert missing == []
    assert "bin/dev" in readme and "bin/test" in readme
