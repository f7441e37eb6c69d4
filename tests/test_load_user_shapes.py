"""Inputs as users have them (issue 17 §1-5): the loader on files shaped like the public samples.

Fixtures are written by hand from the documented columns (tests/fixtures/landing_samples):
- focus/focus-sample-nulls-2026-10.csv: the FinOps Foundation FOCUS sample's style, `NULL` for
  every missing value. EffectiveCost: AWS instance 4.80, Oracle instance 2.50 (no unit prices,
  no quantity: `NULL`), AWS credit -3.00 (no resource: `NULL`), Azure VM 1.20 (ListUnitPrice
  `n/a`: unreadable, optional), a Google row whose EffectiveCost is `0.75 USD` (unreadable cost).
  Loaded: 4.80 + 2.50 - 3.00 + 1.20 = 5.50; one row quarantined, one value nulled.
- azure/cost-details-actual-2026-10.csv (in refused_samples/): the amortized header,
  actual-cost rows (a reserved VM at zero cost, a reservation purchase of 1,681.92).
- azure/legacy-payg-usage-2025-02.csv: the legacy pay-as-you-go / EA usage export
  (`UsageDateTime`, `PreTaxCost`, `SubscriptionGuid`, `InstanceId`, `UsageQuantity`, `Currency`).
- azure/mca-instance-name-2026-10.csv: a Microsoft Customer Agreement file, camelCase, whose
  resource column is `instanceName`.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import LoadError, load_landing

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"
# files the load refuses, kept out of landing_samples (which loads whole in one call)
REFUSED = Path(__file__).parent / "fixtures" / "refused_samples"


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    yield connection
    connection.close()


def land(landing: Path, *samples: str) -> Path:
    for sample in samples:
        target = landing / sample
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / sample if (SAMPLES / sample).exists() else REFUSED / sample, target)
    return landing


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- 1. NULL is null; only unreadable costs quarantine a row -----------------------------------


def test_focus_sample_nulls_are_nulls_and_every_cost_is_kept(con, tmp_path):
    landing = land(tmp_path / "landing", "focus/focus-sample-nulls-2026-10.csv")
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"focus_billing": 4}
    assert summary.rows_quarantined == 1
    assert summary.values_nulled == 1
    (total,) = con.execute(
        "select sum(EffectiveCost::decimal(18, 2)) from raw.focus_billing"
    ).fetchone()
    assert total == Decimal("5.50")
    rows = con.execute(
        "select _row_number, ProviderName, ResourceId, ContractedUnitPrice, ConsumedQuantity, "
        "ListUnitPrice, ChargeClass from raw.focus_billing order by _row_number"
    ).fetchall()
    assert [r[:2] for r in rows] == [(1, "AWS"), (2, "Oracle"), (3, "AWS"), (4, "Microsoft")]
    assert rows[1][3:5] == (None, None)  # Oracle: NULL unit price and quantity
    assert rows[2][2] is None  # the credit's ResourceId NULL is no resource called "NULL"
    assert rows[3][5] is None  # `n/a` nulled, the row and its 1.20 kept
    assert {r[6] for r in rows} == {None}
    # no column of any row holds the text NULL
    columns = [
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'raw' and table_name = 'focus_billing' "
            "and data_type = 'VARCHAR'"
        ).fetchall()
    ]
    nulls = " + ".join(f"count(*) filter (where \"{c}\" = 'NULL')" for c in columns)
    assert con.execute(f"select {nulls} from raw.focus_billing").fetchone() == (0,)
    assert con.execute(
        "select _row_number, column_name, raw_value, row_kept from raw.quarantine order by 1"
    ).fetchall() == [(4, "ListUnitPrice", "n/a", True), (5, "EffectiveCost", "0.75 USD", False)]
    (line,) = [f.line() for f in summary.files]
    assert line == (
        "loaded  focus/focus-sample-nulls-2026-10.csv -> raw.focus_billing: 4 rows "
        "(1 quarantined, 1 unreadable optional values nulled)"
    )


def test_null_text_is_null_in_parquet_and_json_too(con, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    header = (
        "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,"
        "EffectiveCost,BillingCurrency,ResourceId,ListUnitPrice"
    )
    csv_text = f"{header}\nacct,2026-10-06,2026-10-07,Usage,1.5,1.5,USD,NULL,NULL\n"
    source = write(tmp_path / "focus.csv", csv_text)
    con.execute(
        f"copy (select * from read_csv('{source}', all_varchar = true)) "
        f"to '{landing / 'focus.parquet'}' (format parquet)"
    )
    summary = load_landing(con, landing)
    assert summary.rows_quarantined == 0
    assert con.execute(
        "select ResourceId, ListUnitPrice, BilledCost from raw.focus_billing"
    ).fetchone() == (
        None,
        None,
        "1.5",
    )


def test_an_unreadable_optional_number_keeps_its_azure_row(con, tmp_path):
    text = (SAMPLES / "azure/cost-details-amortized-2026-10.csv").read_text()
    lines = text.splitlines()
    header = next(csv.reader([lines[0]]))
    row = next(csv.reader([lines[1]]))
    row[header.index("Quantity")] = "24 h"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, row, *csv.reader(lines[2:])])
    write(tmp_path / "landing" / "cost.csv", out.getvalue())

    summary = load_landing(con, tmp_path / "landing")

    assert (summary.rows_loaded, summary.rows_quarantined, summary.values_nulled) == (3, 0, 1)
    assert con.execute(
        "select Quantity, CostInBillingCurrency from raw.azure_cost_details where _row_number = 1"
    ).fetchone() == (None, "4.608")


# --- 2. Azure actual-cost exports are refused ------------------------------------------------


def test_an_azure_actual_cost_export_is_refused_from_its_rows(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/cost-details-actual-2026-10.csv")

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)

    message = str(err.value)
    assert message.startswith(
        "azure/cost-details-actual-2026-10.csv: is an Azure actual-cost export, not the "
        "amortized cost export (1 reservation or savings-plan purchase row(s) with a cost; "
        "1 of 1 reservation or savings-plan usage rows at zero cost; the first at row 1)"
    )
    assert "export 'Amortized cost (usage and purchases)'" in message
    # nothing of the load was kept (the raw schema itself was rolled back)
    assert con.execute(
        "select count(*) from information_schema.tables where table_schema = 'raw'"
    ).fetchone() == (0,)


def test_one_zero_cost_reserved_row_among_many_priced_is_not_actual_cost(con, tmp_path):
    # an amortized file: four reservation-covered rows priced, one at 0 (rounding) -> loads
    text = (SAMPLES / "azure/cost-details-amortized-2026-10.csv").read_text()
    reader = list(csv.reader(io.StringIO(text)))
    header, vm = reader[0], reader[1]
    rows = []
    for n, cost in enumerate(["4.608", "4.608", "4.608", "4.608", "0"]):
        row = list(vm)
        row[header.index("Date")] = f"10/0{n + 1}/2026"
        row[header.index("PricingModel")] = "Reservation"
        row[header.index("CostInBillingCurrency")] = cost
        rows.append(row)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    write(tmp_path / "landing" / "cost.csv", out.getvalue())

    assert load_landing(con, tmp_path / "landing").rows_loaded == 5


@pytest.mark.parametrize(
    ("export_type", "refused"), [("ActualCost", True), ("AmortizedCost", False)]
)
def test_an_azure_export_manifest_says_which_cost_it_holds(con, tmp_path, export_type, refused):
    landing = tmp_path / "landing"
    run = landing / "azure" / "acme-daily" / "20261001-20261031" / "run-1"
    land(run, "azure/cost-details-amortized-2026-10.csv")
    write(
        landing / "azure" / "acme-daily" / "20261001-20261031" / "manifest.json",
        json.dumps(
            {
                "manifestVersion": "2024-04-01",
                "exportConfig": {"exportName": "acme-daily", "type": export_type},
                "blobs": [{"blobName": "part_0_0001.csv"}],
            }
        ),
    )
    if refused:
        with pytest.raises(LoadError) as err:
            load_landing(con, landing)
        assert str(err.value).startswith(
            "azure/acme-daily/20261001-20261031/run-1/azure/cost-details-amortized-2026-10.csv: "
            "is an Azure actual-cost export (its manifest "
            "azure/acme-daily/20261001-20261031/manifest.json says type ActualCost)"
        )
    else:
        assert load_landing(con, landing).rows_loaded == 3


def test_the_dagster_landing_asset_refuses_an_actual_cost_export(tmp_path):
    from kubeledger.dagster.definitions import defs
    from tests.test_dagster_support import range_tags, step_failures
    from tests.test_dagster_support import warehouse as warehouse_resource

    land(tmp_path / "landing", "azure/cost-details-actual-2026-10.csv")
    write(
        tmp_path / "kubeledger.yml",
        "clusters:\n  - id: aks-prod\n    provider: azure\n",
    )
    job = defs.resolve_job_def("ledger_daily")
    result = job.execute_in_process(
        tags=range_tags("2026-10-07", "2026-10-07"),
        resources={"warehouse": warehouse_resource(tmp_path, "2026-10-08")},
        raise_on_error=False,
    )

    assert not result.success
    assert (
        "azure/cost-details-actual-2026-10.csv: is an Azure actual-cost export"
        in step_failures(result)["landing"]
    )


# --- 3. More Azure shapes --------------------------------------------------------------------


def test_the_legacy_pay_as_you_go_usage_export_loads_as_azure(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/legacy-payg-usage-2025-02.csv")
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"azure_cost_details": 2}
    rows = con.execute(
        "select Date, SubscriptionId, SubscriptionGuid, InstanceId, Quantity, EffectivePrice, "
        "Cost, BillingCurrency, _extra from raw.azure_cost_details order by _row_number"
    ).fetchall()
    sub = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"
    assert rows[0][:8] == (
        "2025-02-11T00:00:00.0000000Z",
        sub,
        sub,
        f"/subscriptions/{sub}/resourceGroups/MC_rg-legacy_aks-legacy_westeurope/providers/"
        "Microsoft.Compute/virtualMachineScaleSets/aks-agentpool-55667788-vmss",
        "48",
        "0.23",
        "11.04",
        "EUR",
    )
    assert rows[0][8] is None  # every column has its known name or an alias
    assert sum(Decimal(r[6]) for r in rows) == Decimal("11.68")  # 11.04 + 0.64
    assert con.execute("select period_key from raw.loaded_files").fetchone() == (
        f"{sub}|2025-02-01",
    )


def test_an_mca_file_naming_the_resource_instance_name_loads_as_azure(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/mca-instance-name-2026-10.csv")
    load_landing(con, landing)

    assert con.execute(
        "select ResourceId, CostInBillingCurrency, BillingCurrencyCode, Date "
        "from raw.azure_cost_details"
    ).fetchone() == (
        "/subscriptions/1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f/resourceGroups/"
        "mc_rg-mca_aks-mca_northeurope/providers/Microsoft.Compute/virtualMachineScaleSets/"
        "aks-system-99887766-vmss",
        "2.304",
        "USD",
        "2026-10-06",
    )


# --- 5. Error messages that say what is wrong ------------------------------------------------


def test_an_mca_file_without_a_resource_column_is_named_as_azure_missing_it(con, tmp_path):
    rows = list(csv.reader((SAMPLES / "azure/mca-instance-name-2026-10.csv").open()))
    drop = rows[0].index("instanceName")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[:drop] + r[drop + 1 :] for r in rows])
    write(tmp_path / "landing" / "mca.csv", out.getvalue())

    with pytest.raises(LoadError) as err:
        load_landing(con, tmp_path / "landing")

    assert str(err.value).startswith(
        "mca.csv: is a Azure cost details export (amortized) file but lacks the required "
        "column ResourceId or InstanceId."
    )
    assert err.value.column == "ResourceId or InstanceId"


def test_a_long_ragged_csv_row_keeps_duckdb_s_field_counts(con, tmp_path):
    # a CUR row is hundreds of characters: the counts must survive the quoted line
    text = (SAMPLES / "aws/cur-legacy-2026-10.csv").read_text()
    lines = text.splitlines()
    short = lines[1].rsplit(",", 1)[0]  # one field fewer
    assert len(short) > 400
    write(tmp_path / "landing" / "cur.csv", "\n".join([*lines, short]) + "\n")

    with pytest.raises(LoadError) as err:
        load_landing(con, tmp_path / "landing")

    message = str(err.value)
    assert message.startswith("cur.csv: cannot be read: CSV Error on Line: 7 (data row 6): ")
    assert "Expected Number of Columns: 34 Found: 33" in message
    assert len(message) < 400


def test_a_google_cloud_csv_with_dotted_columns_is_named(con, tmp_path):
    write(
        tmp_path / "landing" / "gcp.csv",
        "billing_account_id,service.id,service.description,sku.id,sku.description,"
        "usage_start_time,usage_end_time,project.id,cost,currency\n"
        "01A2B3-C4D5E6-F7G8H9,6F81-5844-456A,Compute Engine,CP-N2,N2 Core,"
        "2026-10-06 00:00:00 UTC,2026-10-06 01:00:00 UTC,acme-prod,0.5,USD\n",
    )

    with pytest.raises(LoadError) as err:
        load_landing(con, tmp_path / "landing")

    message = str(err.value)
    assert message.startswith(
        "gcp.csv: is a Google Cloud billing export saved as CSV with dotted column names "
        "(project.id, service.description, service.id, ...)"
    )
    assert "as newline-delimited JSON or Parquet" in message


def test_the_dagster_sensor_reads_a_legacy_azure_file_s_days_from_usage_date_time():
    import datetime as dt

    from kubeledger.dagster.landing_files import describe

    found = describe(SAMPLES, "azure/legacy-payg-usage-2025-02.csv")
    assert (found.kind, found.first_day, found.last_day) == (
        "billing",
        dt.date(2025, 2, 11),
        dt.date(2025, 2, 11),
    )
