"""The in-process AWS emulator (moto server + Chipwise's patches) used by ``chipwise demo`` and the tests.

Needs the ``demo`` extra (moto). Importing this package has no side effects; patches install on ``start()``.
"""

from chipwise.emulator.server import Emulator, MetricPoint

__all__ = ["Emulator", "MetricPoint"]
