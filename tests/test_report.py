"""The monthly HTML report (issue 9) on a generated fleet: the bill it shows adds up to the
bill lines to the cent, every section has its chart, a missing mart makes a section say "not
available" instead of failing, and the page renders in headless Chromium with no JavaScript
error (skipped, with the reason, when Chromium is not installed).

`built_fleet` builds the fleet's warehouse once per test session (test_export.py,
test_demo_cloud_charges.py, test_vocabulary.py and test_analyst_questions.py reuse it): the
demo's defaults at 8 nodes, 4 pods a node, 33 days, the restated CUR loaded later.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
import shutil
import subprocess
import warnings
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from plotly.offline import get_plotlyjs

from kubeledger.report.commands import report
from kubeledger.report.data import load_report_data
from kubeledger.report.render import SECTIONS, money, render_report, write_report
from kubeledger.warehouse import DbtError

MONTH = "2026-10"
AS_OF = dt.date(2026, 11, 19)
ARTIFACTS = Path(__file__).parent / "artifacts"
REQUIRED_MARTS = (
    "fct_bill_lines_monthly",
    "fct_bill_close_status",
    "fct_owner_costs_daily",
    "fct_cluster_costs_daily",
    "fct_reconciliation_daily",
    "fct_efficiency_daily",
    "fct_unallocated_resources_daily",
)

pytestmark = pytest.mark.slow


def built_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated fleet, loaded and built once per test session; returns the DuckDB
    file, a copy of its own for each pytest-xdist worker (the build is shared through a lock
    in the session's folder, so two workers do not build the same fleet; each worker then
    opens, writes and copies its warehouse as if it were alone).

    A dbt failure in a mart the report and exports do not need (say, one being worked on)
    does not stop the suite: dbt still builds every other node, the failure is shown as a
    warning, and the tests below check the marts they read exist.
    """
    own = tmp_path_factory.getbasetemp() / "report-fleet"
    if (own / ".built").exists():
        return own / "kubeledger.duckdb"
    # under xdist each worker's temporary folder is inside the session's
    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent
    shared = session / "report-fleet-shared"
    with open(session / "report-fleet.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (shared / ".built").exists():
                _build_report_fleet(shared)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if own.exists():
        shutil.rmtree(own)
    shutil.copytree(shared, own)
    return own / "kubeledger.duckdb"


def _build_report_fleet(workdir: Path) -> None:
    from kubeledger.generate import generate_fleet
    from tests.warehouse_builder import build_warehouse, late_folders

    db = workdir / "kubeledger.duckdb"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    summary = generate_fleet(workdir / "demo", nodes=8, days=33, pods_per_node=4)
    try:
        build_warehouse(
            workdir,
            workdir / "demo" / "landing",
            workdir / "demo" / "kubeledger.yml",
            late=late_folders(summary),
        )
    except DbtError as exc:
        warnings.warn(f"dbt build reported failures; testing what was built: {exc}", stacklevel=1)
    with duckdb.connect(str(db), read_only=True) as con:
        present = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'marts'"
            ).fetchall()
        }
    missing = [name for name in REQUIRED_MARTS if name not in present]
    assert not missing, f"the build did not produce {missing}"
    (workdir / ".built").touch()


def copy_of(db: Path, directory: Path, name: str) -> Path:
    target = directory / name
    shutil.copyfile(db, target)
    return target


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_fleet(tmp_path_factory)


