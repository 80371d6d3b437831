"""Performance harness: `make bench` runs every ``benchmarks/bench_*.py`` module's ``run()``.

Figures are reported as ratios against a baseline measured in the same process and the same run (never as
timed assertions in tests), plus absolute numbers for context.
"""
