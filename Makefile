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

.PHONY: setup demo test lint unit e2e docs ui bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

# A realistic multi-cloud fleet: generate, load, build, close and seal, print the bill.
demo: $(STAMP)
	$(BIN)/kubeledger demo --out $(DEMO_DIR) --as-of $(AS_OF)

lint: $(STAMP)
	$(BIN)/ruff check orchestration tests
	$(BIN)/ruff format --check orchestration tests
	$(BIN)/sqlfluff lint models macros data-tests --processes 2

test: $(STAMP)
	$(MAKE) lint
	$(BIN)/pytest tests -q

clean:
	rm -rf warehouse demo target logs
