"""The issue 15 refactor (pydantic config, Jinja2 report templates, rich console tables, import
circles broken; merged in 7ba0af9 "Merge branch 'tidy'") changed no output.

The code before it (7ba0af9's first parent) is checked out into a temporary `git worktree`
(the tests are skipped, saying why, when the repository has no such commit: a shallow clone
or an export). One small fleet is generated with the current generator (four clusters, six
nodes, 33 days; no GPU node, since GPU pricing came later and changes numbers by design), and
tests/refactor_outputs_driver.py loads, builds, closes (October, as of 2026-11-20) and
reports it twice, in a process of its own each time: with PYTHONPATH at the old worktree
(its dbt project too, kubeledger/paths.py finds the project beside the package) and at the
current code, the same .venv. Then:

- every mart both warehouses have holds the same rows on their common columns: row counts
  equal, rows paired by sorting on every non-double column, strings, dates, booleans,
  integers and decimals exactly, doubles to 1e-9 (relative, floor 1.0); a decimal column may
  have changed its scale only (bill money is decimal(38, 3) since issue 16 §4), its values
  still equal exactly;
- the sealed bill is the same: the bill row (all but `sealed_at`), every line, slice and
  billing-line reference (the seal's content hash covers `sealed_at`, so it differs; the bill
  ID hashes the amounts as text, changed by design, BILL_ID_REASON: one old ID, one new);
- the report's numbers are the same: every number in its text (the one seal time it shows
  masked; what was added later on purpose, ADDED_AFTER_REFACTOR, left out), the report's
  metadata, and every number in each chart's data (Plotly's base64 arrays decoded; to 1e-9).

The full comparison takes 3 to 11 minutes on two shared cores (measured: 197 s to 659 s),
so `make test` skips it; `make test-refactor` runs it (KUBELEDGER_REFACTOR_TEST=1). The config
test (seconds) runs in `make test`: every key the old parser named, one error at a time, the
new one names all at once.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pytest
import yaml

from kubeledger.config import ConfigError, parse_config
from kubeledger.generate import generate_fleet

REPO = Path(__file__).resolve().parents[1]
REFACTOR_MERGE = "7ba0af9"
MONTH, AS_OF = "2026-10", "2026-11-20"
DRIVER = Path(__file__).with_name("refactor_outputs_driver.py")
RUN_METADATA = ("loaded_at", "attributed_at", "sealed_at")
DOUBLE_TYPES = ("DOUBLE", "FLOAT", "REAL")
NESTED = ("MAP(", "[]", "STRUCT(")
DECIMAL = re.compile(r"DECIMAL\(38,\s*[0-9]+\)")
SEALED_TABLES = {
    "sealed_bill_lines": "line_id",
    "sealed_bill_clusters": "cluster_id, cost_family",
    "sealed_billing_line_refs": "cluster_id, cost_family, billing_line_id",
    "correction_bills": "correction_id",
}
# Columns that differ on purpose, by a change merged after the refactor: (mart, column) -> why.
# Add one only with the commit that makes it differ by design.
BILL_ID_REASON = (
    "the bill ID hashes its lines' amounts as text (close/store.py _bill_id); bill money is "
    "decimal(38, 3) since issue 16 §4 ('4.900', was '4.90'), so the same bill has a new ID; "
    "the test checks old and new IDs map one to one"
)
MONTH_AS_DATE_REASON = (
    "issue 16 §1: every mart names a month by its first day, a date (it was 'YYYY-MM' text); "
    "the same month, still compared through usage_date and the bill_line_id / bill_slice_id "
    "keys that spell it"
)
PLATFORM_NOT_UNOWNED_REASON = (
    "issue 16 §1: is_unowned is never true on a platform row (it was true on every platform "
    "pod no owner rule named); who owns each row is still compared through team and "
    "cost_center"
)
INTENDED_DIFFERENCES: dict[tuple[str, str], str] = {
    ("fct_bill_close_status", "bill_id"): BILL_ID_REASON,
    ("fct_bill_lines_monthly", "bill_id"): BILL_ID_REASON,
    ("fct_bill_close_status", "bill_month"): MONTH_AS_DATE_REASON,
    ("fct_bill_lines_monthly", "bill_month"): MONTH_AS_DATE_REASON,
    ("rpt_metrics_daily", "usage_month"): MONTH_AS_DATE_REASON,
    ("rpt_metrics_cluster_daily", "usage_month"): MONTH_AS_DATE_REASON,
    ("dim_dates", "date_month"): MONTH_AS_DATE_REASON,
    ("fct_pod_costs_daily", "is_unowned"): PLATFORM_NOT_UNOWNED_REASON,
}
BILL_ID = re.compile(r"bill-\d{4}-\d{2}-[0-9a-f]{12}")
FULL = os.environ.get("KUBELEDGER_REFACTOR_TEST") == "1"


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def old_tree(tmp_path_factory):
    """The code before the refactor, checked out into a temporary worktree (removed after)."""
    if shutil.which("git") is None:
        pytest.skip("no git on PATH: the code before the refactor is checked out with git")
    found = _git("rev-parse", "--verify", "--quiet", f"{REFACTOR_MERGE}^1^{{commit}}")
    if found.returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        pytest.skip(
            f"this repository has no commit {REFACTOR_MERGE}^1 (the code before the issue 15 "
            f"refactor){': a shallow clone' if shallow else ''}; fetch the full history "
            "(`git fetch --unshallow`) to compare outputs"
        )
    with checked_out(found.stdout.strip(), tmp_path_factory.mktemp("before_refactor")) as tree:
        yield tree


@contextmanager
def checked_out(commit: str, folder: Path) -> Iterator[Path]:
    """`commit`'s code in a temporary git worktree under `folder` (removed after)."""
    tree = folder / "tree"
    added = _git("worktree", "add", "--detach", str(tree), commit)
    assert added.returncode == 0, added.stderr
    try:
        yield tree
    finally:
        _git("worktree", "remove", "--force", str(tree))
        _git("worktree", "prune")


