"""The memory a user already keeps for their agents, read as sections: `CLAUDE.md` (with
`CLAUDE.local.md`, `.claude/rules/` and the files it imports with `@path`), `AGENTS.md`,
`GEMINI.md`, Cursor's `.cursor/rules/*.mdc` and `.cursorrules`, `.github/copilot-instructions.md`,
`.windsurfrules`, Claude Code's auto-memory folder of the project, a Cline `memory-bank/`,
Serena's `.serena/memories/` and a basic-memory project folder.

Each file is split at its headings (the level its sections use; a lone title heading at the
top names the file); each section keeps the user's heading as its title and their wording as
its text, and gets the page type its shape says: steps and commands make a procedure, rules
("always", "never", "prefer") a preference, a choice with its reason a decision, the rest a
fact. A type the tool itself recorded (auto memory's `type:`, basic-memory's) wins.

Nothing here writes: `memory.instructions` turns sections into pages.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from wiki_memory.errors import PageError

#: Our own blocks in instruction files (`install-instructions`, `export`): never imported back.
_OUR_BLOCKS = re.compile(r"<!-- wiki-memory:(?:[a-z-]+:)?start -->.*?<!-- wiki-memory:(?:[a-z-]+:)?end -->\n?", re.S)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# `@path/to/file` in CLAUDE.md, outside code spans: a word of its own starting with @.
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{1,2}/|/)?[\w.\-/]+)")
_INDEX_LINE = re.compile(r"^\s*[-*+]\s*\[[^\]]*\]\([^)]+\.md\)")
MAX_IMPORT_DEPTH = 5  # Claude Code follows imports five hops deep

# What a line looks like, to tell a section's kind by its shape.
_RULE_WORDS = re.compile(
    r"\b(always|never|prefer|avoid|don'?t|do not|must|should|shall|make sure|instead of|use\b|only)\b", re.I
)
_COMMAND_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:`[^`]+`|\$ )")
_STEP_LINE = re.compile(r"^\s*\d+[.)]\s+")
_DECISION_WORDS = re.compile(r"\b(we (?:chose|decided|picked|went with)|decided|decision|rationale|trade-?off)\b", re.I)
_PROCEDURE_HEADING = re.compile(
    r"\b(commands?|build(?:ing)?|test(?:s|ing)?|run(?:ning)?|setup|set up|install(?:ing|ation)?|deploy(?:ing|ment)?|"
    r"release|workflow|how to|steps|lint(?:ing)?|debug(?:ging)?|develop(?:ment)?)\b",
    re.I,
)
_PREFERENCE_HEADING = re.compile(
    r"\b(style|conventions?|preferences?|rules?|guidelines?|do'?s|don'?ts|standards?)\b", re.I
)
_DECISION_HEADING = re.compile(r"\b(decisions?|adr|architecture decisions?|why)\b", re.I)

#: Claude Code's auto memory `type:` and basic-memory's `type:` -> our page type.
_TOOL_TYPES = {
    "user": "preference",
    "feedback": "preference",
    "preference": "preference",
    "project": "fact",
    "reference": "fact",
    "fact": "fact",
    "decision": "decision",
    "procedure": "procedure",
    "howto": "procedure",
    "how-to": "procedure",
    "gotcha": "gotcha",
}
#: Cline's memory bank: the file says what it holds.
_CLINE_TYPES = {"systempatterns": "decision", "techcontext": "fact", "projectbrief": "fact", "productcontext": "fact"}


@dataclass(frozen=True)
class Source:
    """An instruction file found: where (`path`, absolute), how it is named to the user
    (`name`: relative to the project, or `~/...`), and which tool's format it is in."""

    path: Path
    name: str
    kind: str


@dataclass(frozen=True)
class Section:
    """One rule or section of an instruction file, ready to be a page."""

    source: Source
    title: str
    text: str
    type: str

    @property
    def key(self) -> str:
        """Names the section across imports: its file and heading."""
        return f"{self.source.name}#{self.title}"

    @property
    def sha(self) -> str:
        """The section's text as imported, to see whether it changed since."""
        return hashlib.sha1(f"{self.title}\n{self.text}".encode()).hexdigest()


