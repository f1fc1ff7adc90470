"""Building the SessionStart context file (`handoff-context.json`) from the wiki: the newest
handoff pages rendered as text, the preference pages, and the decisions and gotchas that
relate to each handoff. Not on the hook path: consolidation and the memory layer call it."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wiki_memory.config import Project, load_settings, replace_file
from wiki_memory.consolidate.closing import close_earlier
from wiki_memory.consolidate.context import CACHE_FILE, CACHE_VERSION, KEEP_HANDOFFS, VERSION, context_path, terms
from wiki_memory.consolidate.extract import clean
from wiki_memory.consolidate.provenance import Provenance, noteworthy
from wiki_memory.consolidate.render import handoff_text
from wiki_memory.consolidate.session import iso, time_key
from wiki_memory.consolidate.state import log
from wiki_memory.errors import PageError
from wiki_memory.pages import parse_page
from wiki_memory.pages.anchors import parse_anchors
from wiki_memory.pages.status import handed_out


def _line(body: str, limit: int = 240) -> str:
    """The first sentence or two of a page body, past its heading."""

    text = re.sub(r"^#.*$", "", body, flags=re.M)
    text = re.sub(r"^>\s?", "", text, flags=re.M)
    text = re.sub(r"\[\[([^\]|]+)\|([^\]]+)\]\]", r"\2", text)
    text = re.sub(r"\[\[([^\]]+)\]\]", r"\1", text)
    return clean(text, limit)


def _entry(path: str, text: str) -> dict[str, Any] | None:

    try:
        page = parse_page(text, path)
    except PageError:
        return None
    meta = {
        k: (v if isinstance(v, (str, int, float, bool, list)) or v is None else str(v)) for k, v in page.meta.items()
    }
    base = {
        "path": path,
        "title": page.title,
        "type": page.type,
        "status": page.status,
        "updated": str(page.updated or ""),
    }
    if page.type == "handoff" or path.startswith("handoffs/"):
        ended = str(meta.get("ended") or page.updated or page.created or "")
        finished = meta.get("finished")
        return {
            **base,
            "work": meta.get("work") is not False,
            "finished": [str(k) for k in finished] if isinstance(finished, list) else [],
            "goal": goal_of(page.body),
            "body": page.body,
            "meta": meta,
            "kind": "explicit" if meta.get("handoff_kind") == "explicit" else "automatic",
            "session_id": str(meta.get("session_id") or ""),
            "agent": str(meta.get("agent") or ""),
            "ended": ended,
            "ended_ts": time_key(ended),
            "text": handoff_text(meta, page.body, path),
            "compact": handoff_text(meta, page.body, path, compact=True),
            "terms": terms(page.title, page.body),
        }
    from wiki_memory.consolidate.distill.pages import FOOTER  # deferred: the distill package loads PyYAML

    anchors = [{"path": a.path, "blob": a.blob} for a in parse_anchors(page.meta.get("anchors"))]
    if anchors:
        base["anchors"] = anchors
    body = page.body.replace(FOOTER, "") if meta.get("distilled") else page.body
    if page.type == "preference" or path.startswith("preferences/"):
        pinned = bool(meta.get("pinned")) or "pinned" in page.tags
        return {**base, "line": _line(body, 300), "pinned": pinned}
    if page.type == "procedure" or path.startswith("procedures/"):
        # Distilled procedures (one per purpose: tests, lint, build, ...) open with their command.
        opening = re.sub(r"^#.*$", "", body, flags=re.M).strip().split("\n\n", 1)[0]
        return {**base, "line": _line(opening, 300), "purpose": str(meta.get("purpose") or "")}
    return {**base, "line": _line(body), "terms": terms(page.title, " ".join(page.tags), body)}


def goal_of(body: str, limit: int = 200) -> str:
    """The goal a handoff page states (its Goal or Summary section's first paragraph)."""

    m = re.search(r"^##\s+(Goal|Summary|Objective)\b[^\n]*\n+(.+?)(?:\n\s*\n|\n##|$)", body, re.I | re.M | re.S)
    return clean(m.group(2), limit) if m else ""


def _close_items(handoffs: list[dict[str, Any]]) -> None:
    """Items of a handoff that a later session finished are dropped from what it hands."""

    entries = [dict(h) for h in handoffs]
    close_earlier(entries)
    for h, e in zip(handoffs, entries, strict=True):
        h["closed"] = e.get("closed") or []
        if e.get("open_body") is not None:
            meta = h.get("meta") or {}
            h["text"] = handoff_text(meta, str(e["open_body"]), h["path"])
            h["compact"] = handoff_text(meta, str(e["open_body"]), h["path"], compact=True)


def refresh(project: Project, store: Any, index: Any = None) -> dict[str, Any]:
    """Rebuild the context file from the store's HEAD (written atomically under the store's
    writer lock, so that a newer commit's context is never overwritten by an older one).
    `index`, the project's search index when the caller has it open, finds the decisions
    and gotchas each handoff relates to; without it, shared words do."""
    for _attempt in range(5):
        head = store.head()
        ctx = build(project, store, head, index)
        with store.lock:
            if store.head() != head:
                continue
            _write_json(context_path(project), ctx)
            return ctx
    return ctx


def build(project: Project, store: Any, head: bytes | None, index: Any = None) -> dict[str, Any]:
    """The context file's contents for the wiki at `head`."""
    cache_path = project.home / CACHE_FILE
    cache = _read_cache(cache_path)
    pages = _Pages(store, cache.get("entries") or {})
    pages.read(head)
    handoffs = pages.newest_handoffs()
    _close_items(handoffs)
    # Related notes are worked out again only for a handoff that changed, or when the
    # decisions and gotchas did (a search per handoff costs a fifth of a second in a big wiki).
    notes_key = pages.notes_digest.hexdigest()
    known = cache.get("related") if cache.get("notes_key") == notes_key else None
    known = known if isinstance(known, dict) else {}
    missing = [h for h in handoffs if h["key"] not in known]
    related_by = {h["path"]: known[h["key"]] for h in handoffs if h["key"] in known}
    related_by.update(_relate(missing, pages.notes, index))
    _write_json(
        cache_path,
        {
            "version": CACHE_VERSION,
            "entries": pages.fresh,
            "notes_key": notes_key,
            "related": {h["key"]: related_by.get(h["path"], []) for h in handoffs},
        },
    )
    return _contents(project, head, handoffs, pages, related_by)


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) and cache.get("version") == CACHE_VERSION else {}


