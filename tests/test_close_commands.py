"""The close commands (`close`, `bill`, `explain`, `correct`) through click, on a scratch
warehouse: KUBELEDGER_DB names it, DBT_PROJECT_DIR the scratch dbt project."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import duckdb
import pytest
from click.testing import CliRunner

from kubeledger.close import commands
from tests.test_close_support import (  # noqa: F401
    add_cluster,
    add_month,
    close_project,
    new_warehouse,
)

MONTH = "2026-10"


def make_env(
    project, path, *, currency: str = "USD", daily_cost: float = 1.0, daily_invoice: float = 10.0
) -> dict[str, str]:
    db = new_warehouse(path / "cli.duckdb")
    with duckdb.connect(str(db)) as con:
        add_cluster(con, "c1", currency=currency)
        add_month(
            con,
            "c1",
            MONTH,
            daily_costs={"cc-a": daily_cost, "cc-b": daily_cost, "cc-c": daily_cost},
            daily_invoice=daily_invoice,
        )
    return {
        "KUBELEDGER_DB": str(db),
        "KUBELEDGER_CONFIG": str(path / "absent-kubeledger.yml"),
        "DBT_PROJECT_DIR": str(project.project_dir),
        "DBT_PROFILES_DIR": str(project.profiles_dir),
        # the scratch project's artifacts stay with it: in the worker's target folder its
        # manifest would be the one the next test's Dagster code location loads
        "DBT_TARGET_PATH": str(project.target_path),
    }


def invoke(env: dict[str, str], command, *args: str):
    return CliRunner().invoke(command, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def sealed_env(close_project, tmp_path_factory):  # noqa: F811
    env = make_env(close_project, tmp_path_factory.mktemp("cli_sealed"))
    result = invoke(env, commands.close, "--month", MONTH, "--as-of", "2026-11-05")
    assert result.exit_code == 0, result.output
    assert "sealed 2026-10 as bill bill-2026-10-" in result.output
    assert "status full, 4 lines over 1 slices, $310.00 billed = target $310.00" in result.output
    return env


def test_close_refuses_before_the_grace_window_and_bill_shows_the_draft(close_project, tmp_path):  # noqa: F811
    env = make_env(close_project, tmp_path)
    refused = invoke(env, commands.close, "--month", MONTH, "--as-of", "2026-11-03")
    assert refused.exit_code == 2
    assert "refused: month 2026-10 cannot close before 2026-11-04" in refused.stderr
    draft = invoke(env, commands.bill, "--month", MONTH)
    assert draft.exit_code == 0, draft.output
    assert draft.output.startswith("bill 2026-10: DRAFT - not sealed")
    assert draft.output.rstrip().splitlines()[-1] == (
        "check: sum of lines $310.00 = sum of targets $310.00 (invoice $310.00 + estimated "
        "$0.00): OK"
    )
    bad = invoke(env, commands.close, "--month", "2026-13")
    assert bad.exit_code == 2 and "--month must be YYYY-MM" in bad.output


def test_bill_prints_the_sealed_bill_with_its_check_line(sealed_env):
    result = invoke(sealed_env, commands.bill, "--month", MONTH)
    assert result.exit_code == 0, result.output
    lines = result.output.rstrip().splitlines()
    assert lines[0].startswith("bill 2026-10: SEALED as bill-2026-10-")
    assert any(
        line.split()[:6] == ["c1", "compute", "cc-a", "31.000000", "$103.34", "+1c"]
        for line in lines
    )
    assert lines[-1] == (
        "check: sum of lines $310.00 = sum of targets $310.00 (invoice $310.00 + estimated "
        "$0.00): OK"
    )


# Hand-computed (SPEC §1.2, §9). Yen: 31 days x 1,000.4 = 31,012.4, rounded to the yen
# 31,012; three equal estimates: 10,337.33 each, floored to 10,337 (31,011), the one leftover
# yen to cc-a (ties: smallest ID). Dinars: 31 x 10.0001 = 310.0031 -> 310.003; 103.334333
# each, floored to 103.334 (310.002), the leftover fils to cc-a.
CURRENCY_CASES = {
    "JPY": (
        100.0,
        1000.4,
        {"cc-a": "10338", "cc-b": "10337", "cc-c": "10337", "__unassigned__": "0"},
        ("¥31,012", "¥10,338", "¥10,337", "¥0"),
    ),
    "KWD": (
        1.0,
        10.0001,
        {"cc-a": "103.335", "cc-b": "103.334", "cc-c": "103.334", "__unassigned__": "0"},
        ("KWD 310.003", "KWD 103.335", "KWD 103.334", "KWD 0.000"),
    ),
}


@pytest.mark.parametrize("currency", sorted(CURRENCY_CASES))
def test_a_bill_in_yen_has_no_decimals_and_one_in_dinars_three(
    close_project,  # noqa: F811
    tmp_path,
    currency,
):
    daily_cost, daily_invoice, billed, (total, first, other, zero) = CURRENCY_CASES[currency]
    env = make_env(
        close_project,
        tmp_path,
        currency=currency,
        daily_cost=daily_cost,
        daily_invoice=daily_invoice,
    )
    sealed = invoke(env, commands.close, "--month", MONTH, "--as-of", "2026-11-05")
    assert sealed.exit_code == 0, sealed.output
    assert f"status full, 4 lines over 1 slices, {total} billed = target {total}" in sealed.output
    with duckdb.connect(env["KUBELEDGER_DB"], read_only=True) as con:
        rows = con.execute(
            "select line_id, billed_cost from sealed.sealed_bill_lines order by line_id"
        ).fetchall()
        (target,) = con.execute("select target_cost from sealed.sealed_bills").fetchone()
    assert {line_id.split("|")[-1]: cost for line_id, cost in rows} == {
        key: Decimal(value) for key, value in billed.items()
    }
    assert target == Decimal(total.replace("¥", "").replace("KWD ", "").replace(",", ""))
    result = invoke(env, commands.bill, "--month", MONTH)
    assert result.exit_code == 0, result.output
    lines = result.output.rstrip().splitlines()
    assert any("cc-a" in line and f" {first} " in line and "+1c" in line for line in lines)
    assert any("cc-b" in line and f" {other} " in f"{line} " for line in lines)
    assert lines[-1] == (
        f"check: sum of lines {total} = sum of targets {total} (invoice {total} + estimated "
        f"{zero}): OK"
    )


def test_bill_exports_csv_and_parquet_with_exact_decimals(sealed_env, tmp_path):
    result = invoke(sealed_env, commands.bill, "--month", MONTH, "--format", "csv")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["line_id"] for row in rows] == [
        "c1|compute|cc-a",
        "c1|compute|cc-b",
        "c1|compute|cc-c",
        "c1|compute|__unassigned__",
    ]
    assert sum(Decimal(row["billed_cost"]) for row in rows) == Decimal("310.00")
    assert {row["bill_state"] for row in rows} == {"sealed"}
    assert "check: sum of lines $310.00 = sum of targets $310.00" in result.stderr

    out = tmp_path / "bill.parquet"
    result = invoke(
        sealed_env, commands.bill, "--month", MONTH, "--format", "parquet", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "wrote 4 lines to" in result.output
    with duckdb.connect() as con:
        assert con.execute(
            f"select sum(billed_cost), typeof(any_value(billed_cost)) from '{out}'"
        ).fetchone() == (Decimal("310.00"), "DECIMAL(38,3)")  # bill money, SPEC §1.2


def test_explain_traces_a_line_to_its_invoice_slice_days_and_pods(sealed_env):
    result = invoke(sealed_env, commands.explain, "--month", MONTH, "--line", "c1|compute|cc-a")
    assert result.exit_code == 0, result.output
    text = result.output
    assert "line c1|compute|cc-a of the sealed bill of 2026-10" in text
    assert "billed $103.34" in text
    assert "factor 3.333333, reconciled True, status ready" in text
    assert "carried cent: yes" in text
    assert "invoice slice: 31 sealed billing-line references, sum $310.00" in text
    assert (
        "estimate per day (compute, by cost_center, from the ledger as it is now; 31 days, "
        "total 31.000000):" in text
    )
    assert "    2026-10-01  1.000000" in text
    assert "top pods: pod-cc-a-1 $31.00" in text
    assert "top namespaces: ns-cc-a $31.00" in text

    unknown = invoke(sealed_env, commands.explain, "--month", MONTH, "--line", "c1|compute|zz")
    assert unknown.exit_code == 1
    assert "line 'c1|compute|zz' is not on the sealed bill of 2026-10" in unknown.output


def test_close_again_is_refused_and_correct_finds_no_change(sealed_env):
    again = invoke(sealed_env, commands.close, "--month", MONTH, "--as-of", "2026-11-06")
    assert again.exit_code == 2
    assert "month 2026-10 is already sealed as bill" in again.stderr
    assert "corrections: kubeledger correct --month 2026-10" in again.stderr
    correct = invoke(sealed_env, commands.correct, "--month", MONTH, "--as-of", "2026-11-06")
    assert correct.exit_code == 0, correct.output
    assert "no change: 2026-10 recomputed now bills every line as sealed" in correct.output


def tampered_copy(env: dict[str, str], tmp_path) -> dict[str, str]:
    """The sealed warehouse and its seal copies, copied under the same names elsewhere."""
    import shutil
    from pathlib import Path

    db = Path(env["KUBELEDGER_DB"])
    shutil.copy(db, tmp_path / db.name)
    shutil.copytree(db.parent / f"{db.name}.seals", tmp_path / f"{db.name}.seals")
    return {**env, "KUBELEDGER_DB": str(tmp_path / db.name)}


def test_verify_passes_then_names_a_one_dollar_move_and_bill_explain_refuse(sealed_env, tmp_path):
    ok = invoke(sealed_env, commands.verify)
    assert ok.exit_code == 0, ok.output
    assert "verified every month: 1 sealed artifact(s) (2026-10) match" in ok.output
    assert invoke(sealed_env, commands.verify, "--month", MONTH).exit_code == 0

    env = tampered_copy(sealed_env, tmp_path)
    with duckdb.connect(env["KUBELEDGER_DB"]) as con:
        # $1 from cc-b to cc-a: the slice still sums to its target
        con.execute(
            "update sealed.sealed_bill_lines set billed_cost = billed_cost + 1 "
            "where line_id = 'c1|compute|cc-a'"
        )
        con.execute(
            "update sealed.sealed_bill_lines set billed_cost = billed_cost - 1 "
            "where line_id = 'c1|compute|cc-b'"
        )
    failed = invoke(env, commands.verify)
    assert failed.exit_code == 1
    assert (
        "slice c1/compute, line c1|compute|cc-a: billed_cost is 104.34 in the warehouse, "
        "103.34 as sealed" in failed.stderr  # at the currency's minor unit, not decimal(38, 3)
    )
    assert "line c1|compute|cc-b: billed_cost is 102.33 in the warehouse" in failed.stderr
    bill = invoke(env, commands.bill, "--month", MONTH)
    assert bill.exit_code == 1
    assert "month 2026-10 fails verification, so it is not presented" in bill.output
    explain = invoke(env, commands.explain, "--month", MONTH, "--line", "c1|compute|cc-a")
    assert explain.exit_code == 1 and "fails verification" in explain.output


def test_report_of_the_sealed_bill_shows_its_hand_computed_lines(sealed_env, monkeypatch):
    """The report's numbers, by hand: three cost centers of $1.00 a day and an invoice of
    $10.00 a day over 31 days: factor 310 / 93; each line 103.333… rounds down to 103.33 and
    the one leftover cent goes to the three-way tie's smallest line ID, cc-a (SPEC §9)."""
    import datetime as dt
    import re

    from kubeledger.report.data import load_report_data
    from kubeledger.report.render import render_report

    for key, value in sealed_env.items():
        monkeypatch.setenv(key, value)
    with duckdb.connect(sealed_env["KUBELEDGER_DB"], read_only=True) as con:
        page = render_report(
            load_report_data(con, MONTH), generated_at=dt.datetime(2026, 11, 20, 9, 0)
        )
    assert 'data-org-bill-total="310.00">$310.00</span>' in page
    bill = re.search(r'data-section="bill">(.*?)</section>', page, flags=re.S).group(1)
    pivot = bill[bill.index("<table") : bill.index("</table>")]
    rows = [
        re.findall(r"<td[^>]*>(.*?)</td>", row)
        for row in re.findall(r"<tr>(.*?)</tr>", pivot, flags=re.S)
    ]
    assert [row for row in rows if row] == [
        ["cc-a", "$103.34", "$103.34"],
        ["cc-b", "$103.33", "$103.33"],
        ["cc-c", "$103.33", "$103.33"],
        ["__unassigned__", "$0.00", "$0.00"],
        ["Org bill", "$310.00", "$310.00"],
    ]


def test_the_demo_prints_the_sealed_bill_per_line_key_in_a_few_lines(sealed_env):
    from kubeledger.close import bill as bills

    with duckdb.connect(sealed_env["KUBELEDGER_DB"], read_only=True) as con:
        lines = bills.summary_lines(bills.load_bill(con, MONTH))
    assert lines[0].startswith("bill 2026-10: SEALED as bill-2026-10-")
    # 31 x 10.00 invoice over three equal estimates: 103.333... each, the cent to cc-a
    rows = [line.split() for line in lines[3:-1]]
    assert rows == [
        ["cc-a", "1", "$103.34"],
        ["cc-b", "1", "$103.33"],
        ["cc-c", "1", "$103.33"],
        ["__unassigned__", "1", "$0.00"],
        ["total", "4", "$310.00"],
    ]
    assert lines[-1].startswith("check: sum of lines $310.00 = sum of targets $310.00")
