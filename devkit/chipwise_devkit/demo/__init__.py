"""`chipwise demo`: the whole pipeline on an embedded AWS emulator and a SQLite store.

Stages live in ``chipwise_devkit.demo.stages``, one module each, discovered by name order (``10_seed`` runs before
``20_scan``); each module defines ``STAGE = Stage(...)``. A capability adds its stage by adding a module.
"""

from chipwise_devkit.demo.runner import DemoContext, Stage, run_demo

__all__ = ["DemoContext", "Stage", "run_demo"]