class _Pages:
    """The handoff, preference, decision and gotcha pages at a revision, each read once
    (from the cache of entries by blob, when it has them)."""

    WANTED = ("handoffs/", "preferences/", "decisions/", "gotchas/", "procedures/")

    def __init__(self, store: Any, entries: Mapping[str, Any]) -> None:
        self.store = store
        self.entries = entries
        self.fresh: dict[str, Any] = {}
        self.preferences: list[dict[str, Any]] = []
        self.procedures: list[dict[str, Any]] = []
        self.notes: dict[str, dict[str, Any]] = {}
        self.handoff_files: list[tuple[str, bytes]] = []
        self.notes_digest = hashlib.sha1()

    def entry(self, path: str, blob: bytes) -> Any:
        found = _cached(self.store, self.entries, self.fresh, path, blob)
        if found is not None and path.startswith(("handoffs/", "preferences/")):
            # Where it came from (sync, another machine), and a date in the future not believed.
            self.provenance.mark(path, blob, found)
        return found

    def read(self, head: bytes | None) -> None:
        self.provenance = Provenance(self.store, head)
        for path, blob in self.store.page_files(head) if head else ():
            if not path.startswith(self.WANTED):
                continue
            if path.startswith("handoffs/"):
                self.handoff_files.append((path, blob))
                continue
            if path.startswith("procedures/") and "/" in path[len("procedures/") :]:
                continue  # only the top folder: one page per purpose lives there
            if not path.startswith(("preferences/", "procedures/")):
                self.notes_digest.update(f"{path}:{blob.decode()}\n".encode())
            entry = self.entry(path, blob)
            # Stale pages are handed out with their note; wrong, superseded, archived never.
            if entry is None or not handed_out(entry.get("status")):
                continue
            if path.startswith("preferences/"):
                self.preferences.append(entry)
            elif path.startswith("procedures/"):
                if entry.get("purpose"):
                    self.procedures.append(entry)
            else:
                self.notes[path] = entry
        self.preferences.sort(key=lambda e: str(e.get("updated") or ""), reverse=True)
        self.preferences.sort(key=lambda e: not e.get("pinned"))  # pinned first, then the newest

    def newest_handoffs(self) -> list[dict[str, Any]]:
        """The newest active handoffs. Month folders go newest first (handoffs/YYYY/MM/);
        every handoff of a month is read (from the cache after the first time), whatever
        its name, until enough are active."""
        months: dict[str, list[tuple[str, bytes]]] = {}
        for path, blob in self.handoff_files:
            parts = path.split("/")
            month = "/".join(parts[1:3]) if len(parts) >= 4 and parts[1].isdigit() and parts[2].isdigit() else "~"
            months.setdefault(month, []).append((path, blob))
        handoffs: list[dict[str, Any]] = []
        for month in sorted(months, key=lambda m: (m != "~", m), reverse=True):
            if len(handoffs) >= KEEP_HANDOFFS and month != "~":
                break
            for path, blob in months[month]:
                entry = self.entry(path, blob)
                if entry is not None and entry.get("status") == "active":
                    handoffs.append({**entry, "key": f"{blob.decode()}:{path}"})
        handoffs.sort(key=lambda e: -float(e.get("ended_ts") or 0))
        return handoffs[:KEEP_HANDOFFS]

    def newest_notes(self, n: int) -> list[str]:
        dated = ((p, note.get("updated") or "") for p, note in self.notes.items())
        return [p for p, _ in sorted(dated, key=lambda kv: kv[1], reverse=True)][:n]


