"""Reading the landing folder for the reference pricing: file recognition by header, UTC
timestamps, usage reports reduced to node-hours and PV-days, the supplementary CSVs and the
rate card. Written from SPEC §3 and docs/landing-and-raw.md only; imports nothing of kubeledger.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

UTC = dt.UTC

# --------------------------------------------------------------------------- timestamps

_KOKU = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[ T](\d{1,2}:\d{2}:\d{2}(?:\.\d+)?)\s*([+-]\d{2}):?(\d{2})(?:\s+\S+)?$"
)
_ISO = re.compile(
    r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
    r"\s*(Z|UTC|[+-]\d{2}:?\d{2})?$"
)
_US = re.compile(
    r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$"
)


def parse_timestamp(text) -> dt.datetime | None:
    """One timestamp as an aware UTC datetime. A non-zero UTC offset is converted (SPEC §1.7:
    days are UTC), never dropped. None for empty values."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return None
    if isinstance(text, dt.datetime):
        return text.replace(tzinfo=UTC) if text.tzinfo is None else text.astimezone(UTC)
    value = str(text).strip()
    if not value:
        return None
    match = _KOKU.match(value)
    if match:
        date, clock, hours, minutes = match.groups()
        parsed = dt.datetime.fromisoformat(f"{date}T{_pad(clock)}{hours}:{minutes}")
        return parsed.astimezone(UTC)
    match = _ISO.match(value)
    if match:
        date, clock, zone = match.groups()
        stamp = f"{date}T{_pad(clock)}" if clock else f"{date}T00:00:00"
        if zone in (None, "Z", "UTC"):
            return dt.datetime.fromisoformat(stamp).replace(tzinfo=UTC)
        zone = zone if ":" in zone else f"{zone[:3]}:{zone[3:]}"
        return dt.datetime.fromisoformat(stamp + zone).astimezone(UTC)
    match = _US.match(value)
    if match:
        month, day, year, hour, minute, second, half = match.groups()
        hour_value = int(hour or 0)
        if half:
            hour_value = hour_value % 12 + (12 if half.lower() == "pm" else 0)
        return dt.datetime(
            int(year),
            int(month),
            int(day),
            hour_value,
            int(minute or 0),
            int(second or 0),
            tzinfo=UTC,
        )
    raise ValueError(f"unreadable timestamp {value!r}")


def _pad(clock: str) -> str:
    if clock.count(":") == 1:
        clock += ":00"
    return clock.zfill(8) if len(clock.split(".")[0]) < 8 else clock


def to_utc(values: pd.Series) -> pd.Series:
    """A column of timestamps (any documented form) as tz-aware UTC, parsing each distinct
    text once."""
    values = values.astype(object)
    uniques = pd.unique(values)
    mapping = {value: parse_timestamp(value) for value in uniques}
    return pd.to_datetime(values.map(mapping), utc=True)


# --------------------------------------------------------------------------- files


@dataclass
class LandingFile:
    path: Path
    relative: str
    container: str  # parquet | csv | csv.gz | json | json.gz
    columns: list[str]
    mtime: float
    load: int = 0  # 0 = the landing folder, i = the i-th explicit later delivery

    @property
    def lower(self) -> set[str]:
        return {column.lower() for column in self.columns}

    @property
    def delivery(self) -> str:
        """The folder a file came in: the parts of one export delivery share it."""
        return str(Path(self.relative).parent)


def _open_text(path: Path):
    with open(path, "rb") as handle:
        head = handle.read(2)
    if head == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig", newline="")


def _sniff(path: Path, relative: str) -> LandingFile | None:
    with open(path, "rb") as handle:
        head = handle.read(4)
    gz = head[:2] == b"\x1f\x8b"
    mtime = path.stat().st_mtime
    if head == b"PAR1":
        return LandingFile(path, relative, "parquet", pq.read_schema(path).names, mtime)
    with _open_text(path) as handle:
        first = handle.readline()
    stripped = first.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        record = json.loads(first) if stripped.startswith("{") else {}
        columns = sorted(_flatten_keys(record))
        return LandingFile(path, relative, "json.gz" if gz else "json", columns, mtime)
    columns = next(csv.reader([first])) if first else []
    return LandingFile(path, relative, "csv.gz" if gz else "csv", columns, mtime)


