"""Reading the Kubernetes side of the landing folder (SPEC §3.1), independently of kubeledger.

Every koku-metrics-operator report is recognised by its header (never its name), parsed by
header name; the cluster is the `cluster_id` of the `manifest.json` next to the report, else the
folder's name (docs/landing-and-raw.md). Hours are UTC hours of `interval_start`.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

POD_COLUMNS = [
    "interval_start",
    "node",
    "namespace",
    "pod",
    "pod_usage_cpu_core_seconds",
    "pod_request_cpu_core_seconds",
    "pod_usage_memory_byte_seconds",
    "pod_request_memory_byte_seconds",
    "node_capacity_cpu_cores",
    "node_capacity_cpu_core_seconds",
    "node_capacity_memory_bytes",
    "node_capacity_memory_byte_seconds",
    "node_role",
    "resource_id",
    "pod_labels",
]
NUMBERS = [
    "pod_usage_cpu_core_seconds",
    "pod_request_cpu_core_seconds",
    "pod_usage_memory_byte_seconds",
    "pod_request_memory_byte_seconds",
    "node_capacity_cpu_cores",
    "node_capacity_cpu_core_seconds",
    "node_capacity_memory_bytes",
    "node_capacity_memory_byte_seconds",
    "persistentvolumeclaim_capacity_byte_seconds",
]
STORAGE_COLUMNS = [
    "interval_start",
    "namespace",
    "pod",
    "node",
    "persistentvolumeclaim",
    "persistentvolume",
    "csi_volume_handle",
    "persistentvolumeclaim_capacity_byte_seconds",
    "persistentvolume_labels",
]


GPU_COLUMNS = [
    "interval_start",
    "node",
    "namespace",
    "pod",
    "gpu_uuid",
    "gpu_model_name",
    "gpu_pod_uptime",
    "gpu_max_slices",
    "mig_instance_id",
    "mig_profile",
]
GPU_NUMBERS = ["gpu_pod_uptime", "gpu_max_slices"]

WANTED = {
    "gpus": GPU_COLUMNS,
    "pods": POD_COLUMNS,
    "storage": STORAGE_COLUMNS,
    "node_labels": ["interval_start", "node", "node_labels"],
    "namespace_labels": ["interval_start", "namespace", "namespace_labels"],
}


@dataclass
class Usage:
    pods: pd.DataFrame  # one row per cluster, node, hour, namespace, pod
    storage: pd.DataFrame  # one row per cluster, hour, namespace, pod, pvc, pv
    node_labels: pd.DataFrame  # cluster_id, node, hour, node_labels
    namespace_labels: pd.DataFrame  # cluster_id, namespace, hour, namespace_labels
    owners: pd.DataFrame  # cluster_id, namespace, kind, name, owner_kind, owner_name
    lb_services: pd.DataFrame  # cluster_id, namespace, service, load_balancer_id
    # the operator's GPU report: cluster_id, node, hour, namespace, pod, gpu_uuid, …
    gpus: pd.DataFrame | None = None


def parse_timestamps(values: pd.Series) -> pd.Series:
    """Koku timestamps (`2026-10-01 00:00:00 +0000 UTC`), ISO forms with offsets or `Z`, to UTC.
    Parsed once per distinct value (an hour's timestamp repeats on every row of the hour)."""
    codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=True)
    text = pd.Series(uniques, dtype=object).str.strip().str.replace(r"\s+UTC$", "", regex=True)
    parsed = pd.to_datetime(text, utc=True, format="mixed")
    out = parsed.to_numpy()[codes]
    result = pd.Series(
        pd.DatetimeIndex(out).tz_localize(None).tz_localize("UTC"), index=values.index
    )
    return result.where(codes >= 0)


def _read_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.removeprefix(b"\xef\xbb\xbf")


def _read_text(path: Path) -> str:
    return _read_bytes(path).decode("utf-8")