def display_name(path: Path, root: Path | None, home: Path) -> str:
    """`CLAUDE.md` for a file of the project, `~/.claude/CLAUDE.md` for one of the home."""
    path = path.absolute()
    for base, prefix in ((root, ""), (home, "~/")):
        if base is None:
            continue
        try:
            return prefix + path.relative_to(base.absolute()).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def claude_project_folder(root: Path) -> str:
    """The folder name Claude Code gives a project under `~/.claude/projects/`: its path
    with every character that is not a letter or digit turned into `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(root.absolute()))


def claude_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def _kind_of(path: Path) -> str | None:
    """The format of one file, by its name and place."""
    name, parent = path.name, path.parent.name
    if path.suffix == ".mdc":
        return "cursor-rule"
    table = {
        "CLAUDE.md": "claude-md",
        "CLAUDE.local.md": "claude-md",
        "AGENTS.md": "agents-md",
        "AGENTS.override.md": "agents-md",
        "GEMINI.md": "gemini-md",
        ".cursorrules": "cursorrules",
        "copilot-instructions.md": "copilot",
        ".windsurfrules": "windsurf",
    }
    if name in table:
        return table[name]
    if name.endswith(".instructions.md") and parent == "instructions":
        return "copilot"
    if parent == "memories" and path.parent.parent.name == ".serena":
        return "serena"
    if parent == "memory-bank" or parent.lower() == "memory-bank":
        return "cline-memory-bank"
    if parent == "memory" and path.parent.parent.parent.name == "projects":
        return "claude-auto-memory"
    if path.suffix == ".md" and parent == "rules" and path.parent.parent.name in (".claude", ".windsurf"):
        return "claude-md" if path.parent.parent.name == ".claude" else "windsurf"
    return None


def project_files(root: Path) -> list[Path]:
    """The instruction files of a project folder, in the order agents read them."""
    found = [root / n for n in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md")]
    found += sorted((root / ".claude" / "rules").glob("*.md"))
    found += sorted((root / ".cursor" / "rules").glob("**/*.mdc"))
    found += [root / ".cursorrules", root / ".github" / "copilot-instructions.md"]
    found += sorted((root / ".github" / "instructions").glob("*.instructions.md"))
    found += [root / ".windsurfrules"]
    found += sorted((root / ".windsurf" / "rules").glob("*.md"))
    found += sorted((root / "memory-bank").glob("*.md"))
    found += sorted((root / ".serena" / "memories").glob("*.md"))
    return [p for p in found if p.is_file()]


def home_files(root: Path | None, home: Path) -> list[Path]:
    """The user's own instruction files that apply to every project, and Claude Code's auto
    memory of this project."""
    claude = claude_home()
    found = [claude / "CLAUDE.md", home / ".codex" / "AGENTS.md", home / ".gemini" / "GEMINI.md"]
    if root is not None:
        folder = claude / "projects" / claude_project_folder(root) / "memory"
        found += sorted(folder.glob("*.md"))
    return [p for p in found if p.is_file()]


def folder_files(folder: Path) -> list[Path]:
    """What a folder given by name holds: a project's instruction files, else (a memory bank,
    Serena's memories, an auto-memory or basic-memory folder) its Markdown files."""
    found = project_files(folder)
    if found:
        return found
    return sorted(
        p
        for p in folder.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts[:-1])
    )


def read_sections(
    paths: Iterable[Path], root: Path | None, home: Path, *, folder_kind: dict[Path, str] | None = None
) -> list[Section]:
    """Every section of these files and of the files they import (`@path`), each file once."""
    seen: set[Path] = set()
    out: list[Section] = []
    for path in paths:
        kind = (folder_kind or {}).get(path) or _kind_of(path) or "markdown"
        out += _read_file(path, kind, root, home, seen, depth=0)
    return out


def _read_file(path: Path, kind: str, root: Path | None, home: Path, seen: set[Path], depth: int) -> list[Section]:
    real = path.resolve()
    if real in seen:
        return []
    seen.add(real)
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    source = Source(path.absolute(), display_name(path, root, home), kind)
    meta, body = _front_matter(raw, source.name)
    body = _OUR_BLOCKS.sub("", body)
    if kind == "claude-auto-memory" and path.name == "MEMORY.md":
        # The index Claude Code loads first: pointers to the topic files, read on their own.
        body = "\n".join(line for line in body.splitlines() if not _INDEX_LINE.match(line))
    sections = list(split_sections(source, meta, body))
    if kind in ("claude-md", "markdown") and depth < MAX_IMPORT_DEPTH:
        for imported in _imports(body, path.parent, home):
            sections += _read_file(imported, _kind_of(imported) or kind, root, home, seen, depth + 1)
    return sections


def _front_matter(raw: str, name: str) -> tuple[dict[str, object], str]:
    """The file's front matter (Cursor rules, auto memory, basic-memory notes) and the rest;
    front matter that does not parse is read as text, like the tools themselves do."""
    from wiki_memory.pages.document import parse_page  # deferred: YAML is not needed to start the CLI

    try:
        page = parse_page(raw, name)
    except PageError:
        return {}, raw
    return dict(page.meta), page.body


