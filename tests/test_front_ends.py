"""Every front end is the same memory: one sequence of operations through the library, the
CLI (the installed executable) and an MCP client (the SDK's own, over stdio) leaves the same
pages, front matter and commits; and bad input is refused the same way, in one line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_helpers import call, clean_env, fail, run, serve_command
from mcp_types import Implementation

from wiki_memory.config import resolve_project
from wiki_memory.memory import Actor, Memory

AGENT, SESSION = "claude-code", "5e55105e-0000-4000-8000-000000000001"
EXE = str(Path(sys.executable).parent / "wiki-memory")


def cli(repo: Path, *args: str | bytes, stdin: bytes | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    """The installed `wiki-memory`, as a person runs it (bytes arguments reach it unchanged)."""
    result = subprocess.run([EXE, *args], cwd=repo, input=stdin, capture_output=True, env=dict(os.environ))
    if ok:
        assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result


def make_repo(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


# The sequence, three ways ----------------------------------------------------------------------


def through_the_library(repo: Path) -> None:
    who = Actor(AGENT, SESSION)
    with Memory.at(repo) as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http", "retries"], actor=who)
        memory.write("Retry policy", "Retry twice, then give up with a clear error.", "decision", actor=who)
        with pytest.raises(Exception, match="decision page titled like this exists"):
            memory.write("Retry policy", "dup", "note", actor=who)
        memory.edit("Retry policy", "append", text="Except for 429s: honour Retry-After.", actor=who)
        memory.write("Old retry policy", "Retry forever.", "decision", actor=who)
        memory.edit("Old retry policy", "set_status", status="superseded", superseded_by="Retry policy", actor=who)
        memory.write("Scratch", "To be deleted.", "note", actor=who)
        memory.delete("Scratch", actor=who)


def through_the_cli(repo: Path) -> None:
    who = ["--agent", AGENT, "--session", SESSION]
    body = ["--type", "decision", "--body"]
    cli(
        repo, "write", "-t", "Retry policy", *body, "Retry twice, then fail.", "--tag", "http", "--tag", "retries", *who
    )
    cli(repo, "write", "-t", "Retry policy", *body, "Retry twice, then give up with a clear error.", *who)
    refused = cli(repo, "write", "-t", "Retry policy", "--type", "note", "--body", "dup", *who, ok=False)
    assert refused.returncode == 1 and b"decision page titled like this exists" in refused.stderr
    cli(repo, "edit", "Retry policy", "--append", "Except for 429s: honour Retry-After.", *who)
    cli(repo, "write", "-t", "Old retry policy", *body, "Retry forever.", *who)
    cli(repo, "edit", "Old retry policy", "--status", "superseded", "--superseded-by", "Retry policy", *who)
    cli(repo, "write", "-t", "Scratch", "--body", "To be deleted.", *who)
    cli(repo, "rm", "Scratch", *who)


def through_mcp(repo: Path) -> None:
    params = StdioServerParameters(
        command=serve_command()[0],
        args=serve_command()[1:],
        cwd=str(repo),
        env=clean_env(WIKI_MEMORY_SESSION_ID=SESSION),
    )

    async def body() -> None:
        async with Client(stdio_client(params), client_info=Implementation(name="claude-code", version="2")) as c:
            decision: dict[str, Any] = {"type": "decision"}
            await call(c, "write", title="Retry policy", body="Retry twice, then fail.", tags=["http", "retries"],
                       **decision)  # fmt: skip
            await call(
                c, "write", title="Retry policy", body="Retry twice, then give up with a clear error.", **decision
            )
            assert "decision page titled like this exists" in await fail(
                c, "write", title="Retry policy", body="dup", type="note"
            )
            await call(c, "edit", page="Retry policy", operation="append", text="Except for 429s: honour Retry-After.")
            await call(c, "write", title="Old retry policy", body="Retry forever.", **decision)
            await call(c, "edit", page="Old retry policy", operation="set_status", status="superseded",
                       superseded_by="Retry policy")  # fmt: skip
            await call(c, "write", title="Scratch", body="To be deleted.", type="note")
            await call(c, "delete", page="Scratch")

    run(body)


def what_memory_holds(repo: Path) -> dict[str, Any]:
    """Pages (front matter without ids and times) and commits (subject, author, trailers)."""
    wiki = resolve_project(repo).wiki
    pages = {}
    for path in sorted(git(wiki, "ls-files").split()):
        if not path.endswith(".md") or path == "README.md":
            continue
        text = (wiki / path).read_text()
        _, front, body = text.split("---\n", 2)
        kept = [line for line in front.splitlines() if not line.startswith(("id:", "created:", "updated:"))]
        pages[path] = ("\n".join(kept), body)
    log = git(wiki, "log", "--format=%s|%an <%ae>|%(trailers:key=Session-Id,key=Agent,valueonly,separator=%x2C)")
    return {"pages": pages, "commits": log.splitlines(), "fsck": git(wiki, "fsck", "--strict")}


def test_library_cli_and_mcp_leave_the_same_memory(tmp_path):
    results = {}
    for name, run_sequence in (("library", through_the_library), ("cli", through_the_cli), ("mcp", through_mcp)):
        repo = make_repo(tmp_path, name)
        run_sequence(repo)
        results[name] = what_memory_holds(repo)
    assert results["library"] == results["cli"] == results["mcp"]
    held = results["library"]
    front, body = held["pages"]["decisions/retry-policy.md"]
    assert "tags: [http, retries]" in front  # kept by the update that named none
    assert f"sources: ['{AGENT}:{SESSION[:8]}']" in front or f"sources: [{AGENT}:{SESSION[:8]}]" in front
    assert "honour Retry-After" in body and "give up with a clear error" in body
    old, _ = held["pages"]["decisions/old-retry-policy.md"]
    assert "status: superseded" in old and "superseded_by: decisions/retry-policy.md" in old
    assert "notes/scratch.md" not in held["pages"] and "notes/retry-policy.md" not in held["pages"]
    assert held["commits"][0] == f"forget: notes/scratch|{AGENT} <{AGENT}@wiki-memory>|{SESSION},{AGENT}"
    assert len(held["commits"]) == 8  # init + 7 changes; the refused write made none


# Bad input, refused the same way ----------------------------------------------------------------

BAD = "caf\udcff"  # what a command line or a file that is not UTF-8 becomes in Python


@pytest.mark.parametrize(
    "args,stdin,message",
    [
        (("write", "-t", b"caf\xff", "--body", "x"), None, "`title` is not valid UTF-8"),
        (("write", "-t", "Fine", "--body", b"caf\xff"), None, "`body` is not valid UTF-8"),
        (("write", "-t", "Fine"), b"caf\xff", "the body on stdin is not UTF-8"),
        (("write", "-t", "Fine", "--body", ""), None, "`body` is empty"),
        (("write", "-t", "Fine", "--body", "x", "--tag", "a,b"), None, "no commas"),
        (("write", "-t", "x" * 201, "--body", "x"), None, "keep it under 200"),
        (("search", ""), None, "`query` is empty"),
        (("search", b"caf\xff"), None, "`query` is not valid UTF-8"),
        (("show", b"caf\xff"), None, "`page` is not valid UTF-8"),
        (("show", "no such page"), None, "no page with path, title or id 'no such page'"),
        (("diff", "nosuchrev"), None, "'nosuchrev' is neither a revision nor a page"),
        (("handoff", "write", "--summary", "  "), None, "a handoff needs a summary"),
        (("handoff", "write"), b"caf\xff", "the summary on stdin is not UTF-8"),
        (("write", "-t", "x", "--body", "y", "--path", b"caf\xff.md"), None, "`path` is not valid UTF-8"),
        (("mv", "Existing", b"caf\xff.md"), None, "`destination` is not valid UTF-8"),
        (("remote", "add", "origin", b"caf\xff"), None, "`url` is not valid UTF-8"),
        (("edit", "Existing", "--append", ""), None, "`text` is empty"),
        (("edit", "Existing", "--heading", b"caf\xff", "--section-text", "x"), None, "`heading` is not valid UTF-8"),
        (("forget", "--string", "-"), b"caf\xff", "the text to forget on stdin is not UTF-8"),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path, args, stdin, message):
    repo = make_repo(tmp_path, "code")
    with Memory.at(repo) as memory:  # in process: the command under test is what runs as a user runs it
        memory.write("Existing", "Here.", "note")
    wiki = resolve_project(repo).wiki
    before = git(wiki, "rev-parse", "HEAD")
    result = cli(repo, *args, stdin=stdin, ok=False)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode != 0 and message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert git(wiki, "rev-parse", "HEAD") == before


@pytest.mark.parametrize(
    "tool,arguments,message",
    [
        ("write", {"title": BAD, "type": "note", "body": "x"}, "`title` is not valid UTF-8"),
        ("write", {"title": "Fine", "type": "note", "body": BAD}, "`body` is not valid UTF-8"),
        ("write", {"title": "Fine", "type": "note", "body": ""}, "`body` is empty"),
        ("write", {"title": "Fine", "type": "note", "body": "x", "tags": ["a,b"]}, "no commas"),
        ("write", {"title": "x" * 201, "type": "note", "body": "x"}, "keep it under 200"),
        ("search", {"query": ""}, "`query` is empty"),
        ("search", {"query": BAD}, "`query` is not valid UTF-8"),
        ("read", {"page": BAD}, "`page` is not valid UTF-8"),
        ("read", {"page": "no such page"}, "no page with path, title or id 'no such page'"),
        ("handoff_write", {"summary": "  "}, "a handoff needs a summary"),
        ("edit", {"page": "Existing", "operation": "append", "text": ""}, "`text` is empty"),
        ("edit", {"page": "Existing", "operation": "replace_section", "heading": BAD, "text": "x"}, "`heading` is not"),
    ],
)
def test_mcp_refuses_the_same_input_with_the_same_words(tmp_path, tool, arguments, message):
    from wiki_memory.mcp.server import build_server

    repo = make_repo(tmp_path, "code")
    with Memory.at(repo) as memory:  # in process: the command under test is what runs as a user runs it
        memory.write("Existing", "Here.", "note")
    wiki = resolve_project(repo).wiki
    before = git(wiki, "rev-parse", "HEAD")
    server = build_server(project_dir=str(repo))

    async def body() -> None:
        async with Client(server) as client:
            assert message in await fail(client, tool, **arguments)

    try:
        run(body)
    finally:
        server.close()
    assert git(wiki, "rev-parse", "HEAD") == before


# The CLI, tried as a new user would -----------------------------------------------------------


def test_an_opener_that_fails_is_reported(tmp_path):
    repo = make_repo(tmp_path, "code")
    cli(repo, "init")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    opener = bin_dir / "xdg-open"
    opener.write_text("#!/bin/sh\necho 'xdg-open: no method available for opening' >&2\nexit 3\n")
    opener.chmod(opener.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    result = subprocess.run([EXE, "open"], cwd=repo, capture_output=True, text=True, env=env)
    assert result.returncode == 1 and "opened" not in result.stdout
    assert "xdg-open could not open" in result.stderr and "no method available" in result.stderr


def test_import_takes_the_agent_names_install_takes(tmp_path):
    repo = make_repo(tmp_path, "code")
    result = cli(repo, "import", "claude", str(tmp_path / "code"), ok=False)
    assert b"no claude-code transcripts found" in result.stderr  # understood, then nothing to import
    result = cli(repo, "import", "cursor", str(tmp_path / "code"), ok=False)
    assert b"transcripts can be imported from claude-code, codex" in result.stderr


def test_the_cli_write_keeps_tags_and_refuses_a_second_page_of_the_same_title(tmp_path):
    repo = make_repo(tmp_path, "code")
    cli(repo, "write", "-t", "Retry policy", "--type", "decision", "--tag", "auth", "--body", "Twice.")
    cli(repo, "write", "-t", "Retry policy", "--type", "decision", "--body", "Three times.")
    shown = json.loads(cli(repo, "show", "Retry policy", "--json").stdout)
    assert shown["meta"]["tags"] == ["auth"] and "Three times." in shown["body"]
    refused = cli(repo, "write", "-t", "Retry policy", "--type", "note", "--body", "x", ok=False)
    assert b"decision page titled like this exists: decisions/retry-policy.md" in refused.stderr
    assert not (resolve_project(repo).wiki / "notes" / "retry-policy.md").exists()


# Secrets written on purpose --------------------------------------------------------------------

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # fake, of the right shape


def all_objects(wiki: Path) -> str:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=wiki, capture_output=True, text=True,
        errors="replace", check=True,
    ).stdout  # fmt: skip


def test_a_secret_written_through_any_front_end_is_redacted_before_the_commit_and_said(tmp_path):
    from wiki_memory.mcp.server import build_server

    repo = make_repo(tmp_path, "code")
    out = cli(repo, "write", "-t", f"Deploy with {TOKEN}", "--body", f"export GITHUB_TOKEN={TOKEN}", "--json")
    assert json.loads(out.stdout)["redacted"] == ["github-token", "github-token"]
    assert b"2 secret(s) (github-token) replaced" in out.stderr
    out = cli(repo, "handoff", "write", "--summary", f"Rotated {TOKEN} and deployed", "--done", f"used {TOKEN}")
    assert b"replaced by [REDACTED" in out.stderr
    server = build_server(project_dir=str(repo))

    async def body() -> None:
        async with Client(server) as client:
            written = await call(client, "write", title="Token notes", type="note", body=f"The token: {TOKEN}")
            assert written["redacted"] == ["github-token"]
            result = await client.call_tool("edit", {"page": "Token notes", "operation": "append", "text": TOKEN})
            assert "secret(s) (github-token) were replaced" in result.content[0].text
            titled = await call(client, "write", title=f"Deploy key {TOKEN}", type="note", body="Rotated.")
            assert titled["redacted"] == ["github-token"] and TOKEN not in titled["path"]
            handed = await client.call_tool("handoff_write", {"summary": f"Rotated {TOKEN}", "done": [TOKEN]})
            assert not handed.is_error and "REDACTED" in handed.content[0].text

    try:
        run(body)
    finally:
        server.close()
    wiki = resolve_project(repo).wiki
    assert TOKEN not in all_objects(wiki) and TOKEN not in git(wiki, "log", "--all", "--format=%B")
    assert "[REDACTED:github-token]" in (wiki / "notes" / "token-notes.md").read_text()
