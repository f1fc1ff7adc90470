"""The telling line of a failure's output, by its shape, in every major ecosystem; and
whether its signature names an error (a gotcha candidate)."""

from __future__ import annotations

import pytest

from wiki_memory.consolidate.distill.signature import is_telling, signature
from wiki_memory.consolidate.oneline import error_line

CASES = [
    # Python: the exception under the traceback, not the header.
    (
        'Traceback (most recent call last):\n  File "/app/run.py", line 3, in <module>\n    import shop\n'
        "ModuleNotFoundError: No module named 'shop'\n",
        "ModuleNotFoundError: No module named 'shop'",
    ),
    (
        "____ ERROR collecting tests/test_x.py ____\nImportError while importing test module '/app/t.py'.\n"
        "Traceback:\n  ...\nE   ModuleNotFoundError: No module named 'shop'\nERROR tests/test_x.py\n",
        "ModuleNotFoundError: No module named 'shop'",
    ),
    # Node
    (
        "node:internal/modules/cjs/loader:1080\n  throw err;\n  ^\n\nError: Cannot find module 'express'\n"
        "Require stack:\n- /app/index.js\n",
        "Error: Cannot find module 'express'",
    ),
    (
        "/app/x.js:3\nfoo.bar()\n    ^\n\nTypeError: foo.bar is not a function\n"
        "    at Object.<anonymous> (/app/x.js:3:5)",
        "TypeError: foo.bar is not a function",
    ),
    ("npm ERR! code ENOENT\nnpm ERR! syscall open\nnpm ERR! path /app/package.json\n", "npm ERR! code ENOENT"),
    # Go
    (
        "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n"
        "\t/app/main.go:8 +0x1d\nexit status 2\n",
        "panic: runtime error: index out of range [5] with length 3",
    ),
    (
        "go: cannot find main module, but found .git/config in /app\n\tto create a module there, run:\n",
        "go: cannot find main module, but found config in app",
    ),
    # Java / Kotlin
    (
        'Exception in thread "main" java.lang.IllegalStateException: no config\n\tat com.x.Main.main(Main.java:5)\n',
        "java.lang.IllegalStateException: no config",
    ),
    # Rust
    (
        "thread 'main' panicked at src/main.rs:2:5:\nconfig missing\n",
        "thread 'main' panicked at main.rs: config missing",
    ),
    # Shell
    ("bash: line 1: tree: command not found\n", "bash: line 1: tree: command not found"),
    ("zsh: command not found: tree", "zsh: command not found: tree"),
    ("/bin/sh: 1: python: not found", "sh: 1: python: not found"),
    ("bash: ./run.sh: Permission denied\nExit code 126", "bash: run.sh: Permission denied"),
    ("cat: config/app.yml: No such file or directory", "cat: app.yml: No such file or directory"),
    ("Exit code 127", "exit code 127: command not found"),
    # PowerShell: the program, a space, then the colon; the error record's fields follow.
    (
        "tail : The term 'tail' is not recognized as the name of a cmdlet, function, script file, or operable "
        "program.\nAt line:1 char:1\n+ tail -n 5 log.txt\n+ ~~~~\n    + CategoryInfo          : ObjectNotFound: "
        "(tail:String) [], CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException\n",
        "tail : The term 'tail' is not recognized as the name of a cmdlet, function, script file, or operable program",
    ),
    # PowerShell's record: the message wraps at the console's width, and may run into its
    # `At line:` position; the category lines after it are not the error.
    (
        "bash : The term 'bash' is not recognized as the name of a cmdlet, function, script file, or operable "
        "program. Check \nthe spelling of the name, or if a path was included, verify that the path is correct.\n"
        "At line:1 char:1\n+ bash --version\n+ ~~~~\n    + CategoryInfo          : ObjectNotFound: (bash:String) [], "
        "CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException\n",
        "bash : The term 'bash' is not recognized as the name of a cmdlet, function, script file, or operable program. "
        "Check the spelling of the name, or if a path was …",
    ),
    (
        "Program 'rg.exe' failed to run: Access is deniedAt line:2 char:1\r\n+ rg --files -g README.md\r\n"
        "+ ~~~~~~~~~~~~~~~~~~~~~~.\r\n    + CategoryInfo          : ResourceUnavailable: (:) [], "
        "ApplicationFailedException\r\n    + FullyQualifiedErrorId : NativeCommandFailed\r\n",
        "Program 'rg.exe' failed to run: Access is denied",
    ),
    # git
    ("fatal: a branch named 'feature' already exists", "fatal: a branch named 'feature' already exists"),
    (
        "error: pathspec 'nope' did not match any file(s) known to git",
        "error: pathspec 'nope' did not match any file(s) known to git",
    ),
]


@pytest.mark.parametrize("output,expected", CASES)
def test_the_telling_line_of_each_ecosystem_names_the_error(output, expected):
    sig = signature(error_line(output))
    assert sig == expected
    assert is_telling(sig)


@pytest.mark.parametrize("line", ["FAILED", "exit status 1", "Done in 2s", "--- FAIL: TestOrders (0.00s)"])
def test_a_line_that_only_says_it_failed_is_not_telling(line):
    assert not is_telling(signature(line))


def test_signatures_already_handled_read_as_before():
    assert signature("E   KeyError: 'SHOP_DB_URL'") == "KeyError: 'SHOP_DB_URL'"
    assert signature("FAILED tests/test_api.py::test_list - KeyError: 'X'") == "KeyError: 'X'"
    assert signature('File "/home/a/app/db.py", line 12, in connect') == 'File "db.py", in connect'
