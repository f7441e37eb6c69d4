"""The real Dagster webserver loads the code location and lists the kubeledger assets."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 90

ASSET_KEYS_QUERY = "{ assetNodes { assetKey { path } } }"
POOLS_QUERY = "{ assetNodes { assetKey { path } pools } }"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _wait_until_ready(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"dagster-webserver exited ({process.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(1)
    pytest.fail(f"dagster-webserver not ready after {READY_TIMEOUT_S}s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def webserver(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_home")
    shutil.copy(REPO / "orchestration" / "kubeledger" / "dagster" / "dagster.yaml", home)
    port = _free_port()
    log = home / "webserver.log"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "KUBELEDGER_PARTITIONS_START": "2026-06-01",
        "KUBELEDGER_DB": str(home / "kubeledger.duckdb"),
    }
    executable = Path(sys.executable).parent / "dagster-webserver"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                str(executable),
                "-w",
                str(REPO / "workspace.yaml"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_ready(port, process, log)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_webserver_lists_the_landing_ledger_and_close_assets(webserver):
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        nodes = _graphql(webserver, ASSET_KEYS_QUERY)["data"]["assetNodes"]
        if nodes or time.monotonic() > deadline:
            break
        time.sleep(1)  # the code location may still be loading
    keys = {"/".join(node["assetKey"]["path"]) for node in nodes}
    assert {
        "landing",
        "monthly_close",
        "staging/stg_koku__pod_usage",
        "marts/fct_pod_costs_daily",
        "marts/fct_reconciliation_daily",
        "marts/fct_data_health_daily",
        "marts/fct_rerun_log",
    } <= keys


def test_every_asset_that_writes_the_warehouse_is_in_the_one_writer_pool(webserver):
    nodes = _graphql(webserver, POOLS_QUERY)["data"]["assetNodes"]
    pools = {"/".join(node["assetKey"]["path"]): node["pools"] for node in nodes}
    assert pools["landing"] == ["kubeledger_warehouse"]
    assert pools["marts/fct_pod_costs_daily"] == ["kubeledger_warehouse"]
    assert pools["monthly_close"] == ["kubeledger_warehouse"]
