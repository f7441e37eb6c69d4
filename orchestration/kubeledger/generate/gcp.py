"""Google Cloud detailed usage cost export: newline-delimited JSON in the BigQuery nested
shape, day-level rows, one gzip file per invoice month (months are UTC months here)."""

from __future__ import annotations

from kubeledger.generate.context import Context, sql_str, union_lines
from kubeledger.generate.fleet import GCP_REGION, GIB

COMPUTE = ("6F81-5844-456A", "Compute Engine")
NETWORKING = ("E505-1604-58F8", "Networking")
CLOUD_SQL = ("9662-B51E-5089", "Cloud SQL")
CORE_HOUR = 0.031611
RAM_GIB_HOUR = 0.004237
SPOT_CORE_HOUR = 0.00763
SPOT_RAM_GIB_HOUR = 0.001023
CUD_CORE_HOUR = 0.019915
CUD_RAM_GIB_HOUR = 0.002669
SUD_SHARE = 0.2
PD_BALANCED_GIB_MONTH = 0.10
EGRESS_GB = 0.01
SQL_VCPU_HOUR = 0.0413
# Messiness.offset_timestamps: times written in Pacific time with their offset, as a
# BigQuery query in the billing account's zone writes them (-07:00, -08:00 after Nov 1).
OFFSET_ZONE = "America/Los_Angeles"

LABELS = "struct(key varchar, value varchar)[]"
CREDITS = "struct(name varchar, amount double, full_name varchar, id varchar, type varchar)[]"
LINE_COLUMNS = {
    "service_id": "varchar",
    "service_desc": "varchar",
    "sku_id": "varchar",
    "sku_desc": "varchar",
    "start_ts": "timestamp",
    "labels": LABELS,
    "system_labels": LABELS,
    "zone": "varchar",
    "resource_name": "varchar",
    "global_name": "varchar",
    "cost": "double",
    "amount": "double",
    "unit": "varchar",
    "pricing_amount": "double",
    "pricing_unit": "varchar",
    "credits": CREDITS,
}


def _cluster_labels(cluster_col: str, pool_col: str | None = None) -> str:
    labels = f"{{'key': 'goog-k8s-cluster-name', 'value': {cluster_col}}}"
    if pool_col:
        labels += f", {{'key': 'goog-k8s-node-pool-name', 'value': {pool_col}}}"
    return f"[{labels}]"


