"""The dbt step never leaves a dbt process behind (it would hold the warehouse)."""

from __future__ import annotations

import subprocess
import sys
import time


def test_a_running_process_is_stopped_by_sigint():
    from kubeledger.dagster.assets_dbt import stop_process

    # The child handles SIGINT as dbt does (KeyboardInterrupt), whatever its parent ignores, and
    # says when it is ready: a SIGINT sent during its interpreter's start could be lost.
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "print('ready', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    assert process.stdout.readline() == b"ready\n"
    started = time.monotonic()
    stop_process(process, grace_seconds=30)
    assert process.returncode is not None
    assert time.monotonic() - started < 30  # SIGINT ended it, not the grace period


def test_a_process_that_ignores_sigint_is_killed_after_the_grace_period():
    from kubeledger.dagster.assets_dbt import stop_process

    code = "import signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    code += "print('ready', flush=True); time.sleep(60)"
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout.readline() == b"ready\n"
    stop_process(process, grace_seconds=0.5)
    assert process.returncode == -9


def test_a_finished_process_is_left_alone():
    from kubeledger.dagster.assets_dbt import stop_process

    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    stop_process(process)
    assert process.returncode == 0
