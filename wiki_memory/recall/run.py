"""One recall, as the hook and `wiki-memory recall` run it: for a prompt or for a file, the
pages to hand over (never one handed to the session already), the block that hands them,
and, for `--explain`, every candidate with its evidence and why it was kept or dropped.
"""

from __future__ import annotations

import time
from collections import namedtuple

from wiki_memory.recall import chatter, find, render, seen
from wiki_memory.recall.settings import RecallSettings

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    import sqlite3
    from collections.abc import Callable, Collection, Mapping, Sequence

    from wiki_memory.config import Project
    from wiki_memory.recall.find import Candidate, Query

BUDGET = 0.5  # seconds one recall may spend reading the index before it gives up
# A prompt the wiki knows less than this share of (by its words' weights) is not worth the
# helper's look at every page: nothing of the memory is in it, and it costs no more than the
# hook without recall. 0.1-0.3 changed no figure of the recall sets.
ALONE_REACH = 0.2
WORDS_ALONE = 3  # matched words a page needs by words alone, unless it holds an identifier as written


class Verdict(namedtuple("Verdict", "candidate kept reason meaning rerank", defaults=(None, None))):
    """A candidate page, whether it was handed over, and why (`meaning`: its closeness in
    meaning to the prompt, when the helper answered; `rerank`: the reranker's score of a
    page kept, when one reordered them)."""

    __slots__ = ()

    def as_dict(self) -> dict[str, object]:
        c = self.candidate
        return {
            "path": c.path,
            "title": c.title,
            "type": c.type,
            "status": c.status,
            "score": round(c.score, 4),
            "meaning": self.meaning,
            "rerank": self.rerank,
            "matched": list(c.matched),
            "missing": list(c.missing),
            "exact": c.exact,
            "kept": self.kept,
            "reason": self.reason,
        }


class Recall(namedtuple("Recall", "trigger subject text pages verdicts passages", defaults=((), (), ()))):
    """What one recall hands over: `text` (the block, "" for nothing), `pages` (the paths in
    it, best first), `verdicts` (every candidate considered), `passages` (path -> the lines
    shown)."""

    __slots__ = ()


def for_prompt(
    project: Project,
    prompt: str,
    *,
    session_id: str | None = None,
    settings: RecallSettings | None = None,
    exclude: Collection[str] | None = None,
    budget: float = BUDGET,
    similarities: Callable[[Sequence[str]], dict[str, float] | None] | None = None,
    nearby: Callable[[float], dict[str, tuple[float, int]]] | None = None,
    conn: sqlite3.Connection | None = None,
    rerank: Callable[[str, Sequence[str]], list[float] | None] | None = None,
) -> Recall:
    """The pages a prompt would be handed now (`exclude`: paths handed already; by default
    what the session's record holds). `similarities` (pages -> their closeness in meaning
    to the prompt, or None) and `nearby` (a closeness -> the pages of the whole index at
    least that close, with their closest chunk) default to asking the warm helper, started
    if it is not there. `conn`: an open read-only connection to the index (the helper keeps
    one; left open). `rerank` (the prompt, the pages' texts -> their scores, or None when
    it failed) orders the pages kept; never given in a hook's own process."""
    settings = settings or RecallSettings()
    nothing = Recall("prompt", prompt, "", ())
    if not settings.enabled or not settings.prompts or chatter.is_chatter(prompt):
        return nothing
    own = conn is None
    conn = find.connect(project.index_path) if conn is None else conn
    if conn is None:
        return nothing
    alone = settings.meaning and settings.meaning_alone <= 1.0
    try:
        query = find.prepare(conn, prompt)
        # A prompt mostly about words the wiki never uses cannot reach a floor by words, nor
        # (below ALONE_REACH) be worth a question of meaning: nothing to read.
        reach = settings.floor if settings.meaning else settings.words_floor
        if query is None or query.reachable < (ALONE_REACH if alone else reach):
            return nothing
        cands = find.candidates(conn, query, deadline=time.monotonic() + budget)
        if exclude is None:
            exclude = seen.read(project, session_id) if session_id else set()
        # Words let a page through only above the floor: only those are worth a question of
        # closeness; meaning alone may bring others (`nearby`).
        open_ = [c for c in cands if find.eligible(c, exclude) is None and c.score >= settings.floor]
        sims: dict[str, float] | None = None
        near: dict[str, tuple[float, int]] = {}
        if settings.meaning and (open_ or alone):
            if similarities is None:
                near_floor = settings.meaning_alone if alone else None
                found = _ask_helper(project, prompt, [c.path for c in open_], settings, near_floor)
                sims, near = found if found else (None, {})
            else:
                sims = similarities([c.path for c in open_])
                near = nearby(settings.meaning_alone) if alone and nearby is not None else {}
        held = {c.path for c in cands}
        extra = {p: chunk for p, (_, chunk) in near.items() if p not in held and p not in exclude}
        if extra:
            cands = [*cands, *find.pages_of_chunks(conn, query, extra)]
        if sims is not None or near:
            sims = {**(sims or {}), **{p: s for p, (s, _) in near.items()}}
    finally:
        if own:
            conn.close()
    verdicts = judge(cands, query, settings, exclude, sims, general=chatter.is_general_question(prompt))
    if rerank is not None:
        verdicts = reranked(verdicts, prompt, rerank)
    return _assemble("prompt", prompt, verdicts, settings, root=project.root)


