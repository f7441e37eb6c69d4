"""The console a person reads: one progress bar per long step on a terminal, one plain line per
step otherwise (no ANSI codes in a file or a pipe), and the details only with `--verbose`.

`KUBELEDGER_VERBOSE=1` (set by `--verbose`) prints every line the steps report (each file
loaded, dbt's own log) instead of the bars, so a run can be debugged from its output alone.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

VERBOSE_ENV = "KUBELEDGER_VERBOSE"
INDENT = "    "
# "usage reports (runs of cluster-days): 7/70": the generator's count of a batch of files
_COUNT = re.compile(r"^(?P<what>.+): (?P<done>\d+)/(?P<total>\d+)$")


def is_verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes")


def _set_verbose(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        os.environ[VERBOSE_ENV] = "1"


verbose_option = click.option(
    "--verbose",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_verbose,
    help="Print every file loaded and dbt's own log instead of progress bars.",
)


def console() -> Console:
    """A console on the current stdout (click's test runner swaps it), colour only on a
    terminal (rich also honours NO_COLOR and TERM=dumb)."""
    return Console(highlight=False, soft_wrap=True)


class Bar:
    """One step's progress: `advance()` per item done, `current` what it works on, `note()` a
    line that must be seen (a failure) printed above the bar."""

    def __init__(self, description: str, total: int | None, console_: Console) -> None:
        self.description = description
        self.total = total
        self.completed = 0
        self.current = ""
        self.failed = 0
        self.summary = ""  # how the step ended, shown on its last line
        self._console = console_
        self._progress: Progress | None = None
        self._task: Any = None
        self.started = time.monotonic()

    def _start(self) -> None:
        if not self._console.is_terminal:
            return
        self._progress = Progress(
            TextColumn(INDENT + "[bold]{task.description}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[current]}"),
            console=self._console,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total, current="")

    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(
                self._task, total=self.total, completed=self.completed, current=self.current
            )

    def set_total(self, total: int) -> None:
        self.total = total
        self._refresh()

    def advance(self, count: int = 1, current: str | None = None) -> None:
        self.completed += count
        if self.total is not None:
            self.completed = min(self.completed, self.total)
        if current is not None:
            self.current = current
        self._refresh()

    def working_on(self, current: str) -> None:
        self.current = current
        self._refresh()

    def note(self, text: str) -> None:
        self._console.print(text, markup=False, highlight=False)

    def _finish(self, summary: str) -> None:
        elapsed = time.monotonic() - self.started
        if self._progress is not None:
            self.current = summary
            self._refresh()
            self._progress.stop()
            return
        done = f"{self.completed}/{self.total}" if self.total is not None else f"{self.completed}"
        tail = f", {summary}" if summary else ""
        self._console.print(
            f"{INDENT}{self.description}: {done}{tail} in {elapsed:.1f}s",
            markup=False,
            highlight=False,
        )


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator[Bar]:
    """A bar for one step; on exit the bar stays as the step's one line (or, off a terminal,
    one plain line `description: done/total, summary in 1.2s`). Set `bar.summary` to say how
    it ended."""
    bar = Bar(description, total, console())
    bar._start()
    try:
        yield bar
    finally:
        bar._finish(bar.summary)


def shown(path: Path) -> str:
    """A path as a person reads it: relative to the working directory when under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def say(message: str) -> None:
    """A line printed only with --verbose (the steps' per-item reports)."""
    if is_verbose():
        click.echo(message)


class _FileLines:
    """The load's progress callback; set `summary` (the load's total line) before the end."""

    def __init__(self, bar: Bar | None) -> None:
        self.bar = bar
        self.summary = ""

    def __call__(self, line: str) -> None:
        if self.bar is None:
            click.echo(line)
            return
        parts = line.split()
        self.bar.advance(current=parts[1] if len(parts) > 1 else line)


@contextmanager
def file_progress(description: str, landing: Path) -> Iterator[_FileLines]:
    """A progress callback for `load_landing`: one step per landing file it reports; the bar's
    last line ends with the callback's `summary`."""
    total = sum(
        1
        for path in Path(landing).rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(landing).parts)
    )
    if is_verbose():
        lines = _FileLines(None)
        yield lines
        if lines.summary:
            click.echo(INDENT + lines.summary)
        return
    with progress_bar(description, total) as bar:
        lines = _FileLines(bar)
        yield lines
        bar.current = ""
        bar.summary = lines.summary


@contextmanager
def generator_progress(description: str) -> Iterator[Callable[[str], None]]:
    """A progress callback for `generate_fleet`: its file counts drive the bar, its other
    lines (which export it writes) show as the current item."""
    if is_verbose():
        yield click.echo
        return
    with progress_bar(description, None) as bar:

        def _progress(line: str) -> None:
            match = _COUNT.match(line)
            if match:
                bar.set_total(int(match["total"]))
                bar.completed = int(match["done"])
                bar.working_on(match["what"])
            else:
                bar.working_on(line)

        yield _progress