@pytest.fixture(scope="module")
def sealed_db(fleet_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the warehouse with October closed and sealed as of 2026-11-19."""
    from kubeledger.close.closer import close_month

    # Not "sealed.duckdb": DuckDB names the catalog after the file, and a catalog `sealed`
    # would make the schema `sealed` ambiguous.
    db = copy_of(fleet_db, tmp_path_factory.mktemp("closed"), "closed.duckdb")
    close_month(db, MONTH, AS_OF, progress=None)
    return db


def bill_lines_total(db: Path) -> Decimal:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "select sum(billed_cost) from marts.fct_bill_lines_monthly where bill_month = ?",
            [dt.date(2026, 10, 1)],
        ).fetchone()
    return row[0]


def sections(html_text: str) -> dict[str, str]:
    """Each `<section data-section=…>`'s HTML by its key."""
    found = {}
    for match in re.finditer(
        r'<section class="card" id="(\w+)" data-section="\w+">(.*?)</section>',
        html_text,
        flags=re.S,
    ):
        found[match.group(1)] = match.group(2)
    return found


def render(db: Path, month: str = MONTH) -> tuple[str, object]:
    with duckdb.connect(str(db), read_only=True) as con:
        data = load_report_data(con, month)
    return render_report(data, generated_at=dt.datetime(2026, 11, 20, 9, 0)), data


# --- money formatting ---------------------------------------------------------------------


def test_money_is_formatted_to_the_cent_with_the_currency():
    assert money(Decimal("3142.03")) == "$3,142.03"
    assert money(Decimal("-0.5")) == "-$0.50"
    assert money(1234567.891, "EUR") == "€1,234,567.89"
    assert money(Decimal("12"), "CHF") == "CHF 12.00"
    assert money(None) == "—"


# --- the draft month ----------------------------------------------------------------------


def test_draft_report_shows_the_org_bill_equal_to_the_sum_of_its_lines(fleet_db):
    html_text, data = render(fleet_db)
    total = bill_lines_total(fleet_db)
    assert total > 0
    assert data.bill.state == "draft"
    assert data.bill.total == total
    # The headline number, exactly as the lines add up, to the cent.
    assert f'data-org-bill-total="{total:.2f}"' in html_text
    assert f">{money(total)}</span>" in html_text
    # …and the bill table's footer says the same.
    assert f'<td class="num strong">{money(total)}</td></tr></tfoot>' in html_text
    assert '<span class="badge draft">DRAFT</span>' in html_text
    assert "is not sealed" in html_text


def test_every_section_has_its_chart(fleet_db):
    html_text, data = render(fleet_db)
    found = sections(html_text)
    assert list(found) == [key for key, _ in SECTIONS]
    for key, body in found.items():
        assert "Not available" not in body, f"section {key}: {data.missing.get(key)}"
        charts = re.findall(r'class="plotly-graph-div"', body)
        assert len(charts) == 1, f"section {key} has {len(charts)} charts"
    # plotly.js is inlined once; nothing is fetched from the network.
    assert html_text.count(get_plotlyjs()[:200]) == 1
    assert html_text.count("Plotly.newPlot(") == len(SECTIONS)
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=", html_text)


def test_bridge_rows_carry_each_cluster_from_estimate_to_billed(fleet_db):
    _, data = render(fleet_db)
    bridge = data.bridge
    assert data.bridge_source == "marts.fct_bill_close_status"
    # Per cluster and family, billed is the target (SPEC §9), and the clusters add up to
    # the org bill.
    for row in bridge.to_dict(orient="records"):
        assert row["billed_cost"] == row["target_cost"], row
    assert sum(bridge["billed_cost"], Decimal(0)) == data.bill.total


def test_team_costs_add_up_to_the_ledger(fleet_db):
    _, data = render(fleet_db)
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        ledger = con.execute(
            "select sum(cost_in_scope) from marts.fct_reconciliation_daily "
            "where usage_date between '2026-10-01' and '2026-10-31'"
        ).fetchone()[0]
    assert abs(float(data.team_month["total_cost"].sum()) - ledger) < 1e-6
    assert abs(float(data.team_daily["total_cost"].sum()) - ledger) < 1e-6
    assert data.team_daily["usage_date"].nunique() == 31
    assert abs(data.headline["cost_in_scope"] - ledger) < 1e-6


def test_cli_writes_the_report(fleet_db, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELEDGER_DB", str(fleet_db))
    out = tmp_path / "report.html"
    result = CliRunner().invoke(report, ["--month", MONTH, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"org bill {money(bill_lines_total(fleet_db))} (DRAFT" in result.output
    assert out.stat().st_size > 1_000_000  # plotly.js is inside
    bad = CliRunner().invoke(report, ["--month", "2026-13", "--out", str(out)])
    assert bad.exit_code != 0
    assert "YYYY-MM" in bad.output


# --- missing optional marts ---------------------------------------------------------------


def test_missing_marts_make_their_sections_say_not_available(fleet_db, tmp_path):
    db = copy_of(fleet_db, tmp_path, "partial.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("drop table marts.fct_efficiency_daily")
        con.execute("drop table marts.fct_unallocated_resources_daily")
        con.execute("drop view marts.fct_bill_close_status")
    html_text, data = render(db)
    found = sections(html_text)
    assert "Not available" in found["efficiency"]
    assert "Not available" in found["unallocated"]
    assert "Not available" in found["close"]
    # The bill still works from fct_bill_lines_monthly alone, bridge included.
    assert data.bill.total == bill_lines_total(db)
    assert data.bridge_source == "marts.fct_bill_lines_monthly"
    assert "plotly-graph-div" in found["bill"] and "plotly-graph-div" in found["bridge"]


def test_a_month_with_no_bill_says_so(fleet_db):
    html_text, data = render(fleet_db, "2025-01")
    assert data.bill.state == "empty"
    assert data.bill.total == Decimal("0.00")
    assert "has no lines for 2025-01" in sections(html_text)["bill"]


# --- the sealed month ---------------------------------------------------------------------


def test_sealed_report_shows_the_sealed_bill(sealed_db):
    with duckdb.connect(str(sealed_db), read_only=True) as con:
        bill_id, billed, status = con.execute(
            "select bill_id, billed_cost, bill_status from sealed.sealed_bills "
            "where bill_month = ?",
            [MONTH],
        ).fetchone()
        lines_total = con.execute(
            "select sum(billed_cost) from sealed.sealed_bill_lines where bill_month = ?",
            [MONTH],
        ).fetchone()[0]
    html_text, data = render(sealed_db)
    assert data.bill.state == "sealed"
    assert data.bill.bill_id == bill_id
    assert data.bill.status == status
    assert data.bill.total == billed == lines_total
    assert f'data-org-bill-total="{billed:.2f}"' in html_text
    assert '<span class="badge sealed">SEALED</span>' in html_text
    assert bill_id in html_text
    assert "DRAFT" not in sections(html_text)["bill"]


# --- in a browser -------------------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=15000",
]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.skipif(
    chromium() is None,
    reason=(
        "Chromium is not installed (Debian: `apt-get install -y chromium`; the Makefile's test "
        "setup installs it when missing)"
    ),
)
def test_report_renders_in_headless_chromium(sealed_db, tmp_path):
    binary = chromium()
    assert binary is not None
    with duckdb.connect(str(sealed_db), read_only=True) as con:
        data = load_report_data(con, MONTH)
    page = write_report(data, tmp_path / f"report-{MONTH}.html")
    url = page.resolve().as_uri()

    dom = run_chromium(binary, tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body, dom.stdout[:500]
    assert 'data-render-ok="true"' in body.group(0), body.group(0)
    # bill, bridge, teams, idle, efficiency, unallocated, health, budgets (the owners'
    # budgets of issue 16), close: each drawn
    charts = ["bill", "bridge", "teams", "idle", "efficiency", "unallocated", "health"]
    charts += ["budgets", "close"]
    assert sorted(re.findall(r'data-chart="([a-z]+)"', dom.stdout)) == sorted(charts)
    assert 'data-charts="9"' in body.group(0) and 'data-charts-drawn="9"' in body.group(0)
    errors = re.search(r'<html[^>]*data-report-errors="([^"]*)"', dom.stdout)
    assert errors and json.loads(errors.group(1).replace("&quot;", '"')) == []
    console = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)
    ]
    assert console == []

    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / f"report-{MONTH}.png"
    if screenshot.exists():
        screenshot.unlink()
    shot = run_chromium(
        binary,
        tmp_path / "profile-shot",
        f"--screenshot={screenshot}",
        "--window-size=1400,3000",
        url,
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.exists()
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000  # a blank page is a few kB