def _imports(body: str, base: Path, home: Path) -> Iterator[Path]:
    """The files `@path` names in a CLAUDE.md, outside code spans and blocks."""
    for line in _prose_lines(body):
        line = re.sub(r"`[^`]*`", "", line)
        for match in _IMPORT.finditer(line):
            raw = match.group(1).rstrip(".,;:)")
            target = home / raw[2:] if raw.startswith("~/") else (Path(raw) if raw.startswith("/") else base / raw)
            if target.is_file():
                yield target


def _prose_lines(body: str) -> Iterator[str]:
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)[0] * 3
            fence = None if fence == mark else (fence or mark)
            continue
        if fence is None:
            yield line


def _file_title(source: Source, meta: dict[str, object]) -> str:
    for key in ("title", "name"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    stem = source.path.name
    for suffix in (".instructions.md", ".mdc", ".md"):
        stem = stem.removesuffix(suffix)
    stem = stem.lstrip(".")
    # activeContext -> active Context; code_style -> code style
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", stem).replace("_", " ").replace("-", " ").split()
    title = " ".join(words) or source.path.name
    return (
        title[:1].upper() + title[1:].lower() if source.kind not in ("claude-md", "agents-md", "gemini-md") else title
    )


def split_sections(source: Source, meta: dict[str, object], body: str) -> Iterator[Section]:
    """A file's sections: at the heading level its sections use, each with what follows it
    (sub-headings included); the text before the first one is a section titled by the file."""
    lines = body.splitlines()
    headings: list[tuple[int, int, str]] = []  # (line number, level, text)
    fence: str | None = None
    for n, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)[0] * 3
            fence = None if fence == mark else (fence or mark)
            continue
        h = _HEADING.match(line) if fence is None else None
        if h:
            headings.append((n, len(h.group(1)), h.group(2).strip()))
    title = _file_title(source, meta)
    start = 0
    first_text = [line for line in lines[: headings[0][0]] if line.strip()] if headings else []
    # A lone top-level heading at the top names the file; its sections are the next level.
    if headings and not first_text and sum(1 for h in headings if h[1] == headings[0][1]) == 1 and len(headings) > 1:
        title = headings[0][2]
        start = headings[0][0] + 1
        headings = headings[1:]
    hint = _hinted_type(source, meta)
    if any(isinstance(meta.get(k), str) for k in ("title", "name")):
        # A note that names itself in its front matter (auto memory, basic-memory) is one page.
        title = _file_title(source, meta)
        headings = []
        if start == 0 and lines and (h := _HEADING.match(lines[0])) and h.group(2).strip() == title:
            start = 1
    if not headings:
        text = "\n".join(lines[start:]).strip("\n")
        if text.strip():
            yield Section(source, title, text, hint or classify(title, text))
        return
    level = min(h[1] for h in headings)
    cuts = [h for h in headings if h[1] == level]
    preamble = "\n".join(lines[start : cuts[0][0]]).strip("\n")
    if preamble.strip():
        yield Section(source, title, preamble, hint or classify(title, preamble))
    for i, (n, _level, heading) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(lines)
        text = "\n".join(lines[n + 1 : end]).strip("\n")
        if text.strip():
            yield Section(source, heading, text, hint or classify(heading, text))


def _hinted_type(source: Source, meta: dict[str, object]) -> str | None:
    """The type the tool recorded itself, where it records one."""
    value = meta.get("type")
    if isinstance(value, str) and value.strip().lower() in _TOOL_TYPES:
        return _TOOL_TYPES[value.strip().lower()]
    if source.kind == "cline-memory-bank":
        return _CLINE_TYPES.get(source.path.stem.lower())
    return None


def classify(heading: str, text: str) -> str:
    """A section's page type by its shape: procedure, preference, decision or fact."""
    commands = steps = rules = 0
    fence: str | None = None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)[0] * 3
            if fence is None:
                commands += 1  # a code block: something to run or copy
            fence = None if fence == mark else (fence or mark)
            continue
        if fence is not None or not line.strip():
            continue
        if _COMMAND_LINE.match(line):
            commands += 1
        elif _STEP_LINE.match(line):
            steps += 1
        elif _RULE_WORDS.search(line):
            rules += 1
    if _DECISION_HEADING.search(heading) or (_DECISION_WORDS.search(text) and rules <= 1):
        return "decision"
    # Steps and commands against rules; a heading that names a procedure counts them twice.
    weight = 2 if _PROCEDURE_HEADING.search(heading) else 1
    if commands + steps and (commands + steps) * weight >= rules:
        return "procedure"
    if rules or _PREFERENCE_HEADING.search(heading):
        return "preference"
    return "fact"
