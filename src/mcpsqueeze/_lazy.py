"""A package's lazy face: its public names load their module on first use.

Start-up pays only for what it uses (the shim and `wrap -- CMD` import a face, not the whole package),
and every face does it the same way. No imports at load time: the shim imports this too.
"""

from __future__ import annotations

__all__ = ["LazyFace"]


class LazyFace:
    """The module `__getattr__` of a package face: `where` maps each public name to the module (relative to
    `package`) that defines it; the value is cached in the package's `namespace` once loaded."""

    def __init__(self, package: str, where: dict[str, str], namespace: dict[str, object]) -> None:
        self._package = package
        self._where = where
        self._namespace = namespace

    def __call__(self, name: str) -> object:
        module = self._where.get(name)
        if module is None:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(
            import_module(module if module.startswith(".") else "." + module, self._package), name
        )
        self._namespace[name] = value
        return value
