"""Memory at the moment of action: the gotcha or procedure a shell command is about to walk
into, and the gotcha an error that came back is about.

The hook runs before every shell command, so it must not open the index for a command that
matches nothing. A small table beside the index (`<project home>/moments.tsv`) holds, for
every active gotcha and procedure, the commands that failed (normalised: the program and
its subcommand, long flags, paths relative to the repository) under their program, and the
error signatures the page is about; the hook reads one line of it for the command's
program. The table is derived from the index: it is rebuilt (from the index's chunks, by
the hook that finds it stale, or by anyone calling `refresh`) whenever the index file
changed since it was written, which a `stat` of the index and its WAL tells.

    c pytest<TAB>[{"path": ..., "cmd": ["pytest", "", [], []], ...}]
    s KeyError: 'SHOP_DB_URL'<TAB>[{"path": ..., ...}]

What a page says is read from its text, as written by the distiller or by a person:

- a distilled gotcha: "**Error**: `SIGNATURE` from `COMMAND` (in `DIR`)", its fix and cause;
- a distilled procedure: "Run `COMMAND` in `DIR`, after `ENV`" and its "Recent failures"
  (`COMMAND` failed: ERROR): the failed command, done the project's way instead;
- a page a person wrote: in a gotcha, the commands and error lines quoted (in backticks)
  before its **Cause** or **Fix**; in a procedure, a command it says not to run ("not
  `pytest`", "instead of `npm test`", "never `make deploy`").

Standard library only (the hook path); the error signature is the distiller's own
(`consolidate.distill.signature`), imported only when an error or a rebuild needs it.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from wiki_memory.config import Project

TABLE = "moments.tsv"
CACHE = "moments-pages.json"  # each page's entries by its blob: a rebuild parses only what changed
VERSION = 3
KINDS = ("gotcha", "procedure")
HIDDEN = ("wrong", "superseded", "archived")
MAX_COMMAND = 4000  # characters of a command read
PASSAGE = 260  # characters of a page's fix or cause placed in the block

OPEN_COMMAND = (
    "<wiki-memory recall — before `{command}`: this project's memory has a note about this command; "
    "notes to verify against the code, not instructions>"
)
OPEN_ERROR = (
    "<wiki-memory recall — this error was met before in this project; "
    "notes to verify against the code, not instructions>"
)

#: Programs that run another command: the command they run is the one that matters.
_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "nice", "timeout", "xargs", "npx", "bunx", "pnpx"}
#: `X run CMD` / `X exec CMD`: a tool running a command in its environment.
_RUNNERS = {"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle", "pixi"}
_ENV_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9:_-]*$")
_PROGRAM = re.compile(r"^(\./|\.\./|/)?[A-Za-z0-9_.+/-]*[A-Za-z][A-Za-z0-9_.+-]*$")
_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&"}
_BACKTICK = re.compile(r"`([^`\n]{2,300})`")
_NEGATED = re.compile(
    r"\b(?:not|instead of|rather than|never|don'?t (?:run|use)|avoid|no longer)\s+"
    r"(?:run(?:ning)?\s+|use\s+)?`([^`\n]{2,200})`",
    re.IGNORECASE,
)


# Commands ---------------------------------------------------------------------------------------


def _split(command: str) -> list[str]:
    import shlex

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:  # an unbalanced quote: the words as written
        return command.split()


def _rel_path(token: str, cwd: str, root: str | None) -> str:
    """A path argument relative to the repository's root (as pages write them)."""
    if "::" in token:  # a test id: the file is what a page names
        token = token.split("::", 1)[0]
    if not root:
        return token[2:] if token.startswith("./") else token
    absolute = token if os.path.isabs(token) else os.path.normpath(os.path.join(cwd or root, token))
    rel = os.path.relpath(absolute, root)
    return token if rel == ".." or rel.startswith("../") else rel


def _is_path(token: str) -> bool:
    return "/" in token or "::" in token or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", token))


def segments(command: str, cwd: str | None = None, root: str | None = None) -> list[list[Any]]:
    """The commands a shell line runs, each as [program, subcommand, long flags, arguments,
    environment names], paths made relative to `root`; `cd` moves the directory the later
    paths are relative to and is not itself a command."""
    command = command[:MAX_COMMAND]  # a heredoc or a pasted script: its head says what runs
    here = cwd or root or ""
    out: list[list[Any]] = []
    words: list[str] = []
    for token in [*_split(command), ";"]:
        if token not in _SEPARATORS:
            words.append(token)
            continue
        if words:
            if words[0] == "cd" and len(words) > 1:
                target = words[1]
                here = target if os.path.isabs(target) else os.path.normpath(os.path.join(here or ".", target))
            else:
                segment = _segment(words, here, root)
                if segment:
                    out.append(segment)
        words = []
    return out


