"""What the MCP tools return: pydantic models (the structured result) that also render
themselves as the readable text an agent reads (`.render()`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from wiki_memory.pages import Page, render_page


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f'"{text[:limit]}…"' if len(text) > limit else f'"{text}"'


class ProjectRef(BaseModel):
    """Which project's memory a call reached (so an agent can see it is the right one)."""

    id: str
    name: str
    root: str | None = Field(None, description="The code repository or directory the project was resolved from.")


class SearchHit(BaseModel):
    path: str = Field(description="The page's path in the wiki; pass it to `read`.")
    title: str
    type: str
    heading: str = Field("", description="The heading above the passage that matched.")
    snippet: str = Field(description="The passage that matched best.")
    score: float = Field(description="Higher is better; comparable within one search only.")
    retrievers: list[str] = Field(default_factory=list, description="Which rankings found it: fts, vector.")
    tags: list[str] = Field(default_factory=list)
    status: str = "active"
    updated: str | None = None
    superseded_by: str | None = Field(None, description="The page that replaced this one, if it is superseded.")
    drift: str | None = Field(
        None,
        description='Set when the code files the page is about changed since: "may be stale (src/x.py changed since)".',
    )
    rerank: float | None = Field(None, description="The reranker's score, when one ordered the results.")
    tier: str = Field("personal", description='"personal", or "team": a page of the team tier (path `team:<path>`).')
    author: str | None = Field(None, description="A team page's author (Name <email>).")
    reviewed: bool | None = Field(None, description="A team page: merged into the team's main by someone else.")


class SearchOutput(BaseModel):
    project: ProjectRef
    query: str
    results: list[SearchHit]
    note: str | None = Field(None, description="A warning about the search itself (say, words only, no meaning).")

    def render(self) -> str:
        if not self.results:
            head = f"No pages match {_quote(self.query)} in {self.project.name}."
            return head + (f"\n({self.note})" if self.note else "")
        lines = [f"{len(self.results)} page(s) for {_quote(self.query)} in {self.project.name}:"]
        for i, hit in enumerate(self.results, 1):
            status = "" if hit.status == "active" else f", {hit.status}"
            lines.append(f"\n{i}. {hit.title} [{hit.type}{status}] {hit.path}")
            if hit.superseded_by:
                lines.append(f"   superseded by {hit.superseded_by}")
            if hit.drift:
                lines.append(f"   {hit.drift}")
            if hit.heading and hit.heading != hit.title:
                lines.append(f"   § {hit.heading}")
            lines.extend("   " + line for line in hit.snippet.strip().splitlines())
        if self.note:
            lines.append(f"\n({self.note})")
        return "\n".join(lines)


class LinkOut(BaseModel):
    target: str = Field(description="The link as written: [[target]].")
    path: str | None = Field(description="The page it resolves to; null when no such page exists yet.")


class PageOutput(BaseModel):
    project: ProjectRef
    path: str
    id: str | None
    title: str
    type: str
    tags: list[str]
    status: str
    created: str | None
    updated: str | None
    sources: list[str]
    extra: dict[str, Any] = Field(default_factory=dict, description="Other front-matter keys (superseded_by, ...).")
    body: str
    rev: str | None = Field(None, description="The commit the page was read at; null means the latest.")
    links: list[LinkOut] = Field(default_factory=list, description="The pages this one links to.")
    backlinks: list[str] = Field(default_factory=list, description="The pages that link to this one.")
    note: str | None = None
    drift: str | None = Field(
        None, description="Set when the code files the page is about changed since it was written."
    )

    def front_matter(self) -> dict[str, Any]:
        """The front matter in the usual order (what the page file says)."""
        core = {
            "id": self.id,
            "title": self.title,
            "type": self.type,
            "tags": self.tags,
            "status": self.status,
            "created": self.created,
            "updated": self.updated,
            "sources": self.sources,
        }
        return {**{k: v for k, v in core.items() if v is not None}, **self.extra}

    def render(self) -> str:

        rendered = render_page(
            Page(self.path, self.front_matter(), self.body, has_front_matter=self.id is not None or bool(self.extra))
        )
        parts = [
            f"{self.path}" + (f" at {self.rev[:8]}" if self.rev else "") + f" ({self.project.name})",
            "",
            rendered.rstrip("\n"),
        ]
        if self.links:
            parts += [
                "",
                "Links: " + ", ".join(f"{link.target} -> {link.path or '(no page yet)'}" for link in self.links),
            ]
        if self.backlinks:
            parts += ["", "Linked from: " + ", ".join(self.backlinks)]
        if self.note:
            parts += ["", f"({self.note})"]
        if self.drift:
            parts += ["", f"(This page {self.drift}: check it against the code before relying on it.)"]
        return "\n".join(parts)