def _env(tree: Path, **extra: str) -> dict[str, str]:
    """The environment that runs `tree`'s code on `tree`'s dbt project: the Makefile exports
    DBT_PROJECT_DIR (and dbt reads it before any default), so it is pointed at the tree too."""
    return {
        **os.environ,
        "PYTHONPATH": f"{tree / 'orchestration'}{os.pathsep}{tree}",
        "DBT_PROJECT_DIR": str(tree),
        "DBT_PROFILES_DIR": str(tree / "profiles"),
        **extra,
    }


# --- the configuration's error messages ----------------------------------------------------

BASE_CONFIG = {
    "currency": "USD",
    "clusters": [
        {"id": "a", "provider": "aws"},
        {"id": "b", "provider": "aws"},
        {"id": "c", "provider": "gcp"},
    ],
    "pricing": {"cpu_cost_weight": 0.5},
    "close": {"grace_days": 4, "unassigned_policy": "separate"},
    "cloud_charges": {"allocations": [{"name": "Ops"}], "estimate_window_days": 7},
    "exchange_rates": [{"from": "EUR", "rate": 1.1, "effective_from": "2026-01-01"}],
}
# One problem each: (path, value); value None deletes the key.
PROBLEMS = [
    (("clusters", 0, "provider"), "amazon"),
    (("clusters", 1, "id"), None),
    (("clusters", 2, "billing_link"), {"tags": "x"}),
    (("pricing", "cpu_cost_weight"), "x"),
    (("close", "grace_days"), -1),
    (("close", "unassigned_policy"), "everyone"),
    (("clusterz",), []),
    (("cloud_charges", "allocations", 0, "name"), ""),
    (("cloud_charges", "estimate_window_days"), 0),
    (("exchange_rates", 0, "from"), "eur"),
    (("exchange_rates", 0, "rate"), 0),
    (("exchange_rates", 0, "effective_from"), None),
]


def _broken(problems) -> dict:
    document = json.loads(json.dumps(BASE_CONFIG))
    for path, value in problems:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if value is None:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return document


_OLD_MESSAGES = """
import json, sys
from kubeledger.config import ConfigError, parse_config
out = []
for document in json.load(sys.stdin):
    try:
        parse_config(document)
        out.append(None)
    except ConfigError as error:
        out.append(str(error))
print(json.dumps(out))
"""


def _key(message: str) -> str:
    return message.strip().split(": ", 1)[0]


