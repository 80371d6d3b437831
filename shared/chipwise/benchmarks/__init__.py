"""Benchmark jobs: submit them to the trn/inf AWS Batch queues, and fold their results back into the findings.

``dispatch`` selects migration findings and submits jobs (the ``benchmark_dispatch`` Lambda and ``chipwise
benchmarks submit``); ``results`` records Batch state changes, retries failures and re-prices the recommendation
(the ``benchmark_result`` Lambda and the demo); ``repricing`` prices a measurement; ``jobs`` builds and registers
job definitions and submits jobs. The queues themselves are declared in SAM (``iac/template.yaml``).
"""
