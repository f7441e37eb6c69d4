"""AWS Cost and Usage Report 2.0 (Data Exports), daily granularity, one Parquet file per
billing period, every column a string as a CSV export would have it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from kubeledger.generate import cloud_charges
from kubeledger.generate.context import Context, sql_str, union_lines
from kubeledger.generate.fleet import AWS_REGION

EXPORT_NAME = "acme-cur2"
EDP_SHARE = 0.03  # enterprise discount: net = 0.97 x gross on every row
NET = 0.97
# us-east-1 on-demand and 1-year no-upfront reserved hourly rates
ON_DEMAND = {"m5.large": 0.096, "m5.xlarge": 0.192, "g5.12xlarge": 5.672, "p4d.24xlarge": 32.7726}
RESERVED = {"m5.large": 0.0605, "m5.xlarge": 0.121, "g5.12xlarge": 3.573, "p4d.24xlarge": 19.22}
SAVINGS_PLAN_SHARE = 0.72  # savings-plan rate / on-demand rate
EBS_GP3_GB_MONTH = 0.08
NLB_HOUR = 0.0225
EKS_HOUR = 0.10
RDS_HOUR = 0.225
DATA_TRANSFER_GB = 0.01
SPLIT_POD_HOUR = 0.0185
TAX_SHARE = 0.05
CREDIT = -25.0
# The restatement (Messiness.restated_cur): AWS re-exports the closed month with the spot
# hours re-priced and late corrections to on-demand hours.
RESTATED_SPOT = 1.04
RESTATED_ON_DEMAND = 1.01
RESTATEMENT_DELAY = dt.timedelta(days=2, hours=9)  # after month end

LINE_COLUMNS = {
    "line_type": "varchar",
    "start_ts": "timestamp",
    "end_ts": "timestamp",
    "product_code": "varchar",
    "usage_type": "varchar",
    "operation": "varchar",
    "az": "varchar",
    "resource_id": "varchar",
    "amount": "double",
    "rate": "double",
    "cost": "double",
    "net_cost": "double",
    "description": "varchar",
    "instance_type": "varchar",
    "product_family": "varchar",
    "servicecode": "varchar",
    "public_od": "double",
    "term": "varchar",
    "ri_arn": "varchar",
    "ri_eff": "double",
    "ri_unused_upfront": "double",
    "ri_unused_recurring": "double",
    "sp_arn": "varchar",
    "sp_eff": "double",
    "tags": "varchar",
}

CUR_COLUMNS = (
    "bill_payer_account_id",
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "bill_invoice_id",
    "identity_line_item_id",
    "identity_time_interval",
    "line_item_usage_account_id",
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_availability_zone",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_currency_code",
    "line_item_unblended_rate",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "line_item_line_item_description",
    "product_instance_type",
    "product_region",
    "product_product_family",
    "product_servicecode",
    "pricing_public_on_demand_cost",
    "pricing_term",
    "reservation_reservation_a_r_n",
    "reservation_effective_cost",
    "reservation_net_effective_cost",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_net_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "reservation_net_unused_recurring_fee",
    "savings_plan_savings_plan_a_r_n",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_net_savings_plan_effective_cost",
    "resource_tags",
)


def _cluster_tag(cluster_col: str) -> str:
    """SQL for `"user_kubernetes_io_cluster_<id>":"owned"` (CUR 2.0 tag keys are sanitized)."""
    return f"""'"user_kubernetes_io_cluster_' || replace({cluster_col}, '-', '_') || '":"owned"'"""


def write_aws(ctx: Context) -> None:
    params = ctx.fleet.params
    if not any(c.provider == "aws" for c in ctx.fleet.clusters):
        return
    rand = ctx.fleet.rand
    con = ctx.cursor()
    account = ctx.fleet.accounts.aws_account
    last = sql_str(params.last_billed.isoformat())
    rates = ", ".join(f"({sql_str(t)}, {ON_DEMAND[t]}, {RESERVED[t]})" for t in sorted(ON_DEMAND))
    ri_arn = f"arn:aws:ec2:{AWS_REGION}:{account}:reserved-instances/" + rand.uuid("ri")
    sp_arn = f"arn:aws:savingsplans::{account}:savingsplan/" + rand.uuid("sp")
    rds_arn = f"arn:aws:rds:{AWS_REGION}:{account}:db:orders-db"
    aws_clusters = {c.cluster_id for c in ctx.fleet.clusters if c.provider == "aws"}
    workers = [i for i in ctx.fleet.instances if i.gen == 0 and i.cluster_id in aws_clusters]
    sp_commit = round(
        1.05
        * sum(
            ON_DEMAND[i.pool.instance_type] * SAVINGS_PLAN_SHARE
            for i in workers
            if i.purchase == "savings_plan"
        ),
        3,
    )
    reserved_count = sum(1 for i in workers if i.purchase == "reserved") + 1  # one sits unused
    orphans = ", ".join(
        f"({sql_str(c.cluster_id)}, {sql_str('vol-0' + rand.hex(16, 'orphan', c.cluster_id))})"
        for c in ctx.fleet.clusters
        if c.provider == "aws"
    )
    day_ts = "cast(usage_date as timestamp)"
    next_ts = "cast(usage_date + 1 as timestamp)"
    con.execute(
        f"""
        create or replace temp table aws_days as
        select cluster_id, usage_date, day_idx
        from cluster_days where provider = 'aws' and usage_date <= date {last};
        create or replace temp table aws_rates(instance_type varchar, od double, ri double);
        insert into aws_rates values {rates};
        create or replace temp table aws_nodes as
        select
            node_days.*,
            aws_rates.od,
            aws_rates.ri,
            0.30 + 0.08 * (hash({ctx.seed}, 'spot', node_days.usage_date) % 1000) / 1000.0
                as spot_share,
            '{{' || {_cluster_tag("cluster_id")}
                || case when role = 'worker'
                        then ',"user_eks_nodegroup_name":"' || pool_name || '"' else '' end
                || '}}' as tags
        from node_days
        inner join aws_rates on aws_rates.instance_type = node_days.instance_type
        where node_days.provider = 'aws' and node_days.usage_date <= date {last};
        create or replace temp table aws_orphans(cluster_id varchar, volume_id varchar);
        insert into aws_orphans values {orphans};
        """
    )
    instance_usage = (
        {
            "line_type": """case purchase when 'savings_plan' then 'SavingsPlanCoveredUsage'
                                when 'reserved' then 'DiscountedUsage' else 'Usage' end""",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEC2'",
            "usage_type": """case when purchase = 'spot' then 'USE1-SpotUsage:'
                                  else 'USE1-BoxUsage:' end || instance_type""",
            "operation": "case when purchase = 'spot' then 'RunInstances:SV001' "
            "else 'RunInstances' end",
            "az": "zone",
            "resource_id": "resource_id",
            "amount": "hours",
            "rate": """case purchase when 'spot' then round(od * spot_share, 4)
                                     when 'reserved' then 0 else od end""",
            "cost": """hours * case purchase when 'spot' then round(od * spot_share, 4)
                                              when 'reserved' then 0 else od end""",
            "net_cost": f"""{NET} * hours * case purchase
                                when 'spot' then round(od * spot_share, 4)
                                when 'reserved' then 0 else od end""",
            "description": """case purchase
                when 'spot' then '$' || round(od * spot_share, 4) || ' per Linux '
                                 || instance_type || ' Spot Instance-hour'
                when 'reserved' then 'USD 0.0 hourly fee per Linux/UNIX (Amazon VPC), '
                                     || instance_type || ' instance'
                else '$' || od || ' per On Demand Linux ' || instance_type || ' Instance Hour'
                end""",
            "instance_type": "instance_type",
            "product_family": "'Compute Instance'",
            "servicecode": "'AmazonEC2'",
            "public_od": "hours * od",
            "term": """case purchase when 'spot' then null when 'reserved' then 'Reserved'
                       else 'OnDemand' end""",
            "ri_arn": f"case when purchase = 'reserved' then {sql_str(ri_arn)} end",
            "ri_eff": "case when purchase = 'reserved' then hours * ri end",
            "sp_arn": f"case when purchase = 'savings_plan' then {sql_str(sp_arn)} end",
            "sp_eff": f"""case when purchase = 'savings_plan'
                               then hours * od * {SAVINGS_PLAN_SHARE} end""",
            "tags": "tags",
        },
        "from aws_nodes",
    )
    negation = (
        {
            "line_type": "'SavingsPlanNegation'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEC2'",
            "usage_type": "'USE1-BoxUsage:' || instance_type",
            "operation": "'RunInstances'",
            "az": "zone",
            "resource_id": "resource_id",
            "amount": "hours",
            "rate": "-od",
            "cost": "-hours * od",
            "net_cost": f"-{NET} * hours * od",
            "description": f"""'SavingsPlanNegation used by AccountId : {account} and '
                               || 'UsageSku : ' || upper(substr(md5(instance_type), 1, 16))""",
            "instance_type": "instance_type",
            "product_family": "'Compute Instance'",
            "servicecode": "'AmazonEC2'",
            "sp_arn": sql_str(sp_arn),
            "tags": "tags",
        },
        "from aws_nodes where purchase = 'savings_plan'",
    )
    data_transfer = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEC2'",
            "usage_type": "'USE1-DataTransfer-Regional-Bytes'",
            "operation": "'InterZone-In'",
            "az": "zone",
            "resource_id": "resource_id",
            "amount": f"round(2 + 30 * (hash({ctx.seed}, 'dt', resource_id, usage_date) % 1000)"
            " / 1000.0 * hours / 24, 6)",
            "rate": str(DATA_TRANSFER_GB),
            "cost": f"{DATA_TRANSFER_GB} * round(2 + 30 * (hash({ctx.seed}, 'dt', resource_id,"
            " usage_date) % 1000) / 1000.0 * hours / 24, 6)",
            "net_cost": f"{NET} * {DATA_TRANSFER_GB} * round(2 + 30 * (hash({ctx.seed},"
            " 'dt', resource_id, usage_date) % 1000) / 1000.0 * hours / 24, 6)",
            "description": "'$0.01 per GB - regional data transfer - in/out/between EC2 AZs'",
            "product_family": "'Data Transfer'",
            "servicecode": "'AWSDataTransfer'",
            "tags": "tags",
        },
        "from aws_nodes",
    )
    eks_fee = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEKS'",
            "usage_type": "'USE1-AmazonEKS-Hours:perCluster'",
            "operation": "'CreateOperation'",
            "resource_id": f"'arn:aws:eks:{AWS_REGION}:{account}:cluster/' || cluster_id",
            "amount": "24",
            "rate": str(EKS_HOUR),
            "cost": f"24 * {EKS_HOUR}",
            "net_cost": f"{NET} * 24 * {EKS_HOUR}",
            "description": "'Amazon EKS cluster usage in US East (N. Virginia)'",
            "product_family": "'Compute'",
            "servicecode": "'AmazonEKS'",
            # AWS writes the fee against the cluster ARN with no kubernetes.io/cluster tag;
            # the tidy fleet tags it (as older demo fleets did).
            "tags": "'{}'"
            if params.messiness.real_eks_fee_rows
            else f"""'{{' || {_cluster_tag("cluster_id")} || '}}'""",
        },
        "from aws_days",
    )
    split_pods = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEC2'",
            "usage_type": "'USE1-BoxUsage:m5.xlarge'",
            "operation": "'EKSPod-EC2'",
            "resource_id": f"""'arn:aws:eks:{AWS_REGION}:{account}:pod/' || cluster_id || '/'
                               || namespace || '/' || pod || '/' || md5(pod)""",
            "amount": "24",
            "rate": str(SPLIT_POD_HOUR),
            "cost": f"24 * {SPLIT_POD_HOUR}",
            "net_cost": f"{NET} * 24 * {SPLIT_POD_HOUR}",
            "description": "'EKS pod split cost of an EC2 instance'",
            "instance_type": "'m5.xlarge'",
            "product_family": "'Compute Instance'",
            "servicecode": "'AmazonEC2'",
            "tags": """'{"aws_eks_cluster_name":"' || cluster_id || '","aws_eks_namespace":"'
                       || namespace || '"}'""",
        },
        """from (
            select aws_days.cluster_id, aws_days.usage_date, segments.namespace, segments.pod
            from aws_days
            inner join segments
                on segments.cluster_id = aws_days.cluster_id
                and segments.seg_start_h <= aws_days.day_idx * 24 + 12
                and segments.seg_end_h > aws_days.day_idx * 24 + 12
            where segments.namespace = 'checkout' and segments.kind = 'Deployment'
            qualify row_number() over (
                partition by aws_days.cluster_id, aws_days.usage_date order by segments.pod
            ) <= 3
        )""",
    )
    volume_tags = f"""'{{' || {_cluster_tag("cluster_id")}
        || ',"user_kubernetes_io_created_for_pvc_name":"' || pvc
        || '","user_kubernetes_io_created_for_pvc_namespace":"' || namespace || '"}}'"""
    volumes = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonEC2'",
            "usage_type": "'USE1-EBS:VolumeUsage.gp3'",
            "operation": "'CreateVolume-Gp3'",
            "az": "'us-east-1a'",
            "resource_id": "volume_id",
            "amount": "size_gib / dayofmonth(last_day(usage_date))",
            "rate": str(EBS_GP3_GB_MONTH),
            "cost": f"{EBS_GP3_GB_MONTH} * size_gib / dayofmonth(last_day(usage_date))",
            "net_cost": f"{NET} * {EBS_GP3_GB_MONTH} * size_gib / dayofmonth(last_day(usage_date))",
            "description": "'$0.08 per GB-month of General Purpose (gp3) provisioned storage'",
            "product_family": "'Storage'",
            "servicecode": "'AmazonEC2'",
            "tags": volume_tags,
        },
        """from (
            select aws_days.cluster_id, aws_days.usage_date, pvcs.csi_volume_handle as volume_id,
                   pvcs.size_gib, pvcs.pvc, pvcs.namespace
            from aws_days inner join pvcs on pvcs.cluster_id = aws_days.cluster_id
            union all
            select aws_days.cluster_id, aws_days.usage_date, aws_orphans.volume_id, 500,
                   'data-kafka-0', 'streaming'
            from aws_days inner join aws_orphans on aws_orphans.cluster_id = aws_days.cluster_id
        )""",
    )
    load_balancers = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AWSELB'",
            "usage_type": "'USE1-LoadBalancerUsage'",
            "operation": "'LoadBalancing:Network'",
            "resource_id": "load_balancer_id",
            "amount": "24",
            "rate": str(NLB_HOUR),
            "cost": f"24 * {NLB_HOUR}",
            "net_cost": f"{NET} * 24 * {NLB_HOUR}",
            "description": "'$0.0225 per Network LoadBalancer-hour (or partial hour)'",
            "product_family": "'Load Balancer-Network'",
            "servicecode": "'AWSELB'",
            "tags": f"""'{{' || {_cluster_tag("cluster_id")}
                || ',"user_kubernetes_io_service_name":"' || namespace || '/' || service
                || '"}}'""",
        },
        """from (
            select aws_days.cluster_id, aws_days.usage_date, lb_services.*
            exclude (cluster_id)
            from aws_days inner join lb_services on lb_services.cluster_id = aws_days.cluster_id
        )""",
    )
    account_days = "from (select distinct usage_date from aws_days)"
    database = (
        {
            "line_type": "'Usage'",
            "start_ts": day_ts,
            "end_ts": next_ts,
            "product_code": "'AmazonRDS'",
            "usage_type": "'USE1-InstanceUsage:db.r6g.large'",
            "operation": "'CreateDBInstance:0014'",
            "az": "'us-east-1b'",
            "resource_id": sql_str(rds_arn),
            "amount": "24",
            "rate": str(RDS_HOUR),
            "cost": f"24 * {RDS_HOUR}",
            "net_cost": f"{NET} * 24 * {RDS_HOUR}",
            "description": "'$0.225 per RDS db.r6g.large Single-AZ instance hour "
            "running PostgreSQL'",
            "instance_type": "'db.r6g.large'",
            "product_family": "'Database Instance'",
            "servicecode": "'AmazonRDS'",
            "term": "'OnDemand'",
            "tags": """'{"user_team":"payments"}'""",
        },
        account_days,
    )
    parts = [
        instance_usage,
        negation,
        data_transfer,
        eks_fee,
        split_pods,
        volumes,
        load_balancers,
        database,
        *cloud_charges.line_parts(account, day_ts, next_ts, NET, account_days),
    ]
    if sp_commit > 0:
        parts.append(
            (
                {
                    "line_type": "'SavingsPlanRecurringFee'",
                    "start_ts": day_ts,
                    "end_ts": next_ts,
                    "product_code": "'ComputeSavingsPlans'",
                    "usage_type": "'ComputeSP:1yrNoUpfront'",
                    "resource_id": sql_str(sp_arn),
                    "amount": "24",
                    "rate": str(sp_commit),
                    "cost": f"24 * {sp_commit}",
                    "net_cost": f"{NET} * 24 * {sp_commit}",
                    "description": "'1 year No Upfront Compute Savings Plan'",
                    "sp_arn": sql_str(sp_arn),
                },
                account_days,
            )
        )
    con.execute(f"create or replace temp table aws_daily as {union_lines(LINE_COLUMNS, parts)}")
    # The enterprise discount, per day at account level; its own net amount is 0 because every
    # other row's net_ columns already carry it.
    discount = (
        {
            "line_type": "'EdpDiscount'",
            "start_ts": "start_ts",
            "end_ts": "end_ts",
            "product_code": "'AmazonEC2'",
            "cost": f"-{EDP_SHARE} * gross",
            "net_cost": "0",
            "description": "'Enterprise Discount Program discount'",
        },
        "from (select start_ts, end_ts, sum(cost) as gross from aws_daily group by all)",
    )
    con.execute(f"insert into aws_daily {union_lines(LINE_COLUMNS, [discount])}")
    for first, following, complete in params.billed_months():
        exported = min(
            dt.datetime.combine(following, dt.time(6)),
            dt.datetime.combine(params.last_billed, dt.time(6)) + dt.timedelta(days=1),
        )
        path = _write_month(ctx, first, following, complete, ri_arn, reserved_count)
        _write_manifest(ctx, path, first, following, exported)
    restated = ctx.fleet.irregular.restated_month
    if restated:
        _write_restatement(ctx, restated, ri_arn, reserved_count, discount)


def _write_restatement(
    ctx: Context,
    first: dt.date,
    ri_arn: str,
    reserved_count: int,
    discount: tuple[dict[str, str], str],
) -> None:
    """The month re-exported after its end: the same file name and billing period with other
    amounts, delivered later (an S3 overwrite; `kubeledger load` of the later delivery
    replaces the month's rows, docs/landing-and-raw.md)."""
    following = (first + dt.timedelta(days=32)).replace(day=1)
    con = ctx.cursor()
    spot = "line_type = 'Usage' and usage_type like '%SpotUsage:%'"
    on_demand = "line_type = 'Usage' and usage_type like '%BoxUsage:%' and resource_id like 'i-%'"
    factor = (
        f"case when {spot} then {RESTATED_SPOT} "
        f"when {on_demand} then {RESTATED_ON_DEMAND} else 1 end"
    )
    con.execute(
        f"""
        create or replace temp table aws_daily_original as select * from aws_daily;
        create or replace temp table aws_daily as
        select * replace (rate * {factor} as rate, cost * {factor} as cost,
                          net_cost * {factor} as net_cost)
        from aws_daily_original where line_type <> 'EdpDiscount';
        insert into aws_daily {union_lines(LINE_COLUMNS, [discount])};
        """
    )
    delivered = dt.datetime.combine(following, dt.time()) + RESTATEMENT_DELAY
    root = ctx.late_root(delivered.date())
    path = _write_month(ctx, first, following, True, ri_arn, reserved_count, landing=root)
    _write_manifest(ctx, path, first, following, delivered)
    ctx.late_files.append((delivered.date(), root, path))
    con.execute("create or replace temp table aws_daily as select * from aws_daily_original")


def _write_manifest(
    ctx: Context, data: Path, first: dt.date, following: dt.date, exported: dt.datetime
) -> None:
    """The export's manifest next to its data (the loader does not read manifests)."""
    iso = "%Y-%m-%dT%H:%M:%SZ"
    manifest = {
        "exportName": EXPORT_NAME,
        "exportTime": exported.strftime(iso),
        "billingPeriod": {
            "start": f"{first}T00:00:00Z",
            "end": f"{following}T00:00:00Z",
        },
        "dataFiles": [data.name],
    }
    path = data.parent / f"{EXPORT_NAME}-Manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    ctx.note(path, "aws_manifest", 1)


def _write_month(
    ctx: Context,
    first: dt.date,
    following: dt.date,
    complete: bool,
    ri_arn: str,
    reserved_count: int,
    landing: Path | None = None,
) -> Path:
    rand = ctx.fleet.rand
    account = ctx.fleet.accounts.aws_account
    month = f"start_ts >= timestamp '{first}' and start_ts < timestamp '{following}'"
    monthly_ts = {"start_ts": f"timestamp '{first}'", "end_ts": f"timestamp '{following}'"}
    parts: list[tuple[dict[str, str], str]] = []
    if complete:
        hours = (following - first).days * 24
        if reserved_count > 1:
            fee = RESERVED["m5.xlarge"]
            parts.append(
                (
                    {
                        **monthly_ts,
                        "line_type": "'RIFee'",
                        "product_code": "'AmazonEC2'",
                        "usage_type": "'USE1-HeavyUsage:m5.xlarge'",
                        "operation": "'RunInstances'",
                        "amount": str(reserved_count * hours),
                        "rate": str(fee),
                        "cost": f"{reserved_count * hours} * {fee}",
                        "net_cost": f"{NET} * {reserved_count * hours} * {fee}",
                        "description": f"'USD {fee} hourly fee per Linux/UNIX (Amazon VPC), "
                        "m5.xlarge instance'",
                        "instance_type": "'m5.xlarge'",
                        "product_family": "'Compute Instance'",
                        "servicecode": "'AmazonEC2'",
                        "ri_arn": sql_str(ri_arn),
                        "ri_unused_upfront": "0",
                        "ri_unused_recurring": f"({reserved_count * hours} - used) * {fee}",
                    },
                    f"""from (select coalesce(sum(amount), 0) as used from aws_daily
                             where line_type = 'DiscountedUsage' and {month})""",
                )
            )
            parts.append(
                (
                    {
                        **monthly_ts,
                        "line_type": "'EdpDiscount'",
                        "product_code": "'AmazonEC2'",
                        "cost": f"-{EDP_SHARE} * {reserved_count * hours} * {fee}",
                        "net_cost": "0",
                        "description": "'Enterprise Discount Program discount'",
                    },
                    "from (select 1)",
                )
            )
        parts.append(
            (
                {
                    **monthly_ts,
                    "line_type": "'Tax'",
                    "product_code": "'AmazonEC2'",
                    "usage_type": "'Tax'",
                    "cost": f"round({TAX_SHARE} * gross, 2)",
                    "net_cost": f"round({TAX_SHARE} * gross, 2)",
                    "description": "'Tax for product code AmazonEC2'",
                },
                f"from (select sum(cost) as gross from aws_daily where {month})",
            )
        )
        if first == ctx.fleet.params.billed_months()[0][0]:
            parts.append(
                (
                    {
                        **monthly_ts,
                        "line_type": "'Credit'",
                        "product_code": "'AmazonEC2'",
                        "amount": "0",
                        "cost": str(CREDIT),
                        "net_cost": str(CREDIT),
                        "description": "'AWS Credits: promotional credit'",
                    },
                    "from (select 1)",
                )
            )
    monthly = union_lines(LINE_COLUMNS, parts) if parts else None
    invoice = rand.digits(10, "aws-invoice", first.isoformat()) if complete else ""
    source = f"select * from aws_daily where {month}"
    if monthly:
        source += f"\nunion all\n{monthly}"
    iso = "'%Y-%m-%dT%H:%M:%SZ'"
    net = NET
    query = f"""
        with lines as ({source}),
        formatted as (
            select
                '{account}' as bill_payer_account_id,
                '{first}T00:00:00Z' as bill_billing_period_start_date,
                '{following}T00:00:00Z' as bill_billing_period_end_date,
                {sql_str(invoice)} as bill_invoice_id,
                md5(concat_ws('|', {ctx.seed}, line_type, start_ts, resource_id, usage_type,
                              operation, description)) as identity_line_item_id,
                strftime(start_ts, {iso}) || '/' || strftime(end_ts, {iso})
                    as identity_time_interval,
                '{account}' as line_item_usage_account_id,
                line_type as line_item_line_item_type,
                strftime(start_ts, {iso}) as line_item_usage_start_date,
                strftime(end_ts, {iso}) as line_item_usage_end_date,
                product_code as line_item_product_code,
                usage_type as line_item_usage_type,
                operation as line_item_operation,
                az as line_item_availability_zone,
                resource_id as line_item_resource_id,
                fmtnum(amount) as line_item_usage_amount,
                'USD' as line_item_currency_code,
                fmtnum(rate) as line_item_unblended_rate,
                fmtnum(cost) as line_item_unblended_cost,
                fmtnum(net_cost) as line_item_net_unblended_cost,
                description as line_item_line_item_description,
                instance_type as product_instance_type,
                '{AWS_REGION}' as product_region,
                product_family as product_product_family,
                servicecode as product_servicecode,
                fmtnum(public_od) as pricing_public_on_demand_cost,
                term as pricing_term,
                ri_arn as reservation_reservation_a_r_n,
                fmtnum(ri_eff) as reservation_effective_cost,
                fmtnum({net} * ri_eff) as reservation_net_effective_cost,
                fmtnum(ri_unused_upfront)
                    as reservation_unused_amortized_upfront_fee_for_billing_period,
                fmtnum({net} * ri_unused_upfront)
                    as reservation_net_unused_amortized_upfront_fee_for_billing_period,
                fmtnum(ri_unused_recurring) as reservation_unused_recurring_fee,
                fmtnum({net} * ri_unused_recurring) as reservation_net_unused_recurring_fee,
                sp_arn as savings_plan_savings_plan_a_r_n,
                fmtnum(sp_eff) as savings_plan_savings_plan_effective_cost,
                fmtnum({net} * sp_eff) as savings_plan_net_savings_plan_effective_cost,
                tags as resource_tags,
                start_ts as _start
            from lines
        )
        select {", ".join(CUR_COLUMNS)}
        from formatted
        order by _start, line_item_line_item_type, line_item_resource_id nulls first,
                 line_item_usage_type, identity_line_item_id
    """
    path = (
        (landing or ctx.landing)
        / "billing"
        / "aws"
        / first.strftime("%Y-%m")
        / f"{EXPORT_NAME}-00001.snappy.parquet"
    )
    ctx.copy(query, path, "aws_cur2", "format parquet, compression snappy")
    ctx.progress(f"aws: CUR 2.0 {first:%Y-%m}" + (" (restated)" if landing else ""))
    return path
