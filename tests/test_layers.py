"""Imports point down: front ends -> memory -> consolidate/sync/watch/install -> index ->
store -> capture/pages/config. Every `import` of ours in the package, at the top of a module
or inside a function, is checked against the table the README shows.

Two more rules are written down here once:

- The hook path. `wiki-memory hook AGENT EVENT` runs on every prompt and tool call, so the
  modules its process may load are listed in `HOOK_PATH`, read from the code: the entry,
  `hook/` and what its event handlers import (deferred imports included), and what those
  import in turn. A listed module imports only listed modules and the standard library;
  each hook event, run for real, loads nothing else.
- Deferred imports. Outside the hook path an import sits at the top of its module; one
  inside a function keeps a heavy part (numpy, fastembed, dulwich, mcp, the index, the
  consolidator) out of a light process's start-up, and says so on its line:
  `# deferred: <reason>`. On the hook path, an import of a module not listed says why too.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wiki_memory"

BELOW_MEMORY = {
    "lazy",
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
#: What a front end may import: the memory layer (anything below it comes through
#: `wiki_memory.memory`), the page model, and the basics every part shares.
FRONT_END = {"memory", "pages", "logs", "config", "errors"}
#: part -> the parts of ours it may import (besides itself).
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "lazy": set(),
    "config": {"errors"},
    "pages": {"errors"},
    "capture": {"pages", "config", "errors"},
    # The logs redact what they write with capture's rules: every part above capture may log.
    "logs": {"capture", "config", "errors"},
    "store": {"pages", "config", "errors"},
    "index": {"pages", "store", "lazy", "config", "errors"},
    "consolidate": {"pages", "store", "index", "capture", "logs", "config", "errors"},
    "sync": {"pages", "store", "index", "logs", "config", "errors"},
    "watch": {"pages", "store", "index", "logs", "config", "errors"},
    "install": {"capture", "logs", "config", "errors"},
    # The light hook-path part; only its helper process (a program of its own) imports the index.
    "recall": {"index", "capture", "pages", "logs", "config", "errors"},
    "memory": BELOW_MEMORY,
    # What the long-running servers (MCP, the viewer) share: the HTTP bind and its gate, and
    # each project's memory on a thread of its own.
    "serving": {"memory", "logs", "config", "errors"},
    "hook": {"memory", "consolidate", "recall", "capture", "pages", "logs", "config", "errors"},
    "mcp": FRONT_END | {"serving"},
    "ui": FRONT_END | {"serving"},
    # The CLI also installs agents (`install`, `doctor`): the installers are its own job.
    "cli": FRONT_END | {"serving", "install"},
    "entry": {"cli", "hook"},
    "__main__": {"entry"},
    "__init__": set(),
}
#: Front ends reach the memory layer through its package (`wiki_memory.memory`), never one of
#: its modules: how the layer is made inside is its own business.
FRONT_ENDS = ("cli", "mcp", "ui")
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

#: Every module the hook process (`wiki-memory hook AGENT EVENT`) may load, read from the code.
HOOK_PATH = frozenset(
    {
        "wiki_memory",
        "wiki_memory.entry",
        "wiki_memory.errors",
        "wiki_memory.lazy",
        "wiki_memory.config",
        "wiki_memory.config.settings",
        "wiki_memory.logs",
        # The hook process and its event handlers (not `hook.worker`: a detached program).
        "wiki_memory.hook",
        "wiki_memory.hook.main",
        "wiki_memory.hook.startup",  # SessionStart, SessionEnd
        "wiki_memory.hook.background",  # starts consolidation and the repository snapshot detached
        "wiki_memory.hook.health",  # SessionStart's one line when memory is not working
        "wiki_memory.hook.compaction",  # PreCompact, SessionStart after a compaction
        "wiki_memory.hook.recall",  # prompts and file tool calls
        "wiki_memory.hook.moment",  # before a shell command, after an error
        # Capture: the calling agent's adapter (one of five), the journal, redaction.
        "wiki_memory.capture",
        "wiki_memory.capture.adapter",
        "wiki_memory.capture.claude_code",
        "wiki_memory.capture.codex",
        "wiki_memory.capture.cursor",
        "wiki_memory.capture.gemini",
        "wiki_memory.capture.opencode",
        "wiki_memory.capture.journal",
        "wiki_memory.capture.observation",
        "wiki_memory.capture.prompts",
        "wiki_memory.capture.redact",
        "wiki_memory.capture.redact.assignments",
        "wiki_memory.capture.redact.code_pairs",
        "wiki_memory.capture.redact.command_lines",
        "wiki_memory.capture.redact.directives",
        "wiki_memory.capture.redact.engine",
        "wiki_memory.capture.redact.http_credentials",
        "wiki_memory.capture.redact.markup",
        "wiki_memory.capture.redact.private_keys",
        "wiki_memory.capture.redact.prose",
        "wiki_memory.capture.redact.token_shapes",
        "wiki_memory.capture.redact.vendors",
        "wiki_memory.capture.redact.vocabulary",
        "wiki_memory.capture.shell",
        "wiki_memory.capture.toolcalls",
        "wiki_memory.capture.plan_calls",
        "wiki_memory.capture.exit_status",
        # Consolidation's light parts: the SessionStart context file and handoff, the state
        # beside the wiki, the session so far after a compaction, the page usage counters.
        "wiki_memory.consolidate",
        "wiki_memory.consolidate.branch_handoff",
        "wiki_memory.consolidate.commands",
        "wiki_memory.consolidate.context",
        "wiki_memory.consolidate.extract",
        "wiki_memory.consolidate.final_message",
        "wiki_memory.consolidate.goal",
        "wiki_memory.consolidate.handoff",
        "wiki_memory.consolidate.oneline",
        "wiki_memory.consolidate.render",
        "wiki_memory.consolidate.command_runs",
        "wiki_memory.consolidate.findings",
        "wiki_memory.consolidate.run_verdicts",
        "wiki_memory.consolidate.session_sources",
        "wiki_memory.consolidate.state_changes",
        "wiki_memory.consolidate.uncommitted",
        "wiki_memory.consolidate.agent_reports",
        "wiki_memory.consolidate.session",
        "wiki_memory.consolidate.state",
        "wiki_memory.consolidate.distill.signature",  # by its file, without its package (CROSSINGS)
        # Recall: the gate, the record of what was handed, the search by words, the warm
        # helper's client, the moments table, the team tier.
        "wiki_memory.recall",
        "wiki_memory.recall.files",
        "wiki_memory.recall.find",
        "wiki_memory.recall.chatter",
        "wiki_memory.recall.meaning",
        "wiki_memory.recall.moments",
        "wiki_memory.recall.moment_table",
        "wiki_memory.recall.command_forms",
        "wiki_memory.recall.render",
        "wiki_memory.recall.run",
        "wiki_memory.recall.seen",
        "wiki_memory.recall.settings",
        "wiki_memory.recall.terms",
        "wiki_memory.recall.tier",
        # The index's one light module: its schema version and the reads recall makes.
        "wiki_memory.index",
        "wiki_memory.index.readonly",
        # The page model's light parts: fences, statuses, anchors and their drift.
        "wiki_memory.pages",
        "wiki_memory.pages.anchors",
        "wiki_memory.pages.drift",
        "wiki_memory.pages.fence",
        "wiki_memory.pages.status",
        "wiki_memory.pages.usage",
        "wiki_memory.pages.gitindex",
    }
)
#: Loaded by file, not by name: its package's `__init__` stays out of the hook.
BY_FILE = {target for _, target in CROSSINGS}
#: What the hook may load besides the standard library of the Python running the test:
#: tomllib (3.11+; not in 3.10's list of standard modules) and its backport on 3.10, and
#: CPython's built-in SHA-256 module (`_sha2` since 3.12, `_sha256` before).
NOT_THIRD_PARTY = {"tomllib", "tomli", "_sha2", "_sha256", "__future__"}


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


class Import:
    """One import statement: the modules it names (ours given in full), where it is."""

    def __init__(self, node: ast.Import | ast.ImportFrom, package: str, lines: list[str], scope: str):
        self.line = node.lineno
        self.scope = scope  # "top", "function" or "type-checking"
        self.text = "\n".join(lines[node.lineno - 1 : (node.end_lineno or node.lineno)])
        if isinstance(node, ast.Import):
            self.names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            self.names = [base] + ([f"{base}.{alias.name}" for alias in node.names] if base.startswith("wiki") else [])

    @property
    def ours(self) -> list[str]:
        return [n for n in self.names if n == "wiki_memory" or n.startswith("wiki_memory.")]

    @property
    def third_party(self) -> list[str]:
        return [
            n
            for n in self.names
            if not n.startswith("wiki_memory")
            and n.split(".")[0] not in sys.stdlib_module_names
            and n.split(".")[0] not in NOT_THIRD_PARTY
        ]

    @property
    def says_why(self) -> bool:
        return "# deferred: " in self.text


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _statements(module: str, path: Path) -> list[Import]:
    """Every import statement of a module, with its scope."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[Import] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if _is_type_checking(child):
                inner = "type-checking"
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and scope == "top":
                inner = "function"
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(Import(child, package, lines, inner))
            visit(child, inner)

    visit(ast.parse(source), "top")
    return found


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module of ours, line, at the top of the module?) for every import, and
    every module of ours named in a string (importlib, `python -m`): a dependency no import shows."""
    out = [(name, i.line, i.scope == "top") for i in _statements(module, path) for name in i.ours]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.match(node.value):
            out.append((node.value.rstrip("."), node.lineno, False))
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


def _path(module: str) -> Path:
    candidate = PACKAGE.parent.joinpath(*module.split("."))
    return candidate / "__init__.py" if candidate.is_dir() else candidate.with_suffix(".py")


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


def test_front_ends_reach_memory_through_its_package():
    wrong = []
    for module, path in _modules():
        if _part(module) not in FRONT_ENDS:
            continue
        for name, line, _ in _imports(module, path):
            target = _existing(name)
            if target.startswith("wiki_memory.memory."):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {target} (import it from wiki_memory.memory)")
    assert not wrong, "front ends reaching into the memory layer's modules:\n" + "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("module,path", [(m, _path(m)) for m in sorted(HOOK_PATH)], ids=lambda v: str(v))
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
    assert not found, f"{module} imports {found} at module level"


def test_the_hook_path_list_names_what_exists():
    """A module renamed or moved is renamed in the list too (and every listed module's
    packages are listed: importing a module runs its packages' `__init__` first)."""
    missing = sorted(m for m in HOOK_PATH if not _path(m).is_file())
    assert not missing, f"HOOK_PATH names modules that do not exist: {missing}"
    parents = {".".join(m.split(".")[:i]) for m in HOOK_PATH - BY_FILE for i in range(1, len(m.split(".")))}
    assert parents <= HOOK_PATH, f"packages of listed modules, not listed: {sorted(parents - HOOK_PATH)}"
    assert "wiki_memory.hook.worker" not in HOOK_PATH  # the detached consolidation, a program of its own


def test_the_hook_path_imports_only_listed_modules_and_the_standard_library():
    """A listed module imports, at its top, only listed modules; inside a function, a module
    not listed only with the reason on its line (`# deferred: <reason>`: a part of the module
    the hook never calls); nothing third-party anywhere."""
    wrong = []
    for module in sorted(HOOK_PATH):
        path = _path(module)
        for statement in _statements(module, path):
            if statement.scope == "type-checking":
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{statement.line}"
            wrong += [f"{where}: imports {n}, not ours, not the standard library" for n in statement.third_party]
            for name in statement.ours:
                target = _existing(name)
                if target in HOOK_PATH or (module, target) in CROSSINGS:
                    continue
                if statement.scope == "function" and (statement.says_why):
                    continue
                wrong.append(f"{where}: imports {target}, which HOOK_PATH does not list")
    assert not wrong, "the hook path reaches beyond its list:\n" + "\n".join(sorted(set(wrong)))


def test_imports_inside_functions_say_why():
    """Outside the hook path, an import inside a function carries `# deferred: <reason>` on its
    line; anything else belongs at the top of the module."""
    wrong = []
    for module, path in _modules():
        if module in HOOK_PATH:
            continue
        for statement in _statements(module, path):
            if statement.scope == "function" and not statement.says_why:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{statement.line}: {statement.text.strip()}")
    assert not wrong, "imports inside functions without `# deferred: <reason>`:\n" + "\n".join(wrong)


def test_the_table_knows_every_part():
    assert {_part(m) for m, _ in _modules()} <= set(MAY_IMPORT)


def test_the_crossing_module_loads_without_its_package():
    """`recall.moments` loads the distiller's signature module by its file, because the
    distill package's `__init__` is too heavy for a hook: the module must keep loading so,
    without that package, dataclasses or anything third-party."""
    code = (
        "import sys; from wiki_memory.recall import moments; "
        "assert moments._signature('E   KeyError: \\'X\\'') == \"KeyError: 'X'\"; "
        "loaded = [m for m in ('wiki_memory.consolidate.distill', 'dataclasses', 'yaml', 'dulwich', 'numpy') "
        "if m in sys.modules]; assert not loaded, loaded"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# Each hook event, run for real -----------------------------------------------------------------

#: Runs `wiki-memory hook ARGS` as the executable does, then prints the modules it loaded.
PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['wiki-memory', 'hook'] + sys.argv[1:]\nfrom wiki_memory.entry import main\nmain()\n"
)
GOTCHA = (
    "**Symptom**: `npm run build` dies with `FATAL ERROR: Reached heap limit Allocation failed - "
    "JavaScript heap out of memory`.\n\n**Fix**: set `NODE_OPTIONS=--max-old-space-size=4096` first."
)
HEAP = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"
#: One session through every hook event (in this order: a compaction needs a journal).
EVENTS = [
    ("SessionStart", {"source": "startup"}),
    ("UserPromptSubmit", {"prompt": "How often does the login service retry on failure?"}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "npm run build"}}),
    ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "src/login.py"}}),
    ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}}),
    ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "npm run build"}, "error": HEAP}),
    ("PreCompact", {"trigger": "auto"}),
    ("SessionStart", {"source": "compact"}),
    ("Stop", {}),
    ("SessionEnd", {"reason": "exit"}),
]