def write_gcp(ctx: Context) -> None:
    params = ctx.fleet.params
    gcp_clusters = {c.cluster_id for c in ctx.fleet.clusters if c.provider == "gcp"}
    if not gcp_clusters:
        return
    con = ctx.cursor()
    accounts = ctx.fleet.accounts
    project = accounts.gcp_project
    last = sql_str(params.last_billed.isoformat())
    committed = [
        i
        for i in ctx.fleet.instances
        if i.gen == 0 and i.cluster_id in gcp_clusters and i.purchase == "committed"
    ]
    committed_cores = sum(i.cores for i in committed)
    committed_gib = sum(i.pool.mem_gib for i in committed)
    con.execute(
        f"""
        create or replace temp table gcp_nodes as
        select node_days.*, part.part
        from node_days
        cross join (values ('core'), ('ram')) as part(part)
        where provider = 'gcp' and usage_date <= date {last};
        create or replace temp table gcp_days as
        select cluster_id, usage_date from cluster_days
        where provider = 'gcp' and usage_date <= date {last};
        create or replace temp table gcp_node_days as
        select distinct cluster_id, usage_date from gcp_nodes;
        """
    )
    day_ts = "cast(usage_date as timestamp)"
    spot = "purchase = 'spot'"
    core = "part = 'core'"
    cost = f"""round(case
        when {core} and {spot} then {SPOT_CORE_HOUR} * cores * hours
        when {core} then {CORE_HOUR} * cores * hours
        when {spot} then {SPOT_RAM_GIB_HOUR} * mem_gib * hours
        else {RAM_GIB_HOUR} * mem_gib * hours end, 6)"""
    kind = "case when part = 'core' then 'Core' else 'Ram' end"
    instances = (
        {
            "service_id": sql_str(COMPUTE[0]),
            "service_desc": sql_str(COMPUTE[1]),
            "sku_id": f"""case when {core} and {spot} then '9431-6A62-E0F4'
                               when {core} then 'BB77-5FDA-8A1E'
                               when {spot} then '2F5E-7A1E-C2D4' else 'D6E4-1DC8-9B36' end""",
            "sku_desc": f"""case when {spot} then 'Spot Preemptible ' else '' end
                            || 'N2 Instance ' || {kind} || ' running in Americas'""",
            "start_ts": day_ts,
            "labels": _cluster_labels("cluster_id", "pool_name"),
            "system_labels": """[
                {'key': 'compute.googleapis.com/cores', 'value': cores::varchar},
                {'key': 'compute.googleapis.com/machine_spec', 'value': instance_type},
                {'key': 'compute.googleapis.com/memory', 'value': (mem_gib * 1024)::varchar}]""",
            "zone": "zone",
            "resource_name": f"'projects/{project}/zones/' || zone || '/instances/' || node",
            "global_name": f"""'//compute.googleapis.com/projects/{project}/zones/' || zone
                               || '/instances/' || gce_id""",
            "cost": cost,
            "amount": f"case when {core} then cores * hours * 3600 "
            f"else mem_gib::double * {GIB} * hours * 3600 end",
            "unit": "case when part = 'core' then 'seconds' else 'byte-seconds' end",
            "pricing_amount": "case when part = 'core' then cores * hours else mem_gib * hours end",
            "pricing_unit": "case when part = 'core' then 'hour' else 'gibibyte hour' end",
            "credits": f"""case
                when purchase = 'committed' then [{{
                    'name': 'Committed use discount: N2 ' || {kind} || ' in Americas',
                    'amount': -{cost},
                    'full_name': 'Committed use discount: N2 ' || {kind} || ' in Americas',
                    'id': 'CommittedUsageDiscount-' || upper(substr(md5({kind}), 1, 10)),
                    'type': 'COMMITTED_USAGE_DISCOUNT'}}]
                when purchase = 'sustained' then [{{
                    'name': 'Sustained usage discount',
                    'amount': -round({SUD_SHARE} * {cost}, 6),
                    'full_name': 'Sustained usage discount: N2 ' || {kind} || ' in Americas',
                    'id': 'SustainedUsageDiscount-' || upper(substr(md5({kind}), 1, 10)),
                    'type': 'SUSTAINED_USAGE_DISCOUNT'}}]
                end""",
        },
        "from gcp_nodes",
    )
    disks = (
        {
            "service_id": sql_str(COMPUTE[0]),
            "service_desc": sql_str(COMPUTE[1]),
            "sku_id": "'9A2B-5E42-11C0'",
            "sku_desc": "'Balanced PD Capacity'",
            "start_ts": day_ts,
            "labels": _cluster_labels("cluster_id"),
            "zone": "split_part(csi_volume_handle, '/', 4)",
            "resource_name": "csi_volume_handle",
            "global_name": "'//compute.googleapis.com/' || csi_volume_handle",
            "cost": f"round({PD_BALANCED_GIB_MONTH} * size_gib"
            " / dayofmonth(last_day(usage_date)), 6)",
            "amount": f"size_gib::double * {GIB} * 86400",
            "unit": "'byte-seconds'",
            "pricing_amount": "size_gib / dayofmonth(last_day(usage_date))",
            "pricing_unit": "'gibibyte month'",
        },
        """from (select gcp_days.usage_date, pvcs.*
                 from gcp_days inner join pvcs on pvcs.cluster_id = gcp_days.cluster_id)""",
    )
    gigabytes = (
        f"round(5 + 40 * (hash({ctx.seed}, 'egress', cluster_id, usage_date) % 1000) / 1000.0, 3)"
    )
    egress = (
        {
            "service_id": sql_str(NETWORKING[0]),
            "service_desc": sql_str(NETWORKING[1]),
            "sku_id": "'DE9E-AFBC-A15A'",
            "sku_desc": "'Network Inter Zone Data Transfer Out'",
            "start_ts": day_ts,
            "labels": _cluster_labels("cluster_id"),
            "cost": f"round({EGRESS_GB} * {gigabytes}, 6)",
            "amount": f"{gigabytes} * {GIB}",
            "unit": "'bytes'",
            "pricing_amount": gigabytes,
            "pricing_unit": "'gibibyte'",
        },
        "from gcp_node_days",
    )
    account_days = "from (select distinct usage_date from gcp_days)"
    database = (
        {
            "service_id": sql_str(CLOUD_SQL[0]),
            "service_desc": sql_str(CLOUD_SQL[1]),
            "sku_id": "'6F08-36E8-0AE7'",
            "sku_desc": "'Cloud SQL for PostgreSQL: Zonal - vCPU in Americas'",
            "start_ts": day_ts,
            "labels": "[{'key': 'team', 'value': 'data'}]",
            "zone": "'us-central1-b'",
            "resource_name": f"'projects/{project}/instances/analytics-pg'",
            "global_name": f"'//cloudsql.googleapis.com/projects/{project}/instances/analytics-pg'",
            "cost": f"round(2 * 24 * {SQL_VCPU_HOUR}, 6)",
            "amount": str(2 * 24 * 3600),
            "unit": "'seconds'",
            "pricing_amount": "48",
            "pricing_unit": "'hour'",
        },
        account_days,
    )
    parts = [instances, disks, egress, database]
    for name, quantity, rate, unit, sku in (
        ("Core", committed_cores, CUD_CORE_HOUR, "hour", "'4D1D-7D26-F0B4'"),
        ("Ram", committed_gib, CUD_RAM_GIB_HOUR, "gibibyte hour", "'6A0A-1C3E-9B2B'"),
    ):
        if quantity:
            parts.append(
                (
                    {
                        "service_id": sql_str(COMPUTE[0]),
                        "service_desc": sql_str(COMPUTE[1]),
                        "sku_id": sku,
                        "sku_desc": f"'Commitment v1: N2 {name} in Americas for 1 Year'",
                        "start_ts": day_ts,
                        "cost": f"round({quantity} * 24 * {rate}, 6)",
                        "amount": f"{quantity}::double * 86400"
                        + (f" * {GIB}" if name == "Ram" else ""),
                        "unit": "'seconds'" if name == "Core" else "'byte-seconds'",
                        "pricing_amount": f"{quantity} * 24",
                        "pricing_unit": sql_str(unit),
                    },
                    account_days,
                )
            )
    con.execute(f"create or replace temp table gcp_lines as {union_lines(LINE_COLUMNS, parts)}")
    iso = "'%Y-%m-%dT%H:%M:%SZ'"

    def stamp(ts: str) -> str:
        if params.messiness.offset_timestamps:
            return f"iso_in_zone({ts}, '{OFFSET_ZONE}')"
        return f"strftime({ts}, {iso})"

    export_time = stamp(
        f"start_ts + interval 1 day + interval 3 hour "
        f"+ to_minutes((hash({ctx.seed}, start_ts) % 50)::integer)"
    )
    for first, following, _complete in params.billed_months():
        query = f"""
            select
                '{accounts.gcp_billing_account}' as billing_account_id,
                {{'id': service_id, 'description': service_desc}} as service,
                {{'id': sku_id, 'description': sku_desc}} as sku,
                {stamp("start_ts")} as usage_start_time,
                {stamp("start_ts + interval 1 day")} as usage_end_time,
                {{'id': '{project}', 'name': 'Acme Analytics',
                  'number': '{accounts.gcp_project_number}', 'labels': []::{LABELS}}} as project,
                coalesce(labels, []::{LABELS}) as labels,
                coalesce(system_labels, []::{LABELS}) as system_labels,
                {{'location': coalesce(zone, '{GCP_REGION}'), 'country': 'US',
                  'region': '{GCP_REGION}', 'zone': zone}} as location,
                {{'name': resource_name, 'global_name': global_name}} as resource,
                cost,
                'USD' as currency,
                1.0 as currency_conversion_rate,
                {{'amount': amount, 'unit': unit, 'amount_in_pricing_units': pricing_amount,
                  'pricing_unit': pricing_unit}} as usage,
                coalesce(credits, []::{CREDITS}) as credits,
                {{'month': strftime(start_ts, '%Y%m')}} as invoice,
                'regular' as cost_type,
                {export_time} as export_time
            from gcp_lines
            where start_ts >= timestamp '{first}' and start_ts < timestamp '{following}'
            order by start_ts, service_desc, sku_desc, resource_name nulls first,
                     labels::varchar
        """
        path = (
            ctx.landing
            / "billing"
            / "gcp"
            / first.strftime("%Y-%m")
            / "billing_export-000000000000.jsonl.gz"
        )
        ctx.copy(query, path, "gcp_billing_export", "format json, compression gzip")
        ctx.progress(f"gcp: billing export {first:%Y-%m}")
