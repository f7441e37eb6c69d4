"""The FOCUS export of a month's bill (issue 16 §6) on a small scratch warehouse: the rows are
the sealed lines, their BilledCost and EffectiveCost the sealed amounts (summing to the sealed
bill exactly), the ledger estimate in x_EstimatedCost, PricingQuantity and PricingUnit on
every usage row, no column that is always empty, the periods UTC timestamps in Parquet, a
correction sealed later as ChargeClass `Correction` rows; and every file passes FOCUS 1.2's
column rules (tests/reference/focus12.py, written from the specification)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from kubeledger.close.closer import build_close_models, close_month, correct_month
from kubeledger.export import focus
from kubeledger.export.writer import copy_to
from tests.reference import focus12
from tests.test_close_support import (  # noqa: F401
    add_cluster,
    add_month,
    close_project,
    new_warehouse,
)

MONTH = "2026-10"
GRACE_END = dt.date(2026, 11, 4)

# Hand-computed (SPEC §9). c1 compute: three cost centers of 1.00 a day, invoiced 10.00 a day:
# 310.00 over 93.00 estimated -> 103.34 / 103.33 / 103.33 (the carried cent to cc-a), 0.00
# unassigned. c3 (storage only): cc-a 0.50 a day, invoiced 1.00 a day -> 31.00 to cc-a. c2
# has no billing link: billed its estimate, cc-b 2.00 a day -> 62.00, the unowned 1.00 a day
# -> 31.00.
SEALED = {
    "c1|compute|cc-a": Decimal("103.34"),
    "c1|compute|cc-b": Decimal("103.33"),
    "c1|compute|cc-c": Decimal("103.33"),
    "c1|compute|__unassigned__": Decimal("0"),
    "c3|storage|cc-a": Decimal("31.00"),
    "c3|storage|__unassigned__": Decimal("0"),
    "c2|compute|cc-b": Decimal("62.00"),
    "c2|compute|__unassigned__": Decimal("31.00"),
}
BILL_TOTAL = Decimal("434.00")  # 310.00 + 31.00 + 93.00
ESTIMATES = {
    "c1|compute|cc-a": Decimal("31"),
    "c3|storage|cc-a": Decimal("15.5"),
    "c2|compute|cc-b": Decimal("62"),
    "c2|compute|__unassigned__": Decimal("31"),
}
# The provider restates c1's compute on Oct 31 (10.00 -> 10.31): 310.31 over three equal
# lines is 103.43 each + 2 cents to cc-a and cc-b -> deltas +0.10 / +0.11 / +0.10.
CORRECTIONS = {
    "c1|compute|cc-a": Decimal("0.10"),
    "c1|compute|cc-b": Decimal("0.11"),
    "c1|compute|cc-c": Decimal("0.10"),
}


def build_warehouse(path: Path) -> str:
    db = new_warehouse(path / "focus.duckdb")
    with duckdb.connect(str(db)) as con:
        add_cluster(con, "c1")
        add_month(
            con,
            "c1",
            MONTH,
            daily_costs={"cc-a": 1.0, "cc-b": 1.0, "cc-c": 1.0},
            daily_invoice=10.0,
        )
        # Storage on a cluster of its own (add_month writes each day's completeness row).
        add_cluster(con, "c3")
        add_month(con, "c3", MONTH, daily_costs={"cc-a": 0.5}, daily_invoice=1.0, family="storage")
        add_cluster(con, "c2", linked=False)
        add_month(
            con,
            "c2",
            MONTH,
            daily_costs={"cc-b": 2.0, "__unassigned__": 1.0},
            daily_invoice=None,
        )
    return str(db)


def export(db: str, out: Path, file_format: str = "parquet") -> tuple[Path, dict]:
    out.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(db, read_only=True) as con:
        entry = focus.export_focus(
            con, MONTH, out, file_format, billing_account_id="acme-chargeback", copy=copy_to
        )
    return out / entry["file"], entry


def parquet_columns(path: Path) -> dict[str, str]:
    """Each column's physical type, as focus12.violations names them."""
    types = {}
    for field in pq.read_schema(path):
        kind = str(field.type)
        if kind.startswith("decimal"):
            types[field.name] = "decimal"
        elif kind in ("string", "large_string"):
            types[field.name] = "string"
        elif kind.startswith("timestamp"):
            types[field.name] = "timestamp_utc" if field.type.tz == "UTC" else "timestamp"
        else:
            types[field.name] = kind
    return types


