"""The serving copy on a hand-made warehouse (no dbt): what is copied, where, and how a reader
that holds the old copy open is never disturbed by a new one (DuckDB and Linux semantics the
serving design rests on: the renamed-over file lives on for whoever has it open)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import sqlalchemy as sa

from kubeledger.serving import SERVING_ENV, publish, serving_path


def _warehouse(path: Path, cost: int) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema if not exists marts")
        con.execute("create schema if not exists sealed")
        con.execute("create schema if not exists raw")
        con.execute("create or replace table raw.pod_usage as select 1 as x")
        con.execute(
            "create or replace table marts.fct_costs as "
            f"select * from (values ('a', {cost}), ('b', 2)) as t(team, total_cost)"
        )
        # a view over another schema: the copy must hold its rows, not the view
        con.execute(
            "create or replace view marts.rpt_team_totals as "
            "select team, sum(total_cost) as total_cost from marts.fct_costs group by team"
        )
        con.execute("drop table if exists sealed.sealed_bill_lines")
        con.execute("drop table if exists sealed.sealed_bills")
        con.execute("create table sealed.sealed_bills (bill_id varchar primary key)")
        con.execute(
            "create table sealed.sealed_bill_lines (bill_id varchar not null "
            "references sealed.sealed_bills (bill_id), billed_cost decimal(38, 2) "
            "check (billed_cost >= 0))"
        )
        con.execute("insert into sealed.sealed_bills values ('b1')")
        con.execute("insert into sealed.sealed_bill_lines values ('b1', 3.10)")
    return path


def _rows(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_publish_copies_marts_and_sealed_as_tables_and_parquet(tmp_path):
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    published = publish(db)
    serving = tmp_path / "kubeledger-serving.duckdb"
    assert published.path == serving
    assert published.tables == [
        "marts.fct_costs",
        "marts.rpt_team_totals",
        "sealed.sealed_bill_lines",
        "sealed.sealed_bills",
    ]
    assert published.rows == 2 + 2 + 1 + 1
    # the view arrives as a table with its rows; raw stays in the warehouse
    assert _rows(
        serving,
        "select table_schema, table_name, table_type from information_schema.tables order by 1, 2",
    ) == [
        ("marts", "fct_costs", "BASE TABLE"),
        ("marts", "rpt_team_totals", "BASE TABLE"),
        ("sealed", "sealed_bill_lines", "BASE TABLE"),
        ("sealed", "sealed_bills", "BASE TABLE"),
    ]
    # the sealed tables keep their keys and checks (`kubeledger verify` checks them)
    assert _rows(
        serving,
        "select table_name, constraint_type from duckdb_constraints() "
        "where schema_name = 'sealed' order by all",
    ) == _rows(
        db,
        "select table_name, constraint_type from duckdb_constraints() "
        "where schema_name = 'sealed' order by all",
    )
    assert ("sealed_bill_lines", "FOREIGN KEY") in _rows(
        serving, "select table_name, constraint_type from duckdb_constraints()"
    )
    assert _rows(serving, "select * from marts.rpt_team_totals order by team") == [
        ("a", 5),
        ("b", 2),
    ]
    parquet = tmp_path / "parquet" / "marts" / "fct_costs.parquet"
    assert duckdb.connect().execute(f"select sum(total_cost) from '{parquet}'").fetchone() == (7,)
    assert (tmp_path / "parquet" / "sealed" / "sealed_bills.parquet").exists()
    # nothing temporary is left beside it
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_the_seal_copies_are_linked_beside_the_serving_copy(tmp_path):
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    (tmp_path / "kubeledger.duckdb.seals" / "2026-10").mkdir(parents=True)
    publish(db)
    link = tmp_path / "kubeledger-serving.duckdb.seals"
    assert link.is_symlink() and (link / "2026-10").is_dir()


def test_a_dropped_table_leaves_no_parquet_behind(tmp_path):
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    publish(db)
    with duckdb.connect(str(db)) as con:
        con.execute("drop view marts.rpt_team_totals")
    publish(db)
    assert sorted(p.name for p in (tmp_path / "parquet" / "marts").iterdir()) == [
        "fct_costs.parquet"
    ]


def test_the_serving_path_is_a_setting(tmp_path, monkeypatch):
    monkeypatch.setenv(SERVING_ENV, str(tmp_path / "bi" / "ledger.duckdb"))
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    published = publish(db)
    assert published.path == tmp_path / "bi" / "ledger.duckdb" == serving_path(db)
    assert (tmp_path / "bi" / "parquet" / "marts" / "fct_costs.parquet").exists()


def test_a_reader_keeps_its_snapshot_and_a_new_process_sees_the_new_copy(tmp_path):
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    serving = publish(db).path
    engine = sa.create_engine(f"duckdb:///{serving}", connect_args={"read_only": True})
    total = sa.text("select sum(total_cost) from marts.fct_costs")
    with engine.connect() as reader:
        assert reader.execute(total).scalar() == 7
        inode = os.stat(serving).st_ino
        _warehouse(db, cost=40)
        publish(db)  # the reader's shared lock does not stop the swap
        assert os.stat(serving).st_ino != inode  # a new file was renamed over the old one
        assert reader.execute(total).scalar() == 7  # the old file, still open: its snapshot
        fresh = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sqlalchemy as sa, sys; "
                "e = sa.create_engine(f'duckdb:///{sys.argv[1]}', "
                "connect_args={'read_only': True}); "
                "print(e.connect().execute(sa.text(sys.argv[2])).scalar())",
                str(serving),
                str(total),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert fresh.stdout.strip() == "42"
    engine.dispose()
    # In one process DuckDB shares a database between connections to the same path while one
    # is open; once every connection is closed a new one opens the new file.
    with duckdb.connect(str(serving), read_only=True) as con:
        assert con.execute(str(total)).fetchone() == (42,)


def test_an_unreadable_warehouse_leaves_the_old_copy_in_place(tmp_path):
    db = _warehouse(tmp_path / "kubeledger.duckdb", cost=5)
    serving = publish(db).path
    with duckdb.connect(str(db)) as con:
        # a view that no longer binds: the copy fails half-way
        con.execute("create or replace view marts.zz_broken as select * from raw.pod_usage")
        con.execute("drop table raw.pod_usage")
    with pytest.raises(duckdb.Error):
        publish(db)
    assert _rows(serving, "select sum(total_cost) from marts.fct_costs") == [(7,)]
    hidden = [p for p in tmp_path.rglob(".*") if p.is_file()]
    assert hidden == []
