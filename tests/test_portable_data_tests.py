"""Data tests that run on every engine: Spark refuses `bool_column in ('False')` (DuckDB casts
the text), so an accepted_values test on a boolean column must not quote its values, and a
`column_rules` test must list a boolean column's accepted values as YAML booleans (the macro
writes booleans as literals, text quoted). Spark's data tests run only in `make test-spark`;
this finds the mistake in `make test`."""

from __future__ import annotations

from pathlib import Path

import yaml

MODELS = Path(__file__).parents[1] / "models"


def _models():
    for path in sorted(MODELS.rglob("*.yml")):
        document = yaml.safe_load(path.read_text()) or {}
        for model in document.get("models", []):
            yield path, model


def _tests(entries):
    for test in entries or []:
        if isinstance(test, dict):
            ((name, spec),) = test.items()
            yield name, spec or {}


def _accepted_values_on_boolean_columns():
    for path, model in _models():
        for column in model.get("columns", []):
            if str(column.get("data_type", "")).lower() != "boolean":
                continue
            for name, spec in _tests(column.get("data_tests")):
                if name == "accepted_values":
                    arguments = spec.get("arguments", spec)
                    yield f"{path.name}: {model['name']}.{column['name']}", arguments


def _column_rules_accepted_values():
    for path, model in _models():
        for name, spec in _tests(model.get("data_tests")):
            if name == "column_rules":
                accepted = spec.get("arguments", spec).get("accepted_values", {})
                for column, values in accepted.items():
                    yield f"{path.name}: {model['name']}.{column}", values


def test_accepted_values_on_a_boolean_column_are_not_quoted():
    found = list(_accepted_values_on_boolean_columns())
    assert found, "no accepted_values test on a boolean column was found: the walk is broken"
    quoted = [where for where, arguments in found if arguments.get("quote", True) is not False]
    assert quoted == []


def test_column_rules_write_booleans_as_booleans():
    found = list(_column_rules_accepted_values())
    assert len(found) > 50, "few column_rules accepted_values were found: the walk is broken"
    text = [
        where
        for where, values in found
        for value in values
        if isinstance(value, str) and value.lower() in ("true", "false")
    ]
    assert text == []
