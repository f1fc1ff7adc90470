"""The memory layer: one `Memory` per project, every memory operation and its rules.

Front ends (`cli`, `mcp`, `hook`, the web viewer) call it and nothing below it for these
operations; it calls `store`, `index`, `consolidate` and `sync`.
"""

from wiki_memory.memory.base import NoMemoryError, write_project_file
from wiki_memory.memory.edits import OPERATIONS, EditError
from wiki_memory.memory.history import Activity, CommitView, FileDiff, Graph, GraphNode, PageChange, PageHistory
from wiki_memory.memory.imports import import_transcripts
from wiki_memory.memory.knowledge import DistilledPage, DistillReport
from wiki_memory.memory.lifecycle import VERDICTS
from wiki_memory.memory.memory import Memory
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
from wiki_memory.memory.review import AnchorState, ReviewItem
from wiki_memory.memory.rules import InputError
from wiki_memory.memory.secrets import Forgotten, ScanReport

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
    "write_project_file",
]
