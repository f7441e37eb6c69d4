"""Month exports (issue 9) on the generated fleet of test_report.py: Parquet read back equals
the mart rows for the month with the same money types, CSV has the contract's header, the
manifest counts the rows, a missing mart is written empty with its schema, the files are
byte-identical run to run, and the FOCUS file is the month's bill, line for line, within
FOCUS 1.2's column rules.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from kubeledger.export import focus
from kubeledger.export.commands import export
from kubeledger.export.schema import (
    MARTS,
    MARTS_BY_NAME,
    MONTH_DATE_COLUMNS,
    MartExport,
    is_money,
)
from kubeledger.export.writer import export_month
from tests.test_report import built_fleet, copy_of

MONTH = "2026-10"
FIRST, LAST = "2026-10-01", "2026-10-31"

pytestmark = pytest.mark.slow

# FOCUS 1.2 columns a FinOps tool expects (the spec's mandatory set and the ones we fill).
FOCUS_REQUIRED = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingCategory",
    "ProviderName",
    "PublisherName",
    "PricingQuantity",
    "PricingUnit",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
    "SubAccountId",
    "SubAccountName",
    "Tags",
)
EXTENSIONS = ("x_BillState", "x_BillLineId", "x_CostFamily", "x_LineKey", "x_EstimatedCost")


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_fleet(tmp_path_factory)


@pytest.fixture(scope="module")
def parquet_dir(fleet_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export-parquet")
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        export_month(con, MONTH, out, "parquet")
    return out


@pytest.fixture(scope="module")
def csv_dir(fleet_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export-csv")
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        export_month(con, MONTH, out, "csv")
    return out


def manifest(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text())


def expected_filter(mart: MartExport) -> str:
    """The month's rows of a mart, written here independently of the exporter."""
    column = mart.month_column
    # every mart names a month by its first day (bill_month, charge_month, invoice_month)
    if column in MONTH_DATE_COLUMNS:
        return f"{column} = date '{FIRST}'"
    if column == "run_days":
        return f"first_day <= date '{LAST}' and last_day >= date '{FIRST}'"
    return f"{column} >= date '{FIRST}' and {column} < date '2026-11-01'"


def mart_types(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"describe marts.{name}").fetchall()}


def available_marts(con: duckdb.DuckDBPyConnection) -> list[MartExport]:
    present = {
        row[0]
        for row in con.execute(
            "select table_name from information_schema.tables where table_schema = 'marts'"
        ).fetchall()
    }
    return [mart for mart in MARTS if mart.name in present]


def _normalized(type_name: str) -> str:
    return type_name.upper().replace(" ", "")


def mart_contracts() -> dict[str, list[tuple[str, str]]]:
    """Each mart's enforced contract (name, data_type) from models/marts/**/_*__models.yml."""
    contracts: dict[str, list[tuple[str, str]]] = {}
    for path in sorted((Path(__file__).parents[1] / "models" / "marts").glob("*/_*__models.yml")):
        for model in yaml.safe_load(path.read_text()).get("models", []):
            if (model.get("config") or {}).get("contract", {}).get("enforced"):
                contracts[model["name"]] = [
                    (column["name"], _normalized(column["data_type"]))
                    for column in model["columns"]
                ]
    return contracts


@pytest.mark.parametrize("mart", MARTS, ids=lambda mart: mart.name)
def test_export_columns_are_the_marts_contract_columns(mart):
    """Every exported column is in its mart's contract, in the contract's order and with its
    type (the labels map is exported as JSON text)."""
    contract = dict(mart_contracts()[mart.name])
    exported = [name for name, _ in mart.columns]
    assert [name for name in contract if name in exported] == exported
    for name, kind in mart.columns:
        expected = "JSON" if contract[name].startswith("MAP(") else contract[name]
        assert _normalized(kind) == expected, (mart.name, name)


@pytest.mark.parametrize("mart", MARTS, ids=lambda mart: mart.name)
def test_every_mart_is_exported_whole(mart):
    """Every contract column is exported (a column added to a mart is added here, with a new
    EXPORT_FORMAT_VERSION); the labels map as JSON text."""
    assert [(column, _normalized(kind)) for column, kind in mart.columns] == [
        (column, "JSON" if kind.startswith("MAP(") else kind)
        for column, kind in mart_contracts()[mart.name]
    ]


