"""The secrets corpus (tests/fixtures/secrets/, see `secret_corpus.py`) through redaction
and through the real hook entry point: no secret may be stored anywhere, and every
look-alike must survive verbatim.

The end-to-end test plays one Claude Code session per part of the corpus: every case as a
prompt, as a Bash tool's command and its output, and as the final message; then
`wiki-memory consolidate --session ID`; then it reads everything the product keeps: the
journal, the index (every table and the FTS vocabulary), the wiki's pages, every git object
(`git cat-file --batch-all-objects --batch`) and every other file under the home.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from secret_corpus import PARTS, Case, load

from wiki_memory.capture.redact import find, redact
from wiki_memory.config import resolve_project

PROMPT_BATCH = 12_000  # characters of cases joined into one prompt or final message


def test_the_corpus_is_big_enough():
    cases = [c for part in PARTS for c in load(part)]
    secrets = sum(len(c.secrets) for c in cases)
    keeps = sum(len(c.keeps) for c in cases)
    assert secrets >= 150 and keeps >= 75, (secrets, keeps)
    assert all(load(part) for part in PARTS)


def failures(cases: list[Case], stored: str, kept: str) -> tuple[list[str], list[str]]:
    """(secrets found in `stored`, look-alikes missing from `kept`), as readable lines."""
    leaked = sorted({f"{c.id}: {s[:40]}" for c in cases for s, piece in c.fragments() if piece in stored})
    destroyed = [f"{c.id}: {k[:60]}" for c in cases for k in c.keeps if k not in kept]
    return leaked, destroyed


@pytest.mark.parametrize("part", PARTS)
def test_redaction_of_each_case(part):
    cases = load(part)
    problems = []
    for case in cases:
        out = redact(case.text)
        leaked, destroyed = failures([case], out, out)
        problems += [f"stored {x}" for x in leaked] + [f"destroyed {x}" for x in destroyed]
        assert redact(out) == out, f"{case.id}: redaction is not idempotent"
    assert not problems, "\n".join(problems)


def test_find_reports_what_redact_replaces():
    text = "export GH_TOKEN=ghp_" + "a1B2c3D4e5" * 4 + "\npassword: hunter22x"
    found = find(text)
    assert [f.family for f in found] == ["github-token", "assignment"]
    assert [text[f.start : f.end] for f in found] == ["ghp_" + "a1B2c3D4e5" * 4, "hunter22x"]


def hook(event: str, payload: dict, cwd: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "hook", "claude-code", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]


def play_session(cases: list[Case], cwd: Path, session_id: str) -> None:
    """Every case through the hooks of one Claude Code session (tool calls in parallel,
    as Claude Code runs PostToolUse hooks)."""
    base = {"session_id": session_id, "cwd": str(cwd), "permission_mode": "default"}
    hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, cwd)
    batches: list[str] = []
    for case in cases:
        if batches and len(batches[-1]) + len(case.text) < PROMPT_BATCH:
            batches[-1] += "\n\n---\n\n" + case.text
        else:
            batches.append(case.text)
    for batch in batches:
        hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": batch}, cwd)
    calls = [
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": f"toolu_{n}",
            "tool_input": {"command": case.text, "description": f"case {case.id}"},
            "tool_response": {"stdout": case.text, "stderr": "", "interrupted": False, "isImage": False},
        }
        for n, case in enumerate(cases)
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda p: hook("PostToolUse", p, cwd), calls))
    for batch in batches:
        hook("Stop", {**base, "hook_event_name": "Stop", "last_assistant_message": batch}, cwd)
    result = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "consolidate", "--session", session_id, "--no-llm", "--json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)[0]["status"] == "committed", result.stdout


def stored_text(project_home: Path, wiki: Path) -> dict[str, str]:
    """Everything kept, as text, by where it is kept."""
    out: dict[str, list[str]] = {"journal": [], "index": [], "pages": [], "git objects": [], "other files": []}
    for path in sorted((project_home / "journal").glob("*.jsonl")):
        raw = path.read_text(encoding="utf-8")
        out["journal"].append(raw)
        for line in raw.splitlines():
            out["journal"].append(json.dumps(json.loads(line), ensure_ascii=False))  # escapes undone below
            out["journal"].extend(strings(json.loads(line)))
    index = project_home / "index.sqlite"
    assert index.exists(), "consolidation built no index"
    with sqlite3.connect(index) as db:
        out["index"].extend(db.iterdump())
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, chunks_fts, row)")
        out["index"].append(" ".join(term for (term,) in db.execute("SELECT term FROM temp.vocab")))
    for suffix in ("", "-wal"):
        if Path(f"{index}{suffix}").exists():
            out["index"].append(Path(f"{index}{suffix}").read_bytes().decode("utf-8", "replace"))
    for path in wiki.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(wiki).parts:
            out["pages"].append(path.read_text(encoding="utf-8", errors="replace"))
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=wiki, capture_output=True, check=True
    ).stdout
    out["git objects"].append(objects.decode("utf-8", "replace"))
    home = Path(os.environ["WIKI_MEMORY_HOME"])
    for path in home.rglob("*"):
        if path.is_file() and not path.is_relative_to(wiki / ".git") and path.suffix not in (".sqlite", ".npy"):
            out["other files"].append(path.read_bytes().decode("utf-8", "replace"))
    return {where: "\n".join(texts) for where, texts in out.items()}


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("part", PARTS)
def test_the_hooks_store_no_secret_and_destroy_no_look_alike(part, tmp_path):
    cases = load(part)
    cwd = tmp_path / "project"
    cwd.mkdir()
    session_id = f"corpus-{part}"
    play_session(cases, cwd, session_id)
    project = resolve_project(cwd)
    stored = stored_text(project.home, project.wiki)
    assert len(stored["git objects"]) > 1000 and "sessions/" in stored["git objects"]  # it was consolidated
    report = []
    for where, text in stored.items():
        # A secret counts wherever it appears, escaped for JSON or Markdown or not.
        haystack = text + "\n" + text.replace("\\", "")
        leaked, _ = failures(cases, haystack, "")
        report += [f"stored in {where}: {x}" for x in leaked]
        lowered = haystack.lower()
        report += [f"stored (lower-cased) in {where}: {x}" for x in failures(cases, lowered, "")[0] if x not in leaked]

    journal = [json.loads(line) for line in (project.journal_dir / f"{session_id}.jsonl").read_text().splitlines()]
    channels = {
        "prompts": "\n".join(o.get("text") or "" for o in journal if o["kind"] == "prompt"),
        "tool inputs": "\n".join(o.get("input") or "" for o in journal if o["kind"] == "tool"),
        "tool outputs": "\n".join(o.get("output") or "" for o in journal if o["kind"] == "tool"),
        "final messages": "\n".join(o.get("text") or "" for o in journal if o["kind"] == "stop"),
    }
    for channel, text in channels.items():
        report += [f"destroyed in {channel}: {x}" for x in failures(cases, "", text)[1]]
    secrets = sum(len(c.secrets) for c in cases)
    keeps = sum(len(c.keeps) for c in cases)
    assert not report, f"{part}: {secrets} secrets, {keeps} look-alikes\n" + "\n".join(report)
