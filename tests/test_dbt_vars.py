"""No user string reaches SQL as code: date and month vars are checked before dbt sees them
(Python) and again where a macro pastes them (macros/incremental/date_var.sql)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kubeledger.cli import main
from kubeledger.dbt_vars import DbtVarError, check_dbt_vars
from kubeledger.paths import PROFILES_DIR, PROJECT_DIR

INJECTION = "2026-10-01' or 1=1 --"


@pytest.mark.parametrize(
    ("dbt_vars", "message"),
    [
        ({"start_date": INJECTION}, f"start_date must be a date YYYY-MM-DD, got {INJECTION!r}"),
        ({"start_date": "2026-10-01", "end_date": "2026-02-30"}, "end_date must be a date"),
        ({"as_of": "today"}, "as_of must be a date YYYY-MM-DD, got 'today'"),
        ({"close_month": "2026-10'; drop table x; --"}, "close_month must be a month YYYY-MM"),
        ({"reattribute_month": "2026-13"}, "reattribute_month must be a month YYYY-MM"),
        (
            {"start_date": "2026-10-05", "end_date": "2026-10-01"},
            "end_date 2026-10-01 is before start_date 2026-10-05",
        ),
    ],
)
def test_a_var_that_is_not_a_date_or_month_is_refused_with_its_name(dbt_vars, message):
    with pytest.raises(DbtVarError, match="^" + message.replace("(", r"\(").replace("?", r"\?")):
        check_dbt_vars(dbt_vars)


def test_valid_vars_pass_unchanged():
    dbt_vars = {"start_date": "2026-10-01", "end_date": "2026-10-31", "close_month": "2026-10"}
    assert check_dbt_vars(dbt_vars) == dbt_vars


def test_build_refuses_a_start_that_is_not_a_date_before_running_dbt(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELEDGER_DB", str(tmp_path / "never.duckdb"))
    result = CliRunner().invoke(main, ["build", "--start", INJECTION])
    assert result.exit_code == 2
    assert "--start must be a date YYYY-MM-DD" in result.output
    assert not (tmp_path / "never.duckdb").exists()


def test_the_day_range_macro_refuses_a_var_that_is_not_a_date(tmp_path, monkeypatch):
    from dbt.cli.main import dbtRunner

    monkeypatch.setenv("KUBELEDGER_DB", str(tmp_path / "compile.duckdb"))
    base = [
        "compile",
        "--inline",
        "select {{ day_range_filter('d') }}",
        "--project-dir",
        str(PROJECT_DIR),
        "--profiles-dir",
        str(PROFILES_DIR),
        "--target-path",
        str(tmp_path / "target"),
        "--log-path",
        str(tmp_path / "logs"),
        "--quiet",
    ]
    refused = dbtRunner().invoke([*base, "--vars", f'{{"start_date": "{INJECTION}"}}'])
    assert not refused.success
    assert f"var start_date must be a date YYYY-MM-DD, got '{INJECTION}'" in str(refused.exception)