def test_every_key_the_old_parser_named_is_named_at_once(old_tree):
    """The old parser stopped at the first problem; run it on each problem alone, then the
    new parser on all of them together: one error, a line per problem, naming every key the
    old one named."""
    parse_config(BASE_CONFIG)  # the base is valid
    documents = [BASE_CONFIG] + [_broken([problem]) for problem in PROBLEMS]
    ran = subprocess.run(
        [sys.executable, "-c", _OLD_MESSAGES],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        env=_env(old_tree),
        cwd=old_tree,
    )
    assert ran.returncode == 0, ran.stderr
    base, *old = json.loads(ran.stdout)
    assert base is None, f"the old parser rejects the base document: {base}"
    assert None not in old, old  # the old parser rejected each problem alone

    with pytest.raises(ConfigError) as error:
        parse_config(_broken(PROBLEMS))
    lines = str(error.value).splitlines()
    assert lines[0] == f"kubeledger.yml has {len(PROBLEMS)} problems:"
    new_keys = [_key(line) for line in lines[1:]]
    assert sorted(new_keys) == sorted(set(new_keys))  # each key once
    for (path, _value), message in zip(PROBLEMS, old, strict=True):
        assert _key(message) in new_keys, (path, message, lines)


# --- the outputs ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def outputs(old_tree, tmp_path_factory):
    """(old work folder, new work folder, seconds each) for one fleet built by both."""
    if not FULL:
        pytest.skip("3 to 11 minutes: runs with `make test-refactor` (KUBELEDGER_REFACTOR_TEST=1)")
    root = tmp_path_factory.mktemp("refactor_outputs")
    summary = generate_fleet(root / "fleet", nodes=6, days=33, pods_per_node=4, clusters=4)
    assert summary["irregularities"]["gpu_nodes"] == []  # GPU pricing came after the refactor
    landing, config = root / "fleet" / "landing", root / "fleet" / "kubeledger.yml"
    # Owner budgets came after the refactor (issue 16 §5) and the old parser refuses the key;
    # they change no mart both versions have, so both run without them.
    settings = yaml.safe_load(config.read_text())
    settings.pop("budgets", None)
    config = root / "fleet" / "kubeledger-without-budgets.yml"
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    late = [str(delivery["landing"]) for delivery in summary["late_deliveries"]]
    seconds = {
        side: built_with(tree, root / side, landing, config, late)
        for side, tree in (("old", old_tree), ("new", REPO))
    }
    return root / "old", root / "new", seconds


def built_with(tree: Path, work: Path, landing: Path, config: Path, late: list[str]) -> float:
    """Load `landing` (then each `late` folder), build, close and seal October with `tree`'s
    code, in a process of its own, into `work/kubeledger.duckdb`; the seconds it took."""
    work.mkdir()
    log = work / "run.log"
    started = time.perf_counter()
    with log.open("w") as out:
        ran = subprocess.run(
            [sys.executable, str(DRIVER), str(work), str(landing), str(config)]
            + [MONTH, AS_OF, *late],
            env=_env(tree, KUBELEDGER_VERBOSE=""),
            cwd=work,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    assert ran.returncode == 0, f"{tree} failed; {log}:\n{tail}"
    assert f"kubeledger from {tree / 'orchestration' / 'kubeledger'}" in log.read_text()
    return round(time.perf_counter() - started, 1)


def _attached(old: Path, new: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"attach '{old / 'kubeledger.duckdb'}' as old (read_only)")
    con.execute(f"attach '{new / 'kubeledger.duckdb'}' as new (read_only)")
    return con


def _tables(con, catalog: str, schema: str) -> set[str]:
    rows = con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = ? and table_schema = ?",
        [catalog, schema],
    ).fetchall()
    return {name for (name,) in rows}


def _columns(con, relation: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"describe {relation}").fetchall()}


def _differences(con, name: str, columns: dict[str, str]) -> list[str]:
    """Rows of old.marts.<name> and new.marts.<name> that differ on `columns` (first 3)."""
    keys, doubles = [], []
    for column, kind in columns.items():
        quoted = f'"{column}"'
        if kind in DOUBLE_TYPES:
            doubles.append(quoted)
        elif any(marker in kind for marker in NESTED):
            keys.append(f"cast({quoted} as varchar)")
        else:
            keys.append(quoted)
    order = ", ".join(keys + [f"round({d}, 6)" for d in doubles]) or "1"
    select = ", ".join(f"{expr} as c{i}" for i, expr in enumerate(keys + doubles))

    def side(catalog: str) -> str:
        return (
            f"select row_number() over (order by {order}) as rn, {select} "
            f"from {catalog}.marts.{name}"
        )

    conditions = [f"o.c{i} is distinct from n.c{i}" for i in range(len(keys))]
    for offset in range(len(doubles)):
        i = len(keys) + offset
        conditions.append(
            f"((o.c{i} is null) <> (n.c{i} is null) "
            f"or abs(o.c{i} - n.c{i}) > 1e-9 * greatest(1.0, abs(o.c{i})))"
        )
    if not conditions:
        return []
    rows = con.execute(
        f"select o.*, n.* from ({side('old')}) as o full join ({side('new')}) as n using (rn) "
        f"where {' or '.join(conditions)} order by rn limit 3"
    ).fetchall()
    names = list(columns)
    return [f"{name} row {row[0]}: {dict(zip(names, row[1:], strict=False))}" for row in rows]


