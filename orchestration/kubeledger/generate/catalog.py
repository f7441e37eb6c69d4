"""What runs on every demo cluster: namespaces, their labels, and workload templates.

Label keys are written as Kubernetes spells them (`app.kubernetes.io/name`, `Team`);
the usage writer sanitizes them the way kube-state-metrics does (`label_app_kubernetes_io_name`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

GENERATED_TEAM = "7e3f9a1c0b2d"  # a hex value: must never become an owner
GENERATED_COST_CENTER = "550e8400-e29b-41d4-a716-446655440000"  # a UUID: likewise


@dataclass(frozen=True)
class Template:
    namespace: str
    kind: str  # Deployment | StatefulSet | DaemonSet | CronJob | Job | Pod | Static
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    cpu: float = 1.0  # request size, relative; scaled so workers are ~60% requested
    mem: float = 1.0
    abs_cpu: float | None = None  # cores, for DaemonSets and static pods
    abs_mem_mib: int | None = None
    replicas: int | None = None  # None: scaled with the fleet by `weight`
    weight: float = 1.0
    util: float = 0.5  # typical CPU usage / request
    mem_util: float = 0.7
    burst: float = 0.02  # share of hours whose CPU bursts over the request
    mem_burst: float = 0.0  # share of hours whose memory goes over the request
    cpu_limit: float | None = 2.0  # x request; None: no limit
    mem_limit: float | None = 1.5
    pvc_gib: int = 0  # StatefulSet volumeClaimTemplate `data`
    shared_pvc: tuple[str, int] | None = None  # a claim every replica mounts
    cron_hour: int = 0  # CronJob: UTC hour it starts daily
    run_secs: int = 0  # CronJob / Job: seconds a run lasts
    omit_owner: bool = False  # leave its pods out of owners.csv (pod-name fallback)
    no_requests: bool = False  # BestEffort pod
    stress: bool = False  # the load test that over-commits its node
    mem_stress: bool = False  # uses half its node's memory, far over its request
    kinds: tuple[str, ...] = ("eks", "gke", "aks", "onprem")


PLATFORM_NAMESPACES = (
    "kube-system",
    "monitoring",
    "logging",
    "ingress-nginx",
    "cert-manager",
    "istio-system",
)
USER_NAMESPACES = ("checkout", "cart", "search", "ml-training", "data-pipeline", "web")

# On the on-prem (OpenShift-style) cluster the platform lives in openshift-* namespaces.
ONPREM_NAMESPACES = {
    "monitoring": "openshift-monitoring",
    "logging": "openshift-logging",
    "ingress-nginx": "openshift-ingress",
}
ONPREM_NAMES = {"ingress-nginx-controller": "router-default"}

NAMESPACE_LABELS: dict[str, dict[str, str]] = {
    "checkout": {"team": "payments", "cost_center": "cc-1001"},
    "search": {"cost_center": "cc-2002"},
    "ml-training": {"team": "ml-platform", "cost_center": "cc-3003"},
    "web": {"team": "web"},
    "openshift-monitoring": {"openshift.io/cluster-monitoring": "true"},
}

KUBE_PROMETHEUS = {"app.kubernetes.io/part-of": "kube-prometheus"}

TEMPLATES: tuple[Template, ...] = (
    # --- platform: one pod per node -------------------------------------------------------
    Template(
        "kube-system",
        "DaemonSet",
        "kube-proxy",
        {"k8s-app": "kube-proxy"},
        abs_cpu=0.1,
        abs_mem_mib=128,
        util=0.3,
        cpu_limit=None,
    ),
    Template(
        "monitoring",
        "DaemonSet",
        "node-exporter",
        {"app.kubernetes.io/name": "node-exporter", **KUBE_PROMETHEUS},
        abs_cpu=0.05,
        abs_mem_mib=64,
        util=0.6,
    ),
    Template(
        "logging",
        "DaemonSet",
        "fluent-bit",
        {"app.kubernetes.io/name": "fluent-bit"},
        abs_cpu=0.05,
        abs_mem_mib=128,
        util=0.7,
        burst=0.05,
    ),
    # --- platform: static control-plane pods (owned by their Node) ------------------------
    Template(
        "kube-system",
        "Static",
        "kube-apiserver",
        {"component": "kube-apiserver", "tier": "control-plane"},
        abs_cpu=0.25,
        abs_mem_mib=1024,
        util=0.8,
        burst=0.1,
        cpu_limit=None,
        mem_limit=None,
    ),
    Template(
        "kube-system",
        "Static",
        "etcd",
        {"component": "etcd", "tier": "control-plane"},
        abs_cpu=0.1,
        abs_mem_mib=512,
        util=0.9,
        cpu_limit=None,
        mem_limit=None,
    ),
    Template(
        "kube-system",
        "Static",
        "kube-controller-manager",
        {"component": "kube-controller-manager", "tier": "control-plane"},
        abs_cpu=0.2,
        abs_mem_mib=256,
        util=0.4,
        cpu_limit=None,
        mem_limit=None,
    ),
    Template(
        "kube-system",
        "Static",
        "kube-scheduler",
        {"component": "kube-scheduler", "tier": "control-plane"},
        abs_cpu=0.1,
        abs_mem_mib=128,
        util=0.3,
        cpu_limit=None,
        mem_limit=None,
    ),
    # --- platform: services -----------------------------------------------------------------
    Template(
        "kube-system",
        "Deployment",
        "coredns",
        {"k8s-app": "kube-dns"},
        cpu=0.5,
        mem=0.4,
        replicas=2,
        util=0.3,
    ),
    Template(
        "monitoring",
        "StatefulSet",
        "prometheus-k8s",
        {"app.kubernetes.io/name": "prometheus", **KUBE_PROMETHEUS},
        cpu=2.5,
        mem=4.0,
        replicas=1,
        util=0.7,
        mem_util=0.85,
        pvc_gib=100,
    ),
    Template(
        "monitoring",
        "Deployment",
        "grafana",
        {"app.kubernetes.io/name": "grafana", **KUBE_PROMETHEUS},
        cpu=0.5,
        mem=0.5,
        replicas=1,
        util=0.2,
    ),
    Template(
        "monitoring",
        "Deployment",
        "kube-state-metrics",
        {"app.kubernetes.io/name": "kube-state-metrics", **KUBE_PROMETHEUS},
        cpu=0.4,
        mem=0.5,
        replicas=1,
        util=0.4,
    ),
    Template(
        "ingress-nginx",
        "Deployment",
        "ingress-nginx-controller",
        {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"},
        cpu=1.0,
        mem=0.6,
        replicas=2,
        util=0.45,
        burst=0.05,
    ),
    Template(
        "cert-manager",
        "Deployment",
        "cert-manager",
        {"app.kubernetes.io/name": "cert-manager"},
        cpu=0.3,
        mem=0.3,
        replicas=1,
        util=0.1,
    ),
    Template(
        "istio-system",
        "Deployment",
        "istiod",
        {"app": "istiod", "istio": "pilot"},
        cpu=1.0,
        mem=1.0,
        replicas=1,
        util=0.3,
        kinds=("gke",),
    ),
    # --- checkout: team labels everywhere ---------------------------------------------------
    Template(
        "checkout",
        "Deployment",
        "checkout-api",
        {"app": "checkout", "team": "payments", "cost_center": "cc-1001"},
        cpu=1.5,
        mem=1.2,
        weight=3,
        util=0.45,
        burst=0.04,
    ),
    Template(
        "checkout",
        "Deployment",
        "checkout-worker",
        {
            "app.kubernetes.io/name": "checkout-worker",
            "app.kubernetes.io/part-of": "checkout",
            "team": "payments",
        },
        cpu=1.0,
        mem=1.0,
        weight=2,
        util=0.6,
    ),
    Template(
        "checkout",
        "StatefulSet",
        "checkout-db",
        {"app": "postgres", "team": "payments"},
        cpu=2.0,
        mem=3.0,
        replicas=1,
        util=0.35,
        mem_util=0.9,
        pvc_gib=50,
        cpu_limit=None,
        mem_limit=1.0,
    ),
    # --- cart: a capitalised key and an owner label -----------------------------------------
    Template(
        "cart",
        "Deployment",
        "cart",
        {"app.kubernetes.io/name": "cart", "app.kubernetes.io/part-of": "shop", "Team": "payments"},
        cpu=1.0,
        mem=0.8,
        weight=2,
        util=0.4,
    ),
    Template(
        "cart",
        "StatefulSet",
        "cart-redis",
        {"app": "redis", "owner": "payments"},
        cpu=1.0,
        mem=2.0,
        replicas=1,
        util=0.3,
        mem_util=0.8,
        pvc_gib=10,
    ),
    # --- search: an alias (squad -> team), bursting, a CronJob and the load test ------------
    Template(
        "search",
        "Deployment",
        "search-api",
        {"app": "search", "squad": "discovery"},
        cpu=1.2,
        mem=1.0,
        weight=3,
        util=0.55,
        burst=0.08,
        cpu_limit=None,
    ),
    Template(
        "search",
        "StatefulSet",
        "elasticsearch",
        {"app.kubernetes.io/name": "elasticsearch", "squad": "discovery", "cost_center": "cc-2002"},
        cpu=2.5,
        mem=4.0,
        replicas=3,
        util=0.5,
        mem_util=0.9,
        pvc_gib=100,
    ),
    Template(
        "search",
        "CronJob",
        "search-reindex",
        {"app": "search-reindex", "squad": "discovery"},
        cpu=2.0,
        mem=1.5,
        util=0.9,
        burst=0.3,
        cron_hour=3,
        run_secs=2700,
    ),
    Template(
        "search",
        "Job",
        "load-test-q4",
        {"app": "load-test"},
        cpu=0.5,
        mem=0.5,
        util=1.0,
        run_secs=3 * 3600,
        stress=True,
        cpu_limit=None,
    ),
    # --- ml-training: a shared claim, a generated-looking team value ------------------------
    Template(
        "ml-training",
        "Deployment",
        "model-server",
        {"app": "model-server", "owner": "ml-platform", "cost_center": "cc-3003"},
        cpu=1.5,
        mem=3.0,
        replicas=2,
        util=0.4,
        shared_pvc=("shared-models", 200),
    ),
    Template(
        "ml-training",
        "StatefulSet",
        "trainer",
        {"app": "trainer", "team": GENERATED_TEAM},
        cpu=3.0,
        mem=4.0,
        replicas=2,
        util=0.85,
        burst=0.15,
        mem_util=0.8,
        mem_burst=0.03,
        pvc_gib=200,
        cpu_limit=None,
        mem_limit=None,
    ),
    # --- data-pipeline: a UUID cost center, unlabeled pods, a nightly job with a claim ------
    Template(
        "data-pipeline",
        "Deployment",
        "etl-runner",
        {"app": "etl", "team": "data", "cost_center": GENERATED_COST_CENTER},
        cpu=1.0,
        mem=1.5,
        weight=2,
        util=0.5,
        mem_burst=0.05,
        mem_limit=None,
    ),
    Template(
        "data-pipeline",
        "Deployment",
        "airflow-scheduler",
        {},
        cpu=0.8,
        mem=1.0,
        replicas=1,
        util=0.3,
    ),
    Template(
        "data-pipeline",
        "CronJob",
        "nightly-report",
        {"app": "nightly-report", "team": "data"},
        cpu=1.5,
        mem=2.0,
        util=0.8,
        cron_hour=2,
        run_secs=5400,
        shared_pvc=("reports-cache", 20),
    ),
    # --- web: two spellings of app, no labels, missing owner rows, a bare pod ---------------
    Template(
        "web",
        "Deployment",
        "frontend",
        {
            "app": "frontend",
            "app.kubernetes.io/name": "web-frontend",
            "team": "web",
            "cost_center": "cc-4004",
        },
        cpu=0.8,
        mem=0.6,
        weight=4,
        util=0.35,
        burst=0.03,
    ),
    Template(
        "web", "Deployment", "legacy-cms", {}, cpu=0.8, mem=1.0, weight=1, util=0.2, omit_owner=True
    ),
    Template(
        "web",
        "Pod",
        "debug-shell",
        {"run": "debug-shell"},
        replicas=1,
        no_requests=True,
        util=0.0,
        cpu_limit=None,
        mem_limit=None,
    ),
)


# Messy fleets only (Messiness.memory_bursts): a nightly shuffle whose memory goes far over its
# request, so some node-hours are over-committed on memory as well as CPU.
MEMORY_BURST_TEMPLATES: tuple[Template, ...] = (
    Template(
        "data-pipeline",
        "CronJob",
        "spark-shuffle",
        {"app": "spark-shuffle", "team": "data"},
        cpu=0.5,
        mem=0.5,
        util=0.6,
        cron_hour=5,
        run_secs=2 * 3600,
        mem_stress=True,
        mem_limit=None,
    ),
)


def templates_for(kind: str, memory_bursts: bool = False) -> list[Template]:
    """The templates of a cluster kind, with on-prem's namespaces and names applied."""
    out = []
    extra = MEMORY_BURST_TEMPLATES if memory_bursts else ()
    for template in TEMPLATES + extra:
        if kind not in template.kinds:
            continue
        if kind == "onprem":
            template = Template(
                **{
                    **template.__dict__,
                    "namespace": ONPREM_NAMESPACES.get(template.namespace, template.namespace),
                    "name": ONPREM_NAMES.get(template.name, template.name),
                }
            )
        out.append(template)
    return out


def namespaces_for(kind: str, memory_bursts: bool = False) -> list[str]:
    return sorted({template.namespace for template in templates_for(kind, memory_bursts)})
