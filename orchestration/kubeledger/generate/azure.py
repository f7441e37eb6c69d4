"""Azure cost details (amortized) CSV, one file per billing month.

nodepool1 is billed one row per instance (AdditionalInfo.VMName), spotpool one row for the
whole scale set; both bill exactly the hours their nodes ran in the usage reports.
"""

from __future__ import annotations

from kubeledger.generate.context import Context, sql_str, union_lines
from kubeledger.generate.fleet import AZURE_LOCATION

BILLING_ACCOUNT_NAME = "Acme Corp"
SUBSCRIPTION_NAME = "acme-web-prod"
D4S_V3_HOUR = 0.192
RESERVED_HOUR = 0.121
LB_HOUR = 0.025
SQL_HOUR = 0.5
# Standard SSD managed disk tiers: (max GiB, name, monthly price)
DISK_TIERS = (
    (32, "E4", 2.40),
    (64, "E6", 4.80),
    (128, "E10", 9.60),
    (256, "E15", 19.20),
    (512, "E20", 38.40),
)
PER_INSTANCE_POOLS = ("nodepool1",)  # the other scale sets are billed as a whole

COLUMNS = (
    "BillingAccountId",
    "BillingAccountName",
    "BillingPeriodStartDate",
    "BillingPeriodEndDate",
    "Date",
    "SubscriptionId",
    "SubscriptionName",
    "ResourceGroup",
    "ResourceId",
    "ResourceLocation",
    "MeterCategory",
    "MeterSubCategory",
    "MeterName",
    "ConsumedService",
    "Quantity",
    "UnitOfMeasure",
    "EffectivePrice",
    "UnitPrice",
    "PayGPrice",
    "CostInBillingCurrency",
    "BillingCurrency",
    "ChargeType",
    "PricingModel",
    "Frequency",
    "ReservationId",
    "AdditionalInfo",
    "Tags",
)

LINE_COLUMNS = {
    "usage_date": "date",
    "resource_group": "varchar",
    "resource_id": "varchar",
    "meter_category": "varchar",
    "meter_subcategory": "varchar",
    "meter_name": "varchar",
    "consumed_service": "varchar",
    "quantity": "double",
    "unit": "varchar",
    "effective_price": "double",
    "unit_price": "double",
    "payg_price": "double",
    "cost": "double",
    "pricing_model": "varchar",
    "reservation_id": "varchar",
    "additional_info": "varchar",
    "tags": "varchar",
}


