"""Instruction files out: the project's durable pages written back as a block in the files
agents read (`export_block`), kept up to date after each consolidation (`refresh_exports`)
and taken out again (`remove_block`).

Export rules: only active pages of the durable types, never the ones imported from the very
file written to (the file says them already) nor a model's proposal nobody marked helpful;
preferences first, then procedures, then the gotchas hit most, within a character budget;
only the bytes between the markers change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.config import load_settings
from wiki_memory.errors import PageError, WikiMemoryError
from wiki_memory.memory.instruction_files import display_name
from wiki_memory.pages import Page, folder_for, parse_page

if TYPE_CHECKING:
    from wiki_memory.memory.context import MemoryContext
    from wiki_memory.memory.memory import Memory

START = "<!-- wiki-memory:memory:start -->"
END = "<!-- wiki-memory:memory:end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
DEFAULT_BUDGET = 4000  # characters: a block an agent reads every session must stay short

#: export target -> (file in the project, text a new file starts with)
TARGETS: dict[str, tuple[str, str]] = {
    "agents-md": ("AGENTS.md", ""),
    "claude-md": ("CLAUDE.md", ""),
    "copilot": (".github/copilot-instructions.md", ""),
    "cursor-rules": (
        ".cursor/rules/wiki-memory.mdc",
        "---\ndescription: What this project's memory (wiki-memory) holds: preferences, procedures, gotchas\n"
        "alwaysApply: true\n---\n",
    ),
}
_ORDER = {"preference": 0, "procedure": 1, "gotcha": 2, "decision": 3}


@dataclass(frozen=True)
class Exported:
    """An export: the file, whether it was (or, with `check`, would be) changed, the pages in it."""

    target: str
    path: Path
    changed: bool
    pages: tuple[str, ...]
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "path": str(self.path), "changed": self.changed, "pages": list(self.pages)}


def export_block(
    memory: Memory | MemoryContext,
    target: str,
    *,
    check: bool = False,
    budget: int = DEFAULT_BUDGET,
    path: Path | None = None,
) -> Exported:
    """Write (or, with `check`, only compare) the block of the project's durable pages in
    the target's instruction file; every byte outside the markers stays as it is."""
    if target not in TARGETS:
        raise WikiMemoryError(f"unknown export target {target!r}: one of {', '.join(TARGETS)}")
    rel, new_file = TARGETS[target]
    root = memory.project.root
    if path is None:
        if root is None:
            raise WikiMemoryError("no project folder to write the instruction file in")
        path = Path(root) / rel
    try:
        # Bytes, not read_text: newline translation would rewrite the user's \r\n.
        old: str | None = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError) as e:
        raise WikiMemoryError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    name = display_name(path, Path(root) if root else None, Path.home())
    block, pages = render_block(memory, exclude_source=f"file:{name}", budget=budget)
    if old is None:
        new = new_file + block + "\n"
    elif _BLOCK.search(old):
        new = _BLOCK.sub(lambda _: block, old, count=1)
    else:
        new = old + ("" if not old or old.endswith("\n\n") else "\n" if old.endswith("\n") else "\n\n") + block + "\n"
    changed = new != old
    if changed and not check:
        from wiki_memory.install.configfile import write_atomic  # deferred: the installers, only to write the file

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, new)
    return Exported(target, path, changed, pages, new)


def render_block(
    memory: Memory | MemoryContext, *, exclude_source: str = "", budget: int = DEFAULT_BUDGET
) -> tuple[str, tuple[str, ...]]:
    """The block, markers included, and the pages it names."""
    pages = durable_pages(memory, exclude_source)
    head = (
        f"{START}\n"
        "## Project memory (kept by wiki-memory; edit the pages, not this block)\n\n"
        "Notes from earlier sessions: check them against the code.\n"
    )
    tail = f"\n{END}"
    lines: list[str] = []
    named: list[str] = []
    used = len(head) + len(tail)
    section = None
    for page in pages:
        heading = {"preference": "Preferences", "procedure": "Procedures", "gotcha": "Gotchas",
                   "decision": "Decisions"}[page.type]  # fmt: skip
        entry = f"- **{page.title}**: {_gist(page)}"
        extra = ([f"\n### {heading}\n"] if heading != section else []) + [entry]
        cost = sum(len(x) + 1 for x in extra)
        if used + cost > budget:
            continue
        if heading != section:
            section = heading
        lines += extra
        named.append(page.path)
        used += cost
    return head + "\n".join(lines) + ("\n" if lines else "") + tail, tuple(named)


