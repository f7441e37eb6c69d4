"""The fleet-scale benchmark behind `make bench` (SPEC §15).

For each fleet size it generates a month of landing files, loads them, builds the ledger
(`kubeledger build`: configuration, quality gate, one dbt build without unit tests),
closes October and times a one-day incremental run; a baseline reads the same pod-usage CSV
files once with one DuckDB query. Every stage runs in its own process, so its peak memory (max
RSS of the process and its children) is its own. Results go to `bench-out/results.md` and `.json`.

    python -m kubeledger.bench --nodes 100 --nodes 1000 --out bench-out

Modules: `stages` (what runs in each child process), `runner` (runs and measures the
stages), `report` (the markdown table and where dbt's time went), `commands` (the CLI).
"""
