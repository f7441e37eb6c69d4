# Thin wrappers; each target bootstraps the virtualenv on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export KUBELEDGER_DB ?= warehouse/kubeledger.duckdb
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export DBT_PROJECT_DIR := $(CURDIR)
DEMO_DIR ?= demo
AS_OF ?= 2026-11-19

.PHONY: setup demo test lint browser docs ui bench test-spark test-differential test-refactor test-unchanged clean spark-up spark-down

# uv (from PyPI, pinned) installs the pinned set into the venv in about half pip's time.
# --compile-bytecode: uv, unlike pip, writes no .pyc files, and where Python may not write
# them either (PYTHONDONTWRITEBYTECODE) every process compiled each module it imported again:
# 1.9 s of every dbt run, 4.5 of the 8.5 s Great Expectations takes to import.
UV_VERSION := 0.13.9
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --quiet uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

DAGSTER_HOME_DIR ?= $(CURDIR)/.dagster_home

# A realistic multi-cloud fleet: generate, load, build, close and seal, print the bill. What it
# builds is reported to the project's Dagster instance, so `make ui` shows it materialized.
demo: $(STAMP)
	@mkdir -p $(DAGSTER_HOME_DIR)
	@cp orchestration/kubeledger/dagster/dagster.yaml $(DAGSTER_HOME_DIR)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) KUBELEDGER_DB=$(DEMO_DIR)/kubeledger.duckdb \
	$(BIN)/kubeledger demo --out $(DEMO_DIR) --as-of $(AS_OF)

# sqlfluff's dbt templater compiles the project against a scratch warehouse of its own.
lint: $(STAMP)
	$(BIN)/ruff check orchestration tests
	$(BIN)/ruff format --check orchestration tests
	@mkdir -p target
	KUBELEDGER_DB=target/lint.duckdb $(BIN)/sqlfluff lint models macros data-tests --processes 2

# The report test renders in headless Chromium (Debian's package), installed when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# Two pytest-xdist workers, a test file each at a time (tests/conftest.py gives each worker its
# own dbt target and log folders and orders the longest files first; --no-loadscope-reorder
# keeps that order, where xdist would hand out the files with the most tests first).
# The Spark parity test (marker `spark`, 6 to 10 minutes of a worker: a Spark cluster's JVMs on
# the same two cores) runs with `make test-spark`, as the differential test's 500 fleets run
# with `make test-differential`.
TEST_WORKERS ?= 2
test: $(STAMP) browser
	$(MAKE) lint
	$(BIN)/pytest tests -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 \
		-m "not spark"

# The ledger against the independent reference ledger (tests/reference/) on 500 random messy
# fleets, 10 batches of 50, each its own warehouse (`make test` runs batch 0).
# KUBELEDGER_DIFF_SEED=<n> draws other fleets.
DIFF_FLEETS ?= 50
DIFF_BATCHES ?= 10
test-differential: $(STAMP)
	KUBELEDGER_DIFF_FLEETS=$(DIFF_FLEETS) KUBELEDGER_DIFF_BATCHES=$(DIFF_BATCHES) \
		$(BIN)/pytest tests/test_differential.py -q

# Issue 15's refactor changed no output: the code before it (7ba0af9^1, a temporary git
# worktree) and the current code load, build, close and report one small fleet; every mart,
# the sealed bill and the report's numbers must be equal. 3 to 11 minutes on two cores.
test-refactor: $(STAMP)
	KUBELEDGER_REFACTOR_TEST=1 $(BIN)/pytest tests/test_refactor_outputs.py -q -s

# A change meant to change no number leaves every mart and the sealed bill as they were: BASE's
# code (a temporary git worktree) and the current code load, build, close and seal the demo
# fleet and a 100-node bench fleet. 4 to 6 minutes on two cores.
BASE ?= HEAD~1
test-unchanged: $(STAMP)
	KUBELEDGER_UNCHANGED_BASE=$(BASE) $(BIN)/pytest tests/test_unchanged_marts.py -q -s

# A Spark standalone cluster on this machine (Java 17): a master, two workers and the Spark
# Thrift Server on 127.0.0.1:10011, tables and Derby metastore under .spark/ (PID files in
# .spark/run/; stopped by PID). KUBELEDGER_TARGET=spark_thrift runs kubeledger on it.
spark-up: $(STAMP)
	$(BIN)/python -m kubeledger.spark.cluster up

spark-down: $(STAMP)
	$(BIN)/python -m kubeledger.spark.cluster down

# The same small fleet loaded, built, closed and sealed on the Spark cluster (through the
# Thrift Server) and on DuckDB, with Spark's data tests too: every mart and the sealed bill
# equal, a second close refused by Spark. Uses the cluster of `make spark-up` when it runs,
# else starts and stops one of its own.
test-spark: $(STAMP)
	KUBELEDGER_SPARK_TESTS=full $(BIN)/pytest tests/test_spark_parity.py -q -m spark

# Fleet-scale benchmark (SPEC §15): generate, load, build, close, one incremental day, against a
# one-query baseline, per fleet size. Needs ~10 GB of disk at 1,000 nodes; takes a while.
# Results: bench-out/results.md and results.json. BENCH_NODES=100 for a quick run.
BENCH_NODES ?= 100 1000
# Fleet sizes also run on a Spark cluster the benchmark starts (Thrift Server; 0: none).
BENCH_SPARK_NODES ?= 100
bench: $(STAMP)
	$(BIN)/python -m kubeledger.bench $(foreach n,$(BENCH_NODES),--nodes $(n)) \
		$(foreach n,$(BENCH_SPARK_NODES),--spark-nodes $(n)) --out bench-out

UI_PORT ?= 3000

# The Dagster UI (webserver + daemon) on the demo warehouse; builds the demo when missing.
ui: $(STAMP)
	@test -f $(DEMO_DIR)/kubeledger.duckdb || $(MAKE) demo
	@mkdir -p $(DAGSTER_HOME_DIR)
	cp orchestration/kubeledger/dagster/dagster.yaml $(DAGSTER_HOME_DIR)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) \
	KUBELEDGER_DB=$(CURDIR)/$(DEMO_DIR)/kubeledger.duckdb \
	KUBELEDGER_CONFIG=$(CURDIR)/$(DEMO_DIR)/kubeledger.yml \
	KUBELEDGER_LANDING=$(CURDIR)/$(DEMO_DIR)/landing \
	KUBELEDGER_AS_OF=$(AS_OF) KUBELEDGER_PARTITIONS_START=2026-10-01 \
	$(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p $(UI_PORT)

DOCS_PORT ?= 8080
SERVING_DB ?= $(or $(KUBELEDGER_SERVING_DB),$(dir $(KUBELEDGER_DB))kubeledger-serving.duckdb)
# dbt docs (marts, metrics, exposures, business descriptions) on http://localhost:$(DOCS_PORT).
# The catalog is read from a snapshot of the serving copy (dbt opens its file read-write, and
# the warehouse belongs to the pipeline), so docs never lock a build or a BI reader out.
docs: $(STAMP)
	@mkdir -p target/docs
	@rm -f target/docs/serving-snapshot.duckdb
	@test ! -f $(SERVING_DB) || cp $(SERVING_DB) target/docs/serving-snapshot.duckdb
	KUBELEDGER_DB=target/docs/serving-snapshot.duckdb $(BIN)/dbt docs generate --target-path target/docs
	$(BIN)/dbt docs serve --target-path target/docs --host 127.0.0.1 --port $(DOCS_PORT) --no-browser

clean:
	rm -rf warehouse demo target logs