def _gist(page: Page) -> str:
    """A page in one line: its first lines of text (code kept as inline code), at most 240 characters."""
    out: list[str] = []
    in_fence = False
    for line in page.body.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not stripped or stripped.startswith("#"):
            continue
        out.append(f"`{stripped}`" if in_fence else stripped.lstrip("-*+ ").strip())
        if sum(len(x) + 2 for x in out) > 240:
            break
    text = ""
    for part in (x for x in out if x):
        text += ("" if not text else " " if text[-1] in ".!?:;" else "; ") + part
    return text if len(text) <= 240 else text[:237].rstrip() + "…"


def durable_pages(memory: Memory | MemoryContext, exclude_source: str = "") -> list[Page]:
    """Active preferences, procedures, gotchas and decisions, in the block's order: by type,
    then the most used and most confirmed first (helpful marks, evidence, occurrences)."""
    if not memory.exists:
        return []
    store = memory.store()
    out: list[Page] = []
    for path, blob in store.page_files():
        if not path.startswith(tuple(folder_for(t) + "/" for t in _ORDER)):
            continue
        try:
            page = parse_page(store.repo[blob].as_raw_string().decode("utf-8", "replace"), path)
        except PageError:
            continue
        if page.status != "active" or page.type not in _ORDER:
            continue
        if exclude_source and exclude_source in page.sources:
            continue
        if page.meta.get("distilled") == "llm" and not page.meta.get("helpful"):
            continue  # a model's proposal goes into instruction files once someone found it helpful
        out.append(page)

    def weight(page: Page) -> int:
        meta = page.meta
        return int(meta.get("helpful") or 0) * 3 + int(meta.get("evidence") or 0) + len(meta.get("occurrences") or [])

    out.sort(key=lambda p: (_ORDER[p.type], -weight(p), p.title.lower()))
    return out


def refresh_exports(memory: Memory | MemoryContext) -> list[Exported]:
    """After a consolidation: rewrite the block in each `[export] targets` file that holds it
    already (a file without the block is the user's to opt in with `export`); never raises,
    since the session's pages are committed whatever happens here."""
    from wiki_memory.consolidate.state import log  # deferred: the consolidator, not loaded with Memory

    targets = load_settings().export.targets
    if memory.project.root is None:
        return []
    done: list[Exported] = []
    for target in targets:
        if target not in TARGETS:
            log(f"[export] targets: unknown target {target!r} (one of {', '.join(TARGETS)})")
            continue
        path = Path(memory.project.root) / TARGETS[target][0]
        try:
            if not path.is_file() or START not in path.read_bytes().decode("utf-8"):
                continue
            done.append(export_block(memory, target))
        except (OSError, UnicodeDecodeError, WikiMemoryError) as e:
            log(f"[export] {target}: {e}")
    return done


def remove_block(memory: Memory | MemoryContext, target: str, *, dry_run: bool = False) -> Exported:
    """Take the block out of the target's file again, with the blank line `export` put before
    it; a file that held nothing else is deleted."""
    if target not in TARGETS:
        raise WikiMemoryError(f"unknown export target {target!r}: one of {', '.join(TARGETS)}")
    rel, new_file = TARGETS[target]
    root = memory.project.root
    if root is None:
        raise WikiMemoryError("no project folder to remove the block from")
    path = Path(root) / rel
    try:
        old = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return Exported(target, path, False, (), "")
    match = _BLOCK.search(old)
    if match is None:
        return Exported(target, path, False, (), old)
    before, after = old[: match.start()], old[match.end() :].removeprefix("\n")
    if after.strip():
        new = before + after
    else:
        new = before.rstrip("\n") + "\n" if before.strip() else ""
    if new in ("", new_file):
        new = ""
    if not dry_run:
        if new:
            from wiki_memory.install.configfile import write_atomic  # deferred: the installers, only to write the file

            write_atomic(path, new)
        else:
            path.unlink()
    return Exported(target, path, True, (), new)
