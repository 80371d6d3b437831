"""Fixtures for the notification unit tests (the factories live in notify_factories.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
