"""Cloud charges outside Kubernetes on the demo's AWS account, one per attribution rule of
SPEC §10, and the `cloud_charges:` section of kubeledger.yml that attributes them.

The lines carry no cluster tag and no node, volume or load-balancer ID, so they are in no
cluster's scope: every cluster's bill is the same with or without them. Per day of the AWS
account:

| line                                   | tag                              | rule              |
| -------------------------------------- | -------------------------------- | ----------------- |
| an EC2 capacity reservation (unused)   | none                             | 1 reservation     |
| an EC2 instance of a research group    | pw-resource-group-id=rg-research | 2 resource group  |
| an S3 bucket of an ETL deployment      | pw-deployment-id=dep-etl-7       | 3 deployment      |
| a SageMaker notebook                   | project=ml-platform              | 4 project tag     |
| the managed database (already billed)  | team=payments                    | 5 account default |

The resource group `rg-research` moves from `Research` to `Ops` on RESOURCE_GROUP_CHANGE (mid
first month), so its earlier days stay with Research. Google Cloud's and Azure's managed
databases match no rule: they stay unattributed (rule 6).
"""

from __future__ import annotations

import datetime as dt
import hashlib

from kubeledger.generate.fleet import AWS_REGION

CAPACITY_RESERVATION_HOUR = 1.006  # g5.xlarge, On-Demand Capacity Reservation
RESEARCH_INSTANCE_HOUR = 0.192  # m5.xlarge
S3_GB_MONTH = 0.023
ETL_BUCKET_GB = 4000
NOTEBOOK_HOUR = 0.23  # ml.m5.xlarge notebook instance
RESOURCE_GROUP_CHANGE = dt.datetime(2026, 10, 16)  # UTC


def _hex(account: str, what: str, length: int) -> str:
    return hashlib.sha256(f"{account}|{what}".encode()).hexdigest()[:length]


def capacity_reservation_id(account: str) -> str:
    return f"cr-0{_hex(account, 'capacity-reservation', 16)}"


def research_instance_id(account: str) -> str:
    return f"i-0{_hex(account, 'research-instance', 16)}"


def line_parts(account: str, day_ts: str, next_ts: str, net: float, source: str) -> list:
    """The generator's daily line parts (aws.py's `union_lines` shape), one row per day of
    `source`."""
    reservation_arn = (
        f"arn:aws:ec2:{AWS_REGION}:{account}:capacity-reservation/"
        + capacity_reservation_id(account)
    )
    notebook_arn = f"arn:aws:sagemaker:{AWS_REGION}:{account}:notebook-instance/ml-notebook"
    daily = {"line_type": "'Usage'", "start_ts": day_ts, "end_ts": next_ts, "term": "'OnDemand'"}

    def hourly(rate: float) -> dict[str, str]:
        return {
            "amount": "24",
            "rate": str(rate),
            "cost": f"24 * {rate}",
            "net_cost": f"{net} * 24 * {rate}",
            "public_od": f"24 * {rate}",
        }

    return [
        (
            {
                **daily,
                **hourly(CAPACITY_RESERVATION_HOUR),
                "product_code": "'AmazonEC2'",
                "usage_type": "'USE1-Reservation:g5.xlarge'",
                "operation": "'RunInstances:CapacityReservation'",
                "az": "'us-east-1a'",
                "resource_id": f"'{reservation_arn}'",
                "description": "'Unused On-Demand Capacity Reservation, g5.xlarge'",
                "instance_type": "'g5.xlarge'",
                "product_family": "'Compute Instance'",
                "servicecode": "'AmazonEC2'",
                "tags": "'{}'",
            },
            source,
        ),
        (
            {
                **daily,
                **hourly(RESEARCH_INSTANCE_HOUR),
                "product_code": "'AmazonEC2'",
                "usage_type": "'USE1-BoxUsage:m5.xlarge'",
                "operation": "'RunInstances'",
                "az": "'us-east-1b'",
                "resource_id": f"'{research_instance_id(account)}'",
                "description": "'$0.192 per On Demand Linux m5.xlarge Instance Hour'",
                "instance_type": "'m5.xlarge'",
                "product_family": "'Compute Instance'",
                "servicecode": "'AmazonEC2'",
                "tags": """'{"user_pw_resource_group_id":"rg-research"}'""",
            },
            source,
        ),
        (
            {
                **daily,
                "amount": f"{ETL_BUCKET_GB} / dayofmonth(last_day(usage_date))",
                "rate": str(S3_GB_MONTH),
                "cost": f"{S3_GB_MONTH} * {ETL_BUCKET_GB} / dayofmonth(last_day(usage_date))",
                "net_cost": f"{net} * {S3_GB_MONTH} * {ETL_BUCKET_GB}"
                " / dayofmonth(last_day(usage_date))",
                "product_code": "'AmazonS3'",
                "usage_type": "'TimedStorage-ByteHrs'",
                "operation": "'StandardStorage'",
                "resource_id": "'acme-etl-staging'",
                "description": "'$0.023 per GB - first 50 TB / month of storage used'",
                "product_family": "'Storage'",
                "servicecode": "'AmazonS3'",
                "tags": """'{"user_pw_deployment_id":"dep-etl-7"}'""",
            },
            source,
        ),
        (
            {
                **daily,
                **hourly(NOTEBOOK_HOUR),
                "product_code": "'AmazonSageMaker'",
                "usage_type": "'USE1-Notebk:ml.m5.xlarge'",
                "operation": "'RunInstance'",
                "resource_id": f"'{notebook_arn}'",
                "description": "'$0.23 per On-Demand Notebook ml.m5.xlarge hour'",
                "instance_type": "'ml.m5.xlarge'",
                "product_family": "'ML Instance'",
                "servicecode": "'AmazonSageMaker'",
                "tags": """'{"user_project":"ml-platform"}'""",
            },
            source,
        ),
    ]


