"""Every in-process dbt command, with one progress bar: nodes done / total, the current node,
elapsed time. dbt's own log goes to its log file (`logs/dbt.log`: each node's start, result
and error; with every statement at `--verbose`) and to the console only with `--verbose` (then
without colour codes when the output is not a terminal).

The bar is driven by dbt's structured events (the runner's callbacks): `LogStartLine` carries
the node and the run's total, `NodeFinished` its status. A failing node is printed above the
bar as it fails; the caller raises with every failure's full message at the end.

A command that runs nodes (build, run, test, seed) writes `run_results.json` only: dbt's
`manifest.json`, `semantic_manifest.json` and graph files (a 4 MB manifest serialized again on
every command, 1.3 to 1.5 s of a one-day run at 1,000 nodes) are left to `dbt parse`, which
Dagster's code location runs when its manifest is stale (dagster/dbt_project.py).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from kubeledger.console import is_verbose, progress_bar

FAILED = ("error", "fail", "runtime error")
RUNS_NODES = frozenset({"build", "run", "test", "seed"})
RUN_RESULTS = "run_results.json"


def _flag_value(args: Sequence[str], *flags: str) -> str | None:
    args = list(args)
    for flag in flags:
        if flag in args[:-1]:
            return args[args.index(flag) + 1]
    return None


def _write_run_results(args: Sequence[str], result: Any) -> None:
    """What dbt writes with --write-json: the run's results, for `make bench` and the user,
    in dbt's target folder for `args`."""
    from kubeledger.paths import dbt_target_path

    run_result = getattr(result, "result", None)
    if hasattr(run_result, "write"):
        path = dbt_target_path(_flag_value(args, "--target-path")) / RUN_RESULTS
        path.parent.mkdir(parents=True, exist_ok=True)
        run_result.write(str(path))


def _label(args: Sequence[str]) -> str:
    words = ["dbt", args[0]]
    select = _flag_value(args, "--select", "-s")
    if select is not None:
        words.append(select)
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
    manifest: Any = None,
) -> Any:
    """`dbtRunner().invoke(args)` with a progress bar (or dbt's log, with --verbose), the
    saved parse kept across vars and warehouse files (dbt_parse.py); with `manifest`
    (parse_project's), dbt does not parse the project again."""
    from dbt.cli.main import dbtRunner

    from kubeledger.dbt_parse import keep_partial_parse

    keep_partial_parse()

    command = list(args)
    runs_nodes = bool(command) and command[0] in RUNS_NODES
    if runs_nodes:
        command.append("--no-write-json")
    if is_verbose():
        if not sys.stdout.isatty():
            command.append("--no-use-colors")
        result = dbtRunner(manifest, callbacks=list(callbacks)).invoke(command)
    else:
        result = _invoke_with_bar(command, callbacks, label or _label(args), manifest)
    if runs_nodes:
        _write_run_results(command, result)
    return result


def parse_project(args: Sequence[str]) -> Any:
    """`dbt parse` (`args`: the project's and profiles' folders), with neither bar nor console
    output, nor a manifest.json (the saved partial parse is still written): the Manifest,
    or None when the parse failed."""
    from dbt.cli.main import dbtRunner

    from kubeledger.dbt_parse import keep_partial_parse

    keep_partial_parse()
    command = ["parse", *args, "--no-write-json", "--log-level", "none"]
    command += ["--log-level-file", "info"]
    result = dbtRunner().invoke(command)
    return result.result if result.success and result.exception is None else None


def _invoke_with_bar(
    command: list[str],
    callbacks: Sequence[Callable[[Any], None]],
    label: str,
    manifest: Any = None,
) -> Any:
    """The console shows the bar; the log file keeps each node's start, result and error."""
    from dbt.cli.main import dbtRunner

    command = [*command, "--log-level", "none", "--log-level-file", "info"]
    with progress_bar(label) as bar:

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

        result = dbtRunner(manifest, callbacks=[_on_event, *callbacks]).invoke(command)
        bar.summary = _summary(result)
    return result