def _contents(
    project: Project, head: bytes | None, handoffs: list[dict[str, Any]], pages: _Pages, related_by: dict[str, Any]
) -> dict[str, Any]:

    recent = pages.newest_notes(10)
    # Notes the start-time scorer may need for sessions not consolidated yet: the newest 60
    # (kept small: SessionStart parses this file on every start).
    keep = set(recent) | {p for paths in related_by.values() for p in paths} | set(pages.newest_notes(60))
    return {
        "version": VERSION,
        "project": project.id,
        "head": head.decode() if head else None,
        "generated": iso(time.time()),
        "handoffs": [
            {k: e[k] for k in ("path", "kind", "session_id", "agent", "ended", "ended_ts", "text", "compact")}
            | {"related": related_by.get(e["path"], []), "terms": e["terms"][:40]}
            | _origin(e)
            | {"work": e.get("work", True), "goal": e.get("goal", ""), "closed": e.get("closed") or []}
            for e in handoffs
        ],
        "preferences": [_lifecycle(e, ("path", "title", "line", "pinned")) for e in pages.preferences[:40]],
        "preferences_total": len(pages.preferences),
        "procedures": [
            _lifecycle(e, ("path", "title", "line", "purpose"))
            for e in sorted(pages.procedures, key=lambda e: (_PURPOSES.get(str(e.get("purpose")), 9), e["path"]))[:8]
        ],
        "notes": {
            p: {
                **_lifecycle(note, ("title", "type", "updated", "line")),
                "terms": (note.get("terms") or [])[:40],
            }
            for p, note in pages.notes.items()
            if p in keep
        },
        "recent": recent,
    }


_PURPOSES = {"tests": 0, "lint": 1, "typecheck": 2, "format": 3, "build": 4, "deploy": 5}


def _lifecycle(entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The entry's `keys`, and what SessionStart needs to note a page that may be stale:
    its anchors (checked against the code at start) and a `stale` status."""
    out = {k: entry.get(k) for k in keys} | _origin(entry)
    if entry.get("anchors"):
        out["anchors"] = entry["anchors"]
    if entry.get("status") == "stale":
        out["status"] = "stale"
    return out


def _origin(entry: Mapping[str, Any]) -> dict[str, Any]:
    """{"origin": ...} when there is something to say of where the entry came from."""

    return {"origin": entry["origin"]} if noteworthy(entry.get("origin")) else {}


def _cached(store: Any, entries: Mapping[str, Any], fresh: dict[str, Any], path: str, blob: bytes) -> Any:
    key = f"{blob.decode()}:{path}"
    if key in entries:
        fresh[key] = entries[key]
        return entries[key]
    text = store.repo[blob].as_raw_string().decode("utf-8", errors="replace")
    entry = _entry(path, text)
    fresh[key] = entry
    return entry


def _relate(
    handoffs: list[dict[str, Any]], notes: Mapping[str, Mapping[str, Any]], index: Any, limit: int = 4
) -> dict[str, list[str]]:
    """For each handoff, the decisions and gotchas that share the most distinctive words with it."""
    searched = _relate_by_search(index, handoffs, set(notes), limit) if index is not None else None
    if searched is not None:
        return searched
    related: dict[str, list[str]] = {}
    note_terms = {p: set(n.get("terms") or ()) for p, n in notes.items()}
    # Rarer words weigh more: a word in half the notes says little.
    df: dict[str, int] = {}
    for words in note_terms.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    total = max(1, len(note_terms))
    for h in handoffs:
        words = set(h.get("terms") or ())
        scored = []
        for path, nterms in note_terms.items():
            shared = words & nterms
            if len(shared) < 2:
                continue
            score = sum(1.0 / (1 + df[w] * 10 / total) for w in shared)
            scored.append((score, str(notes[path].get("updated") or ""), path))
        scored.sort(reverse=True)
        related[h["path"]] = [p for _, _, p in scored[:limit]]
    return related


def _relate_by_search(
    index: Any, handoffs: list[dict[str, Any]], allowed: set[str], limit: int
) -> dict[str, list[str]] | None:
    """The same through the search index (bm25 over the handoff's words; `[consolidate]
    related_search = "hybrid"` adds vectors); None when the index cannot answer."""
    if not handoffs or index.head is None:
        # Never synced: a first full sync belongs to `reindex` or a search, not to a
        # background consolidation (minutes in a big wiki). Word overlap this time.
        return None

    mode = load_settings().consolidate.related_search
    related: dict[str, list[str]] = {}
    try:
        for h in handoffs:
            query = " ".join((h.get("terms") or [])[:24])
            if not query:
                related[h["path"]] = []
                continue
            results = index.search(query, k=limit * 3, mode=mode, type=["decision", "gotcha"], status="active")
            related[h["path"]] = [r.path for r in results if r.path in allowed][:limit]
    except Exception as e:  # noqa: BLE001 - the index is derived data; word overlap still works without it
        log(f"related pages by search failed ({type(e).__name__}: {e}); using word overlap")
        return None
    return related


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