def test_parquet_read_back_equals_the_mart_rows_of_the_month(fleet_db, parquet_dir):
    compared = []
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        for mart in available_marts(con):
            path = parquet_dir / f"{mart.name}.parquet"
            columns = ", ".join(
                f"cast(to_json({name}) as varchar) as {name}" if kind == "JSON" else name
                for name, kind in mart.columns
            )
            expected = f"select {columns} from marts.{mart.name} where {expected_filter(mart)}"
            actual = f"select * from read_parquet('{path}')"
            counts = con.execute(
                f"select (select count(*) from ({expected})), (select count(*) from ({actual}))"
            ).fetchone()
            assert counts[0] == counts[1], (mart.name, counts)
            for left, right in ((expected, actual), (actual, expected)):
                difference = f"select count(*) from ({left} except all {right})"
                (extra,) = con.execute(difference).fetchone()
                assert extra == 0, f"{mart.name}: {extra} rows differ"
            # Money columns keep the mart's type: decimals stay exact decimals.
            file_types = {
                row[0]: row[1]
                for row in con.execute(f"describe select * from read_parquet('{path}')").fetchall()
            }
            types = mart_types(con, mart.name)
            for name, kind in mart.columns:
                if is_money(name):
                    assert file_types[name] == types[name], (mart.name, name)
                # the listed type is the warehouse's (the labels map aside, exported as JSON)
                if kind != "JSON":
                    assert _normalized(types[name]) == _normalized(kind), (mart.name, name)
            compared.append((mart.name, counts[0]))
    rows = dict(compared)
    # The marts a finance reader needs are there, and not empty.
    for name in (
        "fct_bill_lines_monthly",
        "fct_owner_costs_daily",
        "fct_pod_costs_daily",
        "fct_reconciliation_daily",
        "rpt_metrics_daily",
        "rpt_owner_bill_explained",
        "fct_budget_status_daily",
    ):
        assert rows.get(name, 0) > 0, name
    # one row per cluster and October day with evidence: four clusters × 31 days, less the
    # 11 days after aks-web's last node left on Oct 20 (the messy fleet's decommissioning)
    assert rows["fct_reconciliation_daily"] == 4 * 31 - 11


def test_bill_lines_export_sums_to_the_bill_exactly(fleet_db, parquet_dir):
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        exported = con.execute(
            f"select sum(billed_cost) from read_parquet('{parquet_dir}/fct_bill_lines_monthly"
            ".parquet')"
        ).fetchone()[0]
        mart = con.execute(
            "select sum(billed_cost) from marts.fct_bill_lines_monthly where bill_month = ?",
            [dt.date.fromisoformat(FIRST)],
        ).fetchone()[0]
    assert isinstance(exported, Decimal)
    assert exported == mart


def test_manifest_lists_every_file_with_its_rows_and_schema(parquet_dir):
    data = manifest(parquet_dir)
    assert data["month"] == MONTH and data["format"] == "parquet"
    assert [entry["name"] for entry in data["files"]] == [mart.name for mart in MARTS]
    with duckdb.connect() as con:
        for entry, mart in zip(data["files"], MARTS, strict=True):
            path = parquet_dir / entry["file"]
            assert path.exists(), entry["file"]
            count = con.execute(f"select count(*) from read_parquet('{path}')").fetchone()[0]
            assert entry["rows"] == count, entry["name"]
            assert [c["name"] for c in entry["columns"]] == [name for name, _ in mart.columns]
            names = [
                row[0]
                for row in con.execute(f"describe select * from read_parquet('{path}')").fetchall()
            ]
            assert names == [name for name, _ in mart.columns], entry["name"]
    assert data["focus"]["file"] == "focus_allocated_costs.parquet"