def write_azure(ctx: Context) -> None:
    params = ctx.fleet.params
    clusters = [c for c in ctx.fleet.clusters if c.provider == "azure"]
    if not clusters:
        return
    rand = ctx.fleet.rand
    con = ctx.cursor()
    subscription = ctx.fleet.accounts.azure_subscription
    billing_account = ctx.fleet.accounts.azure_billing_account
    last = sql_str(params.last_billed.isoformat())
    groups = ", ".join(f"({sql_str(c.cluster_id)}, {sql_str(c.resource_group)})" for c in clusters)
    # A disk left in the node resource group after its PVC was deleted (reclaim policy
    # Retain): no PV of the cluster names it, so only the link's resource-ID pattern puts it
    # in the cluster's scope, as unallocated cost (AWS's orphan is selected by its tag).
    orphans = ", ".join(
        f"({sql_str(c.cluster_id)}, {sql_str('pvc-' + rand.uuid('az-orphan', c.cluster_id))})"
        for c in clusters
    )
    reservation = (
        f"/providers/Microsoft.Capacity/reservationOrders/{rand.uuid('az-order')}"
        f"/reservations/{rand.uuid('az-reservation')}"
    )
    tiers = ", ".join(f"({size}, '{name}', {price})" for size, name, price in DISK_TIERS)
    per_instance = ", ".join(sql_str(p) for p in PER_INSTANCE_POOLS)
    con.execute(
        f"""
        create or replace temp table azure_groups(cluster_id varchar, resource_group varchar);
        insert into azure_groups values {groups};
        create or replace temp table azure_orphans(cluster_id varchar, pv varchar);
        insert into azure_orphans values {orphans};
        create or replace temp table azure_tiers(max_gib integer, tier varchar, price double);
        insert into azure_tiers values {tiers};
        create or replace temp table azure_nodes as
        select
            node_days.*,
            azure_groups.resource_group,
            '/subscriptions/{subscription}/resourceGroups/' || azure_groups.resource_group
                || '/providers/Microsoft.Compute/virtualMachineScaleSets/' || scale_set
                as scale_set_id,
            case
                when purchase = 'spot' then round(
                    {D4S_V3_HOUR} * (0.18 + 0.04 * (hash({ctx.seed}, 'az-spot', usage_date) % 100)
                    / 100.0), 4)
                when vm_index = 0 then {RESERVED_HOUR}
                else {D4S_V3_HOUR}
            end as price,
            case when purchase = 'spot' then 'Spot' when vm_index = 0 then 'Reservation'
                 else 'OnDemand' end as pricing_model
        from node_days
        inner join azure_groups on azure_groups.cluster_id = node_days.cluster_id
        where provider = 'azure' and usage_date <= date {last};
        create or replace temp table azure_days as
        select cluster_days.cluster_id, cluster_days.usage_date, azure_groups.resource_group
        from cluster_days
        inner join azure_groups on azure_groups.cluster_id = cluster_days.cluster_id
        where cluster_days.usage_date <= date {last};
        """
    )
    pool_tags_bare = """'"aks-managed-poolName": "' || pool_name
                        || '","aks-managed-cluster-name":"' || cluster_id || '"'"""
    common_vm = {
        "usage_date": "usage_date",
        "resource_group": "resource_group",
        "resource_id": "scale_set_id",
        "meter_category": "'Virtual Machines'",
        "meter_subcategory": "'Dsv3 Series'",
        "consumed_service": "'Microsoft.Compute'",
        "unit": "'1 Hour'",
        "unit_price": str(D4S_V3_HOUR),
        "payg_price": str(D4S_V3_HOUR),
    }
    per_vm = (
        {
            **common_vm,
            "meter_name": "'D4s v3'",
            "quantity": "hours",
            "effective_price": "price",
            "cost": "hours * price",
            "pricing_model": "pricing_model",
            "reservation_id": f"case when pricing_model = 'Reservation' "
            f"then {sql_str(reservation)} end",
            "additional_info": """'{"UsageType":"ComputeHR","ImageType":"Canonical",'
                || '"ServiceType":"' || instance_type || '","VMName":"' || scale_set || '_'
                || vm_index || '","VCPUs":' || cores || '}'""",
            "tags": pool_tags_bare,
        },
        f"from azure_nodes where pool_name in ({per_instance})",
    )
    whole_set = (
        {
            **common_vm,
            "meter_name": "case when pricing_model = 'Spot' then 'D4s v3 Spot' else 'D4s v3' end",
            "quantity": "hours",
            "effective_price": "price",
            "cost": "hours * price",
            "pricing_model": "pricing_model",
            "additional_info": """'{"UsageType":"ComputeHR","ImageType":"Canonical",'
                || '"ServiceType":"' || instance_type || '","VCPUs":' || cores || '}'""",
            "tags": f"'{{' || {pool_tags_bare} || '}}'",
        },
        f"""from (
            select usage_date, resource_group, scale_set_id, cluster_id, pool_name,
                   instance_type, cores, price, pricing_model, sum(hours) as hours
            from azure_nodes where pool_name not in ({per_instance})
            group by all
        )""",
    )
    disks = (
        {
            "usage_date": "usage_date",
            "resource_group": "resource_group",
            "resource_id": f"""'/subscriptions/{subscription}/resourceGroups/'
                || resource_group || '/providers/Microsoft.Compute/disks/' || pv""",
            "meter_category": "'Storage'",
            "meter_subcategory": "'Standard SSD Managed Disks'",
            "meter_name": "tier || ' LRS Disk'",
            "consumed_service": "'Microsoft.Compute'",
            "quantity": "round(1.0 / dayofmonth(last_day(usage_date)), 6)",
            "unit": "'1/Month'",
            "effective_price": "price",
            "unit_price": "price",
            "payg_price": "price",
            "cost": "price * round(1.0 / dayofmonth(last_day(usage_date)), 6)",
            "pricing_model": "'OnDemand'",
            "additional_info": """'{"DiskSize":' || size_gib || '}'""",
            "tags": """'{"kubernetes.io-created-for-pvc-name":"' || pvc
                || '","kubernetes.io-created-for-pvc-namespace":"' || namespace
                || '","k8s-azure-created-by":"kubernetes-azure-dd"}'""",
        },
        """from (
            select azure_days.usage_date, azure_days.resource_group, disks.*, tier.tier, tier.price
            from azure_days
            inner join (
                select cluster_id, pv, size_gib, pvc, namespace from pvcs
                union all
                select cluster_id, pv, 256, 'data-kafka-0', 'streaming' from azure_orphans
            ) as disks on disks.cluster_id = azure_days.cluster_id
            inner join lateral (
                select tier, price from azure_tiers where max_gib >= disks.size_gib
                order by max_gib limit 1
            ) as tier on true
        )""",
    )
    load_balancer = (
        {
            "usage_date": "usage_date",
            "resource_group": "resource_group",
            "resource_id": f"""'/subscriptions/{subscription}/resourceGroups/'
                || resource_group || '/providers/Microsoft.Network/loadBalancers/kubernetes'""",
            "meter_category": "'Load Balancer'",
            "meter_subcategory": "null",
            "meter_name": "'Standard Included LB Rules and Outbound Rules'",
            "consumed_service": "'Microsoft.Network'",
            "quantity": "24",
            "unit": "'1 Hour'",
            "effective_price": str(LB_HOUR),
            "unit_price": str(LB_HOUR),
            "payg_price": str(LB_HOUR),
            "cost": f"24 * {LB_HOUR}",
            "pricing_model": "'OnDemand'",
            "additional_info": "''",
            "tags": """'{"aks-managed-cluster-name":"' || cluster_id || '"}'""",
        },
        "from azure_days",
    )
    database = (
        {
            "usage_date": "usage_date",
            "resource_group": "'rg-web'",
            "resource_id": f"'/subscriptions/{subscription}/resourceGroups/rg-web/providers"
            "/Microsoft.Sql/servers/web-sql/databases/orders'",
            "meter_category": "'SQL Database'",
            "meter_subcategory": "'General Purpose - Compute Gen5'",
            "meter_name": "'vCore'",
            "consumed_service": "'Microsoft.Sql'",
            "quantity": "24",
            "unit": "'1 Hour'",
            "effective_price": str(SQL_HOUR),
            "unit_price": str(SQL_HOUR),
            "payg_price": str(SQL_HOUR),
            "cost": f"24 * {SQL_HOUR}",
            "pricing_model": "'OnDemand'",
            "additional_info": "''",
            "tags": """'{"team":"web"}'""",
        },
        "from (select distinct usage_date from azure_days)",
    )
    con.execute(
        "create or replace temp table azure_lines as "
        + union_lines(LINE_COLUMNS, [per_vm, whole_set, disks, load_balancer, database])
    )
    for first, following, _complete in params.billed_months():
        last_day = following.toordinal() - 1
        query = f"""
            select
                '{billing_account}' as BillingAccountId,
                '{BILLING_ACCOUNT_NAME}' as BillingAccountName,
                '{first:%m/%d/%Y}' as BillingPeriodStartDate,
                strftime(date '{first}' + {last_day - first.toordinal()}, '%m/%d/%Y')
                    as BillingPeriodEndDate,
                strftime(usage_date, '%m/%d/%Y') as Date,
                '{subscription}' as SubscriptionId,
                '{SUBSCRIPTION_NAME}' as SubscriptionName,
                resource_group as ResourceGroup,
                resource_id as ResourceId,
                '{AZURE_LOCATION}' as ResourceLocation,
                meter_category as MeterCategory,
                meter_subcategory as MeterSubCategory,
                meter_name as MeterName,
                consumed_service as ConsumedService,
                fmtnum(quantity) as Quantity,
                unit as UnitOfMeasure,
                fmtnum(effective_price) as EffectivePrice,
                fmtnum(unit_price) as UnitPrice,
                fmtnum(payg_price) as PayGPrice,
                fmtnum(cost) as CostInBillingCurrency,
                'USD' as BillingCurrency,
                'Usage' as ChargeType,
                pricing_model as PricingModel,
                'UsageBased' as Frequency,
                reservation_id as ReservationId,
                nullif(additional_info, '') as AdditionalInfo,
                tags as Tags
            from azure_lines
            where usage_date >= date '{first}' and usage_date < date '{following}'
            order by usage_date, resource_id, meter_name, additional_info
        """
        path = (
            ctx.landing
            / "billing"
            / "azure"
            / first.strftime("%Y-%m")
            / f"amortized-cost-{first:%Y%m%d}.csv"
        )
        ctx.copy(query, path, "azure_cost_details")
        ctx.progress(f"azure: cost details {first:%Y-%m}")