def test_each_hook_event_loads_only_the_hook_path(code_repo):
    """Every event of a session, through the real executable's entry on a project with
    pages to recall: each loads only modules HOOK_PATH lists and nothing third-party (the
    interpreter's own start-up aside), and does its job (the events that hand something
    over print it)."""
    from wiki_memory.config import resolve_project
    from wiki_memory.memory import Memory

    with Memory(resolve_project(code_repo)) as memory:
        memory.write("Vite build runs out of memory", GOTCHA, "gotcha")
        memory.write(
            "Retry policy", "Retry twice; the login service at src/login.py is retried, 4xx is not.", "decision"
        )
    start_up = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    interpreter = set(json.loads(start_up.stdout))
    wrong, printed = [], []
    for event, fields in EVENTS:
        payload = {"session_id": "layers", "cwd": str(code_repo), "hook_event_name": event, **fields}
        if fields.get("tool_name") == "Read":
            payload["tool_input"] = {"file_path": str(code_repo / "src" / "login.py")}
        result = subprocess.run(
            [sys.executable, "-c", PROBE, "claude-code", event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            cwd=code_repo,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr.decode()
        line = next(x for x in result.stderr.decode().splitlines() if x.startswith("MODULES "))
        modules = set(json.loads(line[len("MODULES ") :])) - interpreter
        ours = {m for m in modules if m.split(".")[0] == "wiki_memory"}
        foreign = {m for m in modules - ours if m.split(".")[0] not in (*sys.stdlib_module_names, *NOT_THIRD_PARTY)}
        wrong += [
            f"{event} {fields.get('source') or fields.get('tool_name') or ''}: {m}" for m in sorted(ours - HOOK_PATH)
        ]
        wrong += [f"{event}: third-party {m}" for m in sorted(foreign)]
        if result.stdout.strip():
            printed.append(event)
    assert not wrong, "the hook loaded modules beyond HOOK_PATH:\n" + "\n".join(wrong)
    # The run went through recall, the moments table and the compaction, not around them.
    assert {"UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "SessionStart"} <= set(printed), printed


#: A module holds one concept a reader can take in whole; a function, one step of it.
MODULE_LINES = 500
FUNCTION_LINES = 80


def test_no_module_or_function_grows_past_what_a_reader_takes_in():
    """No module of the package over MODULE_LINES lines, no function over FUNCTION_LINES:
    past them, split along a seam whose file or function name says what it holds."""
    wrong = []
    for _module, path in _modules():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(PACKAGE.parent)
        if text.count("\n") > MODULE_LINES:
            wrong.append(f"{where}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    wrong.append(f"{where}:{node.lineno}: {node.name}() is {length} lines")
    assert not wrong, "too long to read whole:\n" + "\n".join(wrong)