class WriteOutput(BaseModel):
    project: ProjectRef
    path: str
    id: str | None
    title: str
    commit: str | None = Field(description="The commit id; null when the page was already exactly so.")
    created: bool
    changed: bool
    operation: str = Field("write", description="write, or the edit operation applied.")
    replaced: int | None = Field(None, description="How many occurrences find_replace replaced.")
    redacted: list[str] = Field(
        default_factory=list, description="Kinds of secret found in what you wrote and replaced before the commit."
    )

    def render(self) -> str:
        if not self.changed:
            return f"{self.path} unchanged (it already read exactly so); nothing committed."
        verb = "created" if self.created else ("updated" if self.operation == "write" else f"edited ({self.operation})")
        extra = f", {self.replaced} occurrence(s) replaced" if self.replaced is not None else ""
        said = f"{verb} {self.path}{extra}: commit {self.commit[:8] if self.commit else '-'} in {self.project.name}."
        return said + (f"\n{redaction_note(self.redacted)}" if self.redacted else "")


def redaction_note(families: list[str]) -> str:
    kinds = ", ".join(dict.fromkeys(families))
    return (
        f"{len(families)} secret(s) ({kinds}) were replaced by [REDACTED:...] before the commit: memory is "
        "a git history that is shared and kept; keep credentials out of pages."
    )


class DeleteOutput(BaseModel):
    project: ProjectRef
    path: str
    commit: str

    def render(self) -> str:
        return (
            f"deleted {self.path}: commit {self.commit[:8]} in {self.project.name}. It stays in git "
            f"history (`history` with this path shows it)."
        )


class RecentPage(BaseModel):
    path: str
    title: str
    type: str
    status: str
    tags: list[str]
    updated: str | None
    commit: str = Field(description="The last commit that changed the page.")
    author: str
    subject: str


class RecentOutput(BaseModel):
    project: ProjectRef
    pages: list[RecentPage]

    def render(self) -> str:
        if not self.pages:
            return f"No pages yet in {self.project.name}."
        lines = [f"{len(self.pages)} most recently changed page(s) in {self.project.name}:"]
        for p in self.pages:
            lines.append(f"- {p.title} [{p.type}] {p.path} (updated {p.updated or '?'} by {p.author}, {p.commit[:8]})")
        return "\n".join(lines)


class CommitOut(BaseModel):
    id: str
    short: str
    author: str
    email: str
    time: str
    subject: str
    message: str
    trailers: dict[str, str]
    paths: list[str]


class HistoryOutput(BaseModel):
    project: ProjectRef
    page: str | None = Field(description="The page whose history this is; null for the whole wiki.")
    commits: list[CommitOut]

    def render(self) -> str:
        what = self.page or "the wiki"
        if not self.commits:
            return f"No history for {what} in {self.project.name}."
        lines = [f"History of {what} in {self.project.name}, newest first:"]
        for c in self.commits:
            session = c.trailers.get("Session-Id")
            lines.append(f"- {c.short} {c.time} {c.author}: {c.subject}" + (f" (session {session})" if session else ""))
        return "\n".join(lines)


class LinksOutput(BaseModel):
    project: ProjectRef
    path: str
    links: list[LinkOut] = Field(description="The pages this one links to, in order.")
    backlinks: list[str] = Field(description="The pages that link to this one.")

    def render(self) -> str:
        lines = [f"{self.path} ({self.project.name})"]
        lines.append("Links to:" if self.links else "Links to: nothing")
        lines += [f"- [[{link.target}]] -> {link.path or '(no page yet)'}" for link in self.links]
        lines.append("Linked from:" if self.backlinks else "Linked from: nothing")
        lines += [f"- {path}" for path in self.backlinks]
        return "\n".join(lines)


class HandoffOutput(BaseModel):
    project: ProjectRef
    text: str | None = Field(None, description="Exactly what a new session is told; null when there is none.")
    handoffs: list[str] = Field(default_factory=list, description="The handoff pages it comes from.")

    def render(self) -> str:
        if not self.text:
            return f"No handoff yet in {self.project.name}: no earlier session left one."
        return self.text


class FeedbackOutput(BaseModel):
    project: ProjectRef
    path: str
    verdict: str
    status: str = Field(description="The page's status after the mark.")
    commit: str | None = Field(description="The commit that records the mark; null when the page already read so.")
    reason: str | None = None

    def render(self) -> str:
        done = f"commit {self.commit[:8]}" if self.commit else "it already read so; nothing committed"
        return f"{self.path} marked {self.verdict} (status {self.status}; {done})."


class SupersedeOutput(BaseModel):
    project: ProjectRef
    old: str
    new: str
    commit: str | None
    reason: str | None = None

    def render(self) -> str:
        done = f"commit {self.commit[:8]}" if self.commit else "it already read so; nothing committed"
        return f"{self.old} is superseded by {self.new} ({done}); it is no longer handed out."