def _read_table(raw: bytes, names: list[str], wanted: list[str]) -> pa.Table:
    """The `wanted` columns of one report (only those are converted: the rest is skipped)."""
    include = [name for name in dict.fromkeys(names) if name in wanted]

    def read(types):
        return pacsv.read_csv(
            pa.BufferReader(raw),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, use_threads=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=include,
                column_types={name: types(name) for name in include},
                strings_can_be_null=False,
            ),
        )

    try:
        return read(
            lambda name: pa.float64() if name in NUMBERS or name in GPU_NUMBERS else pa.string()
        )
    except pa.ArrowInvalid:
        # A row whose numbers cannot be read is quarantined by the loader, not loaded
        # (docs/landing-and-raw.md): drop it here too.
        frame = read(lambda name: pa.string()).to_pandas()
        keep = pd.Series(True, index=frame.index)
        for name in (n for n in include if n in NUMBERS or n in GPU_NUMBERS):
            text = frame[name].astype(str).str.strip()
            number = pd.to_numeric(text.where(text != ""), errors="coerce")
            keep &= (text == "") | (number.notna() & np.isfinite(number))
            frame[name] = number
        return pa.Table.from_pandas(frame[keep].reset_index(drop=True), preserve_index=False)


def _manifest(folder: Path, cache: dict[Path, dict]) -> dict:
    if folder not in cache:
        path = folder / "manifest.json"
        try:
            cache[folder] = json.loads(path.read_text()) if path.exists() else {}
        except (ValueError, OSError):
            cache[folder] = {}
    return cache[folder]


def _kind(header: list[str]) -> str | None:
    names = {name.strip().lower() for name in header}
    if "pod_usage_cpu_core_seconds" in names:
        return "pods"
    if {"gpu_uuid", "gpu_pod_uptime"} <= names:
        return "gpus"
    if "persistentvolumeclaim_capacity_bytes" in names:
        return "storage"
    if "node_labels" in names and "pod" not in names:
        return "node_labels"
    if "namespace_labels" in names:
        return "namespace_labels"
    if {"owner_kind", "owner_name"} <= names:
        return "owners"
    if {"load_balancer_id", "service"} <= names:
        return "lb_services"
    return None


def _header(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            line = handle.readline()
    except OSError:
        return []
    return line.decode("utf-8-sig", errors="replace").strip().split(",")


def read_usage(landing: Path, deliveries: list[Path] | None = None) -> Usage:
    """Every CSV under the landing folder, recognised by its header (docs/landing-and-raw.md:
    the loader walks the folder recursively), so a layout with several fleets or later
    deliveries (`late/<day>/…`) reads the same.

    `deliveries`: folders loaded after `landing`, in load order. When given, replacement
    follows that order (docs/landing-and-raw.md: "A usage file replaces the earlier rows of the
    same cluster and report type for the hours (`interval_start`) it contains"; files of one
    load call do not replace each other), not manifest dates."""
    frames: dict[str, list] = {
        "pods": [],
        "storage": [],
        "node_labels": [],
        "namespace_labels": [],
        "owners": [],
        "lb_services": [],
        "gpus": [],
    }
    manifests: dict[Path, dict] = {}
    folders = [Path(landing), *(Path(d) for d in deliveries or [])]
    found = []
    for load, folder in enumerate(folders):
        paths = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []
        for path in paths:
            relative = path.relative_to(folder)
            if any(part.startswith(".") for part in relative.parts):
                continue
            if not (path.name.endswith(".csv") or path.name.endswith(".csv.gz")):
                continue
            kind = _kind(_header(path))
            if kind is None:
                continue
            manifest = _manifest(path.parent, manifests)
            # Without explicit deliveries a re-delivered report replaces the same hours: the
            # later delivery (the manifest's `date`, then the path) wins.
            first = load if deliveries is not None else str(manifest.get("date") or "")
            found.append((first, str(relative), path, kind, manifest, load))
    for order, (_, _, path, kind, manifest, load) in enumerate(sorted(found)):
        raw = _read_bytes(path)
        header = raw.split(b"\n", 1)[0].decode().strip().split(",")
        names = [c.strip().lower() for c in header]
        if kind in ("owners", "lb_services"):
            frame = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)
            frame.columns = names
            frames[kind].append(frame)
            continue
        table = _read_table(raw, names, WANTED[kind])
        rows = table.num_rows
        cluster = manifest.get("cluster_id") or path.parent.name
        table = (
            table.append_column("cluster_id", pa.array([cluster] * rows, pa.string()))
            .append_column("_order", pa.array([order] * rows, pa.int64()))
            .append_column("_load", pa.array([load] * rows, pa.int64()))
        )
        frames[kind].append(table)
    explicit = deliveries is not None

    pods = _latest_load(_concat(frames["pods"], POD_COLUMNS), explicit)
    pods["hour"] = parse_timestamps(pods["interval_start"]).dt.floor("h")
    for column in NUMBERS[:-1]:
        pods[column] = pods[column].astype(float).fillna(0.0)
    # A re-delivered report replaces the same hours: keep the latest file's row.
    pods = pods.sort_values("_order").drop_duplicates(
        ["cluster_id", "node", "hour", "namespace", "pod"], keep="last"
    )
    pods["usage_date"] = pods["hour"].dt.date
    storage = _latest_load(_concat(frames["storage"], STORAGE_COLUMNS), explicit)
    capacity = "persistentvolumeclaim_capacity_byte_seconds"
    storage[capacity] = pd.to_numeric(storage[capacity], errors="coerce")
    storage["hour"] = parse_timestamps(storage["interval_start"]).dt.floor("h")
    storage = storage.sort_values("_order").drop_duplicates(
        ["cluster_id", "hour", "namespace", "pod", "persistentvolumeclaim", "persistentvolume"],
        keep="last",
    )
    storage["usage_date"] = storage["hour"].dt.date
    node_labels = _latest_load(
        _concat(frames["node_labels"], ["interval_start", "node", "node_labels"]), explicit
    )
    node_labels["hour"] = parse_timestamps(node_labels["interval_start"]).dt.floor("h")
    namespace_labels = _latest_load(
        _concat(frames["namespace_labels"], ["interval_start", "namespace", "namespace_labels"]),
        explicit,
    )
    namespace_labels["hour"] = parse_timestamps(namespace_labels["interval_start"]).dt.floor("h")
    gpus = _latest_load(_concat(frames["gpus"], GPU_COLUMNS), explicit)
    gpus["hour"] = parse_timestamps(gpus["interval_start"]).dt.floor("h")
    for column in GPU_NUMBERS:
        gpus[column] = pd.to_numeric(gpus[column], errors="coerce")
    gpus = gpus.sort_values("_order").drop_duplicates(
        ["cluster_id", "node", "hour", "namespace", "pod", "gpu_uuid", "mig_instance_id"],
        keep="last",
    )
    gpus["usage_date"] = gpus["hour"].dt.date
    return Usage(
        gpus=gpus.reset_index(drop=True),
        pods=pods.reset_index(drop=True),
        storage=storage.reset_index(drop=True),
        node_labels=node_labels,
        namespace_labels=namespace_labels,
        owners=_supplementary(
            frames["owners"],
            ["cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"],
        ),
        lb_services=_supplementary(
            frames["lb_services"], ["cluster_id", "namespace", "service", "load_balancer_id"]
        ),
    )


