"""Imports point down: front ends -> memory -> consolidate/sync/watch/install -> index ->
store -> capture/pages/config. Every `import` of ours in the package, at the top of a module
or inside a function, is checked against the table the README shows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wiki_memory"

BELOW_MEMORY = {
    "consolidate",
    "sync",
    "watch",
    "install",
    "recall",
    "logs",
    "index",
    "store",
    "capture",
    "pages",
    "config",
    "errors",
}
#: part -> the parts of ours it may import (besides itself).
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "config": {"errors"},
    "serving": {"errors"},
    "pages": {"errors"},
    "capture": {"pages", "config", "errors"},
    # The logs redact what they write with capture's rules: every part above capture may log.
    "logs": {"capture", "config", "errors"},
    "store": {"pages", "config", "errors"},
    "index": {"pages", "store", "config", "errors"},
    "consolidate": {"pages", "store", "index", "capture", "logs", "config", "errors"},
    "sync": {"pages", "store", "index", "logs", "config", "errors"},
    "watch": {"pages", "store", "index", "logs", "config", "errors"},
    "install": {"capture", "logs", "config", "errors"},
    # The light hook-path part; only its helper process (a program of its own) imports the index.
    "recall": {"index", "capture", "pages", "logs", "config", "errors"},
    "memory": BELOW_MEMORY,
    "hook": {"memory", "consolidate", "recall", "capture", "pages", "logs", "config", "errors"},
    "mcp": {"memory", "serving", *BELOW_MEMORY} - {"install"},  # an agent's server never rewrites agents' config
    "ui": {"memory", "serving", *BELOW_MEMORY},
    "cli": {"memory", "serving", *BELOW_MEMORY},
    "entry": {"cli", "hook"},
    "__main__": {"entry"},
    "__init__": set(),
}
#: The CLI's launcher commands start another front end through its one public entry.
LAUNCHES = {
    ("wiki_memory.cli.serve", "wiki_memory.mcp.server"),
    ("wiki_memory.cli.serve", "wiki_memory.mcp.transport"),
    ("wiki_memory.cli.install", "wiki_memory.hook.main"),
    ("wiki_memory.cli.ui", "wiki_memory.ui.server"),
    # The demo waits for the background workers its hook calls started (found by command line).
    ("wiki_memory.cli.demo", "wiki_memory.hook.worker"),
}
#: The one light module of another part the hook path reaches across for: the error signature
#: the distiller computes, so that a recurring error matches the gotcha made from it.
CROSSINGS = {("wiki_memory.recall.moments", "wiki_memory.consolidate.distill.signature")}
MODULE_NAME = re.compile(r"^wiki_memory(\.[a-z_]+)+\.?$")
#: Modules the hook path loads on every call: none may import a third-party module at the top.
HOOK_PATH = ("hook", "capture", "recall", "logs", "config", "errors", "entry")


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 2:
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def _part(module: str) -> str:
    """`wiki_memory.index.query` -> `index`; the package's own __init__ -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module of ours, line, at the top of the module?) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        # A module named in a string (importlib, `python -m`) is a dependency no import shows.
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.match(node.value):
            out.append((node.value.rstrip("."), node.lineno, False))
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == "wiki_memory" or name.startswith("wiki_memory."):
                out.append((name, node.lineno, id(node) in top))
    return out


def _existing(name: str) -> str:
    """The longest prefix of `name` that is a module of ours (`from x import y`: y may be a name)."""
    parts = name.split(".")
    while parts:
        candidate = PACKAGE.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return name


def test_every_import_points_down():
    wrong = []
    for module, path in _modules():
        part = _part(module)
        allowed = MAY_IMPORT[part] | {part}
        for name, line, _ in _imports(module, path):
            target = _existing(name)
            if target == "wiki_memory":
                continue  # the package itself (its version)
            if _part(target) in allowed or (module, target) in LAUNCHES | CROSSINGS:
                continue
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {part} imports {target}")
    assert not wrong, "imports that point up or across:\n" + "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("module,path", [m for m in _modules() if _part(m[0]) in HOOK_PATH], ids=lambda v: str(v))
def test_the_hook_path_imports_nothing_heavy_at_module_level(module, path):
    heavy = ("dulwich", "yaml", "frontmatter", "click", "markdown_it", "numpy", "fastembed", "mcp", "pydantic")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        found += [n for n in names if n.split(".")[0] in heavy]
    if module in ("wiki_memory.hook.worker",):  # the detached process, not the hook call
        return
    assert not found, f"{module} imports {found} at module level"


def test_the_table_knows_every_part():
    assert {_part(m) for m, _ in _modules()} <= set(MAY_IMPORT)


def test_the_crossing_module_loads_without_its_package():
    """`recall.moments` loads the distiller's signature module by its file, because the
    distill package's `__init__` is too heavy for a hook: the module must keep loading so,
    without that package, dataclasses or anything third-party."""
    import subprocess
    import sys

    code = (
        "import sys; from wiki_memory.recall import moments; "
        "assert moments._signature('E   KeyError: \\'X\\'') == \"KeyError: 'X'\"; "
        "loaded = [m for m in ('wiki_memory.consolidate.distill', 'dataclasses', 'yaml', 'dulwich', 'numpy') "
        "if m in sys.modules]; assert not loaded, loaded"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