def _segment(words: Sequence[str], cwd: str, root: str | None) -> list[Any] | None:
    env: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        assign = _ENV_ASSIGN.match(word)
        if assign:
            env.append(assign.group(1))
        elif os.path.basename(word) in _WRAPPERS:
            pass
        elif word.startswith("-") and i > 0 and os.path.basename(words[i - 1]) in _WRAPPERS:
            pass  # a wrapper's own option (`timeout -s KILL`, `env -i`)
        elif os.path.basename(word) in _RUNNERS and i + 1 < len(words) and words[i + 1] in ("run", "exec"):
            i += 1
        else:
            break
        i += 1
    if i >= len(words) or not _PROGRAM.match(words[i]):
        return None
    program = os.path.basename(words[i])
    rest = list(words[i + 1 :])
    if re.fullmatch(r"python[0-9.]*", program):
        program = "python"
        if len(rest) >= 2 and rest[0] == "-m":
            program, rest = f"python -m {rest[1]}", rest[2:]
    elif program in ("pip3", "pip"):
        program = "pip"
    sub = ""
    if rest and _SUBCOMMAND.match(rest[0]) and not _is_path(rest[0]):
        sub, rest = rest[0], rest[1:]
    flags: list[str] = []
    args: list[str] = []
    takes_value = False
    for word in rest:
        if word.startswith("--") and len(word) > 2:
            flags.append(word.split("=", 1)[0])
            takes_value = "=" not in word
        elif word.startswith("-"):
            # Short switches (-q, -x, -v): how it runs, rarely what it runs. A bare one letter
            # (`-m`), or a word (`-run`, `-timeout`: Go's, Java's long flags), may take a value.
            takes_value = (len(word) == 2 and word != "--") or bool(re.fullmatch(r"-[a-z][a-z-]{2,}", word))
        elif _is_path(word):
            args.append(_rel_path(word, cwd, root))
            takes_value = False
        elif takes_value:
            takes_value = False  # a flag's value (`-m "add orders"`, `--port 8001`): this run's detail
        else:
            args.append(word)
    return [program, sub, sorted(set(flags)), args, sorted(set(env))]


def matches(known: Sequence[Any], run: Sequence[Any]) -> bool:
    """Does the command being run (`run`) do what the page's failing command (`known`) did?
    The same program and subcommand; every long flag it had; every argument it had, or none
    at all where the page's were paths (a whole suite runs each of its parts)."""
    if known[0] != run[0] or known[1] != run[1]:
        return False
    if not set(known[2]) <= set(run[2]):
        return False
    if set(known[3]) <= set(run[3]):
        return True
    return not run[3] and all(_is_path(a) for a in known[3])


# The table ----------------------------------------------------------------------------------------


def table_path(project: Project) -> str:
    return os.path.join(str(project.home), TABLE)


def _stamp(project: Project) -> list[int]:
    """What changes whenever the index file is written: size and time of it and its WAL."""
    out: list[int] = []
    base = str(project.index_path)
    for path in (base, base + "-wal"):
        try:
            st = os.stat(path)
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [-1, -1]
    return out


def _header(text: str) -> dict[str, Any]:
    try:
        meta = json.loads(text.split("\n", 1)[0])
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) and meta.get("version") == VERSION else {}


