"""`kubeledger bench` and `python -m kubeledger.bench`: the fleet-scale benchmark."""

from __future__ import annotations

from pathlib import Path

import click

from kubeledger.bench.runner import BenchConfig, BenchError, run_bench


@click.command()
@click.option(
    "--nodes",
    "nodes",
    type=int,
    multiple=True,
    default=(100, 1000),
    show_default=True,
    help="Fleet size in nodes; repeat for several sizes.",
)
@click.option("--days", default=30, show_default=True, help="Days of usage from 2026-10-01.")
@click.option("--pods-per-node", default=25, show_default=True)
@click.option("--clusters", default=4, show_default=True)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("bench-out"),
    show_default=True,
    help="Where results.md, results.json and the stage logs go.",
)
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the fleets' landing files and warehouses go (default: OUT/work).",
)
@click.option("--keep", is_flag=True, help="Keep each fleet's landing files and warehouse.")
@click.option(
    "--spark-nodes",
    type=int,
    multiple=True,
    default=(100,),
    show_default=True,
    help="Fleet sizes also run on a Spark cluster through its Thrift Server (0: none).",
)
def bench(
    nodes: tuple[int, ...],
    days: int,
    pods_per_node: int,
    clusters: int,
    out_dir: Path,
    work_dir: Path | None,
    keep: bool,
    spark_nodes: tuple[int, ...],
) -> None:
    """Generate, load, build, close and re-run a day of fleets of NODES nodes; time each stage
    against a one-query baseline and write OUT/results.md and OUT/results.json."""
    config = BenchConfig(
        nodes=list(nodes),
        days=days,
        pods_per_node=pods_per_node,
        clusters=clusters,
        out_dir=out_dir,
        work_dir=work_dir,
        keep=keep,
        spark_nodes=list(spark_nodes),
    )
    try:
        run_bench(config, say=click.echo)
    except BenchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo((out_dir / "results.md").read_text())
