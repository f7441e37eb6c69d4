"""The console: a progress bar on a terminal, one plain line per step otherwise (no ANSI)."""

from __future__ import annotations

import io
import re

from rich.console import Console

from kubeledger import console as console_module
from kubeledger.console import file_progress, generator_progress, progress_bar


def test_off_a_terminal_a_step_is_one_plain_line(capsys):
    with progress_bar("dbt build", 3) as bar:
        bar.advance(current="stg_a")
        bar.advance(current="fct_b")
        bar.advance()
        bar.summary = "2 success, 1 pass"
    out = capsys.readouterr().out
    assert re.fullmatch(r"    dbt build: 3/3, 2 success, 1 pass in \d+\.\ds\n", out), out


def test_on_a_terminal_the_bar_shows_done_total_and_the_current_item(monkeypatch):
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(console_module, "console", lambda: terminal)
    with progress_bar("dbt build", 4) as bar:
        bar.advance(current="int_pod_hours_allocated")
        bar.note("      error: fct_x (marts/fct_x.sql)")
        bar.summary = "1 error"
    text = screen.getvalue()
    assert "\x1b[" in text  # a live bar, in colour
    assert "error: fct_x (marts/fct_x.sql)" in text  # a failure printed above it
    assert "1/4" in text and "1 error" in text


def test_the_generator_counts_drive_the_bar(capsys):
    with generator_progress("landing files") as progress:
        progress("fleet model: 8 node instances")
        progress("usage reports (cluster-days): 7/70")
        progress("usage reports (cluster-days): 70/70")
        progress("aws: CUR 2.0 2026-10")
    out = capsys.readouterr().out
    assert re.fullmatch(r"    landing files: 70/70 in \d+\.\ds\n", out), out


def test_a_load_counts_the_landing_files_and_hides_its_lines_unless_verbose(
    tmp_path, capsys, monkeypatch
):
    for name in ("a.csv", "b/c.csv", "b/d.csv", ".hidden/e.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    with file_progress("files", tmp_path) as progress:
        progress("loaded  a.csv -> raw.x: 1 row")
        progress("ignored b/c.csv: export manifest (not data)")
        progress("loaded  b/d.csv -> raw.x: 1 row")
    out = capsys.readouterr().out
    assert re.fullmatch(r"    files: 3/3 in \d+\.\ds\n", out), out
    monkeypatch.setenv("KUBELEDGER_VERBOSE", "1")
    with file_progress("files", tmp_path) as progress:
        progress("loaded  a.csv -> raw.x: 1 row")
    assert capsys.readouterr().out == "loaded  a.csv -> raw.x: 1 row\n"
