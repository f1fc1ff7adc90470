"""wiki-memory: one shared, long-term memory per project for AI coding agents.

Memories are Markdown pages with YAML front matter in a git repository per project
(`store`), indexed for search (`index`), fed by the agents' lifecycle hooks
(`capture`) and summarised into handoffs (`consolidate`).
"""

__version__ = "0.1.0"
