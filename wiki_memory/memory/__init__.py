"""The memory layer: one `Memory` per project, every memory operation and its rules.

Front ends (`cli`, `mcp`, `hook`, the web viewer) call it and nothing below it for these
operations; it calls `store`, `index`, `consolidate` and `sync`.
"""

from typing import TYPE_CHECKING

from wiki_memory import lazy

if TYPE_CHECKING:
    from wiki_memory.capture.adapter import agent_name
    from wiki_memory.consolidate.importer import default_transcripts, find_transcripts
    from wiki_memory.consolidate.state import state_dir
    from wiki_memory.index import cut
    from wiki_memory.index.query import STOPWORDS
    from wiki_memory.memory.access import Admission, Grant, Tokens
    from wiki_memory.memory.catalog import parse_age, project_summaries, prune_sessions, session_rows
    from wiki_memory.memory.context import NoMemoryError, project_paths, write_project_file
    from wiki_memory.memory.distilling import DistilledPage, DistillReport
    from wiki_memory.memory.edits import OPERATIONS, EditError
    from wiki_memory.memory.history import Activity, CommitView, FileDiff, Graph, GraphNode, PageChange, PageHistory
    from wiki_memory.memory.imports import import_transcripts
    from wiki_memory.memory.instructions import import_instructions
    from wiki_memory.memory.instructions_export import TARGETS, export_block, remove_block
    from wiki_memory.memory.memory import Memory
    from wiki_memory.memory.page_problems import AnchorState, ReviewItem
    from wiki_memory.memory.pagetext import PageText
    from wiki_memory.memory.portable import export_wiki, import_wiki
    from wiki_memory.memory.projects import known_projects, named_project
    from wiki_memory.memory.reach import Reach
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
    from wiki_memory.memory.searching import Searching
    from wiki_memory.memory.secrets import Forgotten, ScanReport
    from wiki_memory.memory.settings_view import settings_in_force
    from wiki_memory.memory.share_records import ShareProposal, ShareResult
    from wiki_memory.memory.team import TeamStatus
    from wiki_memory.memory.team_share import PERSONAL
    from wiki_memory.memory.writing import EditRequest
    from wiki_memory.store import Edit
    from wiki_memory.sync import SyncReport
    from wiki_memory.watch import Watcher

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
    # What the front ends use besides `Memory` (they import nothing else of the layer's, and
    # nothing below it: tests/test_layers.py).
    **dict.fromkeys(("Admission", "Grant", "Tokens"), "wiki_memory.memory.access"),
    **dict.fromkeys(("parse_age", "project_summaries", "prune_sessions", "session_rows"), "wiki_memory.memory.catalog"),
    **dict.fromkeys(("TARGETS", "export_block", "remove_block"), "wiki_memory.memory.instructions_export"),
    "import_instructions": "wiki_memory.memory.instructions",
    **dict.fromkeys(("export_wiki", "import_wiki"), "wiki_memory.memory.portable"),
    "named_project": "wiki_memory.memory.projects",
    "Reach": "wiki_memory.memory.reach",
    "Searching": "wiki_memory.memory.searching",
    "settings_in_force": "wiki_memory.memory.settings_view",
    "TeamStatus": "wiki_memory.memory.team",
    **dict.fromkeys(("ShareProposal", "ShareResult"), "wiki_memory.memory.share_records"),
    "PERSONAL": "wiki_memory.memory.team_share",
    # ... and of the parts below it, through here.
    "agent_name": "wiki_memory.capture.adapter",
    **dict.fromkeys(("default_transcripts", "find_transcripts"), "wiki_memory.consolidate.importer"),
    "state_dir": "wiki_memory.consolidate.state",
    "cut": "wiki_memory.index",
    "STOPWORDS": "wiki_memory.index.query",
    "Edit": "wiki_memory.store",
    "SyncReport": "wiki_memory.sync",
    "Watcher": "wiki_memory.watch",
}


__getattr__ = lazy.names(__name__, _WHERE, globals())


__all__ = [
    "OPERATIONS",
    "PERSONAL",
    "STOPWORDS",
    "TARGETS",
    "VERDICTS",
    "Activity",
    "Actor",
    # the front ends' other names (see _WHERE)
    "Admission",
    "AnchorState",
    "CommitView",
    "Deleted",
    "DistillReport",
    "DistilledPage",
    "Edit",
    "EditError",
    "EditRequest",
    "FileDiff",
    "Forgotten",
    "Grant",
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
    "Reach",
    "RecentPage",
    "Review",
    "ReviewAction",
    "ReviewItem",
    "ScanReport",
    "SearchReport",
    "Searching",
    "ShareProposal",
    "ShareResult",
    "Superseded",
    "SyncReport",
    "TeamStatus",
    "Tokens",
    "Watcher",
    "Written",
    "agent_name",
    "cut",
    "default_transcripts",
    "export_block",
    "export_wiki",
    "find_transcripts",
    "import_instructions",
    "import_transcripts",
    "import_wiki",
    "known_projects",
    "named_project",
    "parse_age",
    "project_paths",
    "project_summaries",
    "prune_sessions",
    "remove_block",
    "session_rows",
    "settings_in_force",
    "state_dir",
    "write_project_file",
]
