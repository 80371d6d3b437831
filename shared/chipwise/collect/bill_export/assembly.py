"""From the query's aggregated rows to a billing period: resource-days (to a sink in batches as they come, or kept
when there is none), per-account/service totals, commitments (with coverage of accelerator hours and utilisation,
summed as rows pass), and what no resource carries. Each row arrives checked by the query (its lines, the lengths
its group carries, each of its sums within ±1e12: :mod:`.validation`) and is checked again for what is cheap here
(a day outside the period, an account id longer than the store keeps); what is summed here across rows
(commitments, service totals, what no resource carries) is checked when the period is finished: a failed check
rejects the export, whatever the engine."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from chipwise.catalog import platform_of
from chipwise.collect.bill_export.errors import BillError
from chipwise.collect.bill_export.query import ROW_COLUMNS, TERMS
from chipwise.collect.bill_export.validation import check_amount, check_payers
from chipwise.collect.costs import describe_usage_type
from chipwise.models.bill import BillPeriod, Commitment, PeriodSink, Pricing, ResourceCost, ServiceCost, Unattributed

USAGE_KINDS: frozenset[str] = frozenset({"on_demand", "spot", "savings_plan", "reservation"})
REASONS = {
    "commitment_unused": "a Savings Plan's or reservation's unused commitment: the commitment's cost, no resource's",
    "credit": "credits apply to the bill, not to a resource",
    "refund": "refunds apply to the bill, not to a resource",
    "tax": "tax is kept apart from resource costs",
    "fee": "a fee with no resource (support, subscriptions)",
    "upfront_fee": "an upfront commitment fee: already inside the covered usage's effective cost",
    "other": "a line item type that is no resource's usage",
    "no_resource": "usage without a resource id",
}
SINK_BATCH = 5_000  # resource-days handed to the sink at a time
NUMBERS_KEPT = 8_192  # amount texts whose Decimal is kept (a bounded cache: memory flat in the bill's size)

# Positions of the result columns in a record (the query's SELECT order).
(
    _PAYER, _ACCOUNT, _REGION, _DAY, _RESOURCE, _PARENT, _SERVICE, _USAGE_TYPE, _KIND, _ARN, _SCOPE, _EFFECTIVE,
    _BILLED, _LIST_COST, _LIST_RATE, _HOURS, _COMMITMENT_TOTAL, _TAGS, _LINE_ITEMS, _REJECTED,
) = range(len(ROW_COLUMNS))  # fmt: skip
_TERMS_AT = len(ROW_COLUMNS)  # a RESULT_COLUMNS record's commitment terms (TERMS' order) start here
_NO_TERMS: tuple[None, ...] = (None,) * len(TERMS)


def _decimal(value: Any) -> Decimal:
    if type(value) is Decimal:  # DuckDB's sums
        return value
    if type(value) is str and value:  # Athena's, as exact decimal text
        return Decimal(value)
    if value is None or value == "":
        return Decimal(0)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _day(value: Any) -> date:
    if type(value) is date:  # DuckDB's
        return value
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def parse_tags(value: Any) -> dict[str, str]:
    """A map column as a dict, as DuckDB's ``to_json`` writes it (``{"k":"v"}``) or as Athena prints it
    (``{k=v, k2=v2}``)."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items() if v is not None and v != ""}
    text = str(value).strip()
    if text.startswith('{"'):  # DuckDB's to_json
        try:
            found_json = json.loads(text)
        except ValueError:
            found_json = None
        if isinstance(found_json, dict):
            return parse_tags(found_json)
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    found: dict[str, str] = {}
    for part in text.split(", "):
        key, sep, item = part.partition("=")
        if sep and key.strip() and item.strip():
            found[key.strip()] = item.strip()
    return found


def _end_date(value: str) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def _accelerator(instance_type: str | None) -> bool:
    platform = platform_of(instance_type) if instance_type else None
    return platform is not None and platform not in ("cpu", "other")


