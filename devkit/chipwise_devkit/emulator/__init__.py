"""The in-process AWS emulator (moto server + Chipwise's patches) used by ``chipwise demo`` and the tests.

moto comes with the development kit. Importing this package has no side effects; patches install on ``start()``.
"""

from chipwise_devkit.emulator.server import Emulator, MetricPoint

__all__ = ["Emulator", "MetricPoint"]
