"""Sharing with the team tier (issue 28): personal pages proposed as a branch that the team
reviews as a pull request, the personal pages worth proposing, and the handoff that travels
with a code branch.

The rules:

- `share` proposes pages as one commit on the team remote's current `main`, pushed as a
  branch of the sharer's own (`share/<user>/<page>`); the team merges it on the host (or
  with git), and the next team sync brings it to everyone. What is pushed is shown first
  (the diff against the team's `main`), and checked for secrets with the redaction rules
  before anything leaves: a page holding one is refused, naming the line and the kind.
- Sessions, handoffs and preferences are personal: refused unless named on purpose
  (`allow=("preference",)`). Pages that no longer hold (wrong, superseded, archived) and
  sync's conflict copies are not shared.
- Sharing again (the page changed) rebuilds the same branch on the team's `main` as it is
  then, with every page the branch carried: the request shows the update. A branch someone
  else pushed to since is not overwritten.
- A page whose path holds someone else's page on the team's `main`, or on another person's
  open share branch, goes beside it as a conflict copy (`x.conflict-<user>-<date>.md`, with
  `conflict_of`): both merge without a git conflict and nothing is lost; the team decides.
- The personal page is left as it is; what was shared (page, team path, branch, the blob
  pushed) is recorded in `<project home>/team/shared.json`, so `share_candidates` does not
  propose it again until it changes, and `shared_pages` can say whether it was merged.
- `handoff share` writes the newest handoff to the team's `main` directly as
  `handoffs/branches/<branch>.md` (see `consolidate.branch_handoff`): not reviewed, because
  a handoff is news for whoever picks up the branch next, stale by the time a review ends;
  it is scanned for secrets like a share, and it is handed at SessionStart, never recalled
  as knowledge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dulwich.objects import ObjectID
from dulwich.refs import Ref

from wiki_memory.config import replace_file
from wiki_memory.errors import NotFoundError, PageError, WikiMemoryError
from wiki_memory.memory.rules import InputError, utf8
from wiki_memory.memory.share_branches import (
    Placer,
    branch_page,
    commit_tree,
    fast_forward,
    id_at,
    ref_of,
    team_page,
    tree_diff,
)
from wiki_memory.memory.share_records import (
    BranchHandoff,
    ShareCandidate,
    SharedPage,
    SharedState,
    ShareProposal,
    ShareRefused,
    ShareResult,
)
from wiki_memory.memory.team_hosts import host_of, logged_in_client, open_request
from wiki_memory.pages import Page, now_iso, parse_page, render_page, slugify
from wiki_memory.store import Author, Store, blob_id
from wiki_memory.store.reading import oid
from wiki_memory.store.rewrite import Finding, findings_in
from wiki_memory.sync.remotes import Remote, default_remote, list_remotes
from wiki_memory.sync.transport import MAIN, RemoteMoved, fetch_heads, push

if TYPE_CHECKING:
    from wiki_memory.memory.memory import Memory

#: Page types that are a person's own: shared only when named on purpose.
PERSONAL = ("session", "handoff", "preference")
#: Page types `share_candidates` proposes: knowledge distilled from sessions.
WORTH_SHARING = ("gotcha", "procedure", "decision", "fact")
#: Statuses of pages that no longer hold: never shared.
NOT_HOLDING = ("wrong", "superseded", "archived")
MIN_SESSIONS = 2
STATE_FILE = "shared.json"
EVIDENCE_FILE = "share-evidence.json"  # blob id -> sessions its page names (a cache)
BRANCH_PREFIX = b"refs/heads/share/"
ATTEMPTS = 5


class TeamShare:
    """The sharing part of one project's `Memory` (see the module docstring)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.project = memory.project
        self._store: Store | None = None

    def __enter__(self) -> TeamShare:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # The team tier ---------------------------------------------------------------------

    def _team_store(self) -> Store:
        if self._store is None:
            self._store = Store(self.project.team().wiki)
        return self._store

    def _team(self) -> tuple[Store, Remote]:
        if not self.project.has_team():
            raise NotFoundError(
                f"project {self.project.name} has joined no team tier; `wiki-memory team join URL` clones it first"
            )
        store = self._team_store()
        remotes = list_remotes(store)
        remote = next((r for r in remotes if r.name == "origin"), None) or default_remote(store)
        return store, remote

    def _me(self) -> Author:
        return Author.person(self.project.root)

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.project.team().home / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        data.setdefault("pages", {})
        data.setdefault("branches", {})
        return data

    def _save_state(self, state: dict[str, Any]) -> None:
        home = self.project.team().home
        home.mkdir(parents=True, exist_ok=True)
        replace_file(home / STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + "\n")

    def _evidence(self) -> dict[str, int]:
        try:
            data = json.loads((self.project.team().home / EVIDENCE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _save_evidence(self, counts: dict[str, int]) -> None:
        try:
            replace_file(self.project.team().home / EVIDENCE_FILE, json.dumps(counts, sort_keys=True) + "\n")
        except OSError:
            pass  # a cache: the next review parses again

    # Proposing -------------------------------------------------------------------------

    def plan(self, refs: Sequence[str], message: str | None = None, allow: Sequence[str] = ()) -> ShareProposal:
        """The proposal for sharing these personal pages (fetches the team remote; pushes
        nothing). Refuses personal types not in `allow`, pages that no longer hold, and any
        secret in what would be pushed."""
        if not refs:
            raise InputError("name the pages to share (a path, title or id)")
        if message is not None:
            utf8("message", message)
        for given in refs:
            utf8("page", given)
        team, remote = self._team()
        personal = self.memory.store()
        paths = list(dict.fromkeys(self.memory.find(given) for given in refs))
        # What is shared is what the files say now: a hand edit not committed yet goes too.
        self.memory.commit_hand_edits(paths)
        pages = self._pages(personal, paths, allow)
        me = self._me()
        state = self._state()
        branch = self._branch_for(pages, state, me)
        carried = self._carried(personal, state, branch, {p.id for p in pages})
        heads = fetch_heads(team, remote, (MAIN, BRANCH_PREFIX))
        base = heads.get(MAIN)
        ref = f"refs/heads/{branch}".encode()
        previous = heads.get(ref)
        known = state["branches"].get(branch, {}).get("commit")
        if previous is not None and previous.decode() != known:
            raise WikiMemoryError(
                f"{branch} on the team remote holds commits not pushed from here ({previous.decode()[:8]}); "
                "merge or close its request first, or share under another page"
            )
        placer = Placer(
            team, base, [tip for name, tip in heads.items() if name.startswith(BRANCH_PREFIX) and name != ref]
        )
        scanned: list[tuple[str, str | None]] = [(message or "", None)]
        changes: dict[str, bytes] = {}
        shared: list[SharedPage] = []
        blobs: dict[str, str] = {}
        for page in [*pages, *carried]:
            raw = personal.read_bytes(page.path)
            scanned.append((raw.decode("utf-8", "replace"), page.path))
            previous_path = state["pages"].get(_key(page), {}).get("team_path")
            team_path, how, beside = placer.place(page, previous_path, _user(me), set(changes))
            data = render_page(team_page(page, team_path, me, beside)).encode("utf-8")
            if placer.base_files.get(team_path) == blob_id(data):
                how = "unchanged"
            changes[team_path] = data
            shared.append(SharedPage(page.path, team_path, page.title, how, beside))
            blobs[_key(page)] = blob_id(raw).decode()
        findings = _secrets(scanned)
        if findings:
            raise ShareRefused(findings)
        base_tree = team.repo[oid(base)].tree if base else None  # type: ignore[attr-defined]
        tree = team.write_tree(base_tree, changes)
        if base_tree == tree:
            raise WikiMemoryError("nothing to share: the team's main holds these pages exactly as they are here")
        subject = f"share: {shared[0].team_path.removesuffix('.md')}" + (
            f" and {len(shared) - 1} more" if len(shared) > 1 else ""
        )
        body = (message or "").strip()
        commit = commit_tree(team, tree, [base] if base else [], me, subject, body)
        return ShareProposal(
            branch=branch,
            base=base.decode() if base else None,
            commit=commit.decode(),
            previous=previous.decode() if previous else None,
            pages=tuple(shared),
            diff=tree_diff(team, base_tree, tree),
            remote=remote.shown,
            author=me.ident().decode(),
            message=body or subject,
            blobs=blobs,
        )

    def push(self, proposal: ShareProposal) -> ShareResult:
        """Push a proposal's branch, record what was shared, and open the request on the
        host when its client is installed and logged in."""
        team, remote = self._team()
        ref = f"refs/heads/{proposal.branch}".encode()
        expected = proposal.previous.encode() if proposal.previous else None
        try:
            push(team, remote, proposal.commit.encode(), expected, ref=ref)
        except RemoteMoved:
            raise WikiMemoryError(
                f"{proposal.branch} changed on the team remote while this was prepared; share again"
            ) from None
        team.repo.refs[Ref(f"refs/remotes/{remote.name}/{proposal.branch}".encode())] = ObjectID(
            proposal.commit.encode()
        )
        self._record(team, proposal)
        host = host_of(remote.url)
        request = None
        if host is not None:
            found = logged_in_client(host)
            if found is not None:
                cli, host = found
                title = proposal.message.splitlines()[0][:200]
                body = proposal.request_body()
                request = open_request(cli, host, proposal.branch, title, body)
        return ShareResult(proposal, host.compare_url(proposal.branch) if host else None, request)

    def _record(self, team: Store, proposal: ShareProposal) -> None:
        state = self._state()
        at = now_iso()
        ids = []
        personal = self.memory.store()
        for page in proposal.pages:
            try:
                pid = _key(personal.read(page.path))
            except (NotFoundError, PageError):
                pid = page.path
            ids.append(pid)
            team_blob = team.blob_at(page.team_path, proposal.commit.encode())
            state["pages"][pid] = {
                "path": page.path,
                "team_path": page.team_path,
                "branch": proposal.branch,
                "blob": proposal.blobs.get(pid),
                "team_blob": team_blob.decode() if team_blob else None,
                "commit": proposal.commit,
                "at": at,
            }
        state["branches"][proposal.branch] = {"pages": ids, "commit": proposal.commit, "at": at}
        self._save_state(state)

    def _pages(self, store: Store, paths: Sequence[str], allow: Sequence[str]) -> list[Page]:
        pages: dict[str, Page] = {}
        for path in paths:
            page = store.read(path)
            if page.type in PERSONAL and page.type not in allow:
                raise InputError(
                    f"{path} is a {page.type} page: sessions, handoffs and preferences are yours and are not "
                    f"shared unless named on purpose (`--allow {page.type}`; a handoff goes with its branch: "
                    "`wiki-memory handoff share`)"
                )
            if page.status in NOT_HOLDING:
                raise InputError(f"{path} is marked {page.status}: only pages that hold are shared")
            if ".conflict-" in path.rsplit("/", 1)[-1]:
                raise InputError(f"{path} is a conflict copy: merge it into its page and share that")
            pages.setdefault(path, page)
        return list(pages.values())

    def _branch_for(self, pages: Sequence[Page], state: dict[str, Any], me: Author) -> str:
        """The branch these pages were shared on before (one), else a new one named for the
        sharer and the first page."""
        before = {state["pages"].get(_key(p), {}).get("branch") for p in pages} - {None}
        if len(before) > 1:
            raise InputError(
                f"these pages were shared on different branches ({', '.join(sorted(before))}); share them separately"
            )
        if before:
            return str(before.pop())
        stem = slugify(pages[0].path.rsplit("/", 1)[-1].removesuffix(".md"))[:60] or "page"
        name, n = f"share/{_user(me)}/{stem}", 2
        while name in state["branches"]:
            name, n = f"share/{_user(me)}/{stem}-{n}", n + 1
        return name

    def _carried(self, store: Store, state: dict[str, Any], branch: str, given: set[str | None]) -> list[Page]:
        """The other pages the branch carried when it was last shared, as they are now."""
        out = []
        for pid in state["branches"].get(branch, {}).get("pages", []):
            if pid in given:
                continue
            path = state["pages"].get(pid, {}).get("path")
            try:
                page = store.read(self.memory.find(pid if _looks_like_id(pid) else path))
            except (NotFoundError, PageError, WikiMemoryError):
                continue  # gone from here since: the branch no longer carries it
            if page.status not in NOT_HOLDING:
                out.append(page)
        return out

    # What was shared, and what is worth sharing -------------------------------------------

    def shared_pages(self, *, fetch: bool = True) -> tuple[list[SharedState], str | None]:
        """Each page shared from here, proposed or merged, and whether it changed since; a
        note when the team remote could not be asked (the answer is then as of the last
        fetch)."""
        state = self._state()
        if not state["pages"]:
            return [], None
        team, remote = self._team()
        note = None
        main = None
        if fetch:
            try:
                main = fetch_heads(team, remote, (MAIN,)).get(MAIN)
            except WikiMemoryError as e:
                note = f"{e} (as of the last fetch)"
        tips = [t for t in (main, ref_of(team, f"refs/remotes/{remote.name}/main"), team.head()) if t]
        personal = self.memory.store()
        out = []
        for pid, rec in sorted(state["pages"].items(), key=lambda kv: kv[1].get("at", "")):
            # Merged: the team's main holds the page (its id) where it was proposed, however
            # the host merged it (a merge, a squash, a rebase), or exactly what was pushed.
            merged = any(
                id_at(team, tip, rec["team_path"]) == pid
                or (rec.get("team_blob") and team.blob_at(rec["team_path"], tip) == rec["team_blob"].encode())
                for tip in tips
            )
            blob = personal.blob_at(rec["path"])
            changed = blob is None or blob.decode() != rec.get("blob")
            out.append(
                SharedState(
                    rec["path"], rec["team_path"], rec["branch"], "merged" if merged else "proposed", changed, rec["at"]
                )
            )
        return out, note

    def candidates(self) -> list[ShareCandidate]:
        """Personal pages worth proposing to the team: active gotchas, procedures, decisions
        and facts with evidence from two sessions or more, not shared from here (or changed
        since), and with nothing at their path on the team tier."""
        if not self.project.has_team() or not self.memory.exists:
            return []
        index = self.memory.index
        personal = self.memory.store()
        team = self._team_store()
        on_team: set[str] = set()
        for tip in {t for t in (team.head(), ref_of(team, "refs/remotes/origin/main")) if t}:
            on_team.update(path for path, _ in team.files(tip))
        state = self._state()
        shared_by_path = {rec["path"]: rec for rec in state["pages"].values()}
        if index is not None:
            rows = [(r.path, r.title, r.type, r.status) for r in index.lifecycle_rows(WORTH_SHARING)]
        else:
            rows = [(p.path, p.title, p.type, p.status) for p in personal.pages() if p.type in WORTH_SHARING]
        files = dict(personal.files())  # path -> blob at HEAD, read once
        # A page version's count of sessions, by its blob id (versions never change, so this
        # is never stale): at 10,000 pages, parsing every one's YAML costs seconds.
        kept = self._evidence()
        counts: dict[str, int] = {}
        out = []
        for path, title, ptype, status in rows:
            blob = files.get(path)
            if blob is None or status != "active" or ".conflict-" in path.rsplit("/", 1)[-1]:
                continue
            rec = shared_by_path.get(path)
            if rec is not None and blob.decode() == rec.get("blob"):
                continue
            if rec is None and path in on_team:
                continue
            key = blob.decode()
            n = kept.get(key)
            if n is None:
                try:
                    n = len(_sessions(parse_page(personal.repo[oid(blob)].as_raw_string().decode("utf-8"), path)))
                except (PageError, UnicodeDecodeError, KeyError):
                    n = 0
            counts[key] = n
            if n < MIN_SESSIONS:
                continue
            why = f"a {ptype} with evidence from {n} sessions"
            why += f", changed since you shared it ({rec['at'][:10]})" if rec else ", not on the team tier"
            out.append(ShareCandidate(path, title, ptype, n, why))
        if counts != kept:
            self._save_evidence(counts)
        out.sort(key=lambda c: (-c.sessions, c.path))
        return out

    # A handoff that travels with a branch ---------------------------------------------------

    def share_handoff(self) -> BranchHandoff:
        """Attach the newest handoff to the code repository's current branch in the team
        tier, committed and pushed to the team's `main` (see the module docstring)."""
        from wiki_memory.consolidate.branch_handoff import (  # deferred: the consolidator, not loaded with Memory
            code_branch,
            mark_seen,
            page_path,
            seen_key,
        )

        team, remote = self._team()
        branch = code_branch(self.project.root)
        if branch is None:
            raise WikiMemoryError(
                "the code repository is on no branch (a detached HEAD, or no repository): nothing to attach to"
            )
        view = self.memory.handoff()
        if view is None or not view.handoffs:
            raise NotFoundError("no handoff yet to share: none of this project's sessions has been consolidated")
        source = view.handoffs[0]
        personal = self.memory.store()
        handoff = personal.read(source)
        findings = _secrets([(personal.read_bytes(source).decode("utf-8", "replace"), source)])
        if findings:
            raise ShareRefused(findings)
        me = self._me()
        rel = page_path(branch)
        for _ in range(ATTEMPTS):
            base = fetch_heads(team, remote, (MAIN,)).get(MAIN)
            text = render_page(branch_page(team, base, rel, branch, handoff, me))
            base_tree = team.repo[oid(base)].tree if base else None  # type: ignore[attr-defined]
            tree = team.write_tree(base_tree, {rel: text.encode("utf-8")})
            commit = commit_tree(team, tree, [base] if base else [], me, f"handoff: branch {branch}", "")
            try:
                push(team, remote, commit, base)
            except RemoteMoved:
                continue  # someone pushed to main meanwhile: on top of theirs
            break
        else:
            raise WikiMemoryError("the team's main kept moving; run `wiki-memory handoff share` again")
        fast_forward(team, commit)
        # The sharer is never handed their own handoff back.
        mark_seen(self.project, seen_key(rel, text))
        return BranchHandoff(branch, rel, source, commit.decode(), me.ident().decode())


def _sessions(page: Page) -> set[str]:
    """The sessions a page's `sources` name (`agent:session`; `file:...` names no session)."""
    out = set()
    for source in page.meta.get("sources") or []:
        text = str(source)
        if ":" in text and not text.startswith("file:"):
            out.add(text)
    return out


def _key(page: Page) -> str:
    """How shared.json names a page: its id (stable across renames), else its path."""
    return page.id or page.path


def _user(me: Author) -> str:
    """The sharer as a branch name's part: the email's local part, else the name."""
    local = me.email.split("@", 1)[0] if me.email else ""
    return slugify(local or me.name)[:40] or "someone"


def _looks_like_id(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9A-Z]{26}", value))


def _secrets(texts: Sequence[tuple[str, str | None]]) -> list[Finding]:
    """The secrets in each (text, page path) about to leave for the team remote, by the
    redaction rules and the user's own patterns (read afresh)."""
    from wiki_memory.capture.redact import (  # deferred: the redaction rules compile their patterns on import
        find,
        reload_user_patterns,
    )

    reload_user_patterns()
    return [found for text, path in texts for found in findings_in(find, text, None, path)]