def reranked(
    verdicts: list[Verdict], prompt: str, rerank: Callable[[str, Sequence[str]], list[float] | None]
) -> list[Verdict]:
    """The pages kept in the reranker's order (ties and a failed reranker: the order of
    the evidence), each with its score; the floors alone decide what is kept."""
    kept = [v for v in verdicts if v.kept]
    if len(kept) < 2:
        return verdicts
    scores = rerank(prompt, [f"{v.candidate.title}\n{v.candidate.chunk}" for v in kept])
    if scores is None:
        return verdicts
    order = sorted(zip(kept, scores, range(1, len(kept) + 1), strict=True), key=lambda t: -t[1])
    moved = [
        v._replace(rerank=score, reason=f"{v.reason}; rerank {score:.3f} (#{was} by evidence)")
        for v, score, was in order
    ]
    return moved + [v for v in verdicts if not v.kept]


def _ask_helper(
    project: Project, prompt: str, pages: Sequence[str], settings: RecallSettings, near: float | None
) -> tuple[dict[str, float], dict[str, tuple[float, int]]] | None:
    """The helper's answer (closeness of `pages`, and with `near` the pages at least that
    close by meaning alone), or None after starting it for the next prompt."""
    from wiki_memory.recall import meaning  # deferred: hook path: only with the helper (meaning) on

    # The wiki-memory home: a project lives in <home>/projects/<id>, its team tier in
    # <home>/projects/<id>/team: one helper serves both.
    where = project.home.parent if project.home.name == "team" else project.home
    home = str(where.parent.parent) if where.parent.name == "projects" else str(project.home)
    found = meaning.closeness(home, str(project.index_path), prompt, pages, near)
    if found is None:
        meaning.ensure_started(home, str(project.index_path), idle=float(settings.helper_idle))
    return found


def judge(
    cands: Sequence[Candidate],
    query: Query,
    settings: RecallSettings,
    exclude: Collection[str] = (),
    sims: Mapping[str, float] | None = None,
    *,
    general: bool = False,
) -> list[Verdict]:
    """Each candidate against the floors: kept, or dropped with the reason.

    With `sims` (closeness in meaning, from the helper) a page must hold `floor` of the
    prompt's words and be `meaning_floor` close: words and meaning must agree; or be
    `meaning_alone` close, whatever its words. Without,
    words alone decide, more strictly (`words_floor`, three words). A general question
    needs `question_floor` of meaning, and gets nothing from words alone. The best page
    that clears the floors sets the bar for the others (`relative`).
    """

    def evidence(c: Candidate) -> float:
        return c.score + (sims.get(c.path, 0.0) if sims is not None else 0.0)

    def floors(c: Candidate) -> str | None:
        strong = [s for s in c.matched if query.weights.get(s, 0) > 0]
        sim = sims.get(c.path) if sims is not None else None
        return find.eligible(c, exclude) or _floors(c, len(strong), sim, settings, general, sims is not None)

    dropped = {c.path: floors(c) for c in cands}
    # The bar is set by the best page that clears the floors: one they drop sets nothing.
    best = max((evidence(c) for c in cands if dropped[c.path] is None), default=0.0)
    ranked = sorted(cands, key=lambda c: -evidence(c))
    out: list[Verdict] = []
    kept = 0
    for c in ranked:
        sim = sims.get(c.path) if sims is not None else None
        why = dropped[c.path]
        if why is None and evidence(c) < settings.relative * best:
            why = f"evidence {evidence(c):.2f} below {settings.relative:.2f} of the best ({best:.2f})"
        if why is None and kept >= settings.max_pages:
            why = f"{settings.max_pages} pages already"
        if why is None:
            kept += 1
        if why is None:
            reason = f"words {c.score:.2f}" + (f", meaning {sim:.2f}" if sim is not None else " (words alone)")
        out.append(Verdict(c, why is None, why or reason, sim))
    return out


