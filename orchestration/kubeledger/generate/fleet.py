"""The fleet model: clusters, node pools, and the node instances that ran and when.

Everything here is small (one object per cluster and per node instance); the per-hour
tables are built from it in DuckDB.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from kubeledger.generate.ids import Rand, base36, label_string
from kubeledger.generate.irregular import Irregularities, plan_irregularities
from kubeledger.generate.messiness import Messiness

HOUR = 3600
GIB = 1024**3

AWS_ACCOUNT = "111111111111"
AWS_REGION = "us-east-1"
GCP_PROJECT = "acme-analytics"
GCP_BILLING_ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
GCP_REGION = "us-central1"
GCP_ZONE = "us-central1-a"
AZURE_SUBSCRIPTION = "3f2b8c1e-5a4d-4c6b-9e7f-1a2b3c4d5e6f"
AZURE_LOCATION = "eastus"


@dataclass(frozen=True)
class Accounts:
    """The cloud accounts one fleet is billed to (each fleet of a multi-fleet run has its own)."""

    aws_account: str = AWS_ACCOUNT
    gcp_project: str = GCP_PROJECT
    gcp_project_number: str = "482910375514"
    gcp_billing_account: str = GCP_BILLING_ACCOUNT
    azure_subscription: str = AZURE_SUBSCRIPTION
    azure_billing_account: str = "8611537"

    @classmethod
    def for_prefix(cls, prefix: str) -> Accounts:
        """Accounts of a prefixed fleet: derived from the prefix alone, so two fleets with
        different prefixes never share one."""
        if not prefix:
            return cls()
        rand = Rand(("accounts", prefix))
        billing = rand.hex(18, "gcp-billing").upper()
        return cls(
            aws_account=str(100000000000 + rand.u64("aws") % 900000000000),
            gcp_project=f"{prefix}-analytics",
            gcp_project_number=str(100000000000 + rand.u64("gcp-number") % 900000000000),
            gcp_billing_account=f"{billing[:6]}-{billing[6:12]}-{billing[12:]}",
            azure_subscription=rand.uuid("azure-subscription"),
            azure_billing_account=str(10000000 + rand.u64("azure-billing") % 90000000),
        )


KINDS = ("eks", "gke", "aks", "onprem")
BASE_IDS = {"eks": "eks-prod", "gke": "gke-analytics", "aks": "aks-web", "onprem": "onprem-dc1"}
PROVIDERS = {"eks": "aws", "gke": "gcp", "aks": "azure", "onprem": "on_prem"}


@dataclass(frozen=True)
class Params:
    seed: int
    clusters: int
    nodes: int
    days: int
    start_date: dt.date
    billed_through: dt.date
    pods_per_node: int
    messiness: Messiness = field(default_factory=Messiness.none)
    prefix: str = ""  # cluster-ID prefix of one fleet among many ("f07" -> "f07-eks-prod")

    @property
    def hours(self) -> int:
        return self.days * 24

    @property
    def end_date(self) -> dt.date:
        """The last day with usage."""
        return self.start_date + dt.timedelta(days=self.days - 1)

    def day(self, index: int) -> dt.date:
        return self.start_date + dt.timedelta(days=index)

    @property
    def last_billed_index(self) -> int:
        """Day index of the last billed day (-1 when nothing is billed)."""
        return (self.last_billed - self.start_date).days

    @property
    def last_billed(self) -> dt.date:
        """The last day the exports cover (never past the last day of usage)."""
        return min(self.billed_through, self.end_date)

    def billed_months(self) -> list[tuple[dt.date, dt.date, bool]]:
        """(first day, first day of the next month, fully billed) per month with billed days."""
        months = []
        first = self.start_date.replace(day=1)
        while first <= self.last_billed:
            following = (first + dt.timedelta(days=32)).replace(day=1)
            complete = self.billed_through >= following - dt.timedelta(days=1)
            months.append((first, following, complete))
            first = following
        return months


@dataclass(frozen=True)
class Pool:
    name: str
    role: str  # worker | control-plane
    purchase: str  # on_demand | spot | savings_plan | reserved | committed | sustained | rate_card
    instance_type: str
    cores: int
    mem_gib: int
    weight: int = 1  # pods placed on it relative to the cluster's other workers
    gpus: int = 0  # NVIDIA GPUs per node (a tainted GPU pool: only GPU workloads run on it)
    gpu_model: str = ""
    gpu_mib: int = 0
    mig: bool = False  # its GPUs are split by MIG (strategy mixed)


POOLS: dict[str, tuple[Pool | None, list[Pool]]] = {
    # EKS: one on-demand managed node group whose instances are covered by a savings
    # plan, a reservation or nothing (billing constructs, not node properties), and a spot group.
    "eks": (
        Pool("control-plane", "control-plane", "on_demand", "m5.large", 2, 8),
        [
            Pool("ng-general", "worker", "savings_plan", "m5.xlarge", 4, 16),
            Pool("ng-spot", "worker", "spot", "m5.xlarge", 4, 16),
            Pool("ng-general", "worker", "on_demand", "m5.xlarge", 4, 16),
            Pool("ng-general", "worker", "reserved", "m5.xlarge", 4, 16),
        ],
    ),
    # GKE: managed control plane; a CUD-covered pool, a spot pool, a pool earning SUDs.
    "gke": (
        None,
        [
            Pool("default-pool", "worker", "committed", "n2-standard-4", 4, 16),
            Pool("spot-pool", "worker", "spot", "n2-standard-4", 4, 16),
            Pool("batch-pool", "worker", "sustained", "n2-standard-4", 4, 16),
        ],
    ),
    # AKS: managed control plane; an on-demand scale set and a spot scale set.
    "aks": (
        None,
        [
            Pool("nodepool1", "worker", "on_demand", "Standard_D4s_v3", 4, 16),
            Pool("spotpool", "worker", "spot", "Standard_D4s_v3", 4, 16),
        ],
    ),
    # On-prem: bare metal priced from the rate card.
    "onprem": (
        Pool("control-plane", "control-plane", "rate_card", "metal-small", 16, 64),
        [
            Pool("metal-large", "worker", "rate_card", "metal-large", 32, 128, weight=2),
            Pool("metal-small", "worker", "rate_card", "metal-small", 16, 64),
        ],
    ),
}


# The GPU node pools of the messy fleet's EKS clusters (Messiness.gpu_pools): whole GPUs and a
# time-shared one on a g5.12xlarge, MIG slices on a p4d.24xlarge. Their slots come after every
# other slot, so no other node changes; they come on top of the fleet's `nodes`, so the quick
# fleets (an EKS cluster under GPU_POOL_MIN_NODES nodes, or under GPU_POOL_MIN_DAYS days) have
# none.
GPU_POOL_MIN_NODES = 3
GPU_POOL_MIN_DAYS = 7
GPU_POOLS: tuple[Pool, ...] = (
    Pool("ng-gpu", "worker", "on_demand", "g5.12xlarge", 48, 192, 1, 4, "NVIDIA A10G", 23028),
    Pool(
        "ng-mig",
        "worker",
        "on_demand",
        "p4d.24xlarge",
        96,
        1152,
        1,
        8,
        "NVIDIA A100-SXM4-40GB",
        40960,
        mig=True,
    ),
)


@dataclass
class Cluster:
    cluster_id: str
    kind: str
    index: int
    copy: int
    accounts: Accounts = field(default_factory=Accounts)
    prefix: str = ""

    @property
    def provider(self) -> str:
        return PROVIDERS[self.kind]

    @property
    def has_control_plane_nodes(self) -> bool:
        return POOLS[self.kind][0] is not None

    # AWS
    @property
    def eks_arn(self) -> str:
        return f"arn:aws:eks:{AWS_REGION}:{self.accounts.aws_account}:cluster/{self.cluster_id}"

    @property
    def aws_cluster_tag(self) -> str:
        """The CUR 2.0 resource_tags key of `kubernetes.io/cluster/<id>`."""
        return "user_kubernetes_io_cluster_" + self.cluster_id.replace("-", "_")

    # Azure
    @property
    def resource_group(self) -> str:
        """As the bill writes it; AKS writes it lower-case in provider IDs."""
        return f"MC_rg-web_{self.cluster_id}_{AZURE_LOCATION}"

    def vmss_id(self, rand: Rand) -> str:
        if self.copy == 1 and not self.prefix:
            return "12345678"
        return rand.digits(8, "vmss", self.cluster_id)

    # On-prem
    @property
    def datacenter(self) -> str:
        return self.cluster_id.removeprefix("onprem-")


@dataclass
class Instance:
    """One node as Kubernetes saw it: a spot replacement is a second instance of a slot."""

    cluster_id: str
    slot: int
    gen: int
    node: str
    pool: Pool
    zone: str
    provider_id: str
    resource_id: str
    start_h: int  # first hour index it ran in
    end_h: int  # one past the last hour index
    first_secs: int  # seconds it ran in its first hour
    last_secs: int  # seconds it ran in its last hour
    labels: str = ""
    scale_set: str = ""  # Azure
    vm_index: int = -1  # Azure
    gce_id: str = ""  # Google Cloud numeric instance id
    autoscaled: bool = False  # added by the autoscaler on days the bill does not cover yet

    @property
    def role(self) -> str:
        return self.pool.role

    @property
    def purchase(self) -> str:
        return self.pool.purchase

    @property
    def cores(self) -> int:
        return self.pool.cores

    @property
    def mem_bytes(self) -> int:
        return self.pool.mem_gib * GIB


@dataclass
class Fleet:
    params: Params
    rand: Rand
    clusters: list[Cluster]
    instances: list[Instance] = field(default_factory=list)
    accounts: Accounts = field(default_factory=Accounts)
    irregular: Irregularities = field(default_factory=Irregularities)
    used_names: set[str] = field(default_factory=set)  # node names, IPs: shared by fleets

    def cluster_instances(self, cluster_id: str) -> list[Instance]:
        return [i for i in self.instances if i.cluster_id == cluster_id]

    def slots(self, cluster_id: str) -> dict[int, Pool]:
        return {i.slot: i.pool for i in self.cluster_instances(cluster_id)}

    def autoscaled_slots(self, cluster_id: str) -> set[int]:
        return {i.slot for i in self.cluster_instances(cluster_id) if i.autoscaled}


def build_clusters(count: int, prefix: str = "", accounts: Accounts | None = None) -> list[Cluster]:
    clusters = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        copy = index // len(KINDS) + 1
        base = BASE_IDS[kind]
        cluster_id = base if copy == 1 else f"{base}-{copy}"
        if prefix:
            cluster_id = f"{prefix}-{cluster_id}"
        clusters.append(Cluster(cluster_id, kind, index, copy, accounts or Accounts(), prefix))
    return clusters


def node_counts(params: Params, clusters: list[Cluster]) -> list[int]:
    """The fleet total spread evenly; every cluster keeps at least one worker."""
    base, extra = divmod(params.nodes, len(clusters))
    counts = []
    for position, cluster in enumerate(clusters):
        wanted = base + (1 if position < extra else 0)
        minimum = 2 if cluster.has_control_plane_nodes else 1
        counts.append(max(wanted, minimum))
    return counts


def build_fleet(
    params: Params,
    kinds: list[str] | None = None,
    used_names: set[str] | None = None,
    node_counts_by_cluster: list[int] | None = None,
) -> Fleet:
    """The fleet model. `kinds` picks the clusters' kinds (default: the first
    `params.clusters` of eks, gke, aks, onprem, round robin); `used_names` is shared by the
    fleets of one multi-fleet run so node names never collide."""
    rand = Rand(params.seed if not params.prefix else f"{params.prefix}/{params.seed}")
    accounts = Accounts.for_prefix(params.prefix)
    clusters = build_clusters(params.clusters, params.prefix, accounts)
    if kinds is not None:
        clusters = _clusters_of_kinds(kinds, params.prefix, accounts)
    fleet = Fleet(params, rand, clusters, accounts=accounts)
    fleet.irregular = plan_irregularities(params, clusters)
    used = used_names if used_names is not None else set()
    fleet.used_names = used
    counts = node_counts_by_cluster or node_counts(params, fleet.clusters)
    for cluster, count in zip(fleet.clusters, counts, strict=True):
        fleet.instances.extend(_cluster_instances(fleet, cluster, count, used))
    fleet.irregular.autoscaled = [i.node for i in fleet.instances if i.autoscaled]
    fleet.irregular.gpu_nodes = [i.node for i in fleet.instances if i.pool.gpus]
    silent = fleet.irregular.silent_node
    if silent:
        # the first worker of the cluster that ran the whole day
        cid, _, day = silent
        ran = [
            i
            for i in fleet.cluster_instances(cid)
            if i.role == "worker"
            and not i.autoscaled
            and i.start_h <= day * 24
            and i.end_h >= day * 24 + 24
        ]
        fleet.irregular.silent_node = (cid, ran[0].node, day) if ran else None
    return fleet


def _clusters_of_kinds(kinds: list[str], prefix: str, accounts: Accounts) -> list[Cluster]:
    clusters = []
    copies: dict[str, int] = {}
    for index, kind in enumerate(kinds):
        copies[kind] = copies.get(kind, 0) + 1
        copy = copies[kind]
        base = BASE_IDS[kind]
        cluster_id = base if copy == 1 else f"{base}-{copy}"
        if prefix:
            cluster_id = f"{prefix}-{cluster_id}"
        clusters.append(Cluster(cluster_id, kind, index, copy, accounts, prefix))
    return clusters


def _slot_pools(cluster: Cluster, count: int) -> list[Pool]:
    control_plane, workers = POOLS[cluster.kind]
    pools = [control_plane] if control_plane else []
    pools += [workers[i % len(workers)] for i in range(count - len(pools))]
    return pools


def _lifetimes(
    params: Params, rand: Rand, cluster: Cluster, slot: int, first_spot: bool
) -> list[tuple[int, int, int, int]]:
    """(start_h, end_h, first_secs, last_secs) per instance of a slot.

    A replaced spot node stops a quarter, half or three quarters into an hour and its
    replacement starts in the same hour; whole quarters keep billed hours exact decimals.
    """
    hours = params.hours
    replaced = first_spot or rand.unit("spot-replaced", cluster.cluster_id, slot) < 0.4
    if not replaced:
        return [(0, hours, HOUR, HOUR)]
    low_day, high_day = params.days // 3, max(params.days // 3, (2 * params.days) // 3 - 1)
    day = rand.randint(low_day, high_day, "spot-day", cluster.cluster_id, slot)
    hour = day * 24 + rand.randint(6, 18, "spot-hour", cluster.cluster_id, slot)
    stop = rand.pick((900, 1800, 2700), "spot-minute", cluster.cluster_id, slot)
    return [(0, hour + 1, HOUR, stop), (hour, hours, HOUR - stop, HOUR)]


def _cluster_instances(
    fleet: Fleet, cluster: Cluster, count: int, used: set[str]
) -> list[Instance]:
    params, rand, plan = fleet.params, fleet.rand, fleet.irregular
    instances: list[Instance] = []
    vm_counters: dict[str, int] = {}
    first_spot_seen = False
    pending: list[tuple[int, int, Pool, tuple[int, int, int, int], bool]] = []
    pools = _slot_pools(cluster, count)
    for slot, pool in enumerate(pools):
        first_spot = pool.purchase == "spot" and not first_spot_seen
        first_spot_seen = first_spot_seen or pool.purchase == "spot"
        lives = (
            _lifetimes(params, rand, cluster, slot, first_spot)
            if pool.purchase == "spot"
            else [(0, params.hours, HOUR, HOUR)]
        )
        lives = _irregular_lives(plan, rand, cluster, slot, lives)
        for gen, life in enumerate(lives):
            pending.append((gen, slot, pool, life, False))
    for offset, (pool, life) in enumerate(_autoscaled(params, plan, cluster, pools)):
        pending.append((0, len(pools) + offset, pool, life, True))
    if (
        params.messiness.gpu_pools
        and cluster.kind == "eks"
        and count >= GPU_POOL_MIN_NODES
        and params.days >= GPU_POOL_MIN_DAYS
    ):
        first_gpu_slot = len(pools) + sum(1 for item in pending if item[4])
        for offset, pool in enumerate(GPU_POOLS):
            pending.append((0, first_gpu_slot + offset, pool, (0, params.hours, HOUR, HOUR), False))
    # Scale sets number instances in creation order: the originals, then replacements.
    pending.sort(key=lambda item: (item[4], item[0], item[1]))
    for gen, slot, pool, life, autoscaled in pending:
        instance = _name_instance(cluster, rand, slot, gen, pool, life, used, vm_counters)
        instance.autoscaled = autoscaled
        instance.labels = label_string(_node_labels(cluster, instance))
        instances.append(instance)
    instances.sort(key=lambda i: (i.slot, i.gen))
    return instances


def _irregular_lives(
    plan: Irregularities,
    rand: Rand,
    cluster: Cluster,
    slot: int,
    lives: list[tuple[int, int, int, int]],
) -> list[tuple[int, int, int, int]]:
    """Cut a slot's lifetimes by the scale-to-zero weekend (nodes leave Friday 22:00 and new
    ones come up Monday 06:00) and by the decommissioning (every node leaves on the day,
    staggered, the last in the afternoon)."""
    cid = cluster.cluster_id
    if plan.scale_to_zero and plan.scale_to_zero[0] == cid:
        saturday = plan.scale_to_zero[1][0]
        gap_start, gap_end = saturday * 24 - 2, (saturday + 2) * 24 + 6
        cut = []
        for start, end, first, last in lives:
            if start < gap_start:
                cut.append((start, min(end, gap_start), first, last if end <= gap_start else HOUR))
            if end > gap_end:
                cut.append((max(start, gap_end), end, first if start >= gap_end else HOUR, last))
        lives = cut
    if plan.decommissioned and plan.decommissioned[0] == cid:
        day = plan.decommissioned[1]
        stop = day * 24 + rand.randint(6, 15, "decommission", cid, slot)
        secs = rand.pick((900, 1800, 2700), "decommission-minute", cid, slot)
        cut = []
        for start, end, first, last in lives:
            if start >= stop:
                continue
            if end > stop:
                end, last = stop + 1, secs
            cut.append((start, end, first, last))
        lives = cut
    return lives


def _autoscaled(
    params: Params, plan: Irregularities, cluster: Cluster, pools: list[Pool]
) -> list[tuple[Pool, tuple[int, int, int, int]]]:
    """One node the cluster autoscaler adds on the first day the bills do not cover, in a
    worker pool whose instance type, purchase option and region have billed nodes."""
    if not params.messiness.autoscaled_unbilled_nodes or cluster.provider == "on_prem":
        return []
    if plan.decommissioned and plan.decommissioned[0] == cluster.cluster_id:
        return []
    first_unbilled = params.last_billed_index + 1
    if first_unbilled >= params.days or first_unbilled < 1:
        return []
    workers = [p for p in pools if p.role == "worker"]
    life = (first_unbilled * 24 + 3, params.hours, HOUR // 2, HOUR)
    for purchase in ("on_demand", "spot", "sustained", "committed"):
        peers = [p for p in workers if p.purchase == purchase]
        if peers:
            return [(peers[0], life)]
    return [(workers[0], life)] if workers else []


def _name_instance(
    cluster: Cluster,
    rand: Rand,
    slot: int,
    gen: int,
    pool: Pool,
    life: tuple[int, int, int, int],
    used: set[str],
    vm_counters: dict[str, int],
) -> Instance:
    cid = cluster.cluster_id
    accounts = cluster.accounts
    start_h, end_h, first_secs, last_secs = life
    common = dict(
        cluster_id=cid,
        slot=slot,
        gen=gen,
        pool=pool,
        start_h=start_h,
        end_h=end_h,
        first_secs=first_secs,
        last_secs=last_secs,
    )
    if cluster.kind == "eks":
        zone = AWS_REGION + "abc"[slot % 3]
        attempt = 0
        while True:
            third = 16 * (slot % 3) + rand.randint(0, 15, "ip3", cid, slot, gen, attempt)
            fourth = rand.randint(4, 254, "ip4", cid, slot, gen, attempt)
            second = (
                cluster.index
                if not cluster.prefix
                else rand.randint(0, 255, "ip2", cid, attempt // 4)
            )
            node = f"ip-10-{second}-{third}-{fourth}.ec2.internal"
            attempt += 1
            if node not in used:
                break
        used.add(node)
        instance_id = "i-0" + rand.hex(16, "ec2", cid, slot, gen)
        return Instance(
            node=node,
            zone=zone,
            provider_id=f"aws:///{zone}/{instance_id}",
            resource_id=instance_id,
            **common,
        )
    if cluster.kind == "gke":
        pool_hash = rand.hex(8, "gke-pool", cid, pool.name)
        attempt = 0
        while True:
            suffix = rand.chars(
                4, "abcdefghijklmnopqrstuvwxyz0123456789", "gke", cid, slot, gen, attempt
            )
            node = f"gke-{cid}-{pool.name}-{pool_hash}-{suffix}"
            attempt += 1
            if node not in used:
                break
        used.add(node)
        return Instance(
            node=node,
            zone=GCP_ZONE,
            provider_id=f"gce://{accounts.gcp_project}/{GCP_ZONE}/{node}",
            resource_id=node,
            gce_id=rand.digits(19, "gce-id", cid, slot, gen).lstrip("0"),
            **common,
        )
    if cluster.kind == "aks":
        scale_set = f"aks-{pool.name}-{cluster.vmss_id(rand)}-vmss"
        if scale_set not in vm_counters:
            while scale_set in used:  # another fleet's cluster drew the same scale set ID
                scale_set = f"aks-{pool.name}-{rand.digits(8, 'vmss', cid, scale_set)}-vmss"
            used.add(scale_set)
        index = vm_counters.get(scale_set, 0)
        vm_counters[scale_set] = index + 1
        node = f"{scale_set}{base36(index, 6)}"
        provider_id = (
            f"azure:///subscriptions/{accounts.azure_subscription}/resourceGroups/"
            f"{cluster.resource_group.lower()}/providers/Microsoft.Compute/"
            f"virtualMachineScaleSets/{scale_set}/virtualMachines/{index}"
        )
        return Instance(
            node=node,
            zone=f"{AZURE_LOCATION}-{slot % 3 + 1}",
            provider_id=provider_id,
            resource_id=str(index),
            scale_set=scale_set,
            vm_index=index,
            **common,
        )
    dc = cluster.datacenter
    if pool.role == "control-plane":
        node = f"{dc}-cp-01"
        return Instance(node=node, zone=f"{dc}-rack-a", provider_id="", resource_id="", **common)
    node = f"{dc}-node-{slot:02d}"
    return Instance(
        node=node,
        zone=f"{dc}-rack-{'ab'[slot % 2]}",
        provider_id=f"metal://{dc}/{node}",
        resource_id=node,
        **common,
    )


def _node_labels(cluster: Cluster, instance: Instance) -> dict[str, str]:
    pool = instance.pool
    labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": instance.node,
        "node.kubernetes.io/instance-type": pool.instance_type,
        "topology.kubernetes.io/zone": instance.zone,
    }
    if pool.role == "control-plane":
        labels["node-role.kubernetes.io/control-plane"] = ""
    if pool.gpus:
        # what NVIDIA's GPU feature discovery labels a GPU node with
        labels["nvidia.com/gpu.present"] = "true"
        labels["nvidia.com/gpu.count"] = str(pool.gpus)
        labels["nvidia.com/gpu.product"] = pool.gpu_model.replace(" ", "-")
        if pool.mig:
            labels["nvidia.com/mig.strategy"] = "mixed"
    if cluster.kind == "eks":
        labels["beta.kubernetes.io/instance-type"] = pool.instance_type
        labels["topology.kubernetes.io/region"] = AWS_REGION
        if pool.role == "worker":
            labels["eks.amazonaws.com/nodegroup"] = pool.name
            labels["eks.amazonaws.com/capacityType"] = (
                "SPOT" if pool.purchase == "spot" else ("ON_DEMAND")
            )
    elif cluster.kind == "gke":
        labels["cloud.google.com/gke-nodepool"] = pool.name
        labels["cloud.google.com/machine-family"] = "n2"
        labels["topology.kubernetes.io/region"] = GCP_REGION
        if pool.purchase == "spot":
            labels["cloud.google.com/gke-spot"] = "true"
    elif cluster.kind == "aks":
        labels["agentpool"] = pool.name
        labels["kubernetes.azure.com/agentpool"] = pool.name
        labels["kubernetes.azure.com/cluster"] = cluster.resource_group
        labels["kubernetes.azure.com/mode"] = "system" if pool.name == "nodepool1" else "user"
        labels["topology.kubernetes.io/region"] = AZURE_LOCATION
        if pool.purchase == "spot":
            labels["kubernetes.azure.com/scalesetpriority"] = "spot"
    else:
        if pool.role == "control-plane":
            labels["node-role.kubernetes.io/master"] = ""
        else:
            labels["node-role.kubernetes.io/worker"] = ""
    return labels
