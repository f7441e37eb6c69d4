"""Every in-process dbt command, with one progress bar: nodes done / total, the current node,
elapsed time. dbt's own log goes to its log file (`logs/dbt.log`: each node's start, result
and error; with every statement at `--verbose`) and to the console only with `--verbose` (then
without colour codes when the output is not a terminal).

The bar is driven by dbt's structured events (the runner's callbacks): `LogStartLine` carries
the node and the run's total, `NodeFinished` its status. A failing node is printed above the
bar as it fails; the caller raises with every failure's full message at the end.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from kubeledger.console import is_verbose, progress_bar

FAILED = ("error", "fail", "runtime error")


def _label(args: Sequence[str]) -> str:
    words = ["dbt", args[0]]
    for flag in ("--select", "-s"):
        if flag in args:
            words.append(args[list(args).index(flag) + 1])
    return " ".join(words)


def _summary(result: Any) -> str:
    statuses = Counter(str(node.status) for node in getattr(result.result, "results", None) or [])
    if result.exception is not None:
        return "failed"
    parts = [f"{statuses[s]} {s}" for s in ("success", "pass", "warn") if statuses[s]]
    parts += [f"{statuses[s]} {s}" for s in (*FAILED, "skipped") if statuses[s]]
    return ", ".join(parts)


def invoke_dbt(
    args: Sequence[str],
    *,
    callbacks: Sequence[Callable[[Any], None]] = (),
    label: str | None = None,
) -> Any:
    """`dbtRunner().invoke(args)` with a progress bar (or dbt's log, with --verbose), the
    saved parse kept across vars and warehouse files (dbt_parse.py)."""
    from dbt.cli.main import dbtRunner

    from kubeledger.dbt_parse import keep_partial_parse

    keep_partial_parse()

    command = list(args)
    if is_verbose():
        if not sys.stdout.isatty():
            command.append("--no-use-colors")
        return dbtRunner(callbacks=list(callbacks)).invoke(command)
    # the console shows the bar; the log file keeps each node's start, result and error
    command += ["--log-level", "none", "--log-level-file", "info"]
    with progress_bar(label or _label(args)) as bar:

        def _on_event(event: Any) -> None:
            name = event.info.name
            if name == "LogStartLine":
                if bar.total != event.data.total:
                    bar.set_total(event.data.total)
                bar.working_on(event.data.node_info.node_name)
            elif name == "NodeFinished":
                node = event.data.node_info
                bar.advance()
                if node.node_status in FAILED:
                    bar.failed += 1
                    message = event.data.run_result.message
                    bar.note(f"      {node.node_status}: {node.node_name} ({node.node_path})")
                    if message:
                        bar.note(f"        {message}")

        result = dbtRunner(callbacks=[_on_event, *callbacks]).invoke(command)
        bar.summary = _summary(result)
    return result
