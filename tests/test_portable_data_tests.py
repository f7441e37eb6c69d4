"""Data tests that run on every engine: Spark refuses `bool_column in ('False')` (DuckDB casts
the text), so an accepted_values test on a boolean column must not quote its values. Spark's
data tests run only in `make test-spark`; this finds the mistake in `make test`."""

from __future__ import annotations

from pathlib import Path

import yaml

MODELS = Path(__file__).parents[1] / "models"


def _accepted_values_on_boolean_columns():
    for path in sorted(MODELS.rglob("*.yml")):
        document = yaml.safe_load(path.read_text()) or {}
        for model in document.get("models", []):
            for column in model.get("columns", []):
                if str(column.get("data_type", "")).lower() != "boolean":
                    continue
                for test in column.get("data_tests", []) or []:
                    if isinstance(test, dict) and "accepted_values" in test:
                        spec = test["accepted_values"]
                        arguments = spec.get("arguments", spec)
                        yield f"{path.name}: {model['name']}.{column['name']}", arguments


def test_accepted_values_on_a_boolean_column_are_not_quoted():
    found = list(_accepted_values_on_boolean_columns())
    assert found, "no accepted_values test on a boolean column was found: the walk is broken"
    quoted = [where for where, arguments in found if arguments.get("quote", True) is not False]
    assert quoted == []
