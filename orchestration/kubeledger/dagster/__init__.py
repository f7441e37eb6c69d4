"""The Dagster code location: `kubeledger.dagster.definitions` (SPEC §13).

Landing, staging and allocation are daily-partitioned assets; the monthly close is a
monthly-partitioned asset downstream of them. Every asset that writes the warehouse runs in
the `kubeledger_warehouse` pool (limit 1: one DuckDB file has one writer) and backfills run as
one run per range (single-run backfill policy).
"""
