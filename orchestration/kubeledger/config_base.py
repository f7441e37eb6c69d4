"""What every kubeledger.yml section model shares: the error a user sees, the base model, the
value types with their messages, and the turning of pydantic's errors into one ConfigError that
lists every problem with its key path (`clusters[1].provider: 'amazon' is not one of ...`).

A validator raises `ValueError(message)` for the value it checks; a model-level check that
names a key below the model raises `ValueError(problems([(relative path, message), ...]))`, so
one check can report several keys at once.
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

KEY_MARK = "@"  # a problem line `@<relative path>|<message>` names a key below the error's loc


class ConfigError(ValueError):
    """A setting in kubeledger.yml is invalid; the message names the key of every problem."""


class Section(BaseModel):
    """A mapping of kubeledger.yml: unknown keys are errors, and a key set to null (`key:` with
    no value in YAML) counts as not set, so it takes its default."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


def problems(found: Iterable[tuple[str, str]]) -> str:
    """The message of a model-level check that names keys below the model."""
    return "\n".join(f"{KEY_MARK}{path}|{message}" for path, message in found)


def raise_problems(found: list[tuple[str, str]]) -> None:
    if found:
        raise ValueError(problems(found))


# --- value types ------------------------------------------------------------------------------


def _choice_check(choices: tuple[str, ...]):
    def check(value: Any) -> Any:
        if value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


def choice(*choices: str) -> Any:
    """One of `choices` (an enum in the JSON Schema)."""
    return Annotated[Literal[choices], BeforeValidator(_choice_check(choices))]


def _number_check(low: float | None, high: float | None, whole: bool):
    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected a {'whole ' if whole else ''}number, got {value!r}")
        if whole and value != int(value):
            raise ValueError(f"expected a whole number, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            if high is None:
                raise ValueError(f"{value} is below {low}")
            if low is None:
                raise ValueError(f"{value} is above {high}")
            raise ValueError(f"{value} is outside [{low}, {high}]")
        return int(value) if whole else float(value)

    return check


def number(low: float | None = None, high: float | None = None) -> Any:
    """A number (never a boolean or a quoted number), within [low, high] when given."""
    return Annotated[
        float, BeforeValidator(_number_check(low, high, False)), Field(ge=low, le=high)
    ]


def whole(low: int | None = None, high: int | None = None) -> Any:
    """A whole number within [low, high] when given."""
    return Annotated[int, BeforeValidator(_number_check(low, high, True)), Field(ge=low, le=high)]


def _to_date(value: Any) -> dt.date:
    if isinstance(value, dt.date):
        return value.date() if isinstance(value, dt.datetime) else value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{value!r} is not a date (YYYY-MM-DD)") from None


Day = Annotated[dt.date, BeforeValidator(_to_date)]
BEGINNING_DAY = dt.date(1970, 1, 1)
# An ID YAML may read as a number (an AWS account): kept as its text.
IdText = Annotated[
    str, BeforeValidator(lambda value: value if isinstance(value, str) else str(value))
]


# --- errors ---------------------------------------------------------------------------------


def _path(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _join(base: str, relative: str) -> str:
    if not base:
        return relative
    if not relative:
        return base
    return base + relative if relative.startswith("[") else f"{base}.{relative}"


def _unwrap(annotation: Any) -> Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = members[0]
        else:
            return annotation


def _model_at(root: type[BaseModel], loc: Iterable[Any]) -> Any:
    """The type at `loc` under `root` (the model an unknown key was found in)."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        origin = typing.get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = {f.alias or name: f for name, f in current.model_fields.items()}
            if part not in fields:
                return None
            current = fields[part].annotation
        elif origin is list and isinstance(part, int):
            current = typing.get_args(current)[0]
        elif origin is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    return _unwrap(current)


def _allowed(root: type[BaseModel], loc: tuple) -> str:
    model = _model_at(root, loc)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return (
            f" (allowed: {', '.join(sorted(f.alias or n for n, f in model.model_fields.items()))})"
        )
    return ""


TYPE_NAMES = {
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "string_type": "text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def _message(error: dict, root: type[BaseModel], loc: tuple, full: tuple) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "value_error":
        return error["msg"].removeprefix("Value error, ")
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown setting" + _allowed(root, loc[:-1])
    if kind in TYPE_NAMES:
        name = TYPE_NAMES[kind]
        # The older messages of the main sections read `expected list`; keep them.
        if kind == "list_type" and (not full or full[0] != "cloud_charges"):
            name = "list"
        return f"expected {name}, got {value!r}"
    return f"{error['msg']} (got {value!r})"


def config_error(exc: ValidationError, root: type[BaseModel], prefix: tuple = ()) -> ConfigError:
    """One ConfigError listing every problem of `exc`, each as `key.path: message`."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        base = _path(prefix + loc)
        for part in _message(error, root, loc, prefix + loc).split("\n"):
            if part.startswith(KEY_MARK):
                relative, _, part = part[len(KEY_MARK) :].partition("|")
                line = f"{_join(base, relative)}: {part}"
            else:
                line = f"{base}: {part}" if base else part
            if line not in lines:
                lines.append(line)
    if len(lines) == 1:
        return ConfigError(lines[0])
    return ConfigError(
        f"kubeledger.yml has {len(lines)} problems:\n" + "\n".join(f"  {line}" for line in lines)
    )


def validate(model: type[BaseModel], raw: Any, prefix: tuple = ()) -> Any:
    """`raw` validated as `model`, or a ConfigError naming every problem."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise config_error(exc, model, prefix) from None
