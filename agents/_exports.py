"""Lazy re-exports for a package ``__init__``: names imported from their module on first use.

A package's ``__init__`` that imported its modules eagerly would import every layer below it
whenever any one module of the package is imported (``agents.evaluation.arena`` would pull in the
loader and every agent kind), and could close a circle. With ``lazy(__name__, {...})`` the
package lists where each public name lives and imports nothing until a name is asked for.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy(package: str, where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps a name to its module (``".arena"``)."""
    module = importlib.import_module(package)

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(where))

    return __getattr__, __dir__
