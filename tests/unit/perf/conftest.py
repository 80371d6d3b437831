"""The benchmark package lives at the repository's root (``benchmarks/``), beside ``tests/``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
