"""The tests' own layout: a folder per part of wiki_memory, the end-to-end tests in tests/e2e/
(marked by the folder, so the quick loop leaves them out), the helpers in tests/helpers/, and
only the house's own rules directly in tests/."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, TESTS

E2E = TESTS / "e2e"
# Folders of tests/ that hold no part's tests.
NOT_PARTS = {"e2e", "helpers", "fixtures", "__pycache__"}
# The modules directly in tests/: rules of the whole house, not of one part.
HOUSE = {"test_layers.py", "test_docs.py", "test_front_ends.py", "test_test_layout.py"}
# What only an end-to-end test may use: the helpers that install and run the real agent CLIs,
# and the browser driver.
E2E_MODULES = {"agent_clis", "e2e_checks", "playwright"}
# The programs an end-to-end test fetches or drives outside Python (npm's packages, Chromium).
E2E_PROGRAMS = {"npm", "npx", "chromium"}


def all_test_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def e2e_uses(path: Path) -> list[str]:
    """What in a test module only an end-to-end test may use, one line each."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            names = []
        found += [f"line {node.lineno}: imports {n}" for n in names if n.split(".")[0] in E2E_MODULES]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "agent_clis" in {a.arg for a in node.args.args}:
            found.append(f"line {node.lineno}: {node.name} takes the agent_clis fixture")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "which":
            programs = [a.value for a in node.args if isinstance(a, ast.Constant)]
            found += [f"line {node.lineno}: looks for {p}" for p in programs if p in E2E_PROGRAMS]
        if isinstance(node, ast.Attribute) and node.attr == "e2e" and ast.unparse(node).endswith("mark.e2e"):
            found.append(f"line {node.lineno}: marks a test e2e by hand")
    return found


def test_only_the_house_rules_sit_directly_in_tests():
    assert {p.name for p in TESTS.glob("test_*.py")} == HOUSE


def test_every_folder_of_tests_is_a_part_of_wiki_memory():
    package = REPO / "wiki_memory"
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_PARTS}
    parts = {p.name for p in package.iterdir() if p.is_dir()} | {p.stem for p in package.glob("*.py")}
    assert folders - parts == set(), "a folder of tests/ that names no part of wiki_memory"


def test_test_modules_have_unique_names_and_no_package_files():
    """pytest imports each test module by its basename (no __init__.py): two of one name clash."""
    names = [p.name for p in all_test_modules()]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("__init__.py")) == []
    assert [p.name for p in (TESTS / "helpers").glob("test_*.py")] == []


def test_only_tests_under_e2e_drive_the_agent_clis_or_a_browser():
    outside = {}
    for path in all_test_modules():
        found = [] if path.is_relative_to(E2E) else e2e_uses(path)
        if found:
            outside[str(path.relative_to(TESTS))] = found
    assert outside == {}, "end-to-end tests belong in tests/e2e/ (the folder marks them e2e)"


def test_the_rule_sees_what_an_end_to_end_test_uses():
    """The check above finds each kind of use in the modules that have it."""
    assert any("imports agent_clis" in line for line in e2e_uses(E2E / "test_capture_e2e.py"))
    assert any("takes the agent_clis fixture" in line for line in e2e_uses(E2E / "test_install_e2e.py"))
    assert any("imports playwright" in line for line in e2e_uses(E2E / "test_ui_browser.py"))
    assert any("looks for npx" in line for line in e2e_uses(E2E / "test_mcp_stdio_e2e.py"))


def test_the_quick_loop_collects_nothing_from_tests_e2e():
    """Every test under tests/e2e/ carries the marker its folder gives, whatever its module says."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not e2e", str(E2E)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    last = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 5, result.stdout[-2000:] + result.stderr[-2000:]  # 5: no test selected
    assert " deselected" in last and last.startswith("no tests collected"), last