def _latest_load(frame: pd.DataFrame, explicit: bool) -> pd.DataFrame:
    """With explicit deliveries, the rows of each cluster and hour (`interval_start` as
    written) from the latest load that brought that hour (docs/landing-and-raw.md)."""
    if not explicit or frame.empty:
        return frame
    latest = frame.groupby(["cluster_id", "interval_start"])["_load"].transform("max")
    return frame[frame["_load"] == latest].reset_index(drop=True)


def _concat(tables: list[pa.Table], columns: list[str]) -> pd.DataFrame:
    wanted = [*columns, "cluster_id", "_order", "_load"]
    if not tables:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in wanted})
    table = pa.concat_tables(tables, promote_options="default")
    for column in wanted:
        if column not in table.column_names:
            table = table.append_column(column, pa.array([""] * table.num_rows, pa.string()))
    # plain object columns: pandas' Arrow-backed strings make every take / merge slow here
    return pd.DataFrame(
        {
            column: pd.Series(
                _to_numpy(table.column(column)),
                dtype=object if pa.types.is_string(table.schema.field(column).type) else None,
            )
            for column in wanted
        }
    )


def _to_numpy(column: pa.ChunkedArray) -> np.ndarray:
    """A column as numpy; text as an object array holding one Python string per distinct
    value (built from the dictionary: fast, and each string's hash is computed once)."""
    if not pa.types.is_string(column.type):
        return column.to_numpy()
    if column.null_count:
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
    encoded = pc.dictionary_encode(column.combine_chunks())
    values = np.asarray(encoded.dictionary.to_numpy(zero_copy_only=False), dtype=object)
    return values[encoded.indices.to_numpy()]


def _supplementary(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    frame = pd.concat([f[columns] for f in frames], ignore_index=True).drop_duplicates()
    return frame.astype(object).reset_index(drop=True)
