"""Every landing format loads from a small sample into its raw table, values as written."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import FORMATS, ensure_raw_schema, load_landing, raw_table_columns

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"
DATA_FOLDERS = ("koku", "koku-variants", "supplementary", "aws", "gcp", "azure", "focus")


def land(landing: Path, *samples: str) -> Path:
    """Copy sample files (paths relative to SAMPLES) into `landing`, keeping their folders."""
    for sample in samples:
        target = landing / sample
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / sample, target)
    return landing


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    yield connection
    connection.close()


def one(con: duckdb.DuckDBPyConnection, sql: str):
    return con.execute(sql).fetchone()


def column_names(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'raw' and table_name = ? order by ordinal_position",
            [table],
        ).fetchall()
    ]


def test_ensure_raw_schema_creates_every_raw_table_empty(con):
    ensure_raw_schema(con)
    tables = {
        r[0]
        for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'raw'"
        ).fetchall()
    }
    assert tables == {spec.raw_table for spec in FORMATS} | {"quarantine", "loaded_files"}
    assert len(tables) == 16
    assert one(con, "select count(*) from raw.koku_pod_usage") == (0,)
    pod_columns = column_names(con, "koku_pod_usage")
    assert pod_columns[:4] == [
        "report_period_start",
        "report_period_end",
        "interval_start",
        "interval_end",
    ]
    assert pod_columns[-7:] == [
        "_cluster_id",
        "_extra",
        "_source_file",
        "_row_number",
        "_file_hash",
        "_loaded_at",
        "_source_day",
    ]
    assert "_cluster_id" not in column_names(con, "aws_cur_legacy")
    assert "resourceTags" in column_names(con, "aws_cur_legacy")
    # Running it again on an existing warehouse changes nothing.
    ensure_raw_schema(con)
    assert column_names(con, "koku_pod_usage") == pod_columns


def test_every_source_column_is_varchar(con):
    ensure_raw_schema(con)
    types = con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'raw' and table_name not in ('quarantine', 'loaded_files') "
        "and column_name not in ('_row_number', '_loaded_at', '_superseded_at', '_source_day')"
    ).fetchall()
    assert {t for _, _, t in types} == {"VARCHAR"}
    # billing tables also have _superseded_at (a timestamp), usage tables _source_day (a date)
    expected = sum(
        len(raw_table_columns(spec)) - 2 - (spec.kind in ("billing", "usage")) for spec in FORMATS
    )
    assert len(types) == expected
    source_days = con.execute(
        "select table_name, data_type from information_schema.columns "
        "where table_schema = 'raw' and column_name = '_source_day'"
    ).fetchall()
    assert sorted(source_days) == sorted(
        (spec.raw_table, "DATE") for spec in FORMATS if spec.kind == "usage"
    )


def test_aws_legacy_csv_folds_resource_tags_and_keeps_unknown_columns(con, tmp_path):
    landing = land(tmp_path / "landing", "aws/cur-legacy-2026-10.csv")
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"aws_cur_legacy": 5}
    total = one(
        con, 'select sum(cast("lineItem/UnblendedCost" as decimal(20, 10))) from raw.aws_cur_legacy'
    )[0]
    assert total == Decimal("12.9494589041")
    rows = con.execute(
        'select _row_number, "lineItem/LineItemType", "resourceTags", _extra, _source_file '
        "from raw.aws_cur_legacy order by _row_number"
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0][1] == "Usage"
    assert json.loads(rows[0][2]) == {
        "aws:eks:cluster-name": "prod-east-1",
        "user:app": "checkout",
        "user:team": "payments",
    }
    assert json.loads(rows[1][2]) == {"aws:eks:cluster-name": "prod-east-1"}
    assert rows[2][2] is None  # no tag on the volume line
    assert json.loads(rows[0][3]) == {"product/capacitystatus": "Used"}
    assert rows[4][1] == "Tax"
    assert rows[0][4] == "aws/cur-legacy-2026-10.csv"
    digest = hashlib.sha256((landing / "aws/cur-legacy-2026-10.csv").read_bytes()).hexdigest()
    assert one(con, "select distinct _file_hash from raw.aws_cur_legacy") == (digest,)
    assert one(con, "select period_key from raw.loaded_files") == ("123456789012|2026-10-01",)


def test_aws_cur2_csv_gz(con, tmp_path):
    landing = land(tmp_path / "landing", "aws/cur2-2026-10.csv.gz")
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"aws_cur2": 3}
    row = con.execute(
        "select line_item_usage_start_date, line_item_unblended_cost, resource_tags, product, "
        "_extra from raw.aws_cur2 where _row_number = 1"
    ).fetchone()
    assert row[0] == "2026-10-06T18:00:00.000Z"
    assert row[1] == "0.0832"
    assert json.loads(row[2]) == {"user_team": "payments", "aws_eks_cluster_name": "prod-east-1"}
    assert json.loads(row[3]) == {"region": "us-east-1", "vcpu": "2"}
    assert json.loads(row[4]) == {"product_capacitystatus": "Used"}
    total = one(con, "select sum(line_item_unblended_cost::decimal(18, 6)) from raw.aws_cur2")[0]
    assert total == Decimal("0.212000")


def test_aws_cur2_parquet_renders_typed_values_and_maps(con, tmp_path):
    landing = land(tmp_path / "landing", "aws/cur2-2026-09.parquet")
    load_landing(con, landing)

    rows = con.execute(
        "select _row_number, line_item_usage_start_date, line_item_unblended_cost, "
        "resource_tags, line_item_line_item_type from raw.aws_cur2 order by _row_number"
    ).fetchall()
    assert rows[0] == (
        1,
        "2026-09-15 00:00:00",
        "0.1632",
        '{"user_team":"search"}',
        "SavingsPlanCoveredUsage",
    )
    assert json.loads(rows[1][3]) == {"user_team": "search", "user_app": "indexer"}
    assert rows[2][4] == "SavingsPlanRecurringFee"
    total = one(con, "select sum(line_item_unblended_cost::decimal(18, 4)) from raw.aws_cur2")[0]
    assert total == Decimal("12.7132")
    assert one(con, "select period_key from raw.loaded_files") == ("998877665544|2026-09-01",)


def test_legacy_cur_as_parquet_folds_per_tag_columns_into_resource_tags(con, tmp_path):
    """Legacy CUR delivered as Parquet uses Athena names and one column per tag."""
    landing = tmp_path / "landing"
    landing.mkdir()
    con.execute(
        f"""
        copy (select
            '123456789012' as bill_payer_account_id,
            timestamp '2026-10-01' as bill_billing_period_start_date,
            '210987654321' as line_item_usage_account_id,
            'Usage' as line_item_line_item_type,
            timestamp '2026-10-06 18:00:00' as line_item_usage_start_date,
            timestamp '2026-10-06 19:00:00' as line_item_usage_end_date,
            'AmazonEC2' as line_item_product_code,
            'BoxUsage:m5.xlarge' as line_item_usage_type,
            'i-0d747f55dc1009705' as line_item_resource_id,
            1.0::double as line_item_usage_amount,
            0.192::double as line_item_unblended_cost,
            'payments' as resource_tags_user_team,
            null::varchar as resource_tags_user_app
        ) to '{landing / "legacy-athena.parquet"}' (format parquet)
        """
    )
    load_landing(con, landing)

    assert one(con, "select resource_tags, _extra from raw.aws_cur2") == (
        '{"user_team":"payments"}',
        None,
    )


def test_gcp_ndjson_flattens_records_and_keeps_repeated_fields_as_json(con, tmp_path):
    landing = land(tmp_path / "landing", "gcp/billing-export-2026-10.jsonl")
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"gcp_billing_export": 3}
    row = con.execute(
        "select billing_account_id, service_description, sku_description, usage_start_time, "
        "cost, invoice_month, location_region, resource_name, labels, credits, "
        "project_labels, usage_amount_in_pricing_units, _extra "
        "from raw.gcp_billing_export where _row_number = 1"
    ).fetchone()
    assert row[:8] == (
        "01A2B3-C4D5E6-F7G8H9",
        "Compute Engine",
        "N2 Instance Core running in Americas",
        "2026-10-06 18:00:00 UTC",
        "0.126652",
        "202610",
        "us-central1",
        "projects/acme-prod/zones/us-central1-a/instances/gke-prod-pool-1-a1b2c3d4-xk2p",
    )
    assert json.loads(row[8]) == [
        {"key": "goog-k8s-cluster-name", "value": "gke-prod"},
        {"key": "goog-k8s-node-pool-name", "value": "pool-1"},
    ]
    credits = json.loads(row[9])
    assert [c["type"] for c in credits] == ["COMMITTED_USAGE_DISCOUNT", "SUSTAINED_USAGE_DISCOUNT"]
    assert sum(Decimal(str(c["amount"])) for c in credits) == Decimal("-0.06")
    assert json.loads(row[10]) == [{"key": "env", "value": "prod"}]
    assert row[11] == "4.0"
    assert row[12] is None
    # The commitment row has no resource and a JSON null zone.
    assert one(
        con,
        "select resource_name, location_zone, credits from raw.gcp_billing_export "
        "where _row_number = 3",
    ) == (None, None, "[]")
    assert one(con, "select period_key from raw.loaded_files") == ("01A2B3-C4D5E6-F7G8H9|202610",)


def test_gcp_ndjson_gz_unknown_fields_go_to_extra(con, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    record = {
        "billing_account_id": "01A2B3-C4D5E6-F7G8H9",
        "service": {"id": "6F81", "description": "Compute Engine", "tier": "premium"},
        "sku": {"id": "CP-1", "description": "N2 Core"},
        "usage_start_time": "2026-10-06T18:00:00Z",
        "usage_end_time": "2026-10-06T19:00:00Z",
        "cost": 1.5,
        "currency": "USD",
        "invoice": {"month": "202610"},
        "carbon_footprint_kg": 0.25,
    }
    with gzip.open(landing / "export.json.gz", "wt") as fh:
        fh.write(json.dumps(record) + "\n")
    load_landing(con, landing)

    extra, description = one(con, "select _extra, service_description from raw.gcp_billing_export")
    assert json.loads(extra) == {"carbon_footprint_kg": "0.25", "service_tier": "premium"}
    assert description == "Compute Engine"


def test_gcp_parquet_flattens_nested_structs(con, tmp_path):
    landing = land(tmp_path / "landing", "gcp/billing-export-2026-09.parquet")
    load_landing(con, landing)

    rows = con.execute(
        "select service_description, usage_start_time, cost, credits, labels, invoice_month, "
        "usage_pricing_unit, project_labels, location_region "
        "from raw.gcp_billing_export order by _row_number"
    ).fetchall()
    assert len(rows) == 2
    assert rows[0][:3] == ("Compute Engine", "2026-09-30 23:00:00+00", "0.043586")
    assert json.loads(rows[0][3])[0]["amount"] == -0.02
    assert json.loads(rows[0][4]) == [{"key": "goog-k8s-cluster-name", "value": "gke-dev"}]
    assert [r[5] for r in rows] == ["202609", "202610"]
    assert rows[1][6] == "gibibyte month"
    assert json.loads(rows[0][7]) == [{"key": "env", "value": "dev"}]
    assert rows[1][8] is None


def test_azure_amortized_export_with_cost_in_billing_currency(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/cost-details-amortized-2026-10.csv")
    load_landing(con, landing)

    total = one(
        con, "select sum(CostInBillingCurrency::decimal(18, 6)) from raw.azure_cost_details"
    )[0]
    assert total == Decimal("7.913940")
    row = con.execute(
        "select Date, Tags, AdditionalInfo, Cost, PricingModel from raw.azure_cost_details "
        "where _row_number = 1"
    ).fetchone()
    assert row[0] == "10/06/2026"
    # Tags without braces, kept exactly as written.
    assert row[1] == (
        '"aks-managed-poolName": "nodepool1","aks-managed-orchestrator": "Kubernetes:1.30.3",'
        '"team": "platform"'
    )
    assert json.loads(row[2])["VMName"] == "aks-nodepool1-12345678-vmss_0"
    assert row[3] is None
    assert row[4] == "OnDemand"
    assert one(con, "select period_key from raw.loaded_files") == ("8611537|2026-10-01",)


def test_azure_older_ea_file_with_cost_and_instance_id(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/ea-usage-details-2025-03.csv")
    load_landing(con, landing)

    rows = con.execute(
        "select Cost, CostInBillingCurrency, ResourceId, InstanceId, Tags, _extra, "
        "BillingCurrency from raw.azure_cost_details order by _row_number"
    ).fetchall()
    assert [r[0] for r in rows] == ["0.04608", "0.1305"]
    assert rows[0][1] is None and rows[0][2] is None
    assert rows[0][3].endswith("/virtualMachineScaleSets/aks-agentpool-11223344-vmss")
    assert rows[0][4] == '{  "aks-managed-poolName": "agentpool",  "team": "search"}'
    # The older schema's `Currency` is the billing currency (it was left in _extra, unread).
    assert rows[0][5] is None
    assert rows[0][6] == "USD"
    # No BillingAccountId: the period is the subscription and the month of Date.
    assert one(con, "select period_key from raw.loaded_files") == (
        "5f6e7d8c-9b0a-1234-5678-9abcdef01234|2025-03-01",
    )


def test_azure_camel_case_headers_land_in_the_canonical_columns(con, tmp_path):
    landing = land(tmp_path / "landing", "azure/mca-cost-details-camelcase.csv")
    load_landing(con, landing)

    assert one(
        con,
        "select Date, SubscriptionId, MeterCategory, CostInBillingCurrency, BillingCurrency "
        "from raw.azure_cost_details",
    ) == ("2026-10-07", "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "Virtual Machines", "4.608", "USD")


@pytest.mark.parametrize(
    ("sample", "effective_total", "present", "absent"),
    [
        ("focus/focus-1.0-2026-10.csv", Decimal("0.4416"), "ChargeClass", "InvoiceId"),
        ("focus/focus-1.2-2026-10.csv", Decimal("1.2000"), "InvoiceId", None),
    ],
)
def test_focus_exports(con, tmp_path, sample, effective_total, present, absent):
    landing = land(tmp_path / "landing", sample)
    load_landing(con, landing)

    assert one(con, "select count(*) from raw.focus_billing") == (2,)
    total = one(con, "select sum(EffectiveCost::decimal(18, 4)) from raw.focus_billing")[0]
    assert total == effective_total
    # Every known column exists whether or not the file had it; missing ones are NULL.
    assert present in column_names(con, "focus_billing")
    if absent:
        assert one(con, f"select count({absent}) from raw.focus_billing") == (0,)


def test_focus_1_2_keeps_provider_columns_in_extra(con, tmp_path):
    landing = land(tmp_path / "landing", "focus/focus-1.2-2026-10.csv")
    load_landing(con, landing)

    extra, tags, category = one(
        con,
        "select _extra, Tags, ServiceSubcategory from raw.focus_billing where _row_number = 1",
    )
    assert json.loads(extra) == {"x_ServicePeriodStart": "2026-10-06T00:00:00Z"}
    assert json.loads(tags)["goog-k8s-node-pool-name"] == "pool-1"
    assert category == "Virtual Machines"


def test_koku_pod_report_takes_the_cluster_id_from_the_manifest(con, tmp_path):
    landing = land(tmp_path / "landing", "koku/manifest.json", "koku/pod-usage.csv")
    summary = load_landing(con, landing)

    assert summary.files_loaded == 1
    assert summary.files_ignored == 1  # the manifest
    rows = con.execute(
        "select _cluster_id, pod, node_role, pod_usage_cpu_core_seconds, pod_labels "
        "from raw.koku_pod_usage order by _row_number"
    ).fetchall()
    assert len(rows) == 4
    assert {r[0] for r in rows} == {"prod-east-1"}
    assert rows[1][1:4] == ("indexer-0", "worker", "5400.500000")
    assert rows[2][2] == "master"
    assert rows[0][4] == "label_app:checkout|label_team:payments|label_pod_template_hash:7d9c8b6f4"
    assert one(con, "select period_key from raw.loaded_files") == (
        "prod-east-1|2026-10-06 18:00:00 +0000 UTC",
    )


def test_koku_pod_report_without_node_role_uses_the_folder_as_cluster(con, tmp_path):
    landing = land(tmp_path / "landing", "koku-variants/gke-prod/pod-usage-no-node-role.csv")
    load_landing(con, landing)

    assert con.execute(
        "select _cluster_id, pod, node_role, resource_id from raw.koku_pod_usage "
        "order by _row_number"
    ).fetchall() == [
        ("gke-prod", "checkout-7d9c8b6f4-x2x9k", None, "gke-prod-pool-1-a1b2c3d4-xk2p"),
        ("gke-prod", "indexer-0", None, "gke-prod-pool-1-a1b2c3d4-xk2p"),
    ]


def test_koku_pod_report_with_columns_in_another_order(con, tmp_path):
    landing = land(tmp_path / "landing", "koku-variants/aks-prod/pod-usage-reordered.csv")
    load_landing(con, landing)

    assert one(
        con,
        "select _cluster_id, namespace, pod_usage_cpu_core_seconds, pod_request_cpu_core_seconds, "
        "node_capacity_cpu_cores, pod_limit_cpu_core_seconds, report_period_end "
        "from raw.koku_pod_usage",
    ) == (
        "aks-prod",
        "payments",
        "1650.250000",
        "3600.000000",
        "4.000000",
        None,
        "2026-11-01 00:00:00 +0000 UTC",
    )


def test_koku_storage_and_label_reports(con, tmp_path):
    landing = land(
        tmp_path / "landing",
        "koku/manifest.json",
        "koku/storage-usage.csv",
        "koku/node-labels.csv",
        "koku/namespace-labels.csv",
        "koku/ros-container.csv",
    )
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {
        "koku_namespace_labels": 3,
        "koku_node_labels": 2,
        "koku_storage_usage": 2,
    }
    assert summary.files_ignored == 2  # the manifest and the resource-optimization report
    assert one(
        con,
        "select csi_volume_handle, persistentvolumeclaim_capacity_bytes, _cluster_id "
        "from raw.koku_storage_usage where _row_number = 1",
    ) == ("vol-0a1b2c3d4e5f67890", "107374182400.000000", "prod-east-1")
    assert one(con, "select node_labels from raw.koku_node_labels where _row_number = 2") == (
        "label_node_role_kubernetes_io_control_plane:|label_node_kubernetes_io_instance_type"
        ":m5.2xlarge",
    )
    assert one(con, "select namespace from raw.koku_namespace_labels where _row_number = 3") == (
        "kube-system",
    )


def test_supplementary_csvs_and_rate_card(con, tmp_path):
    landing = land(
        tmp_path / "landing",
        "supplementary/nodes.csv",
        "supplementary/owners.csv",
        "supplementary/lb-services.csv",
        "supplementary/rate-card.csv",
    )
    summary = load_landing(con, landing)

    assert summary.rows_by_table == {
        "cluster_lb_services": 2,
        "cluster_nodes": 4,
        "cluster_owners": 5,
        "rate_card": 4,
    }
    assert one(
        con,
        "select provider_id, last_seen from raw.cluster_nodes "
        "where node = 'ip-10-0-150-20.ec2.internal'",
    ) == ("aws:///us-east-1b/i-07017c9d687179be8", None)
    assert one(
        con,
        "select owner_kind, owner_name from raw.cluster_owners "
        "where name = 'nightly-report-29123400'",
    ) == ("CronJob", "nightly-report")
    assert one(
        con,
        "select load_balancer_id from raw.cluster_lb_services where service = 'checkout-public'",
    )[0].startswith("arn:aws:elasticloadbalancing:")
    assert con.execute(
        "select price, effective_from from raw.rate_card where selector_type = 'label' "
        "and resource = 'node' order by _row_number"
    ).fetchall() == [("0.98", "2026-01-01"), ("0.91", "2026-10-15")]
    assert one(con, "select period_key from raw.loaded_files where format = 'rate_card'") == (
        "supplementary/rate-card.csv",
    )


def test_the_whole_sample_folder_loads_in_one_call(tmp_path):
    landing = tmp_path / "landing"
    for folder in DATA_FOLDERS:
        shutil.copytree(SAMPLES / folder, landing / folder)
    lines: list[str] = []
    summary = load_landing(
        tmp_path / "warehouse" / "kubeledger.duckdb", landing, progress=lines.append
    )

    # issue 17 added five: focus-sample-nulls (4 rows, 1 quarantined), aws-focus-1.0 (4),
    # azure-focus-1.0 (3), legacy-payg-usage (2), mca-instance-name (1); the GPU report one (2)
    assert summary.files_loaded == 26
    assert summary.files_ignored == 2
    assert summary.rows_loaded == 55 + 14 + 2
    assert summary.rows_quarantined == 1
    assert len(lines) == 28
    assert lines[2] == "loaded  aws/cur-legacy-2026-10.csv -> raw.aws_cur_legacy: 5 rows"
    with duckdb.connect(str(tmp_path / "warehouse" / "kubeledger.duckdb")) as check:
        empty = [
            spec.raw_table
            for spec in FORMATS
            if check.execute(f"select count(*) from raw.{spec.raw_table}").fetchone()[0] == 0
        ]
        assert empty == []
        assert check.execute("select count(*) from raw.loaded_files").fetchone() == (26,)


def test_the_contract_lists_every_known_and_typed_column():
    """docs/landing-and-raw.md is the contract staging is written against: it must not drift."""
    doc = (Path(__file__).parents[1] / "docs" / "landing-and-raw.md").read_text()
    for spec in FORMATS:
        known = f"- `raw.{spec.raw_table}`: " + ", ".join(f"`{c}`" for c in spec.columns)
        assert known + "\n" in doc, spec.raw_table
        typed = (
            f"| `raw.{spec.raw_table}` | "
            f"{', '.join(f'`{c}`' for c in spec.timestamps) or '—'} | "
            f"{', '.join(f'`{c}`' for c in spec.numbers) or '—'} | "
            f"{', '.join(f'`{c}`' for c in spec.optional_numbers) or '—'} |"
        )
        assert typed in doc, spec.raw_table


@pytest.mark.parametrize(
    ("value", "reads"),
    [
        ("12", True),
        ("-0.5", True),
        ("1.2E-5", True),
        (" 3 ", True),
        ("", True),
        ("n/a", False),
        ("1,234.5", False),
        ("$3", False),
        ("NaN", False),
        ("inf", False),
    ],
)
def test_which_numbers_read(con, value, reads):
    from kubeledger.load.sql import readable_number_sql

    assert con.execute(f"select {readable_number_sql('$1')}", [value]).fetchone() == (reads,)


def test_a_connection_in_another_time_zone_still_loads_utc_text(con, tmp_path):
    landing = land(tmp_path / "landing", "gcp/billing-export-2026-09.parquet")
    con.execute("set TimeZone = 'America/Los_Angeles'")
    con.execute("set preserve_insertion_order = false")

    load_landing(con, landing)

    assert one(con, "select usage_start_time from raw.gcp_billing_export limit 1") == (
        "2026-09-30 23:00:00+00",
    )
    # The caller's settings are given back.
    assert one(
        con, "select current_setting('TimeZone'), current_setting('preserve_insertion_order')"
    ) == ("America/Los_Angeles", False)