def mart_differences(con, name: str, columns: dict[str, str]) -> tuple[list[str], int]:
    """(what differs, rows compared) between old.marts.<name> and new.marts.<name> on
    `columns`: their row counts, else their rows (first 3 that differ)."""
    (old_rows,) = con.execute(f"select count(*) from old.marts.{name}").fetchone()
    (new_rows,) = con.execute(f"select count(*) from new.marts.{name}").fetchone()
    if old_rows != new_rows:
        return [f"{name}: {old_rows} rows before, {new_rows} after"], 0
    return _differences(con, name, columns), old_rows


@pytest.mark.slow
def test_every_mart_is_unchanged(outputs):
    old, new, seconds = outputs
    con = _attached(old, new)
    old_marts, new_marts = _tables(con, "old", "marts"), _tables(con, "new", "marts")
    shared = sorted(old_marts & new_marts)
    assert len(shared) >= 20, (old_marts, new_marts)
    assert old_marts <= new_marts, f"marts the refactor lost: {sorted(old_marts - new_marts)}"
    problems, rows, compared_columns, only_one_side, decimal_scale_changes = [], 0, 0, {}, {}
    for name in shared:
        old_columns = _columns(con, f"old.marts.{name}")
        new_columns = _columns(con, f"new.marts.{name}")
        columns = {
            column: kind
            for column, kind in old_columns.items()
            if column in new_columns
            and not column.endswith(RUN_METADATA)
            and (name, column) not in INTENDED_DIFFERENCES
        }
        differ = sorted(set(old_columns) ^ set(new_columns))
        if differ:
            only_one_side[name] = differ
        changed_type = {c: (k, new_columns[c]) for c, k in columns.items() if new_columns[c] != k}
        # Bill money became decimal(38, 3) after the refactor (issue 16 §4: the currency's
        # minor unit, KWD has 3); the values must still be equal, exactly. No other change.
        rescaled = {
            c: kinds for c, kinds in changed_type.items() if all(DECIMAL.match(k) for k in kinds)
        }
        if set(changed_type) - set(rescaled):
            problems.append(f"{name}: column types changed {changed_type}")
            continue
        if rescaled:
            decimal_scale_changes[name] = sorted(rescaled)
        differences, compared_rows = mart_differences(con, name, columns)
        problems += differences
        rows += compared_rows
        compared_columns += len(columns)
    assert problems == []
    assert rows > 10_000  # the fleet's pod-days are in it: not an empty comparison
    print(
        f"\n{len(shared)} marts compared, {rows} rows, {compared_columns} columns; "
        f"build+close+report {seconds['old']} s before, {seconds['new']} s after; "
        f"columns on one side only: {only_one_side}; decimal scale changed (values compared "
        f"exactly): {decimal_scale_changes}"
    )


def _bill_ids(con, catalog: str) -> list[tuple[str, str]]:
    return con.execute(
        f"select distinct bill_month, bill_id from {catalog}.sealed.sealed_bills order by 1"
    ).fetchall()


def _rows(con, catalog: str, table: str, order: str, exclude=()) -> tuple[list[str], list]:
    columns = [c for c in _columns(con, f"{catalog}.sealed.{table}") if c not in exclude]
    select = ", ".join(f'"{c}"' for c in columns)
    return columns, con.execute(
        f"select {select} from {catalog}.sealed.{table} order by {order}"
    ).fetchall()