def test_csv_export_has_the_contract_header_and_every_row(csv_dir):
    data = manifest(csv_dir)
    for entry, mart in zip(data["files"], MARTS, strict=True):
        with (csv_dir / entry["file"]).open(newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            rows = sum(1 for _ in reader)
        assert header == [name for name, _ in mart.columns], entry["name"]
        assert rows == entry["rows"], entry["name"]
    with (csv_dir / "focus_allocated_costs.csv").open(newline="") as handle:
        header = next(csv.reader(handle))
    assert header == [name for name, _, _ in focus.COLUMNS]


def test_exports_are_byte_identical_run_to_run(fleet_db, parquet_dir, tmp_path):
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        export_month(con, MONTH, tmp_path, "parquet")
    first, again = manifest(parquet_dir), manifest(tmp_path)
    assert [f["sha256"] for f in first["files"]] == [f["sha256"] for f in again["files"]]
    assert first["focus"]["sha256"] == again["focus"]["sha256"]


def test_a_missing_mart_is_written_empty_with_its_schema(fleet_db, tmp_path):
    db = copy_of(fleet_db, tmp_path, "no-efficiency.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("drop table marts.fct_efficiency_daily")
    out = tmp_path / "out"
    with duckdb.connect(str(db), read_only=True) as con:
        export_month(con, MONTH, out, "parquet", marts=["fct_efficiency_daily"])
    entry = manifest(out)["files"][0]
    assert entry["available"] is False and entry["rows"] == 0
    with duckdb.connect() as con:
        described = con.execute(
            f"describe select * from read_parquet('{out}/fct_efficiency_daily.parquet')"
        ).fetchall()
    assert [(row[0], row[1]) for row in described] == [
        (name, kind) for name, kind in MARTS_BY_NAME["fct_efficiency_daily"].columns
    ]


def test_focus_export_is_the_months_bill_and_passes_the_focus_rules(fleet_db, parquet_dir):
    """One FOCUS row per line of the month's bill (this fleet's is a draft: not closed), its
    BilledCost the line's billed amount, the file within FOCUS 1.2's column rules."""
    from tests.reference import focus12
    from tests.test_export_focus import parquet_columns, parquet_rows

    path = parquet_dir / "focus_allocated_costs.parquet"
    rows = parquet_rows(path)
    names = list(rows[0])
    for column in FOCUS_REQUIRED + EXTENSIONS:
        assert column in names, column
    assert [n for n in names if not n.startswith("x_")] == sorted(
        n for n in names if not n.startswith("x_")
    ), "FOCUS columns in alphabetical order"
    assert focus12.violations(parquet_columns(path), rows) == []
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        lines = dict(
            con.execute(
                "select line_id, billed_cost from marts.fct_bill_lines_monthly "
                "where bill_month = ?",
                [dt.date.fromisoformat(FIRST)],
            ).fetchall()
        )
        (state,) = con.execute(
            "select min(bill_state) from marts.fct_bill_lines_monthly where bill_month = ?",
            [dt.date.fromisoformat(FIRST)],
        ).fetchone()
    assert len(lines) > 0
    assert {row["x_BillLineId"]: row["BilledCost"] for row in rows} == lines
    total = sum(lines.values(), Decimal("0"))
    assert sum((row["BilledCost"] for row in rows), Decimal("0")) == total
    assert sum((row["EffectiveCost"] for row in rows), Decimal("0")) == total
    assert {row["x_BillState"] for row in rows} == {state}
    assert {row["ChargeCategory"] for row in rows} == {"Usage"}
    assert {row["ProviderName"] for row in rows} == {"kubeledger"}
    assert all(row["PricingQuantity"] is not None for row in rows)
    assert Decimal(manifest(parquet_dir)["focus"]["total_billed_cost"]) == total


def test_cli_exports_and_rejects_a_bad_month(fleet_db, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELEDGER_DB", str(fleet_db))
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        export,
        [
            "--month",
            MONTH,
            "--format",
            "csv",
            "--out",
            str(out),
            "--mart",
            "fct_bill_lines_monthly",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "fct_bill_lines_monthly.csv").exists()
    assert (out / "focus_allocated_costs.csv").exists()
    assert "fct_bill_lines_monthly.csv:" in result.output
    bad = CliRunner().invoke(export, ["--month", "October", "--out", str(out)])
    assert bad.exit_code != 0 and "YYYY-MM" in bad.output
