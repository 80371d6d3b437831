"""After the report: the commitments after the fix (issue 38), as `chipwise commitments` prints them: the EC2
Instance Savings Plan the g6 box's move strands, the Compute plan that follows the trn1 box's move, what to buy,
the Capacity Block priced for its days left, AWS's recommendation (unavailable in the emulator). It advises; the
ledger's totals are unchanged by it."""

from __future__ import annotations

import json
import logging

from chipwise.clock import utcnow
from chipwise.pipeline.commitments import commitments_advice
from chipwise.report.commitments import commitments_document, commitments_lines
from chipwise.store import session_scope
from chipwise_devkit.demo.runner import DemoContext, Stage


def _run(ctx: DemoContext) -> None:
    # AWS's own recommendation asked of the emulator, which does not implement it: the section says "unavailable"
    # (the emulator's own traceback of the unimplemented call is kept off the demo's console)
    logging.disable(logging.ERROR)
    try:
        with session_scope(ctx.database_url) as session:
            result = commitments_advice(session, account_id=ctx.account_id, now=utcnow(), ask_aws=True)
    finally:
        logging.disable(logging.NOTSET)
    ctx.write("commitments.json", json.dumps(commitments_document(result), indent=2) + "\n")
    ctx.write("commitments.txt", "\n".join(commitments_lines(result)) + "\n")
    bought = [p for p in result.purchases if p.purchase is not None]
    ctx.summary.append(
        (
            "Commitments",
            f"{len(result.held)} held; {len(result.stranded)} stranded by a move, {len(result.following)} following "
            f"a move; {len(bought)} to buy; {len(result.lapses)} to let lapse; {len(result.capacity)} held capacity "
            "priced for its days left (commitments.txt; advice only, not in the totals)",
        )
    )


STAGE = Stage("Commitments after the fix: strand, follow, buy, lapse, held capacity", _run)