def parquet_rows(path: Path) -> list[dict]:
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        cursor = con.execute(f"select * from read_parquet('{path}')")
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@pytest.fixture(scope="module")
def sealed(close_project, tmp_path_factory):  # noqa: F811
    """(warehouse, bill ID, Parquet export before any correction, its manifest entry)."""
    path = tmp_path_factory.mktemp("focus_sealed")
    db = build_warehouse(path)
    draft_file, draft_entry = None, None
    # The draft first (the close models built, nothing sealed yet), then the seal.
    build_close_models(db, MONTH, GRACE_END, project=close_project)
    draft_file, draft_entry = export(db, path / "draft")
    result = close_month(db, MONTH, GRACE_END, project=close_project, run_dbt=False)
    file, entry = export(db, path / "sealed")
    return {
        "db": db,
        "path": path,
        "bill_id": result.bill.bill_id,
        "file": file,
        "entry": entry,
        "draft_file": draft_file,
        "draft_entry": draft_entry,
    }


@pytest.fixture(scope="module")
def corrected(sealed, close_project):  # noqa: F811
    db = sealed["db"]
    with duckdb.connect(db) as con:
        con.execute(
            "update mock.int_billing_lines_scoped set effective_cost = 10.31 "
            "where charge_date = date '2026-10-31' and cluster_id = 'c1' "
            "and cost_family = 'compute'"
        )
    result = correct_month(db, MONTH, dt.date(2026, 11, 25), project=close_project)
    assert result.correction is not None
    file, entry = export(db, sealed["path"] / "corrected")
    csv_file, _ = export(db, sealed["path"] / "corrected-csv", "csv")
    return {"correction_id": result.correction.correction_id, "file": file, "entry": entry} | {
        "csv": csv_file
    }


def test_the_sealed_export_is_the_sealed_bill_line_for_line(sealed):
    rows = parquet_rows(sealed["file"])
    assert {row["x_BillLineId"]: row["BilledCost"] for row in rows} == SEALED
    assert len(rows) == len(SEALED)
    for row in rows:
        assert row["EffectiveCost"] == row["BilledCost"] == row["ListCost"]
        assert row["ContractedCost"] == row["BilledCost"]
        assert row["InvoiceId"] == sealed["bill_id"]
        assert row["x_BillState"] == "sealed"
        assert row["ChargeClass"] is None
    assert sum(row["BilledCost"] for row in rows) == BILL_TOTAL
    assert sum(row["EffectiveCost"] for row in rows) == BILL_TOTAL
    with duckdb.connect(sealed["db"], read_only=True) as con:
        (billed,) = con.execute(
            "select billed_cost from sealed.sealed_bills where bill_month = ?", [MONTH]
        ).fetchone()
    assert billed == BILL_TOTAL
    assert Decimal(sealed["entry"]["total_billed_cost"]) == BILL_TOTAL
    assert sealed["entry"]["sealed_bill_id"] == sealed["bill_id"]
    # The ledger estimate of each line is kept beside the billed amount.
    estimates = {row["x_BillLineId"]: row["x_EstimatedCost"] for row in rows}
    assert {line: estimates[line] for line in ESTIMATES} == ESTIMATES


def test_usage_rows_have_a_pricing_quantity_and_unit(sealed):
    rows = parquet_rows(sealed["file"])
    by_line = {row["x_BillLineId"]: row for row in rows}
    for row in rows:
        assert row["ChargeCategory"] == "Usage"
        assert row["PricingUnit"] == "Estimate Units"
        assert isinstance(row["PricingQuantity"], Decimal)
    # The quantity is the allocation weight: cc-a's 31.00 estimated; the unowned line of a
    # slice with owners keeps its own estimate under policy `separate`.
    assert by_line["c1|compute|cc-a"]["PricingQuantity"] == Decimal("31")
    assert by_line["c2|compute|__unassigned__"]["PricingQuantity"] == Decimal("31")
    # The unowned line is no owner's resource.
    assert by_line["c2|compute|__unassigned__"]["ResourceId"] is None
    assert by_line["c2|compute|cc-b"]["ResourceId"] == "c2/cc-b"
    assert (
        by_line["c3|storage|cc-a"]["ServiceCategory"],
        by_line["c3|storage|cc-a"]["ServiceSubcategory"],
    ) == ("Storage", "Other (Storage)")
    assert (by_line["c1|compute|cc-a"]["ServiceSubcategory"]) == "Containers"
    assert json.loads(by_line["c3|storage|cc-a"]["Tags"]) == {
        "kubeledger/bill_line_id": "c3|storage|cc-a",
        "kubeledger/cost_family": "storage",
        "kubeledger/basis": "invoice",
    }
    assert by_line["c2|compute|cc-b"]["x_Basis"] == "estimate"