def _flatten_keys(record: dict) -> set[str]:
    keys = set()
    for key, value in record.items():
        if isinstance(value, dict):
            keys |= {f"{key}_{inner}" for inner in value}
        keys.add(key)
    return keys


def classify(file: LandingFile) -> str | None:
    """The format of a file from its header (docs/landing-and-raw.md), None when not read."""
    cols = file.lower
    if "pod_usage_cpu_core_seconds" in cols:
        return "koku_pod"
    if "persistentvolumeclaim_capacity_bytes" in cols:
        return "koku_storage"
    if "node_labels" in cols and "pod" not in cols:
        return "koku_node_labels"
    if "namespace_labels" in cols:
        return "koku_namespace_labels"
    if "provider_id" in cols and "node" in cols:
        return "nodes"
    if "owner_kind" in cols:
        return "owners"
    if "load_balancer_id" in cols and "service" in cols:
        return "lb_services"
    if "lineitem/usagestartdate" in cols:
        return "aws_legacy"
    if "line_item_usage_start_date" in cols:
        return "aws_cur2"
    if "billing_account_id" in cols and "usage_start_time" in cols:
        return "gcp"
    if "metercategory" in cols and ("resourceid" in cols or "instanceid" in cols):
        return "azure"
    if "chargeperiodstart" in cols and "effectivecost" in cols:
        return "focus"
    if "selector_type" in cols and "price" in cols:
        return "rate_card"
    return None


def scan(landing: Path, deliveries: list[Path] | None = None) -> dict[str, list[LandingFile]]:
    """Every readable landing file by format; hidden files and manifests are not read.
    `deliveries`: folders loaded after `landing`, in load order (file.load = 1, 2, …; their
    relative paths are prefixed `~<load>/` so deliveries never share a folder key)."""
    out: dict[str, list[LandingFile]] = {}
    for load, folder in enumerate([Path(landing), *(Path(d) for d in deliveries or [])]):
        prefix = f"~{load}/" if load else ""
        for path in sorted(folder.rglob("*")):
            inner = path.relative_to(folder).as_posix()
            if not path.is_file() or any(part.startswith(".") for part in Path(inner).parts):
                continue
            if path.name.lower().endswith("manifest.json") or path.stat().st_size == 0:
                continue
            file = _sniff(path, prefix + inner)
            if file is None:
                continue
            file.load = load
            kind = classify(file)
            if kind is not None:
                out.setdefault(kind, []).append(file)
    return out


def read_table(
    file: LandingFile, wanted: list[str] | None = None, *, as_object: bool = True
) -> pd.DataFrame:
    """A CSV or Parquet landing file as strings, columns matched case-insensitively and
    renamed to the spelling in `wanted` (absent wanted columns are NULL)."""
    actual = {column.lower(): column for column in file.columns}
    if wanted is None:
        include = list(file.columns)
    else:
        include = [actual[name.lower()] for name in wanted if name.lower() in actual]
    if file.container == "parquet":
        table = pq.read_table(file.path, columns=include)
        table = pa.table({name: _as_text(table.column(name)) for name in table.column_names})
        frame = table.to_pandas()
        frame = frame.astype(object).where(frame.notna(), None)
    else:
        options = pacsv.ConvertOptions(
            include_columns=include,
            column_types={name: "string" for name in include},
            strings_can_be_null=True,
        )
        frame = pacsv.read_csv(file.path, convert_options=options).to_pandas()
        if as_object:
            frame = frame.astype(object).where(frame.notna(), None)
    if wanted is not None:
        rename = {actual[name.lower()]: name for name in wanted if name.lower() in actual}
        frame = frame.rename(columns=rename)
        for name in wanted:
            if name not in frame.columns:
                frame[name] = None
        frame = frame[wanted]
    return frame