def config_section(aws_accounts: list[str]) -> list[str]:
    """kubeledger.yml's `cloud_charges:` lines for the fleets billed to these AWS accounts."""
    change = RESOURCE_GROUP_CHANGE.strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        "# Cloud charges outside Kubernetes (SPEC §10): budget allocations and their rules.",
        "cloud_charges:",
        "  allocations:",
        "    - {name: GPU-Research, monthly_budget: 800,",
        "       thresholds: [{percent: 80}, {percent: 100, use_estimated: true}]}",
        "    - {name: Research, monthly_budget: 120, thresholds: [{percent: 50}]}",
        "    - {name: Ops, monthly_budget: 200, thresholds: [{percent: 80}]}",
        "    - {name: Data-Engineering, monthly_budget: 100}",
        "    - {name: ML-Platform, monthly_budget: 250, thresholds: [{percent: 90}]}",
        "    - {name: Shared-Services, monthly_budget: 300,",
        "       thresholds: [{percent: 75, use_estimated: true}, {percent: 100}]}",
        "  reservations:                      # rule 1",
    ]
    lines += [
        f'    - {{reservation_id: "{capacity_reservation_id(account)}", allocation: GPU-Research}}'
        for account in aws_accounts
    ]
    lines += [
        "  resource_groups:                   # rule 2: tag pw-resource-group-id",
        "    - id: rg-research",
        "      history:",
        '        - {allocation: Research, effective_from: "2026-01-01T00:00:00Z"}',
        f'        - {{allocation: Ops, effective_from: "{change}"}}',
        "    - id: rg-etl",
        '      history: [{allocation: Data-Engineering, effective_from: "2026-01-01T00:00:00Z"}]',
        "  deployments:                       # rule 3: tag pw-deployment-id",
        "    - {id: dep-etl-7, resource_group: rg-etl, user: etl-bot}",
        "  # rule 4: a `project` tag equal to an allocation's name (ML-Platform) ignoring case",
        "  accounts:                          # rule 5; Google Cloud and Azure: unattributed",
    ]
    lines += [
        f'    - {{account_id: "{account}", default_allocation: Shared-Services,\n'
        "       default_allocation_from: 2026-01-01, default_user: finops}"
        for account in aws_accounts
    ]
    return lines
