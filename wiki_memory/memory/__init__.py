"""The memory layer: one `Memory` per project, every memory operation and its rules.

Front ends (`cli`, `mcp`, `hook`, the web viewer) call it and nothing below it for these
operations; it calls `store`, `index`, `consolidate` and `sync`.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiki_memory.memory.context import NoMemoryError, project_paths, write_project_file
    from wiki_memory.memory.distilling import DistilledPage, DistillReport
    from wiki_memory.memory.edits import OPERATIONS, EditError
    from wiki_memory.memory.history import Activity, CommitView, FileDiff, Graph, GraphNode, PageChange, PageHistory
    from wiki_memory.memory.imports import import_transcripts
    from wiki_memory.memory.memory import Memory
    from wiki_memory.memory.page_problems import AnchorState, ReviewItem
    from wiki_memory.memory.pagetext import PageText
    from wiki_memory.memory.projects import known_projects
    from wiki_memory.memory.records import (
        Actor,
        Deleted,
        History,
        LinksView,
        Marked,
        PageRow,
        PageView,
        RecentPage,
        Review,
        ReviewAction,
        SearchReport,
        Superseded,
        Written,
    )
    from wiki_memory.memory.rules import VERDICTS, InputError
    from wiki_memory.memory.secrets import Forgotten, ScanReport
    from wiki_memory.memory.writing import EditRequest

# Each name is imported from its module on first use (PEP 562): a front end that needs one
# light part (the search front, the rules) does not pay for the store, git and the rest.
_WHERE = {
    "NoMemoryError": "wiki_memory.memory.context",
    "write_project_file": "wiki_memory.memory.context",
    "project_paths": "wiki_memory.memory.context",
    "OPERATIONS": "wiki_memory.memory.edits",
    "EditError": "wiki_memory.memory.edits",
    "Activity": "wiki_memory.memory.history",
    "CommitView": "wiki_memory.memory.history",
    "FileDiff": "wiki_memory.memory.history",
    "Graph": "wiki_memory.memory.history",
    "GraphNode": "wiki_memory.memory.history",
    "PageChange": "wiki_memory.memory.history",
    "PageHistory": "wiki_memory.memory.history",
    "import_transcripts": "wiki_memory.memory.imports",
    "DistilledPage": "wiki_memory.memory.distilling",
    "DistillReport": "wiki_memory.memory.distilling",
    "VERDICTS": "wiki_memory.memory.rules",
    "Memory": "wiki_memory.memory.memory",
    "PageText": "wiki_memory.memory.pagetext",
    "known_projects": "wiki_memory.memory.projects",
    "Actor": "wiki_memory.memory.records",
    "Deleted": "wiki_memory.memory.records",
    "History": "wiki_memory.memory.records",
    "LinksView": "wiki_memory.memory.records",
    "Marked": "wiki_memory.memory.records",
    "PageRow": "wiki_memory.memory.records",
    "PageView": "wiki_memory.memory.records",
    "RecentPage": "wiki_memory.memory.records",
    "Review": "wiki_memory.memory.records",
    "ReviewAction": "wiki_memory.memory.records",
    "SearchReport": "wiki_memory.memory.records",
    "Superseded": "wiki_memory.memory.records",
    "Written": "wiki_memory.memory.records",
    "AnchorState": "wiki_memory.memory.page_problems",
    "ReviewItem": "wiki_memory.memory.page_problems",
    "InputError": "wiki_memory.memory.rules",
    "Forgotten": "wiki_memory.memory.secrets",
    "ScanReport": "wiki_memory.memory.secrets",
    "EditRequest": "wiki_memory.memory.writing",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "OPERATIONS",
    "VERDICTS",
    "Activity",
    "Actor",
    "AnchorState",
    "CommitView",
    "Deleted",
    "DistillReport",
    "DistilledPage",
    "EditError",
    "EditRequest",
    "FileDiff",
    "Forgotten",
    "Graph",
    "GraphNode",
    "History",
    "InputError",
    "LinksView",
    "Marked",
    "Memory",
    "NoMemoryError",
    "PageChange",
    "PageHistory",
    "PageRow",
    "PageText",
    "PageView",
    "RecentPage",
    "Review",
    "ReviewAction",
    "ReviewItem",
    "ScanReport",
    "SearchReport",
    "Superseded",
    "Written",
    "import_transcripts",
    "known_projects",
    "project_paths",
    "write_project_file",
]