def _as_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A Parquet column as text; nested values as JSON text (docs/landing-and-raw.md)."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column
    if pa.types.is_nested(kind):
        return pa.chunked_array(
            [
                pa.array(
                    [None if v is None else json.dumps(v, default=str) for v in column.to_pylist()],
                    pa.string(),
                )
            ]
        )
    if pa.types.is_timestamp(kind):
        return pa.chunked_array(
            [
                pa.array(
                    [None if v is None else v.isoformat() for v in column.to_pylist()], pa.string()
                )
            ]
        )
    return column.cast(pa.string())


def read_json_records(file: LandingFile) -> list[dict]:
    with _open_text(file.path) as handle:
        text = handle.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json.loads(stripped)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def delivery_rank(files: list[LandingFile]) -> dict[str, int]:
    """Deliveries (folders) ordered oldest to newest: by the newest file time in the folder,
    then by folder path. SPEC silent on how a reference over a folder tells a newer export;
    docs/landing-and-raw.md says the later load replaces the earlier one, and the folder's
    write time stands for its delivery time here."""
    latest: dict[str, float] = {}
    for file in files:
        latest[file.delivery] = max(latest.get(file.delivery, 0.0), file.mtime)
    ordered = sorted(latest, key=lambda delivery: (latest[delivery], delivery))
    return {delivery: rank for rank, delivery in enumerate(ordered)}


# --------------------------------------------------------------------------- usage


def _manifest_cluster(folder: Path, cache: dict) -> str:
    if folder not in cache:
        cluster = folder.name
        manifest = folder / "manifest.json"
        if manifest.exists():
            try:
                cluster = json.loads(manifest.read_text()).get("cluster_id") or cluster
            except (ValueError, OSError):
                pass
        cache[folder] = cluster
    return cache[folder]


POD_COLUMNS = [
    "interval_start",
    "node",
    "node_capacity_cpu_cores",
    "node_capacity_cpu_core_seconds",
    "resource_id",
]
STORAGE_COLUMNS = [
    "interval_start",
    "namespace",
    "pod",
    "persistentvolumeclaim",
    "persistentvolume",
    "csi_volume_handle",
    "persistentvolumeclaim_capacity_byte_seconds",
    "persistentvolume_labels",
]
LABEL_COLUMNS = ["interval_start", "node", "node_labels"]


def _read_usage(
    files: list[LandingFile],
    columns: list[str],
    cache: dict,
    keys: list[str],
    aggregations: list[tuple[str, str]],
    numeric: tuple[str, ...] = (),
    explicit: bool = False,
) -> pd.DataFrame:
    """Usage reports of one kind, aggregated per cluster, hour and `keys` (in Arrow), the
    newest delivery winning per cluster and hour (a re-delivered report replaces the same
    hours). Columns of the result: cluster_id, interval_start, *keys, the aggregations named
    `<column>_<function>`, start (UTC) and usage_date."""
    latest: dict[str, float] = {}
    for file in files:
        folder = file.relative.rsplit("/", 1)[0]
        latest[folder] = max(latest.get(folder, 0.0), file.mtime)
    order = sorted(latest, key=lambda folder: (latest[folder], folder))
    rank = {folder: position for position, folder in enumerate(order)}
    if explicit:
        # Explicit deliveries: the load order decides; files of one load never replace each
        # other (docs/landing-and-raw.md, "Replacement happens once per load call").
        rank = {file.relative.rsplit("/", 1)[0]: file.load for file in files}
    tables = []
    for file in files:
        actual = {column.lower(): column for column in file.columns}
        include = [actual[name.lower()] for name in columns if name.lower() in actual]
        options = pacsv.ConvertOptions(
            include_columns=include,
            column_types={name: pa.string() for name in include},
            strings_can_be_null=True,
        )
        table = pacsv.read_csv(
            file.path,
            read_options=pacsv.ReadOptions(use_threads=False),
            convert_options=options,
        )
        table = table.rename_columns([name.lower() for name in table.column_names])
        for name in columns:
            if name not in table.column_names:
                table = table.append_column(name, pa.nulls(len(table), pa.string()))
        table = table.select(columns)
        for name in numeric:
            index = table.column_names.index(name)
            table = table.set_column(index, name, _to_double(table.column(name)))
        count = len(table)
        cluster = _manifest_cluster(file.path.parent, cache)
        table = table.append_column("cluster_id", pa.array([cluster] * count, pa.string()))
        folder = file.relative.rsplit("/", 1)[0]
        table = table.append_column("_rank", pa.array([rank[folder]] * count, pa.int64()))
        tables.append(table)
    names = [f"{column}_{function}" for column, function in aggregations]
    if not tables:
        return pd.DataFrame(
            columns=["cluster_id", "interval_start", *keys, *names, "start", "usage_date"]
        )
    grouped = (
        pa.concat_tables(tables)
        .group_by(["cluster_id", "interval_start", "_rank", *keys], use_threads=False)
        .aggregate(aggregations)
    )
    usage = grouped.to_pandas()
    newest = usage.groupby(["cluster_id", "interval_start"])["_rank"].transform("max")
    usage = usage[usage["_rank"] == newest].drop(columns="_rank")
    usage["start"] = to_utc(usage["interval_start"])
    usage["usage_date"] = usage["start"].dt.date
    return usage


