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


# Every var the project reads, set, against none set: what a parse holds must not differ.
ALL_VARS = {
    "start_date": "2026-10-03",
    "end_date": "2026-10-09",
    "reallocate_days": ["2026-10-01"],
    "as_of": "2026-11-19",
    "close_month": "2026-10",
    "reattribute_month": "2026-10",
}
PARSED = ("depends_on", "refs", "sources", "config", "raw_code", "database", "schema", "alias")


def _parse(tmp_path, name: str, dbt_vars: dict | None) -> dict:
    """A full parse (no saved parse) into a target folder of its own, warehouse file
    <name>/kubeledger.duckdb: every node's parse-time content."""
    import json

    from dbt.cli.main import dbtRunner

    folder = tmp_path / name
    folder.mkdir()
    args = ["parse", "--no-partial-parse", "--quiet"]
    args += ["--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROFILES_DIR)]
    args += ["--target-path", str(folder / "target"), "--log-path", str(folder / "logs")]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KUBELEDGER_DB", str(folder / "kubeledger.duckdb"))
        result = dbtRunner().invoke(args)
    assert result.success, result.exception
    manifest = json.loads((folder / "target" / "manifest.json").read_text())
    groups = ("nodes", "sources", "macros", "unit_tests", "exposures", "metrics")
    return {
        key: {field: node.get(field) for field in PARSED}
        for group in groups
        for key, node in manifest[group].items()
    }


def test_vars_and_the_warehouse_file_do_not_change_what_dbt_parses(tmp_path):
    """kubeledger/dbt_parse.py keeps dbt's saved parse when only the vars or the warehouse
    file changed; that is right only while neither reaches a ref, a source, a config or
    anything else a parse stores. A var read in a `config()` or a `ref()` fails this."""
    plain = _parse(tmp_path, "plain", None)
    varied = _parse(tmp_path, "varied", ALL_VARS)
    assert plain.keys() == varied.keys()
    changed = sorted(key for key in plain if plain[key] != varied[key])
    assert changed == [], f"the parse depends on the vars or the warehouse file: {changed[:10]}"


def test_a_second_run_with_other_vars_and_another_warehouse_reuses_the_parse(tmp_path):
    import json

    from kubeledger.dbt_invoke import invoke_dbt

    def parse(name: str, dbt_vars: dict | None) -> list[str]:
        events: list[str] = []
        args = ["parse", "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROFILES_DIR)]
        args += ["--target-path", str(tmp_path / "target")]
        if dbt_vars:
            args += ["--vars", json.dumps(dbt_vars)]
        (tmp_path / name).mkdir()
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("KUBELEDGER_DB", str(tmp_path / name / "kubeledger.duckdb"))
            result = invoke_dbt(args, callbacks=[lambda event: events.append(event.info.name)])
        assert result.success, result.exception
        return events

    first = parse("a", None)
    assert "UnableToPartialParse" in first  # no saved parse yet
    second = parse("b", ALL_VARS)
    assert "UnableToPartialParse" not in second
    assert "PartialParsingSkipParsing" in second  # nothing changed: the saved parse is used