def test_the_periods_are_utc_timestamps_in_parquet(sealed):
    schema = pq.read_schema(sealed["file"])
    for name in ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"):
        kind = schema.field(name).type
        assert str(kind).startswith("timestamp") and kind.tz == "UTC", (name, kind)
    row = parquet_rows(sealed["file"])[0]
    utc = dt.UTC
    assert row["BillingPeriodStart"] == dt.datetime(2026, 10, 1, tzinfo=utc)
    assert row["BillingPeriodEnd"] == dt.datetime(2026, 11, 1, tzinfo=utc)  # exclusive
    assert row["ChargePeriodStart"] == row["BillingPeriodStart"]
    assert row["ChargePeriodEnd"] == row["BillingPeriodEnd"]


def test_the_sealed_export_passes_the_focus_rules_and_no_column_is_always_empty(sealed):
    rows = parquet_rows(sealed["file"])
    assert focus12.violations(parquet_columns(sealed["file"]), rows) == []
    empty = [name for name in rows[0] if all(row[name] is None for row in rows)]
    # ChargeClass is mandatory and null on every row that is no correction (FOCUS 1.2).
    assert empty == ["ChargeClass"]
    assert [name for name in rows[0] if not name.startswith("x_")] == sorted(
        name for name in rows[0] if not name.startswith("x_")
    )


def test_the_draft_export_is_the_draft_bill_without_an_invoice(sealed):
    rows = parquet_rows(sealed["draft_file"])
    assert {row["x_BillLineId"]: row["BilledCost"] for row in rows} == SEALED
    assert {row["x_BillState"] for row in rows} == {"draft"}
    assert {row["InvoiceId"] for row in rows} == {None}  # no invoice issued yet
    assert focus12.violations(parquet_columns(sealed["draft_file"]), rows) == []
    assert sealed["draft_entry"]["sealed_bill_id"] is None


def test_a_correction_is_correction_rows_and_every_column_is_filled(sealed, corrected):
    rows = parquet_rows(corrected["file"])
    assert focus12.violations(parquet_columns(corrected["file"]), rows) == []
    original = [row for row in rows if row["ChargeClass"] is None]
    corrections = [row for row in rows if row["ChargeClass"] == "Correction"]
    assert {row["x_BillLineId"]: row["BilledCost"] for row in original} == SEALED
    assert {row["x_BillLineId"]: row["BilledCost"] for row in corrections} == CORRECTIONS
    assert {row["InvoiceId"] for row in corrections} == {corrected["correction_id"]}
    assert {row["PricingQuantity"] for row in corrections} == {None}
    assert sum(row["BilledCost"] for row in rows) == BILL_TOTAL + Decimal("0.31")
    assert Decimal(corrected["entry"]["total_billed_cost"]) == BILL_TOTAL
    assert Decimal(corrected["entry"]["total_billed_cost_with_corrections"]) == Decimal("434.31")
    assert [name for name in rows[0] if all(row[name] is None for row in rows)] == []


def test_the_csv_export_passes_the_focus_value_formats(corrected):
    with corrected["csv"].open(newline="") as handle:
        rows = [
            {key: (value if value != "" else None) for key, value in row.items()}
            for row in csv.DictReader(handle)
        ]
    columns = {name: "text" for name in rows[0]}
    assert focus12.violations(columns, rows, text=True) == []
    assert {row["BillingPeriodStart"] for row in rows} == {"2026-10-01T00:00:00Z"}
    assert {row["ChargePeriodEnd"] for row in rows} == {"2026-11-01T00:00:00Z"}
    assert sum(Decimal(row["BilledCost"]) for row in rows) == Decimal("434.31")