def _to_double(column: pa.ChunkedArray) -> pa.ChunkedArray:
    try:
        return column.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pd.to_numeric(pd.Series(column.to_pylist(), dtype=object), errors="coerce")
        return pa.chunked_array([pa.array(values.to_numpy(), pa.float64())])


def _from_frame(
    frame: pd.DataFrame, keys: list[str], aggregations: list[tuple[str, str]]
) -> pd.DataFrame:
    """_read_usage's result from an already parsed (and replaced) usage frame of
    tests/reference/usage.py, so pricing and usage read each report once."""
    names = [f"{column}_{function}" for column, function in aggregations]
    if frame.empty:
        return pd.DataFrame(
            columns=["cluster_id", "interval_start", *keys, *names, "start", "usage_date"]
        )
    frame = frame.sort_values("_order", kind="stable")
    text = [c for c, _ in aggregations if frame[c].dtype == object]
    columns = list(
        dict.fromkeys(["cluster_id", "interval_start", *keys, *(c for c, _ in aggregations)])
    )
    frame = frame[columns].copy()
    # usage.py reads empty text as ""; the pricing reader as NULL
    for column in {*keys, *text}:
        frame[column] = frame[column].mask(frame[column] == "", None)
    group = ["cluster_id", "interval_start", *keys]
    usage = frame.groupby(group, sort=False, as_index=False, dropna=False).agg(
        **{name: (c, f) for name, (c, f) in zip(names, aggregations, strict=True)}
    )
    usage["start"] = to_utc(usage["interval_start"])
    usage["usage_date"] = usage["start"].dt.date
    return usage


def node_hours(
    files: list[LandingFile], cache: dict, *, explicit: bool = False, pods=None
) -> pd.DataFrame:
    """Node-days: hours run = Σ over the day's hours of capacity core-seconds / (cores × 3600)
    (SPEC §5's f_h), with the operator's resource_id. `pods`: usage.py's parsed pod frame
    (then the files are not read again)."""
    aggregations = [
        ("node_capacity_cpu_cores", "max"),
        ("node_capacity_cpu_core_seconds", "max"),
        ("resource_id", "first"),
    ]
    if pods is not None:
        hourly = _from_frame(pods, ["node"], aggregations)
    else:
        hourly = _read_usage(
            files,
            POD_COLUMNS,
            cache,
            ["node"],
            aggregations,
            numeric=("node_capacity_cpu_cores", "node_capacity_cpu_core_seconds"),
            explicit=explicit,
        )
    columns = ["cluster_id", "node", "usage_date", "hours_run", "resource_id"]
    if hourly.empty:
        return pd.DataFrame(columns=columns)
    cores = hourly["node_capacity_cpu_cores_max"]
    hourly["fraction"] = (hourly["node_capacity_cpu_core_seconds_max"] / (cores * 3600.0)).where(
        cores > 0, 0.0
    )
    daily = hourly.groupby(["cluster_id", "node", "usage_date"], as_index=False).agg(
        hours_run=("fraction", "sum"), resource_id=("resource_id_first", "first")
    )
    return daily[columns]