_PRICING: dict[str, Pricing] = {"on_demand": "on_demand", "spot": "spot", "savings_plan": "savings_plan",
                                "reservation": "reservation"}  # fmt: skip


def _month_bounds(period: str) -> tuple[date, date]:
    start = date.fromisoformat(f"{period}-01")
    return start, date(start.year + start.month // 12, start.month % 12 + 1, 1)


class Assembler:
    """Adds the query's records to a billing period. Per-row work is only what the row itself carries: the usage
    type's instance type, a tag set and an amount's text are parsed once per distinct value (the caches; the
    amounts' bounded), sums arrive as Decimals or their exact text.
    With a sink, resource-days leave in batches (the sink's ``begin`` first); without, they stay in the period."""

    def __init__(self, result: BillPeriod, sink: PeriodSink | None = None, where: str = "") -> None:
        self.result = result
        self.sink = sink
        self.where = where or result.manifest_uri
        self.batch: list[ResourceCost] = []
        self.begun = False
        self.period_bounds = _month_bounds(result.billing_period)
        self.payers: set[str] = set()
        self.unattributed: dict[tuple[str, str, str], Decimal] = defaultdict(Decimal)
        self.services: dict[tuple[str, str, str], list[Any]] = {}
        self.commitments: dict[str, dict[str, Any]] = {}
        self.hours_by_account: dict[str, Decimal] = defaultdict(Decimal)
        self.covered: dict[str, Decimal] = defaultdict(Decimal)
        self.shared_tags: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}  # one dict per distinct tag set
        self.tags_seen: dict[Any, dict[str, str]] = {}  # the raw value (JSON or Athena's text) → that dict
        self.instance_types: dict[str, tuple[str | None, bool]] = {}
        self.numbers: dict[Any, Decimal] = {}  # an amount's text → its Decimal (:meth:`_amount`)
        self.terms: Mapping[str, Sequence[Any]] | None = None  # set: rows carry no terms (ROW_COLUMNS)

    def set_terms(self, terms: Mapping[str, Sequence[Any]]) -> None:
        """Each commitment's terms (ARN → the values of ``TERMS``), given once before the rows: the rows that
        follow are ``ROW_COLUMNS`` (DuckDB's); without, each row carries its commitment's terms (Athena's)."""
        self.terms = terms

    def begin(self) -> None:
        """Hand the period's header to the sink (once the export is validated: nothing is stored before)."""
        if self.sink is not None and not self.begun:
            self.sink.begin(self.result)
        self.begun = True

    def add(self, r: Sequence[Any]) -> None:
        if r[_REJECTED]:
            raise BillError(f"{self.where}: column {r[_REJECTED]} (export rejected, nothing stored)")
        kind = r[_KIND] or ""
        counted = r[_LINE_ITEMS]
        self.result.line_items += counted if type(counted) is int else int(counted or 0)
        payer = r[_PAYER]
        if payer and payer not in self.payers:
            self.payers.add(str(payer))
        if kind == "negation":  # cancels the covered usage's unblended cost: nobody's effective cost
            return
        account = r[_ACCOUNT] or ""
        if len(account) > 12:
            raise BillError(f"{self.where}: account id {account[:20]}... longer than 12 characters (export rejected)")
        effective = r[_EFFECTIVE]  # each sum is within ±1e12: the query's group check
        if (found := self.numbers.get(effective)) is None:
            found = self._amount(effective)
        effective = found
        arn = r[_ARN] or ""
        if arn and arn not in self.commitments:  # its terms: once per commitment
            self._commitment_terms(r, arn, account)
        scope = r[_SCOPE] or ""
        if kind in USAGE_KINDS and scope == "resource":
            self._resource(r, kind, account, effective, arn)
            return
        if kind in USAGE_KINDS and scope == "service":
            self._service(r, account, effective, arn)
            return
        if kind == "commitment_unused" and arn:
            entry = self.commitments[arn]
            total_commitment = _decimal(r[_COMMITMENT_TOTAL])
            entry["unused"] += effective
            entry["total"] += total_commitment
            entry["fee_hours"] += _decimal(r[_HOURS]) if total_commitment else 0
        category = "no_resource" if kind in USAGE_KINDS else kind
        if effective:
            self.unattributed[(account, _text(r[_REGION]), category)] += effective

    def _commitment_terms(self, r: Sequence[Any], arn: str, account: str) -> None:
        entry = self.commitments[arn] = _commitment_entry(account)
        values = r[_TERMS_AT : _TERMS_AT + len(TERMS)] if self.terms is None else self.terms.get(arn, _NO_TERMS)
        for key, value in zip(("offering", "family", "end", "start", "region", "reserved"), values, strict=True):
            entry[key] = _text(value)

    def _service(self, r: Sequence[Any], account: str, effective: Decimal, arn: str) -> None:
        """A resource Chipwise does not inventory: into its account, region and service's total."""
        total = self.services.setdefault((account, _text(r[_REGION]), _text(r[_SERVICE])), [Decimal(0), 0])
        total[0] += effective
        total[1] += int(r[_LINE_ITEMS] or 0)
        if arn:
            self.commitments[arn]["used"] += effective
            self.commitments[arn]["accounts"].add(account)

    def finish(self) -> BillPeriod:
        """The period with what no resource carries, the service totals and the commitments (once every record
        is added); the last batch goes to the sink."""
        result = self.result
        if self.payers or not result.payer_account_id:
            result.payer_account_id = check_payers(sorted(self.payers), self.where)
        self.begin()
        self._flush()
        result.unattributed = [
            Unattributed(account, region, category, REASONS.get(category, REASONS["other"]),
                         check_amount(amount, f"{self.where}: account {account} {category}"))
            for (account, region, category), amount in sorted(self.unattributed.items())
        ]  # fmt: skip
        result.service_costs = [
            ServiceCost(account, region, service, check_amount(total, f"{self.where}: {account} {service}"), count)
            for (account, region, service), (total, count) in sorted(self.services.items())
        ]
        result.commitments = self._commitments()
        return result

    def _resource(self, r: Sequence[Any], kind: str, account: str, effective: Decimal, arn: str) -> None:
        usage_type = r[_USAGE_TYPE] or ""
        day = r[_DAY]
        if type(day) is not date:  # DuckDB's is
            day = _day(day)
        if not self.period_bounds[0] <= day < self.period_bounds[1]:
            raise BillError(f"{self.where}: usage on {day}, outside the billing period (export rejected)")
        instance_type, accelerator = self.instance_types.get(usage_type) or self._instance_type(usage_type)
        numbers = self.numbers
        billed, list_cost, hours, rate = r[_BILLED], r[_LIST_COST], r[_HOURS], r[_LIST_RATE]
        if (found := numbers.get(billed)) is None:
            found = self._amount(billed)
        billed = found
        if (found := numbers.get(list_cost)) is None:
            found = self._amount(list_cost)
        list_cost = found
        if (found := numbers.get(hours)) is None:
            found = self._amount(hours)
        hours = found
        rate = found if (found := numbers.get(rate)) is not None else self._rate(rate)
        raw_tags = r[_TAGS]
        tags = self.tags_seen.get(raw_tags) if raw_tags is None or type(raw_tags) is str else None
        parent = r[_PARENT] or None
        # positional, in ResourceCost's field order (with keywords its construction took 2.6 times as long)
        cost = ResourceCost(account, r[_REGION] or "", day, r[_RESOURCE], r[_SERVICE] or "", usage_type,
                            instance_type, _PRICING[kind], effective, billed, list_cost, rate, hours, arn or None,
                            parent, tags if tags is not None else self._tags(raw_tags))  # fmt: skip
        if parent is None:
            if accelerator:
                self.hours_by_account[account] += hours
                if arn:
                    self.covered[arn] += hours
            if arn:
                entry = self.commitments[arn]
                entry["used"] += effective
                entry["covered_list"] += list_cost
                entry["covered_hours"] += hours
                entry["usage_region"] = entry.get("usage_region") or cost.region
                entry["accounts"].add(account)
        if self.sink is None:
            self.result.resources.append(cost)
            return
        batch = self.batch
        batch.append(cost)
        if len(batch) >= SINK_BATCH:
            self._flush()

    def _rate(self, value: Any) -> Decimal | None:
        if type(value) is str and value:
            return self._amount(value)
        if type(value) is Decimal:
            return value
        return None if value is None or value == "" else _decimal(value)

    def _amount(self, value: Any) -> Decimal:
        """An amount as a Decimal: the same text, the same (immutable) Decimal, for the first
        :data:`NUMBERS_KEPT` texts seen (a bill's rates, hours and many of its costs repeat on many rows)."""
        if type(value) is not str or not value:
            return _decimal(value)
        found = Decimal(value)
        if len(self.numbers) < NUMBERS_KEPT:
            self.numbers[value] = found
        return found

    def _flush(self) -> None:
        if self.sink is not None and self.batch:
            self.begin()
            self.sink.resources(self.batch)
            self.batch = []

    def _instance_type(self, usage_type: str) -> tuple[str | None, bool]:
        found = self.instance_types.get(usage_type)
        if found is None:
            instance_type = describe_usage_type(usage_type)[1] if usage_type else None
            found = self.instance_types[usage_type] = (instance_type, _accelerator(instance_type))
        return found

    def _tags(self, value: Any) -> dict[str, str]:
        """The same dict for the same tags (a resource's lines all carry its tags: one copy, not one per day)."""
        key = value if value is None or type(value) is str else tuple(sorted(parse_tags(value).items()))
        found = self.tags_seen.get(key)
        if found is None:
            tags = parse_tags(value)
            found = self.tags_seen[key] = self.shared_tags.setdefault(tuple(sorted(tags.items())), tags)
        return found

    def _commitments(self) -> list[Commitment]:
        commitments = []
        for arn, entry in sorted(self.commitments.items()):
            hourly = (
                (entry["total"] / entry["fee_hours"]).quantize(Decimal("0.0001")) if entry["fee_hours"] > 0 else None
            )
            hours, reserved = entry["covered_hours"], str(entry.get("reserved") or "")
            accounts = entry["accounts"] or {entry["account"]}
            commitments.append(
                Commitment(
                    arn=arn,
                    account_id=str(entry["account"]),
                    kind="savings_plan" if ":savingsplan/" in arn else "reservation",
                    offering_type=entry.get("offering") or None,
                    family=entry.get("family") or None,
                    hourly_commitment=hourly,
                    end_date=_end_date(str(entry.get("end") or "")),
                    start_date=_end_date(str(entry.get("start") or "")),
                    region=entry.get("region") or entry.get("usage_region") or None,
                    reserved_count=int(Decimal(reserved)) if reserved.replace(".", "", 1).isdigit() else None,
                    covered_on_demand_cost=entry["covered_list"],
                    effective_rate=(entry["used"] / hours).quantize(Decimal("0.000001")) if hours > 0 else None,
                    used_cost=check_amount(entry["used"], f"{self.where}: {arn} used"),
                    unused_cost=check_amount(entry["unused"], f"{self.where}: {arn} unused"),
                    covered_accelerator_hours=self.covered.get(arn, Decimal(0)),
                    accelerator_hours=sum((self.hours_by_account[a] for a in accounts), Decimal(0)),
                )
            )
        return commitments


def _commitment_entry(account: str) -> dict[str, Any]:
    zero = Decimal(0)
    return {"accounts": set(), "used": zero, "unused": zero, "total": zero, "fee_hours": zero, "account": account,
            "covered_list": zero, "covered_hours": zero}  # fmt: skip
