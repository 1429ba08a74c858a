"""WSGI entry point: ``gunicorn wsgi:app``."""

import sys

from app import create_app
from config import SettingError

try:
    app = create_app()
except SettingError as error:
    # A bad setting is the operator's to fix: say which, without a traceback to dig through.
    sys.exit(f"harmonic: {error}")
