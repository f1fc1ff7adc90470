"""`Memory`: one project's memory, the library every front end calls.

    from wiki_memory.memory import Actor, Memory
    with Memory.at("~/src/widgets") as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http"])
        for hit in memory.search("how often do we retry").results:
            print(hit.path, hit.snippet)
        memory.edit("Retry policy", "append", text="Except for 429s.", actor=Actor("codex", "s1"))

It opens (or, on the first write, creates) the project's store and keeps its search
index attached, and owns every memory operation with its rules: the CLI, the MCP server,
the hook process and the web viewer parse their input, call one method and render what
it returns. Not thread-safe: one thread per Memory (the MCP server runs each project on a
thread of its own).
"""

from __future__ import annotations

from wiki_memory.memory.history import Browsing
from wiki_memory.memory.knowledge import Knowledge
from wiki_memory.memory.pagetext import PageTexts
from wiki_memory.memory.recalling import Recalling
from wiki_memory.memory.recent import Recent
from wiki_memory.memory.review import Reviewing
from wiki_memory.memory.sessions import Sessions


class Memory(Knowledge, Recent, Sessions, Recalling, Browsing, Reviewing, PageTexts):
    """One project's memory (see the module docstring); `Memory(project)` or `Memory.at(dir)`."""
