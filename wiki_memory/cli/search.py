"""Commands on the search index: search, reindex, links."""

from __future__ import annotations

from typing import Any

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import Progress, echo_json, warnings_to_stderr
from wiki_memory.pages import PAGE_TYPES, STATUSES

SNIPPET_CHARS = 300  # in the plain-text listing; --json and --max-chars give whole passages


@main.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 200), default=8, show_default=True, help="How many pages.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "fts", "vector"]),
    default="hybrid",
    show_default=True,
    help="hybrid: words and meaning fused; fts: words only; vector: meaning only.",
)
@click.option(
    "--type",
    "page_type",
    type=click.Choice(PAGE_TYPES),
    multiple=True,
    help="Only pages of this type (repeat for several).",
)
@click.option("--tag", "tags", multiple=True, help="Only pages with this tag (repeat: any of them).")
@click.option(
    "--status",
    type=click.Choice((*STATUSES, "any")),
    help="Only pages with this status (any: every status). Default: all but wrong, superseded and archived.",
)
@click.option("--since", metavar="WHEN", help="Only pages updated since WHEN (2026-11-01, 7d, 2w).")
@click.option(
    "--max-chars",
    type=click.IntRange(1, None),
    metavar="N",
    help="Fit the snippets into N characters: the best context that fits.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a list of result objects.")
@click.option(
    "--explain", is_flag=True, help="Show each page's words, meaning, fusion and rerank scores and why it ranked there."
)
@pass_app
def search(
    app: App,
    query: str,
    k: int,
    mode: str,
    page_type: tuple[str, ...],
    tags: tuple[str, ...],
    status: str | None,
    since: str | None,
    max_chars: int | None,
    as_json: bool,
    explain: bool,
) -> None:
    """Search memory by words and by meaning; print the best pages with their best passage.

    Any text is a query: quotes, `*`, `-`, NEAR are plain words. Decisions, gotchas and
    procedures rank above session and handoff logs unless you ask what happened. Wrong,
    superseded and archived pages are left out unless --status asks for them (a superseded
    page names its replacement); a page whose anchored code changed says "may be stale".
    Without an embedding model, searches by words alone.

    \b
    Examples:
      wiki-memory search "tests hang on the build server"
      wiki-memory search ERR_CONN_RESET --mode fts --json
      wiki-memory search "auth retries" --type decision --since 30d --max-chars 4000
      wiki-memory search "release with goreleaser" --status any
      wiki-memory search "why do retries double-charge?" --explain
    """
    memory = app.searching
    with warnings_to_stderr():
        report = memory.search(
            query,
            k=k,
            mode=mode,
            type=list(page_type) or None,
            tag=list(tags) or None,
            status=status,
            since=since,
            max_chars=max_chars,
        )
    results = report.results
    if not memory.exists:  # nothing to search (and no index was created for it)
        if as_json:
            echo_json([])
        click.echo(f"no match: no wiki yet for this project ({memory.wiki}); run `wiki-memory init`", err=True)
        return
    if as_json:
        echo_json([r.as_dict() | {"drift": report.drift.get(r.path)} for r in results])
        return
    if not results:
        click.echo("no match", err=True)
        return
    for n, r in enumerate(results, 1):
        found = "+".join(r.retrievers)
        status_note = f" ({r.status})" if r.status != "active" else ""
        click.echo(f"{n}. {r.title}{status_note}  [{r.type}] {r.path}  ({found} {r.score:.4f})")
        if explain:
            click.echo(f"   {_why(n, r)}")
        if r.superseded_by:
            click.echo(f"   superseded by {r.superseded_by}")
        if r.path in report.drift:
            click.echo(f"   {report.drift[r.path]}")
        if r.heading and r.heading != r.title:
            click.echo(f"   § {r.heading}")
        snippet = r.snippet if max_chars else _short(r.snippet, SNIPPET_CHARS)
        for line in snippet.splitlines():
            if line.strip():
                click.echo(f"   {line}")


def _why(rank: int, r: Any) -> str:
    """One line of --explain: the page's scores and why it ranked where it did."""

    def show(value: float | None, missing: str) -> str:
        return missing if value is None else f"{value:.3f}"

    scores = (
        f"words {show(r.coverage, 'not searched')}, meaning {show(r.similarity, 'not searched')}, "
        f"fusion {r.score:.4f}, rerank {show(r.rerank, 'off')}"
    )
    if r.fused_rank is None:
        return f"{scores}: fused order"
    if r.fused_rank == rank:
        return f"{scores}: fused #{r.fused_rank}, kept there by the reranker"
    moved = "up" if r.fused_rank > rank else "down"
    return f"{scores}: fused #{r.fused_rank}, moved {moved} by the reranker"


def _short(text: str, limit: int) -> str:
    from wiki_memory.memory import cut  # deferred: the index's snippet module, only for --explain

    return cut(" ".join(text.split()), limit)


@main.command()
@click.option("--full", is_flag=True, help="Drop the index and rebuild it from the wiki.")
@click.option("--no-embed", is_flag=True, help="Index words only; vectors are computed later.")
@click.option("--json", "as_json", is_flag=True, help="Print what the sync did as JSON.")
@pass_app
def reindex(app: App, full: bool, no_embed: bool, as_json: bool) -> None:
    """Bring the search index up to date with the wiki (only changed pages are redone).

    The index is derived from the wiki's git history and can always be rebuilt: `--full`
    deletes it and indexes every page again.

    \b
    Examples:
      wiki-memory reindex
      wiki-memory reindex --full --json
    """
    with warnings_to_stderr(), Progress(quiet=as_json) as progress:
        stats = app.memory.reindex(full=full, embed=not no_embed, progress=progress)
    if as_json:
        echo_json(stats.as_dict())
        return
    click.echo(
        f"{stats.added} added, {stats.updated} updated, {stats.removed} removed, "
        f"{stats.unchanged} unchanged; {stats.embedded} chunks embedded, {stats.pending} pending "
        f"({stats.seconds:.2f} s)"
    )
    for error in stats.errors:
        click.echo(f"indexed as plain text: {error}", err=True)
    for note in stats.cut:
        click.echo(f"indexed in part: {note} (`[pages] large_kb` in config.toml)", err=True)


@main.command()
@click.argument("page")
@click.option("--json", "as_json", is_flag=True, help="Print links and backlinks as JSON.")
@pass_app
def links(app: App, page: str, as_json: bool) -> None:
    """Show a page's [[links]] (and where they lead) and the pages that link to it.

    \b
    Examples:
      wiki-memory links "JWT refresh must happen before the retry"
      wiki-memory links decisions/retry-policy.md --json
    """
    view = app.memory.links(page)
    path, out_links, back = view.path, view.links, view.backlinks
    if as_json:
        echo_json({"path": path, "links": [link.as_dict() for link in out_links], "backlinks": back})
        return
    click.echo(f"{path}")
    click.echo(f"links ({len(out_links)}):")
    for link in out_links:
        target = link.target + (f"#{link.heading}" if link.heading else "")
        click.echo(f"  [[{target}]] -> {link.path or '(no such page yet)'}")
    click.echo(f"backlinks ({len(back)}):")
    for source in back:
        click.echo(f"  {source}")
