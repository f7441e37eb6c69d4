"""One DuckDB file has one writer: when another process holds the warehouse, say which one and
what to do, instead of DuckDB's IOException traceback. Dagster retries with backoff.

DuckDB names the holder in its lock error (`Conflicting lock is held in <program> (PID n)`);
`busy_message` turns that into a sentence with the process's command line when it can be read.
In Dagster, every asset and op that writes the file has a retry policy with backoff
(dagster/resources.py `WAREHOUSE_RETRY`): a run that meets a writer outside Dagster (a
`kubeledger` command) waits and tries again.
"""

from __future__ import annotations

import re
from pathlib import Path

_LOCK = re.compile(
    r'Could not set lock on file "(?P<file>[^"]+)": Conflicting lock is held in '
    r"(?P<program>.*?) \(PID (?P<pid>[0-9]+)\)"
)


class WarehouseBusyError(RuntimeError):
    """Another process holds the warehouse file; the message names it and what to do."""


def _command_line(pid: str) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    text = " ".join(part for part in raw.decode(errors="replace").split("\0") if part)
    return text[:200] or None


def busy_message(text: str) -> str | None:
    """A clear message for DuckDB's lock error found in `text`, else None."""
    match = _LOCK.search(text)
    if match is None:
        return None
    pid = match["pid"]
    command = _command_line(pid) or match["program"]
    return (
        f"the warehouse {match['file']} is in use by another process: PID {pid} ({command}). "
        "A DuckDB file has one writer at a time (and no reader while it writes): wait for that "
        f"process to finish and run this again, or stop it (kill {pid}) if it is stuck. "
        "Dagster runs that write the warehouse share a pool of 1 and retry with backoff."
    )