@pytest.mark.slow
def test_the_sealed_bill_is_unchanged(outputs):
    old, new, _ = outputs
    con = _attached(old, new)
    # the bill ID changed by design (BILL_ID_REASON): one old ID, one new ID, for the month;
    # every row of the bill compared without it
    old_ids, new_ids = _bill_ids(con, "old"), _bill_ids(con, "new")
    assert [month for month, _ in old_ids] == [month for month, _ in new_ids] == [MONTH]
    for table in ("sealed_bill_lines", "sealed_bill_clusters", "sealed_billing_line_refs"):
        for catalog, ids in (("old", old_ids), ("new", new_ids)):
            stray = con.execute(
                f"select count(*) from {catalog}.sealed.{table} where bill_id <> ?", [ids[0][1]]
            ).fetchone()[0]
            assert stray == 0, (catalog, table)
    without = ("sealed_at", "bill_id")
    old_bill = _rows(con, "old", "sealed_bills", "bill_month", exclude=without)
    new_bill = _rows(con, "new", "sealed_bills", "bill_month", exclude=without)
    assert old_bill == new_bill
    for table, order in SEALED_TABLES.items():
        assert _rows(con, "old", table, order, exclude=("bill_id",)) == _rows(
            con, "new", table, order, exclude=("bill_id",)
        ), table
    (lines,) = con.execute("select count(*) from new.sealed.sealed_bill_lines").fetchone()
    assert lines > 20


# What the report shows that the code before the refactor did not, added after it on purpose
# (left out of the comparison, narrowly: these elements only).
ADDED_AFTER_REFACTOR = {
    # issue 16 §2: how the bill is backed (invoice / rate card / estimate), in words above the
    # tiles and in a tile beside reconciled-to-invoice
    "backing words": re.compile(r'<p class="backing[^"]*" id="bill-backing"[^>]*>.*?</p>', re.S),
    "backing tile": re.compile(
        r'<div class="tile[^"]*"><div class="tile-label">Bill backed by invoice</div>'
        r'<div class="tile-value">[^<]*</div><div class="tile-note">[^<]*</div></div>'
    ),
    # issue 16 §5: the budgets section (used, forecast, thresholds per budget)
    "budgets section": re.compile(r'<section class="card" id="budgets".*?</section>', re.S),
}
SEALED_AT = re.compile(r"sealed \d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _report(path: Path) -> tuple[list[str], dict, dict[str, list[float]]]:
    """(numbers in the report's text, its metadata, each chart's numbers)."""
    page = path.read_text(encoding="utf-8")
    for added in ADDED_AFTER_REFACTOR.values():
        page = added.sub("", page)
    scripts = re.findall(r"(?s)<script([^>]*)>(.*?)</script>", page)
    meta = next(
        json.loads(html.unescape(body)) for attrs, body in scripts if "report-meta" in attrs
    )
    charts = {}
    for _attrs, body in scripts:
        if "Plotly.newPlot" not in body:
            continue
        chart = re.search(r'Plotly\.newPlot\(\s*"([^"]+)"', body).group(1)
        numbers: list[float] = []
        data = body.split("Plotly.newPlot(", 1)[1]
        for dtype, encoded in re.findall(r'"dtype":"(\w+)","bdata":"([^"]*)"', data):
            raw = base64.b64decode(encoded.replace("\\u002f", "/"))
            numbers += np.frombuffer(raw, dtype=np.dtype(dtype)).astype(float).tolist()
        plain = re.sub(r'"dtype":"\w+","bdata":"[^"]*"', "", data)
        plain = re.sub(r'"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"', "", plain)
        numbers += [float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", plain)]
        charts[chart] = numbers
    text = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", page)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = SEALED_AT.sub("sealed <time> UTC", re.sub(r"\s+", " ", text))
    text = BILL_ID.sub("bill-<id>", text)  # a new ID by design: BILL_ID_REASON
    return NUMBER.findall(text), meta, charts


@pytest.mark.slow
def test_the_report_shows_the_same_numbers(outputs):
    old, new, _ = outputs
    old_text, old_meta, old_charts = _report(old / "report.html")
    new_text, new_meta, new_charts = _report(new / "report.html")
    assert len(new_text) > 300
    assert new_text == old_text
    assert new_meta == old_meta
    assert sorted(new_charts) == sorted(old_charts) and len(new_charts) >= 8
    for chart, numbers in old_charts.items():
        assert len(new_charts[chart]) == len(numbers), chart
        assert np.allclose(new_charts[chart], numbers, rtol=1e-9, atol=1e-9, equal_nan=True), chart
