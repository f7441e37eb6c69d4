"""dbt's partial parsing kept across runs that differ only in their `--vars` or DuckDB file.

dbt re-parses the whole project (12-15 s on two cores, most of a small build) whenever the
command-line vars or any connection value differ from the saved parse's: every run of
kubeledger passes a different `as_of`, day range or close month, and every test warehouse is
its own file, so almost no run could reuse the parse. Neither changes what the parse holds in
this project: the vars are read only where SQL is compiled (macros/incremental, macros/close,
two models), never in a `ref`, `source` or `config`, and no model reads the warehouse's path
(tests/test_dbt_vars.py parses with different vars and paths and compares the manifests).
`keep_partial_parse` makes dbt's saved-parse check (`ManifestLoader.
build_manifest_state_check`) leave those two out; the compiled SQL still uses the vars of the
run. Everything else still forces a full parse as dbt decides: a changed file, dbt_project.yml,
the target or adapter, the DuckDB settings, dbt's version.

Applied in-process by kubeledger/dbt_invoke.py and, for Dagster's dbt subprocesses, by the
`kubeledger-dbt` executable (`main` here: dbt's own CLI after the patch).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

# Connection values that never change a parse: the DuckDB file.
IGNORED_CONNECTION_KEYS = frozenset({"path"})

_applied = False


def keep_partial_parse() -> None:
    """Patch dbt's saved-parse check once per process (dbt-core ~=1.11, pinned)."""
    global _applied
    if _applied:
        return
    from dbt.parser.manifest import ManifestLoader

    original = ManifestLoader.build_manifest_state_check

    @functools.wraps(original)
    def build_manifest_state_check(self: Any) -> Any:
        config = self.root_project
        cli_vars, credentials = config.cli_vars, config.credentials
        credentials.connection_info = functools.partial(
            _parse_relevant, credentials.connection_info
        )
        config.cli_vars = {}
        try:
            return original(self)
        finally:
            config.cli_vars = cli_vars
            del credentials.connection_info  # the class's method again

    ManifestLoader.build_manifest_state_check = build_manifest_state_check
    _applied = True


def _parse_relevant(
    connection_info: Callable[..., Iterator[tuple[str, Any]]], *args: Any, **kwargs: Any
) -> Iterator[tuple[str, Any]]:
    for key, value in connection_info(*args, **kwargs):
        if key not in IGNORED_CONNECTION_KEYS:
            yield key, value


def main() -> None:
    """`kubeledger-dbt`: dbt's command line with the saved parse kept (Dagster runs it)."""
    keep_partial_parse()
    from dbt.cli.main import cli

    sys.exit(cli())


if __name__ == "__main__":
    main()
