"""Text tables for the console, drawn by rich: one look for the demo summary, bills and the
close status.

`table_lines` returns plain lines (no ANSI codes, whatever the output is), so the callers'
`echo` can write them to a terminal, a pipe or a log file alike.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

WIDTH = 200  # wide enough that no table the project prints is wrapped
# rich's SIMPLE_HEAD in ASCII: a dashed rule under the header, gaps between the columns.
ASCII_HEAD = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def table_lines(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Iterable[int] = (),
    title: str | None = None,
) -> list[str]:
    """`rows` under `headers`, the columns in `numeric` right-aligned, as text lines."""
    numeric = set(numeric)
    table = Table(
        box=ASCII_HEAD,
        show_edge=False,
        pad_edge=False,
        title=Text(title) if title else None,
        title_justify="left",
        safe_box=True,
    )
    for i, header in enumerate(headers):
        table.add_column(Text(header), justify="right" if i in numeric else "left", no_wrap=True)
    for row in rows:
        # Text, not str: a name that looks like rich markup (`[bold]`) is printed as written
        table.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=WIDTH, color_system=None, force_terminal=False, highlight=False
    )
    console.print(table)
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    return [line for line in lines if line]
