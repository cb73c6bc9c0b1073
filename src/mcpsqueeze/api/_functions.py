"""Plain callables for agent frameworks, from a tool's name, description and input schema: a keyword-only
signature made from the schema's properties, so introspection shows the real parameters.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable
from typing import Any

from .._unique import unique

__all__ = ["make_function", "unique_names"]

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def unique_names(names: list[str]) -> list[str]:
    """Python identifiers for `names`, in order: other characters become `_`; clashes get `_2`, ..."""
    bases = [re.sub(r"\W", "_", raw) or "tool" for raw in names]
    return unique([f"_{base}" if base[0].isdigit() or keyword.iskeyword(base) else base for base in bases])


def _signature(schema: dict[str, Any]) -> inspect.Signature | None:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    if not all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in properties):
        return None  # keep **kwargs: the names cannot be Python parameters
    required = set(schema.get("required") or ())
    params = []
    for name, prop in properties.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        annotation = _TYPES.get(kind, Any) if isinstance(kind, str) else Any
        default = inspect.Parameter.empty if name in required else None
        params.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        )
    params.sort(key=lambda p: p.default is not inspect.Parameter.empty)
    return inspect.Signature(params, return_annotation=str)


def make_function(
    name: str, description: str, schema: dict[str, Any], call: Callable[[dict[str, Any]], Any]
) -> Callable[..., Any]:
    """A function `name(**arguments)` that passes its keyword arguments (those given, None dropped
    for optional ones) to `call`; a coroutine function when `call` is one."""
    required = set(schema.get("required") or ())

    def arguments_of(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if v is not None or k in required}

    function: Callable[..., Any]
    if inspect.iscoroutinefunction(call):

        async def function(**kwargs: Any) -> Any:
            return await call(arguments_of(kwargs))

    else:

        def function(**kwargs: Any) -> Any:
            return call(arguments_of(kwargs))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = description
    setattr(function, "schema", schema)  # noqa: B010 - a plain attribute frameworks read
    signature = _signature(schema)
    if signature is not None:
        setattr(function, "__signature__", signature)  # noqa: B010
    return function