def _floors(
    c: Candidate, words: int, sim: float | None, settings: RecallSettings, general: bool, with_meaning: bool
) -> str | None:
    """Why a page does not clear the floors, or None."""
    if with_meaning and sim is None and not general:
        # No vector for the page yet (just written, its embedding still to come): its words
        # judge it, as they do without the helper, rather than a meaning of 0 dropping it.
        with_meaning = False
    if with_meaning:
        if not general and sim is not None and sim >= settings.meaning_alone:
            return None  # this close in meaning, the words need not agree
        if c.score < settings.floor:
            return f"words {c.score:.2f} below the floor {settings.floor:.2f}"
        need = settings.question_floor if general else settings.meaning_floor
        if sim is None or sim < need:
            kind = "a general question's floor" if general else "the floor"
            return f"meaning {0.0 if sim is None else sim:.2f} below {kind} {need:.2f}"
        return None
    if general:
        return "a general question, and no meaning at hand to tell it is about this project"
    if c.score < settings.words_floor:
        return f"words {c.score:.2f} below the words-alone floor {settings.words_floor:.2f}"
    if words < WORDS_ALONE and not c.exact:
        return f"holds {words} of the prompt's words, {WORDS_ALONE} needed by words alone"
    return None


def for_file(
    project: Project,
    file: str,
    *,
    cwd: str | None = None,
    session_id: str | None = None,
    settings: RecallSettings | None = None,
    exclude: Collection[str] | None = None,
    conn: sqlite3.Connection | None = None,
) -> Recall:
    """The pages about a file the agent reads or edits (anchored to it or naming its path),
    once per file per session (`conn`: as for `for_prompt`)."""
    from wiki_memory.recall import files as file_pages  # deferred: hook path: only a file's recall needs it

    settings = settings or RecallSettings()
    rel = file_pages.relative(file, project.root, cwd)
    nothing = Recall("file", rel or file, "", ())
    if not settings.enabled or not settings.files or not rel:
        return nothing
    if exclude is None:
        exclude = seen.read(project, session_id) if session_id else set()
    if f"file:{rel}" in exclude:
        return nothing
    own = conn is None
    conn = find.connect(project.index_path) if conn is None else conn
    if conn is None:
        return nothing
    try:
        cands = file_pages.pages_about(conn, rel)
    finally:
        if own:
            conn.close()
    verdicts = []
    kept = 0
    for c in cands:
        why = find.eligible(c, exclude)
        if why is None and kept >= settings.max_pages:
            why = f"{settings.max_pages} pages already"
        kept += why is None
        verdicts.append(Verdict(c, why is None, why or ("anchored to it" if c.exact else "names it")))
    return _assemble("file", rel, verdicts, settings, file=rel, root=project.root)


