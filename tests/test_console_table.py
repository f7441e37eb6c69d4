"""Console tables (kubeledger.console_table, drawn by rich): plain text whatever the output,
numbers right-aligned under their header, text left-aligned, no ANSI codes."""

from __future__ import annotations

from kubeledger.console_table import table_lines


def test_a_table_is_plain_aligned_text():
    lines = table_lines(
        ["cluster", "nodes", "total"],
        [("eks-prod", "3", "1,234.50"), ("gke", None, "2.00")],
        numeric=[1, 2],
    )
    assert lines == [
        "cluster    nodes      total",
        "--------- ------- ---------",
        "eks-prod       3   1,234.50",
        "gke                    2.00",
    ]
    assert not any("\x1b" in line for line in lines)


def test_markup_in_cells_is_printed_as_written():
    """A team or line ID that looks like rich markup (`[bold]`) is not interpreted."""
    lines = table_lines(["line"], [("[bold]cc-1[/bold]",)])
    assert lines[-1] == "[bold]cc-1[/bold]"
