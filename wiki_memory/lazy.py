"""A package's names imported from their modules on first use (PEP 562), so that a process
needing one light part of a package does not load the rest: `__getattr__ = names(__name__,
WHERE, globals())` in the package's `__init__`, with `WHERE` mapping each name to its module.

Standard library only: the hook path loads `wiki_memory.index`'s `__init__`.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Callable, Mapping


def names(package: str, where: Mapping[str, str], namespace: dict[str, object]) -> Callable[[str], object]:
    """The module `__getattr__` of `package`: a name in `where` imported from its module and
    kept in the package's `namespace` (the next use finds it there); any other, AttributeError."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