def _assemble(
    trigger: str,
    subject: str,
    verdicts: list[Verdict],
    settings: RecallSettings,
    file: str | None = None,
    root: os.PathLike[str] | str | None = None,
    labels: Mapping[str, str] | None = None,
) -> Recall:
    focus = file.rsplit("/", 1)[-1] if file else None
    chosen = [(v.candidate, find.passage(v.candidate, focus)) for v in verdicts if v.kept]
    notes = {c.path: n for c, _ in chosen if (n := page_note(c, root))}
    for path, said in (labels or {}).items():
        # A team page names its tier and author first, then any drift note.
        notes[path] = f"{said}; {notes[path]}" if path in notes else said
    text, placed = render.render(chosen, max_chars=settings.max_chars, notes=notes, file=file)
    if len(placed) < len(chosen):
        left = {c.path for c, _ in chosen} - set(placed)
        verdicts = [Verdict(v.candidate, False, "no room left") if v.candidate.path in left else v for v in verdicts]
    passages = tuple((c.path, p) for c, p in chosen if c.path in placed)
    return Recall(trigger, subject, text, tuple(placed), tuple(verdicts), passages)


def page_note(c: Candidate, root: os.PathLike[str] | str | None = None) -> str | None:
    """The note a page carries when it is handed over, or None.

    A page whose anchored code files (`c.anchors`, the index's JSON) changed since it was
    written, checked against the code repository at `root`, carries the lifecycle's drift
    note ("may be stale (src/x.py changed since)"), as at SessionStart; else a page marked
    stale says so.
    """
    if c.anchors and root is not None:
        # Here, not at the top: only a page with anchors needs the git index read.
        from wiki_memory.pages.drift import drift_note, drifted  # deferred: hook path: hashlib only for anchored pages

        note = drift_note(drifted(root, c.anchors))
        if note:
            return note
    if c.status == "stale":
        return "marked stale: it may no longer hold"
    return None


def both_tiers(
    project: Project,
    one: Callable[[Project, Collection[str]], Recall],
    exclude: Collection[str],
    settings: RecallSettings,
    *,
    mode: str | None = None,
) -> Recall:
    """One recall over the personal wiki and, when the project joined a team, the team
    tier: `one(project, exclude)` runs it on one tier. Team pages are named `team:<path>`
    and labelled with their author; one the team's trust rules hold back (`[team] recall`,
    see `recall.tier`) is dropped with the reason. The pages of both are ranked together
    by their evidence, at most `max_pages` in all. Without a team this is `one(project,
    exclude)`, at the cost of one stat."""
    personal = one(project, exclude)
    if not settings.enabled or not project.has_team():
        return personal
    from wiki_memory.recall import tier  # deferred: hook path: only a project with a team wiki

    team = project.team()
    team_exclude = {tier.bare(p) for p in exclude if tier.is_team(p)} | {p for p in exclude if p.startswith("file:")}
    shared = one(team, team_exclude)
    if not shared.verdicts:
        return personal
    kept = [v.candidate.path for v in shared.verdicts if v.kept]
    known = tier.read(team, kept)
    chosen_mode = mode or tier.recall_mode()
    verdicts: list[Verdict] = list(personal.verdicts)
    labels: dict[str, str] = {}
    for v in shared.verdicts:
        c = v.candidate._replace(path=tier.named(v.candidate.path))
        why = tier.withheld(known.get(v.candidate.path), chosen_mode) if v.kept else None
        verdicts.append(v._replace(candidate=c, kept=v.kept and why is None, reason=why or v.reason))
        labels[c.path] = tier.label(known.get(v.candidate.path))
    verdicts = _ranked_together(verdicts, settings)
    file = personal.subject if personal.trigger == "file" else None
    trigger, subject = personal.trigger, personal.subject
    return _assemble(trigger, subject, verdicts, settings, file=file, root=project.root, labels=labels)


def _ranked_together(verdicts: list[Verdict], settings: RecallSettings) -> list[Verdict]:
    """The kept pages of both tiers best first (a file's anchored pages, then by words and
    meaning), the ones past `max_pages` dropped; the others after them as they were."""

    def evidence(v: Verdict) -> tuple[bool, float]:
        return (not v.candidate.exact, -(v.candidate.score + (v.meaning or 0.0)))

    kept = sorted((v for v in verdicts if v.kept), key=evidence)
    out = [
        v if n < settings.max_pages else v._replace(kept=False, reason=f"{settings.max_pages} pages already")
        for n, v in enumerate(kept)
    ]
    return out + [v for v in verdicts if not v.kept]