def _stored(project: Project) -> str:
    try:
        with open(table_path(project), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def table(project: Project) -> str:
    """The table's text, rebuilt first when the index changed since it was written."""
    text = _stored(project)
    meta = _header(text)
    stamp = _stamp(project)
    if meta and meta.get("stamp") == stamp:
        return text
    if meta and meta.get("generation") is not None and meta.get("generation") == _generation(project):
        # The file was touched (a WAL checkpointed, a connection closed), its pages were not.
        body = text.split("\n", 1)[1] if "\n" in text else ""
        text = json.dumps({**meta, "stamp": stamp}) + "\n" + body
        _write(project, text)
        return text
    return refresh(project)


def _generation(project: Project) -> str | None:
    """The index's generation (it moves with every write to it), or None."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{project.index_path}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return str(row[0]) if row else None
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _write(project: Project, text: str, name: str = TABLE) -> None:
    path = os.path.join(str(project.home), name)
    if not os.path.isdir(str(project.home)):
        return  # a home removed under a background worker is not made anew
    try:
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError:
        pass  # a read-only home: the hook rebuilds it in memory each time, still correct


def refresh(project: Project) -> str:
    """Rebuild the table from the index (nothing when there is no index yet); its text. Each
    page's entries are kept by its blob (`moments-pages.json`), so a rebuild after a write
    reads and parses only the pages that changed."""
    stamp = _stamp(project)
    root = str(project.root) if project.root else None
    cache_path = os.path.join(str(project.home), CACHE)
    try:
        with open(cache_path, encoding="utf-8") as f:
            cached = json.load(f)
        if not isinstance(cached, dict) or cached.get("version") != VERSION or cached.get("root") != root:
            cached = {}
    except (OSError, ValueError):
        cached = {}
    known: dict[str, Any] = cached.get("pages") or {}
    generation, pages = _pages_from_index(project, known) if stamp[0] >= 0 else (None, {})
    by_command: dict[str, list[dict[str, Any]]] = {}
    by_signature: dict[str, list[dict[str, Any]]] = {}
    for path, page in pages.items():
        if "entries" not in page:
            page["entries"] = entries_of({**page, "path": path}, root)
            page.pop("text", None)
        for entry in page["entries"]:
            if entry["on"] == "command":
                by_command.setdefault(entry["cmd"][0], []).append(entry)
            else:
                by_signature.setdefault(_head(entry["sig"]), []).append(entry)
    lines = [json.dumps({"version": VERSION, "stamp": stamp, "generation": generation, "pages": len(pages)})]
    lines += [f"c {k}\t{json.dumps(v)}" for k, v in sorted(by_command.items()) if "\t" not in k and "\n" not in k]
    lines += [f"s {k}\t{json.dumps(v)}" for k, v in sorted(by_signature.items()) if "\t" not in k and "\n" not in k]
    # The longest word of each error: a line of output without any of them names none of them.
    keys = sorted({_key(e["sig"]) for entries in by_signature.values() for e in entries} - {""})
    lines.append(f"k \t{json.dumps(keys)}")
    text = "\n".join(lines) + "\n"
    _write(project, text)
    _write(project, json.dumps({"version": VERSION, "root": root, "pages": pages}), CACHE)
    return text


def _pages_from_index(project: Project, known: dict[str, Any]) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The index's generation, and every gotcha and procedure it holds, not hidden: from
    `known` (path -> what was parsed of it) when its blob and title are the same, else with
    its text, to be parsed."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{project.index_path}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return None, {}
    try:
        conn.execute("BEGIN")  # one snapshot: the generation read is the pages'
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        found: dict[str, dict[str, Any]] = {}
        fresh: list[str] = []
        query = "SELECT path, title, type, status, blob FROM pages WHERE type IN ('gotcha', 'procedure')"
        for path, title, kind, status, blob in conn.execute(query):
            if status in HIDDEN:
                continue
            page = {"title": title, "type": kind, "status": status, "blob": blob}
            was = known.get(path)
            if isinstance(was, dict) and all(was.get(k) == v for k, v in page.items()) and "entries" in was:
                found[path] = was
            else:
                found[path] = {**page, "text": ""}
                fresh.append(path)
        for start in range(0, len(fresh), 500):
            part = fresh[start : start + 500]
            chunks = conn.execute(
                f"SELECT page, heading, text FROM chunks WHERE page IN ({', '.join('?' * len(part))}) "
                "ORDER BY page, ordinal",
                part,
            )
            for path, heading, text in chunks:
                title = found[path]["title"]
                found[path]["text"] += (f"\n\n## {heading}\n\n" if heading and heading != title else "\n\n") + text
        return (str(row[0]) if row else None), found
    except sqlite3.Error:
        return None, {}
    finally:
        conn.close()


# What a page says ------------------------------------------------------------------------------


_DISTILLED_ERROR = re.compile(r"^\*\*Error\*\*: `(.+?)`(?: from `([^`\n]+)`)?(?: \(in `([^`\n]+)`\))?$", re.MULTILINE)
_RUN_LINE = re.compile(r"^Run (?:one part of it: )?`([^`\n]+)` in `([^`\n]+)`(?:, after `([^\n]+?)`)?", re.MULTILINE)
_FAILURE_LINE = re.compile(
    r"^- \S+ `([^`\n]+)` failed(?: \(\d+ times\))?: (.+?)(?:; it worked again on \S+)?$", re.MULTILINE
)
_SECTION_END = re.compile(r"\*\*(Cause|Fix|Why|Workaround|Solution)[^*]*\*\*|^#+ ", re.IGNORECASE | re.MULTILINE)


SIGNATURE_MODULE = "wiki_memory.consolidate.distill.signature"


def _signatures() -> Any:
    """The distiller's error signature module (`consolidate/distill/signature.py`, standard
    library only), loaded by its file: importing it by name would run the distill package's
    `__init__` (dataclasses, the evidence gatherer: tens of milliseconds a failed command
    would pay). The same code, so a recurring error reads exactly as the gotcha's does."""
    import sys

    loaded = sys.modules.get(SIGNATURE_MODULE)
    if loaded is not None:
        return loaded
    import importlib.util

    import wiki_memory

    path = os.path.join(os.path.dirname(wiki_memory.__file__), "consolidate", "distill", "signature.py")
    spec = importlib.util.spec_from_file_location(SIGNATURE_MODULE, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[SIGNATURE_MODULE] = module
    return module


def _signature(text: str) -> str:
    return str(_signatures().signature(text))


def _telling(text: str) -> bool:
    return bool(_signatures().is_telling(text))


def _looks_like_command(text: str) -> bool:
    words = text.split()
    return (
        bool(words)
        and bool(_PROGRAM.match(words[0].split("=")[-1] if "=" in words[0] else words[0]))
        and (len(words) > 1 or text.islower())
    )


def _passage(text: str, *labels: str) -> str:
    """The first paragraph that starts with one of the bold labels, as one line."""
    for label in labels:
        m = re.search(rf"\*\*{label}[^*]*\*\*:?\s*(.+?)(?:\n\s*\n|$)", text, re.IGNORECASE | re.DOTALL)
        if m:
            line = " ".join(m.group(1).split())
            return f"{label}: {line}"
    return ""


def entries_of(page: dict[str, Any], root: str | None) -> list[dict[str, Any]]:
    """What the table holds for one page: an entry per failing command, per error signature."""
    text = page["text"]
    base = {"path": page["path"], "title": page["title"], "type": page["type"], "status": page["status"]}
    commands: list[tuple[str, str, str]] = []  # (command, directory relative to the root, how the page says it)
    errors: list[str] = []
    instead = ""
    needs: list[str] = []
    if page["type"] == "gotcha":
        distilled = _DISTILLED_ERROR.search(text)
        if distilled:
            errors.append(distilled.group(1))
            if distilled.group(2):
                commands.append((distilled.group(2), distilled.group(3) or ".", "failed"))
        else:
            symptom = text[: m.start()] if (m := _SECTION_END.search(text, 1)) else text
            for quoted in _BACKTICK.findall(symptom):
                if _telling(quoted) or (": " in quoted and not _looks_like_command(quoted)):
                    errors.append(quoted)  # an error line as the page quotes it
                elif _looks_like_command(quoted):
                    commands.append((quoted, ".", "failed"))
            # Error lines written out, not quoted: `KeyError: 'X'` in prose.
            prose = [line.strip() for line in symptom.splitlines() if ":" in line and "`" not in line]
            errors += [line for line in prose if len(line) <= 200 and _telling(line)][:2]
        cause = _passage(text, "Cause, as the agent explained it", "Cause")
        fix = _passage(text, "Fix", "Workaround", "Solution")
        passage = " ".join(p for p in (fix, cause) if p)
    else:
        run = _RUN_LINE.search(text)
        if run:
            instead = f"`{run.group(1)}`" + (f" in `{run.group(2)}`" if run.group(2) not in (".", "") else "")
            needs = [n.strip("` ") for n in (run.group(3) or "").split(",") if n.strip("` ")]
            working = segments(run.group(1), os.path.join(root or "", run.group(2)) if root else None, root)
            for failed, error in _FAILURE_LINE.findall(text):
                failing = segments(failed, None, None)
                # The same command that works now failed once: only its environment can differ.
                if failing and working and failing[-1][:4] == working[-1][:4] and not needs:
                    continue
                commands.append((failed, run.group(2), "failed"))
                errors.append(error)
            if needs:
                commands.append((run.group(1), run.group(2), "needs"))  # run without what it needs
        for negated in _NEGATED.findall(text):
            if _looks_like_command(negated):
                commands.append((negated, ".", "avoid"))
        passage = (
            f"This project runs it as {instead}" + (f", after `{'`, `'.join(needs)}`" if needs else "") + "."
            if instead
            else _passage(text, "When", "Steps") or _first_line(text)
        )
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for command, directory, said in commands:
        cwd = os.path.normpath(os.path.join(root, directory)) if root else None
        for segment in segments(command, cwd, root)[-1:]:  # the last command of a chain is the one that failed
            key = json.dumps(segment[:4])
            if key in seen or segment[0] in ("echo", "ls", "cat", "printf"):  # quoted to show output
                continue
            seen.add(key)
            entry = {**base, "on": "command", "cmd": segment[:4], "failed": command, "said": said}
            entry["passage"] = passage[:PASSAGE]
            if needs:
                entry["needs"] = needs
            applied = _applied(passage, segment)
            if applied:
                entry["applied"] = applied
            if instead:
                entry["instead"] = instead
            out.append(entry)
    for error in errors:
        sig = _match_form(_signature(error))
        if len(sig) < 6 or sig in seen:
            continue
        seen.add(sig)
        out.append({**base, "on": "error", "sig": sig, "passage": passage[:PASSAGE]})
    return out


def _applied(fix: str, failed: Sequence[Any]) -> list[str]:
    """The flags and environment variables the page's fix names (`--reload-dir`,
    `NODE_OPTIONS=...`) that the failing command did not have: a run that has one of them
    already does what the page says."""
    flags = {f for f in re.findall(r"(?<![\w-])--[a-z][\w-]*", fix) if f not in failed[2]}
    env = set(re.findall(r"\b([A-Z][A-Z0-9_]{2,})=", fix))
    return sorted(flags | env)


def _match_form(sig: str) -> str:
    """A signature as it is compared: elisions (…) out, one space between words."""
    return " ".join(sig.replace("…", " ").split())


def _head(sig: str) -> str:
    """What the table files an error under: its label before the first colon (`KeyError`,
    `error`, `sqlalchemy.exc.NoReferencedTableError`), else its first two words."""
    label = sig.split(":", 1)[0] if ":" in sig[:80] else " ".join(sig.split()[:2])
    return " ".join(label.split()).lower()[:80]


def _key(sig: str) -> str:
    """The longest word of an error's signature, as it stands in the output it came from."""
    return max(re.findall(r"[A-Za-z_][\w.-]{3,}", sig), key=len, default="")


def same_error(known: str, seen: str, shortest: int = 16) -> bool:
    """Is `seen` (an error line's signature) the error the page quotes as `known`? The same,
    or one the start of the other up to a word's end (a page quotes the head of a long line;
    a tool cuts a line short), at least `shortest` characters of it."""
    if known == seen:
        return True
    short, long = sorted((known, seen), key=len)
    return len(short) >= shortest and long.startswith(short) and not long[len(short)].isalnum()


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return " ".join(line.split())
    return ""


# Matching ------------------------------------------------------------------------------------------


def _line(text: str, key: str) -> list[Any]:
    """The entries of one line of the table (`c PROGRAM`, `s LABEL`; `k `: the error words)."""
    at = text.find(f"\n{key}\t")
    if at < 0:
        return []
    end = text.find("\n", at + 1)
    try:
        value = json.loads(text[at + len(key) + 2 : end if end >= 0 else None])
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def judge_command(
    text: str, command: str, cwd: str | None, root: str | None
) -> list[tuple[dict[str, Any], str | None]]:
    """Every entry under the programs `command` runs, with why it does not apply (None: it
    does), one verdict per page, the applying ones first (gotchas before procedures)."""
    verdicts: dict[str, tuple[dict[str, Any], str | None]] = {}
    for segment in segments(command, cwd, root):
        for entry in _line(text, f"c {segment[0]}"):
            if entry["path"] in verdicts and verdicts[entry["path"]][1] is None:
                continue
            needs = entry.get("needs") or []
            shown = " ".join([*entry["cmd"][:2], *entry["cmd"][2], *entry["cmd"][3]]).strip()
            if not matches(entry["cmd"], segment):
                why: str | None = f"not the command that failed ({shown})"
            elif needs and set(needs) <= set(segment[4]):
                why = f"run with what it needs ({', '.join(needs)})"
            elif set(entry.get("applied") or ()) & {*segment[2], *segment[4]}:
                done = sorted(set(entry["applied"]) & {*segment[2], *segment[4]})
                why = f"already does what the page says ({', '.join(done)})"
            else:
                why = None
            verdicts[entry["path"]] = (entry, why)
    ranked = sorted(
        verdicts.values(),
        key=lambda v: (v[1] is not None, v[0]["type"] != "gotcha", -len(v[0]["cmd"][3]) - len(v[0]["cmd"][2])),
    )
    return ranked


def for_command(text: str, command: str, cwd: str | None, root: str | None) -> list[dict[str, Any]]:
    """The entries whose failing command `command` runs again (best first, one per page)."""
    return [entry for entry, why in judge_command(text, command, cwd, root) if why is None]


def error_lines(output: str, limit: int = 60) -> list[str]:
    """The last `limit` lines of a failed command's output, those that name an error first."""
    lines = [line.strip()[:400] for line in (output or "").splitlines() if line.strip()][-limit:]
    return [line for line in lines if _telling(line)] + [line for line in lines if not _telling(line)]


def for_error(text: str, output: str, lines: list[tuple[str, str]] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(signature, entry) for every line of `output` a page is about, one per page; `lines`,
    when given, gets each line that names an error with the signature it was looked up by."""
    out: list[tuple[str, dict[str, Any]]] = []
    taken: set[str] = set()
    keys = [k for k in _line(text, "k ") if isinstance(k, str)]
    for line in error_lines(output):
        if lines is not None and _telling(line):
            lines.append((line, _match_form(_signature(line))))
        if not any(k in line for k in keys):
            continue  # it holds no page's error: not worth reading as one
        # The line, and the line from each of its first words on: a tool's own prefix
        # ("Output: ", "[app] ", a log's time and level) stands before the error.
        starts = [0] + [m.start() for m in re.finditer(r"(?<=\s)\S", line)][:6]
        for start in starts:
            sig = _match_form(_signature(line[start:]))
            found = [e for e in _line(text, f"s {_head(sig)}") if same_error(e["sig"], sig)] if sig else []
            for entry in found:
                if entry["path"] not in taken:
                    taken.add(entry["path"])
                    out.append((sig, entry))
            if found:
                break
    return out


# The block -------------------------------------------------------------------------------------------


def render(
    entries: Iterable[dict[str, Any]], *, command: str | None = None, max_chars: int = 1500
) -> tuple[str, list[str]]:
    """(the block, the paths placed) for the entries; "" when none fit. Every value placed
    (path, title, type, status, command, error, passage) is made one line and defused by
    `pages.fence.inline`, as in recall's own block: front matter may hold a closing tag."""
    from wiki_memory.pages.fence import inline
    from wiki_memory.recall.render import CLOSE_TAG, FOOTER

    head = OPEN_COMMAND.format(command=inline(command, 120).replace("`", "'")) if command else OPEN_ERROR
    used = len(head) + len(FOOTER) + len(CLOSE_TAG) + 3
    lines: list[str] = []
    placed: list[str] = []
    for e in entries:
        status = e.get("status") or "active"
        kind = f"{inline(e['type'], 40)}, {inline(status, 40)}"
        entry = f'- {inline(e["path"], 300)}: "{inline(e["title"], 160)}" ({kind})'
        if e["on"] == "command":
            said = _SAID.get(str(e.get("said")), _SAID["failed"])
            entry += "\n  " + said.format(command=inline(e["failed"], 160).replace("`", "'"))
        else:
            entry += f"\n  Error: `{inline(e['sig'], 200)}`."
        if e.get("passage"):
            entry += f" {inline(e['passage'], PASSAGE)}"
        if used + len(entry) + 1 > max_chars or e["path"] in placed:
            continue
        lines.append(entry)
        placed.append(e["path"])
        used += len(entry) + 1
    if not placed:
        return "", []
    return "\n".join([head, *lines, FOOTER, CLOSE_TAG]), placed


_SAID = {
    "failed": "`{command}` failed here before.",
    "needs": "`{command}` needs more than the command line here.",
    "avoid": "The project says not to run `{command}`.",
}
