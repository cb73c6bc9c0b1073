"""A plain function's input schema from its type hints, and the check of its arguments: one pydantic model
builds both, so they cannot disagree.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._errors import UsageError

__all__ = ["Arguments", "schema_of"]


@dataclass(frozen=True)
class Arguments:
    """The arguments model of one function."""

    name: str
    model: Any  # a pydantic model class
    fields: tuple[str, ...]

    @classmethod
    def of(cls, func: Callable[..., Any]) -> Arguments:
        import pydantic

        try:
            hints = typing.get_type_hints(func)
        except Exception as exc:  # an unresolvable annotation: say which function
            raise UsageError(f"cannot read the type hints of {func.__name__}: {exc}") from exc
        fields: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if param.kind is param.POSITIONAL_ONLY:
                raise UsageError(f"{func.__name__}: positional-only parameters cannot be tool arguments")
            annotation = hints.get(param.name, Any)
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (annotation, default)
        model = pydantic.create_model(f"{func.__name__}_arguments", **fields)
        return cls(func.__name__, model, tuple(fields))

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments; UsageError (its message for the model) when they do not fit."""
        import pydantic

        unknown = sorted(set(arguments) - set(self.fields))
        if unknown:
            raise UsageError(f"{self.name} takes no argument(s) {unknown}; it takes {list(self.fields)}")
        try:
            validated = self.model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise UsageError(f"invalid arguments for {self.name}: {exc}") from exc
        return {name: getattr(validated, name) for name in self.fields if name in validated.model_fields_set}


def schema_of(arguments: Arguments) -> dict[str, Any]:
    """The JSON schema of a function's arguments (an object schema, titles dropped as noise)."""
    schema: dict[str, Any] = arguments.model.model_json_schema()
    _drop_titles(schema)
    schema.setdefault("properties", {})
    return schema


def _drop_titles(schema: Any) -> None:
    """pydantic's generated `title`s repeat the names. Only subschemas are visited, so a property
    called `title` or a default value holding a "title" key is left alone."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("title"), str):
        del schema["title"]
    for key in ("properties", "$defs"):
        for child in (schema.get(key) or {}).values():
            _drop_titles(child)
    for key in ("items", "additionalProperties"):
        _drop_titles(schema.get(key))
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for child in schema.get(key) or ():
            _drop_titles(child)
