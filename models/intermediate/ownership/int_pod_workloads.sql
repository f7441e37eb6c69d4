-- One row per cluster, namespace and pod: the workload it belongs to, from owner references
-- (SPEC §6): a ReplicaSet owned by a Deployment resolves to the Deployment (one hop up), a Job
-- owned by a CronJob to the CronJob; DaemonSets, StatefulSets and Jobs are their own stable
-- owners; bare pods and static control-plane pods (owned by a Node) keep their own name. Where
-- the cluster reported no owner for a pod, the pod name is parsed (`pod_name_fallback`,
-- counted in data health) when it has a controller's generated suffix (Kubernetes draws those
-- from an alphabet without vowels, so `debug-shell` is not mistaken for one); otherwise the pod
-- is a bare pod.
with

pods as (
    select distinct
        cluster_id,
        namespace,
        pod
    from {{ ref('int_pod_costs_daily') }}
),

owners as (
    select
        cluster_id,
        namespace,
        kind,
        name,
        owner_kind,
        owner_name
    from {{ ref('stg_cluster__owners') }}
),

pod_owners as (
    select
        cluster_id,
        namespace,
        name as pod,
        min(owner_kind) as owner_kind,
        min(owner_name) as owner_name
    from owners
    where lower(kind) = 'pod'
    group by cluster_id, namespace, name
),

-- one hop up: ReplicaSet → Deployment, Job → CronJob
parents as (
    select
        cluster_id,
        namespace,
        kind,
        name,
        min(owner_kind) as owner_kind,
        min(owner_name) as owner_name
    from owners
    where lower(kind) in ('replicaset', 'job')
    group by cluster_id, namespace, kind, name
),

resolved as (
    select
        pods.cluster_id,
        pods.namespace,
        pods.pod,
        pod_owners.owner_kind as direct_owner_kind,
        pod_owners.owner_name as direct_owner_name,
        parents.owner_kind as parent_owner_kind,
        parents.owner_name as parent_owner_name
    from pods
    left join pod_owners
        on
            pods.cluster_id = pod_owners.cluster_id
            and pods.namespace = pod_owners.namespace
            and pods.pod = pod_owners.pod
    left join parents
        on
            pod_owners.cluster_id = parents.cluster_id
            and pod_owners.namespace = parents.namespace
            and lower(pod_owners.owner_kind) = lower(parents.kind)
            and pod_owners.owner_name = parents.name
),

final as (
    select
        cluster_id,
        namespace,
        pod,
        case
            when lower(direct_owner_kind) = 'node' then 'StaticPod'
            when parent_owner_kind is not null then parent_owner_kind
            when direct_owner_kind is not null then direct_owner_kind
            when
                {{ regexp_matches(
                    'pod',
                    "'^.+-[bcdfghjklmnpqrstvwxz24-9]{9,10}-[bcdfghjklmnpqrstvwxz24-9]{5}$'"
                ) }}
                then 'Deployment'
            when
                {{ regexp_matches('pod', "'^.+-[0-9]{8}-[bcdfghjklmnpqrstvwxz24-9]{5}$'") }}
                then 'CronJob'
            when {{ regexp_matches('pod', "'^.+-[0-9]+$'") }} then 'StatefulSet'
            when
                {{ regexp_matches('pod', "'^.+-[bcdfghjklmnpqrstvwxz24-9]{5}$'") }}
                then 'DaemonSet'
            else 'Pod'
        end as workload_kind,
        case
            when lower(direct_owner_kind) = 'node' then pod
            when parent_owner_name is not null then parent_owner_name
            when direct_owner_name is not null then direct_owner_name
            when
                {{ regexp_matches(
                    'pod',
                    "'^.+-[bcdfghjklmnpqrstvwxz24-9]{9,10}-[bcdfghjklmnpqrstvwxz24-9]{5}$'"
                ) }}
                then
                    regexp_extract(
                        pod,
                        '^(.+)-[bcdfghjklmnpqrstvwxz24-9]{9,10}-[bcdfghjklmnpqrstvwxz24-9]{5}$',
                        1
                    )
            when {{ regexp_matches('pod', "'^.+-[0-9]{8}-[bcdfghjklmnpqrstvwxz24-9]{5}$'") }}
                then regexp_extract(pod, '^(.+)-[0-9]{8}-[bcdfghjklmnpqrstvwxz24-9]{5}$', 1)
            when {{ regexp_matches('pod', "'^.+-[0-9]+$'") }}
                then regexp_extract(pod, '^(.+)-[0-9]+$', 1)
            when {{ regexp_matches('pod', "'^.+-[bcdfghjklmnpqrstvwxz24-9]{5}$'") }}
                then regexp_extract(pod, '^(.+)-[bcdfghjklmnpqrstvwxz24-9]{5}$', 1)
            else pod
        end as workload_name,
        case
            when direct_owner_kind is not null then 'owner_reference'
            when
                {{ regexp_matches(
                    'pod',
                    "'^.+-([bcdfghjklmnpqrstvwxz24-9]{9,10}-)?[bcdfghjklmnpqrstvwxz24-9]{5}$"
                    ~ "|^.+-[0-9]+$'"
                ) }}
                then 'pod_name_fallback'
            else 'bare_pod'
        end as workload_source
    from resolved
)

select * from final
