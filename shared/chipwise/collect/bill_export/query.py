"""The one logical query, for DuckDB and for Athena: an export's lines in canonical form (one expression per
canonical column, per format), then summed per account, region, day, resource, pricing and commitment.

Effective (amortised) cost, written once here:

- ``Usage`` (on-demand, Spot): the unblended cost;
- ``SavingsPlanCoveredUsage``: the Savings Plan effective cost; its ``SavingsPlanNegation`` is excluded (it only
  cancels the covered usage's unblended cost);
- ``DiscountedUsage``: the reservation effective cost;
- ``SavingsPlanRecurringFee``: only its unused part (total commitment to date − used commitment) counts, as the
  commitment's cost, never a resource's; ``RIFee`` likewise (unused amortised upfront + unused recurring fee);
  upfront fees are already inside the covered usage's effective cost (``SavingsPlanUpfrontFee``, RI ``Fee``): 0;
- ``Credit``, ``Refund``, ``Tax`` and other fees: kept apart, with a reason, never a resource's cost.

FOCUS (1.0 and 1.2) states the same thing in its own columns: ``EffectiveCost`` of ``ChargeCategory`` Usage
(commitment ``Used`` → Savings Plan or reservation; ``Unused`` → the commitment's waste), ``Purchase`` 0, Tax and
Credit apart; only rows whose ``ProviderName`` is AWS are read.

Resource-days are kept only for the compute Chipwise inventories (EC2 instances, SageMaker endpoints, jobs and
notebooks, EKS pods' split shares): every other resource's usage is summed per account, region and service in the
engine (``scope`` = ``service``), so the result grows with the fleet, not with the bill."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from chipwise.collect.bill_export.formats import FOCUS_TABLES, MAP, NUMERIC, TEXT, TIME, export_format
from chipwise.models.bill import BillTable, DataFormat

Dialect = Literal["duckdb", "athena"]
MONEY = "DECIMAL(38,10)"
AWS_PROVIDER = "AWS"

# The export columns the query reads, by format family, with the type family each must have.
CUR_COLUMNS: dict[str, str] = {
    "bill_payer_account_id": TEXT,
    "line_item_usage_account_id": TEXT,
    "product_region_code": TEXT,
    "line_item_usage_start_date": TIME,
    "line_item_resource_id": TEXT,
    "line_item_product_code": TEXT,
    "line_item_usage_type": TEXT,
    "line_item_line_item_type": TEXT,
    "pricing_term": TEXT,
    "line_item_unblended_cost": NUMERIC,
    "line_item_usage_amount": NUMERIC,
    "pricing_public_on_demand_cost": NUMERIC,
    "pricing_public_on_demand_rate": TEXT,  # a string in CUR (the rate as AWS prints it)
    "savings_plan_savings_plan_effective_cost": NUMERIC,
    "savings_plan_total_commitment_to_date": NUMERIC,
    "savings_plan_used_commitment": NUMERIC,
    "savings_plan_savings_plan_a_r_n": TEXT,
    "savings_plan_offering_type": TEXT,
    "savings_plan_instance_type_family": TEXT,
    "savings_plan_end_time": TEXT,
    "reservation_effective_cost": NUMERIC,
    "reservation_unused_amortized_upfront_fee_for_billing_period": NUMERIC,
    "reservation_unused_recurring_fee": NUMERIC,
    "reservation_reservation_a_r_n": TEXT,
    "reservation_end_time": TEXT,
    # the commitment's terms (issue 38): CUR 2.0's (AWS's legacy CUR dictionary, as our data file has it, lacks them)
    "savings_plan_start_time": TEXT,
    "savings_plan_region": TEXT,
    "reservation_start_time": TEXT,
    "reservation_number_of_reservations": TEXT,
}
CUR_2_ONLY: frozenset[str] = frozenset(
    {"savings_plan_start_time", "savings_plan_region", "reservation_start_time", "reservation_number_of_reservations"}
)
# Split cost allocation (opt-in): read when the export has it.
CUR_SPLIT_COLUMNS: dict[str, str] = {
    "split_line_item_parent_resource_id": TEXT,
    "split_line_item_split_cost": NUMERIC,
    "split_line_item_split_usage": NUMERIC,
    "split_line_item_public_on_demand_split_cost": NUMERIC,
}
# A legacy report has a column only once the account has such lines: these must be there, the rest may be absent.
LEGACY_REQUIRED: frozenset[str] = frozenset(
    {
        "bill_payer_account_id",
        "line_item_usage_account_id",
        "line_item_usage_start_date",
        "line_item_resource_id",
        "line_item_product_code",
        "line_item_usage_type",
        "line_item_line_item_type",
        "line_item_unblended_cost",
        "line_item_usage_amount",
    }
)
FOCUS_COLUMNS: dict[str, str] = {
    "BillingAccountId": TEXT,
    "ProviderName": TEXT,
    "SubAccountId": TEXT,
    "RegionId": TEXT,
    "ChargePeriodStart": TIME,
    "ResourceId": TEXT,
    "x_ServiceCode": TEXT,
    "ChargeCategory": TEXT,
    "PricingCategory": TEXT,
    "CommitmentDiscountId": TEXT,
    "CommitmentDiscountStatus": TEXT,
    "CommitmentDiscountType": TEXT,
    "EffectiveCost": NUMERIC,
    "BilledCost": NUMERIC,
    "ListCost": NUMERIC,
    "ListUnitPrice": NUMERIC,
    "ConsumedQuantity": NUMERIC,
}
# The usage type: FOCUS 1.0's AWS column; FOCUS 1.2 moved it into SkuMeter (AWS's migration page).
USAGE_TYPE_COLUMN: dict[str, str] = {"FOCUS_1_0_AWS": "x_UsageType", "FOCUS_1_2_AWS": "SkuMeter"}
TAGS_COLUMN: dict[str, str] = {
    "COST_AND_USAGE_REPORT": "resource_tags",
    "FOCUS_1_0_AWS": "Tags",
    "FOCUS_1_2_AWS": "Tags",
}
# Which columns carry what the validation checks, per family.
DATE_COLUMN = {"cur": "line_item_usage_start_date", "focus": "ChargePeriodStart"}
COST_COLUMN = {"cur": "line_item_unblended_cost", "focus": "EffectiveCost"}
PAYER_COLUMN = {"cur": "bill_payer_account_id", "focus": "BillingAccountId"}


def family(table: BillTable) -> Literal["cur", "focus"]:
    return "focus" if table in FOCUS_TABLES else "cur"


def columns_read(table: BillTable, split: bool) -> dict[str, str]:
    """The export columns the query reads (projection: nothing else is read), with their type family; the tags
    column (a map, or legacy CUR's one column per tag) is apart."""
    if family(table) == "focus":
        return {**FOCUS_COLUMNS, USAGE_TYPE_COLUMN[table]: TEXT}
    columns = {**CUR_COLUMNS, **(CUR_SPLIT_COLUMNS if split else {})}
    return {k: v for k, v in columns.items() if k not in CUR_2_ONLY} if table == "LEGACY_CUR" else columns


def required_columns(table: BillTable) -> dict[str, str]:
    """The columns an export of this format must have (an error names the first one missing)."""
    read = columns_read(table, split=False)
    if table == "LEGACY_CUR":
        return {k: v for k, v in read.items() if k in LEGACY_REQUIRED}
    wanted = dict(read)
    if table in TAGS_COLUMN:
        wanted[TAGS_COLUMN[table]] = MAP
    return wanted


def documented(table: BillTable, column: str) -> bool:
    """The column is in AWS's table dictionary of the format (its data file)."""
    fmt = export_format(table)
    if table == "LEGACY_CUR":
        from chipwise.collect.bill_export.formats import legacy_parquet_name

        return column in {legacy_parquet_name(c) for c in fmt.columns}
    return column in fmt.columns


@dataclass(frozen=True)
class QuerySource:
    """What the query reads from: the FROM item, the physical name of each column read (``None``: absent, read as
    NULL), how the tags arrive, the dialect and the data format."""

    table: BillTable
    relation: str
    physical: Mapping[str, str | None]
    tags: str  # an expression: a map (``tags_are_map``) or JSON text, or 'NULL'
    tags_are_map: bool
    dialect: Dialect
    data_format: DataFormat
    split: bool
    filter: str = ""  # Athena's partition filter
    scaled: bool = False  # the amounts are DOUBLE integers of 1e-10 (groups of raw lines summed exactly: .grouped)
    flag_sums: bool = False  # groups: a sum of scaled sums not shown exact is flagged (whether or not scaled)

    def col(self, name: str) -> str:
        found = self.physical.get(name)
        return "NULL" if found is None else _ident(found)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _n(src: QuerySource, column: str) -> str:
    if src.scaled:
        return f"COALESCE({src.col(column)}, 0)"
    return f"COALESCE(CAST({src.col(column)} AS {MONEY}), 0)"


SCALED_EXACT_BELOW = 2**51  # a DOUBLE sum of integers (or of differences of two) below it in absolute sum is exact
GROUPED_EXTRA = ("inexact__", "line_items__", "largest__")  # what the groups carry besides their columns
TO_MONEY = "CAST(CAST(TRY_CAST({0} AS HUGEINT) AS DECIMAL(38,0)) * CAST('0.0000000001' AS DECIMAL(11,10)) AS {1})"


def _s(src: QuerySource, column: str) -> str:
    return f"COALESCE(CAST({src.col(column)} AS VARCHAR), '')"


def _day(src: QuerySource, column: str) -> str:
    """The UTC day of a timestamp column (the DuckDB connection's time zone is UTC; Athena's sessions are UTC)."""
    if src.dialect == "athena":
        return f"CAST({src.col(column)} AS DATE)"
    return f"CAST(CAST({src.col(column)} AS TIMESTAMPTZ) AS DATE)"


def _cur_lines(src: QuerySource) -> dict[str, str]:
    """CUR 2.0 and legacy CUR → the canonical line (the amortised-cost rules of the module docstring)."""
    t, c = "line_item_line_item_type", src.col
    kind = (
        f"CASE {c(t)}"
        f" WHEN 'Usage' THEN CASE WHEN {c('pricing_term')} = 'Spot' OR {c('line_item_usage_type')} LIKE '%SpotUsage%'"
        " THEN 'spot' ELSE 'on_demand' END"
        " WHEN 'SavingsPlanCoveredUsage' THEN 'savings_plan'"
        " WHEN 'DiscountedUsage' THEN 'reservation'"
        " WHEN 'SavingsPlanNegation' THEN 'negation'"
        " WHEN 'SavingsPlanRecurringFee' THEN 'commitment_unused'"
        " WHEN 'RIFee' THEN 'commitment_unused'"
        " WHEN 'SavingsPlanUpfrontFee' THEN 'upfront_fee'"
        f" WHEN 'Fee' THEN CASE WHEN {_s(src, 'reservation_reservation_a_r_n')} <> '' THEN 'upfront_fee' ELSE 'fee' END"
        " WHEN 'Credit' THEN 'credit' WHEN 'Refund' THEN 'refund' WHEN 'Tax' THEN 'tax'"
        " ELSE 'other' END"
    )
    unblended = _n(src, "line_item_unblended_cost")
    effective = (
        f"CASE {c(t)}"
        f" WHEN 'SavingsPlanCoveredUsage' THEN {_n(src, 'savings_plan_savings_plan_effective_cost')}"
        f" WHEN 'DiscountedUsage' THEN {_n(src, 'reservation_effective_cost')}"
        " WHEN 'SavingsPlanNegation' THEN 0"
        f" WHEN 'SavingsPlanRecurringFee' THEN {_n(src, 'savings_plan_total_commitment_to_date')}"
        f" - {_n(src, 'savings_plan_used_commitment')}"
        f" WHEN 'RIFee' THEN {_n(src, 'reservation_unused_amortized_upfront_fee_for_billing_period')}"
        f" + {_n(src, 'reservation_unused_recurring_fee')}"
        " WHEN 'SavingsPlanUpfrontFee' THEN 0"
        f" WHEN 'Fee' THEN CASE WHEN {_s(src, 'reservation_reservation_a_r_n')} <> '' THEN 0 ELSE {unblended} END"
        f" ELSE {unblended} END"
    )
    billed = f"CASE WHEN {c(t)} = 'SavingsPlanCoveredUsage' THEN 0 ELSE {unblended} END"
    sp, ri = _s(src, "savings_plan_savings_plan_a_r_n"), _s(src, "reservation_reservation_a_r_n")
    lines = {
        "payer": _s(src, "bill_payer_account_id"),
        "account_id": _s(src, "line_item_usage_account_id"),
        "region": _s(src, "product_region_code"),
        "day": _day(src, "line_item_usage_start_date"),
        "resource_id": _s(src, "line_item_resource_id"),
        "parent_resource_id": "''",
        "service": _s(src, "line_item_product_code"),
        "usage_type": _s(src, "line_item_usage_type"),
        "kind": kind,
        "commitment_arn": f"CASE WHEN {sp} <> '' THEN {sp} ELSE {ri} END",
        "effective": effective,
        "billed": billed,
        "list_cost": _n(src, "pricing_public_on_demand_cost"),
        "list_rate": f"CAST(NULLIF({_s(src, 'pricing_public_on_demand_rate')}, '') AS {MONEY})",
        "hours": _n(src, "line_item_usage_amount"),
        "commitment_total": (
            f"CASE WHEN {c(t)} = 'SavingsPlanRecurringFee' THEN {_n(src, 'savings_plan_total_commitment_to_date')}"
            " ELSE 0 END"
        ),
        "offering_type": _s(src, "savings_plan_offering_type"),
        "family": _s(src, "savings_plan_instance_type_family"),
        "end_time": f"CASE WHEN {_s(src, 'savings_plan_end_time')} <> '' THEN {_s(src, 'savings_plan_end_time')}"
        f" ELSE {_s(src, 'reservation_end_time')} END",
        "start_time": f"CASE WHEN {_s(src, 'savings_plan_start_time')} <> ''"
        f" THEN {_s(src, 'savings_plan_start_time')} ELSE {_s(src, 'reservation_start_time')} END",
        "commitment_region": _s(src, "savings_plan_region"),
        "reserved_count": _s(src, "reservation_number_of_reservations"),
    }
    if src.split:
        pod = f"{_s(src, 'split_line_item_parent_resource_id')} <> ''"
        split_cost = _n(src, "split_line_item_split_cost")
        lines["parent_resource_id"] = _s(src, "split_line_item_parent_resource_id")
        lines["effective"] = f"CASE WHEN {pod} THEN {split_cost} ELSE {effective} END"
        lines["billed"] = f"CASE WHEN {pod} THEN {split_cost} ELSE {billed} END"
        lines["list_cost"] = (
            f"CASE WHEN {pod} THEN {_n(src, 'split_line_item_public_on_demand_split_cost')}"
            f" ELSE {lines['list_cost']} END"
        )
        lines["hours"] = f"CASE WHEN {pod} THEN {_n(src, 'split_line_item_split_usage')} ELSE {lines['hours']} END"
    return lines


def _focus_lines(src: QuerySource) -> dict[str, str]:
    """FOCUS 1.0 or 1.2 (with AWS columns) → the same canonical line."""
    c = src.col
    usage, status = f"{c('ChargeCategory')} = 'Usage'", c("CommitmentDiscountStatus")
    kind = (
        f"CASE WHEN {usage} AND {status} = 'Unused' THEN 'commitment_unused'"
        f" WHEN {usage} AND {status} = 'Used' AND {c('CommitmentDiscountId')} LIKE '%:savingsplan/%'"
        " THEN 'savings_plan'"
        f" WHEN {usage} AND {status} = 'Used' THEN 'reservation'"
        f" WHEN {usage} AND {c('PricingCategory')} = 'Dynamic' THEN 'spot'"
        f" WHEN {usage} THEN 'on_demand'"
        f" WHEN {c('ChargeCategory')} = 'Purchase' THEN 'upfront_fee'"
        f" WHEN {c('ChargeCategory')} = 'Credit' THEN 'credit' WHEN {c('ChargeCategory')} = 'Tax' THEN 'tax'"
        f" WHEN {c('ChargeCategory')} = 'Adjustment' THEN 'refund' ELSE 'other' END"
    )
    return {
        "payer": _s(src, "BillingAccountId"),
        "account_id": _s(src, "SubAccountId"),
        "region": _s(src, "RegionId"),
        "day": _day(src, "ChargePeriodStart"),
        "resource_id": f"CASE WHEN {status} = 'Unused' THEN '' ELSE {_s(src, 'ResourceId')} END",
        "parent_resource_id": "''",
        "service": _s(src, "x_ServiceCode"),
        "usage_type": _s(src, USAGE_TYPE_COLUMN[src.table]),
        "kind": kind,
        "commitment_arn": _s(src, "CommitmentDiscountId"),
        "effective": _n(src, "EffectiveCost"),
        "billed": _n(src, "BilledCost"),
        "list_cost": _n(src, "ListCost"),
        "list_rate": f"CAST({c('ListUnitPrice')} AS {MONEY})",
        "hours": _n(src, "ConsumedQuantity"),
        "commitment_total": f"CAST(0 AS {MONEY})",
        "offering_type": _s(src, "CommitmentDiscountType"),
        "family": "''",
        "end_time": "''",
        "start_time": "''",
        "commitment_region": "''",
        "reserved_count": "''",
    }


def canonical_lines(src: QuerySource) -> dict[str, str]:
    """The canonical line of the source's format: one expression per canonical column."""
    return _focus_lines(src) if family(src.table) == "focus" else _cur_lines(src)


# The compute Chipwise inventories, as the bill names it: EC2 instances (an id, or an instance ARN), SageMaker
# resources (endpoints, training, processing and transform jobs, notebook instances: ARNs) and Bedrock provisioned
# throughputs (their provisioned-model ARN: a model unit has no public price, its bill is its price); an EKS pod's
# split share names its node as parent.
COMPUTE = (
    "lines.resource_id LIKE 'i-%' OR lines.resource_id LIKE 'arn:aws:ec2:%:instance/%'"
    " OR lines.resource_id LIKE 'arn:aws:sagemaker:%' OR lines.resource_id LIKE 'arn:aws:bedrock:%:provisioned-model/%'"
    " OR lines.resource_id LIKE 'arn:aws:ec2:%:capacity-reservation/%'"  # a reservation's unused hours (UnusedBox)
    " OR lines.parent_resource_id <> ''"
)
USAGE_KINDS_SQL = "('on_demand', 'spot', 'savings_plan', 'reservation')"
GROUP_COLUMNS = (
    "payer",
    "account_id",
    "region",
    "day",
    "resource_id",
    "parent_resource_id",
    "service",
    "usage_type",
    "kind",
    "commitment_arn",
    "scope",
)
TERMS = ("offering_type", "family", "end_time", "start_time", "commitment_region", "reserved_count")
# A row of the query without its commitment's terms (DuckDB sends those once per commitment: :func:`terms_query`)
ROW_COLUMNS = (
    *GROUP_COLUMNS,
    "effective",
    "billed",
    "list_cost",
    "list_rate",
    "hours",
    "commitment_total",
    "tags",
    "line_items",
    "rejected",
)
RESULT_COLUMNS = (*ROW_COLUMNS, *TERMS)  # a row with its commitment's terms (Athena's)
SUMS: Sequence[tuple[str, str]] = (
    ("SUM", "effective"),
    ("SUM", "billed"),
    ("SUM", "list_cost"),
    ("MAX", "list_rate"),
    ("SUM", "hours"),
    ("SUM", "commitment_total"),
)


def logical_query(
    src: QuerySource,
    rejected: str = "''",
    group_rejected: str = "",
    grouped: QuerySource | None = None,
    terms_apart: bool = False,
) -> str:
    """The one query: the source's lines in canonical form (AWS rows only), then summed per account, region, day,
    resource, pricing and commitment for the compute Chipwise inventories, per account, region and service for
    every other resource (``scope``); negations stay as their own rows, at 0, so that every line item read is
    counted. Sums leave as exact decimals (``DECIMAL(38,10)``: DuckDB hands Python ``Decimal`` objects, Athena
    their text).

    What is the same on many lines is not carried through the per-resource-day sums (whose cost grows with every
    column they carry): a resource's tags (any one of its lines' tags: a resource's lines carry its tags) are
    read per resource, a commitment's terms per commitment, each in its own small aggregate, and joined onto the
    sums; tags leave as JSON text (DuckDB) or Athena's printed map (``{k=v, ...}``).

    ``rejected`` says what is wrong with a line ('': nothing; :func:`chipwise.collect.bill_export.validation.
    rejected_expr`): the largest of a group leaves with it, so that the lines are checked in the same pass that
    sums them; ``group_rejected`` (``WHEN <condition> THEN '<column: what>'`` clauses) checks what the sums' groups
    carry once per group (the length of an account id, a region, a commitment's ARN ..., each sum within ±1e12:
    one check per group, not per line).

    ``grouped`` (DuckDB): the lines are read already summed per raw key (:mod:`.grouped`: the columns every
    canonical expression reads, with the UTC day, their amounts summed, ``line_items__`` lines each, a
    ``rejected__`` verdict and an ``inexact__`` flag), so that the canonical expressions run once per group of
    raw lines instead of once per line; the result then carries ``inexact`` last.

    ``terms_apart``: the rows leave without their commitment's terms (:data:`ROW_COLUMNS`; the caller reads them
    once per commitment with :func:`terms_query`) instead of with them, joined on every row (:data:`RESULT_COLUMNS`)."""
    raw = canonical_lines(src)
    terms = {name: raw.pop(name) for name in TERMS}
    lines = raw
    if grouped is not None:
        lines = {name: expr for name, expr in canonical_lines(grouped).items() if name not in TERMS}
    canonical = ",\n  ".join(f"{expr} AS {name}" for name, expr in lines.items())
    conditions = [src.filter] if src.filter else []
    if family(src.table) == "focus":
        conditions.append(f"{src.col('ProviderName')} = '{AWS_PROVIDER}'")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    lines_from = f"{src.relation}{where}"
    counted, flag, flagged = "COUNT(*)", "", ""
    if grouped is not None:
        # a BIGINT, as COUNT(*) is (SUM's HUGEINT takes Python 4 times as long to make an int of)
        lines_from, counted = grouped.relation, "CAST(SUM(line_items__) AS BIGINT)"
        canonical += ",\n  inexact__, line_items__, largest__"
        flag, flagged = ", bool_or(inexact__) AS inexact", ",\n  sums.inexact"
        if grouped.flag_sums:  # each sum of the groups' exact integer sums: exact below 2^53 (see .grouped)
            flag = f", bool_or(inexact__) OR SUM(line_items__) * MAX(largest__) >= {SCALED_EXACT_BELOW} AS inexact"
    keep = f"lines.kind IN {USAGE_KINDS_SQL} AND ({COMPUTE})"
    scoped = {
        "day": f"CASE WHEN {keep} THEN lines.day END",
        "resource_id": f"CASE WHEN {keep} THEN lines.resource_id ELSE '' END",
        "usage_type": f"CASE WHEN {keep} THEN lines.usage_type ELSE '' END",
        "scope": f"CASE WHEN {keep} THEN 'resource' WHEN lines.kind IN {USAGE_KINDS_SQL}"
        " AND lines.resource_id <> '' THEN 'service' ELSE '' END",
    }
    regrouped = ", ".join(
        f"{scoped[name]} AS {name}" if name in scoped else f"lines.{name}"
        for name in (*lines, "scope", "rejected", *(GROUPED_EXTRA if grouped is not None else ()))
    )
    group = ", ".join(GROUP_COLUMNS)
    sums = ", ".join(f"{agg}({name}) AS {name}" for agg, name in SUMS)
    tags_out = "to_json(arbitrary(tags))" if src.tags_are_map and src.dialect == "duckdb" else "arbitrary(tags)"
    # grouped (DuckDB): the sums leave as their exact text (Python makes a Decimal of a string 4 times as fast as
    # DuckDB hands one over), as Athena's do
    as_text = "CAST(sums.{0} AS VARCHAR) AS {0}" if grouped is not None else "sums.{0}"
    from_sums = [f"sums.{name}" for name in GROUP_COLUMNS] + [
        TO_MONEY.format(f"sums.{name}", "VARCHAR") + f" AS {name}"
        if grouped is not None and grouped.scaled and agg == "SUM"
        else as_text.format(name)
        for agg, name in SUMS
    ]
    selected = ", ".join([*from_sums, "tags.tags", "sums.line_items"])
    joined_terms = "" if terms_apart else "".join(f", terms.{name}" for name in TERMS)
    terms_cte = "" if terms_apart else f",\nterms AS ({_terms_select(src, raw['commitment_arn'], terms, where)})"
    terms_join = "" if terms_apart else " LEFT JOIN terms ON sums.commitment_arn = terms.commitment_arn"
    return (
        f"WITH lines AS (\n  SELECT\n  {canonical},\n  {rejected} AS rejected\n  FROM {lines_from}\n),\n"
        f"scoped AS (SELECT {regrouped} FROM lines),\n"
        f"sums AS (SELECT {group},\n  {sums},\n  {counted} AS line_items, MAX(rejected) AS rejected{flag}\n"
        f"  FROM scoped GROUP BY {group}),\n"
        f"tags AS (SELECT resource_id, {tags_out} AS tags FROM (SELECT {raw['resource_id']} AS resource_id,"
        f" {raw['parent_resource_id']} AS parent_resource_id, {src.tags} AS tags FROM {src.relation}{where}) lines"
        f" WHERE {COMPUTE} GROUP BY resource_id){terms_cte}\n"
        f"SELECT {selected},\n"
        f"  CASE WHEN sums.rejected <> '' THEN sums.rejected {group_rejected} ELSE '' END AS rejected"
        f"{joined_terms}{flagged}\n"
        f"FROM sums{terms_join}\n"
        "  LEFT JOIN tags ON sums.scope = 'resource' AND sums.resource_id = tags.resource_id"
    )


def _terms_select(src: QuerySource, arn: str, terms: Mapping[str, str], where: str) -> str:
    term_columns = ", ".join(f"{expr} AS {name}" for name, expr in terms.items())
    term_maxes = ", ".join(f"MAX({name}) AS {name}" for name in TERMS)
    return (
        f"SELECT commitment_arn, {term_maxes} FROM (SELECT {arn} AS commitment_arn,"
        f" {term_columns} FROM {src.relation}{where}) lines WHERE commitment_arn <> '' GROUP BY commitment_arn"
    )


def terms_query(src: QuerySource, rejected: str = "''") -> str:
    """Each commitment's terms (its ARN, then :data:`TERMS`, then ``rejected``: an expression over ``terms.*``),
    once per commitment: what :func:`logical_query` joins onto every row unless ``terms_apart``."""
    raw = canonical_lines(src)
    terms = {name: raw[name] for name in TERMS}
    conditions = [src.filter] if src.filter else []
    if family(src.table) == "focus":
        conditions.append(f"{src.col('ProviderName')} = '{AWS_PROVIDER}'")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return f"SELECT *, {rejected} AS rejected FROM ({_terms_select(src, raw['commitment_arn'], terms, where)}) terms"


def legacy_tags(columns: Sequence[tuple[str, str]], dialect: Dialect) -> str:
    """Legacy CUR's one column per tag (``(physical name, tag key)``) as one tags value: JSON text (DuckDB) or a
    map (Athena)."""
    if not columns:
        return "NULL"
    if dialect == "athena":
        keys = ", ".join("'" + key.replace("'", "''") + "'" for _, key in columns)
        values = ", ".join(f"CAST({_ident(name)} AS VARCHAR)" for name, _ in columns)
        return f"map(ARRAY[{keys}], ARRAY[{values}])"
    pairs = ", ".join("'" + key.replace("'", "''") + f"', {_ident(name)}" for name, key in columns)
    return f"CAST(json_object({pairs}) AS VARCHAR)"
