"""The top-level commands as a table: each command's module (under ``chipwise.cli``) and the first sentence of its
help, so ``chipwise --help`` lists every command without importing one; a command's module is imported when it
runs or its own help is asked for (:class:`chipwise.cli._help.LazyGroup`).

``tests/unit/cli/test_cli_start.py`` checks the table against what the modules register (names and sentences):
adding a command module means adding its line here."""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    module: str  # chipwise.cli.<module> defines register(app), which adds this command (and maybe others)
    summary: str  # the first sentence of its help, as `chipwise --help` lists it
    also: tuple[str, ...] = ()  # modules that add subcommands to it when imported (imported first)


COMMANDS: dict[str, Entry] = {
    "accounts": Entry("accounts", "The accounts a scheduled scan covers; fan the scans out."),
    "benchmarks": Entry("benchmarks", "Benchmark jobs on trn/inf AWS Batch queues, and what they measured."),
    "bill": Entry(
        "bill",
        "The bill: AWS exports (CUR 2.0, FOCUS 1.0/1.2 with AWS columns, legacy CUR) as the cost source.",
    ),
    "catalog": Entry("catalog", "The instance catalog: types, prices and their sources."),
    "commitments": Entry(
        "commitments",
        "Per account: commitments held (from the bill), what each recommended move strands (or a Compute plan "
        "follows), what to buy after the fixes (a stated percentile, its rate's source), what to let lapse within "
        "90 days, and held capacity priced for its days left.",
    ),
    "db": Entry("db", "The store: create or upgrade the schema, show its state."),
    "drafts": Entry(
        "drafts",
        "Draft a credits application and a partner referral (ACE CreateOpportunity JSON + email) from the "
        "account's spend, workloads and findings; store them, write them to files and queue them to the advisory "
        "address.",
    ),
    "findings": Entry(
        "findings",
        "Findings: where accelerator money leaks, how much, how sure, and what to do.",
        also=("realised", "resources", "rules"),  # findings realised, explain and evaluate
    ),
    "ingest-neuron": Entry(
        "neuron", "Parse neuron-monitor reports and store hourly rollups per instance and runtime (idempotent)."
    ),
    "neuron-agent": Entry(
        "neuron",
        "Ship neuron-monitor reports to CloudWatch or S3 (the host agent; `python -m chipwise.neuron_agent`).",
    ),
    "notify": Entry(
        "notify", "Email and Slack: the daily digest, alerts above the threshold, and the outbox they go through."
    ),
    "plan": Entry(
        "plan", "Make the credits-and-migration plan for an intake file, offline (nothing is stored or sent)."
    ),
    "report": Entry(
        "report",
        "Write the HTML report of a scan: totals (measured apart from estimated), waste by rule and by team, the "
        "trend across scans, utilisation heat-maps of the top findings and the top 200 findings' evidence, with "
        "every finding in a CSV beside it.",
    ),
    "resources": Entry(
        "resources",
        "Every resource of the latest scan (of each account and region) with its one verdict: waste, efficient, "
        "cannot judge, out of scope.",
    ),
    "rules": Entry(
        "rules", "The rules Chipwise runs, with their thresholds (defaults, or as the policy overrides them)."
    ),
    "scan": Entry(
        "scan",
        "Scan an account: inventory, Cost Explorer, CloudWatch and Neuron telemetry into the store, then the rules.",
    ),
    "serve": Entry("serve", "Serve the intake form and API locally (the same handler as the Lambda function)."),
}