def test_the_rules_catch_what_focus_forbids():
    """The checker itself fails files that break FOCUS 1.2, one rule at a time."""
    good = {
        "BilledCost": Decimal("1.00"),
        "BillingAccountId": "a",
        "BillingAccountName": "a",
        "BillingCurrency": "USD",
        "BillingPeriodEnd": dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        "BillingPeriodStart": dt.datetime(2026, 10, 1, tzinfo=dt.UTC),
        "ChargeCategory": "Usage",
        "ChargeClass": None,
        "ChargeDescription": "x",
        "ChargePeriodEnd": dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        "ChargePeriodStart": dt.datetime(2026, 10, 1, tzinfo=dt.UTC),
        "ContractedCost": Decimal("1.00"),
        "EffectiveCost": Decimal("1.00"),
        "InvoiceIssuerName": "k",
        "ListCost": Decimal("1.00"),
        "PricingQuantity": Decimal("1"),
        "PricingUnit": "Units",
        "ProviderName": "k",
        "PublisherName": "k",
        "ServiceCategory": "Compute",
        "ServiceName": "Kubernetes compute",
        "ServiceSubcategory": "Containers",
        "x_Extra": "e",
    }
    types = {
        name: (
            "decimal"
            if isinstance(value, Decimal)
            else "timestamp_utc"
            if isinstance(value, dt.datetime)
            else "string"
        )
        for name, value in good.items()
    }
    assert focus12.violations(types, [good]) == []
    broken = {
        "PricingQuantity": None,  # null on a usage row that is no correction
        "ChargeClass": "Adjustment",
        "ChargeCategory": "Refund",
        "ServiceSubcategory": "Block Storage",  # a Storage subcategory under Compute
        "BillingCurrency": "usd",
        "BilledCost": None,
        "ChargePeriodEnd": dt.datetime(2026, 10, 1, tzinfo=dt.UTC),  # not after the start
        "ChargeDescription": "",
    }
    for name, value in broken.items():
        assert focus12.violations(types, [good | {name: value}]) != [], name
    assert focus12.violations(types | {"BillingPeriodStart": "timestamp"}, [good]) != []
    without = {name: kind for name, kind in types.items() if name != "PricingUnit"}
    assert focus12.violations(without, [good]) == ["PricingUnit: mandatory column missing"]
    assert focus12.violations({"Extra": "string"} | types, [good]) != []
    assert focus12.violations(types, [good | {"Tags": '{"a": {"b": 1}}'}]) != []
    as_text = {name: "text" for name in types}
    text_row = {
        name: (
            value.strftime("%Y-%m-%dT%H:%M:%SZ")
            if isinstance(value, dt.datetime)
            else None
            if value is None
            else str(value)
        )
        for name, value in good.items()
    }
    assert focus12.violations(as_text, [text_row], text=True) == []
    for name, value in {
        "BilledCost": "1,000.00",
        "EffectiveCost": "+1.00",
        "ChargePeriodStart": "2026-10-01 00:00:00",
    }.items():
        assert focus12.violations(as_text, [text_row | {name: value}], text=True) != [], name


def test_a_sealed_month_that_fails_verification_is_not_exported(sealed, tmp_path):
    """A line edited behind the seal's back: the export stops before writing any file."""
    import shutil

    from kubeledger.export.month import ExportError
    from kubeledger.export.writer import export_month

    db = Path(sealed["db"])
    copy = tmp_path / db.name
    shutil.copy(db, copy)
    shutil.copytree(db.parent / f"{db.name}.seals", tmp_path / f"{db.name}.seals")
    with duckdb.connect(str(copy)) as con:
        con.execute(
            "update sealed.sealed_bill_lines set billed_cost = billed_cost + 1 "
            "where line_id = 'c1|compute|cc-a'"
        )
        con.execute(
            "update sealed.sealed_bill_lines set billed_cost = billed_cost - 1 "
            "where line_id = 'c1|compute|cc-b'"
        )
    out = tmp_path / "export"
    with duckdb.connect(str(copy), read_only=True) as con, pytest.raises(ExportError) as refused:
        export_month(con, MONTH, out, "parquet")
    assert "the FOCUS file is not written: month 2026-10 fails verification" in str(refused.value)
    assert not out.exists()