def volume_days(
    files: list[LandingFile], cache: dict, *, explicit: bool = False, storage=None
) -> pd.DataFrame:
    """PV-days seen in the storage reports: the PV, its CSI handle, capacity byte-seconds (one
    reading per hour, however many pods mount it) and its labels of the day's last hour."""
    aggregations = [
        ("csi_volume_handle", "first"),
        ("persistentvolumeclaim_capacity_byte_seconds", "max"),
        ("persistentvolume_labels", "last"),
    ]
    if storage is not None:
        hourly = _from_frame(storage, ["persistentvolume"], aggregations)
    else:
        hourly = _read_usage(
            files,
            STORAGE_COLUMNS,
            cache,
            ["persistentvolume"],
            aggregations,
            numeric=("persistentvolumeclaim_capacity_byte_seconds",),
            explicit=explicit,
        )
    columns = [
        "cluster_id",
        "usage_date",
        "pv_name",
        "csi_volume_handle",
        "capacity_byte_seconds",
        "pv_labels",
    ]
    if hourly.empty:
        return pd.DataFrame(columns=columns)
    hourly = hourly.rename(columns={"persistentvolume": "pv_name"})
    hourly = hourly[hourly["pv_name"].notna()].sort_values("start")
    daily = hourly.groupby(["cluster_id", "pv_name", "usage_date"], as_index=False).agg(
        csi_volume_handle=("csi_volume_handle_first", "first"),
        capacity_byte_seconds=("persistentvolumeclaim_capacity_byte_seconds_max", "sum"),
        pv_labels=("persistentvolume_labels_last", "last"),
    )
    return daily[columns]


def node_labels(
    files: list[LandingFile], cache: dict, *, explicit: bool = False, labels=None
) -> pd.DataFrame:
    """A node's labels per day: those of its last hour that day, as a parsed dict."""
    aggregations = [("node_labels", "last")]
    if labels is not None:
        hourly = _from_frame(labels, ["node"], aggregations)
    else:
        hourly = _read_usage(files, LABEL_COLUMNS, cache, ["node"], aggregations, explicit=explicit)
    if hourly.empty:
        return pd.DataFrame(columns=["cluster_id", "node", "usage_date", "labels"])
    hourly = hourly.sort_values("start")
    last = hourly.groupby(["cluster_id", "node", "usage_date"], as_index=False)[
        "node_labels_last"
    ].last()
    parsed = {text: parse_labels(text) for text in pd.unique(last["node_labels_last"])}
    last["labels"] = last["node_labels_last"].map(parsed)
    return last[["cluster_id", "node", "usage_date", "labels"]]


def parse_labels(text) -> dict[str, str]:
    """`label_a:b|label_c:d` → {a: b, c: d} (the operator's sanitized keys, `label_` cut)."""
    out: dict[str, str] = {}
    if not text:
        return out
    for part in str(text).split("|"):
        if not part:
            continue
        key, _, value = part.partition(":")
        key = key.removeprefix("label_")
        out[key] = value
    return out


def sanitize_key(key: str) -> str:
    """A Kubernetes label key in the Prometheus-sanitized form the operator reports."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


# --------------------------------------------------------------------------- supplementary


def latest_supplementary(files: list[LandingFile], columns: list[str]) -> pd.DataFrame:
    frames = [read_table(file, columns) for file in files]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).drop_duplicates()
