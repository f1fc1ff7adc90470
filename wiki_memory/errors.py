"""Errors a user (or an agent) can cause. The CLI prints them as one line; the MCP
server returns them as tool errors. Anything else is a bug and keeps its traceback."""


class WikiMemoryError(Exception):
    """Base class: a clear, one-line message about something the caller can fix."""


class PageError(WikiMemoryError):
    """A page cannot be parsed (broken front matter) or is not valid."""


class PathError(WikiMemoryError):
    """A page path is not acceptable: it escapes the wiki or is not a Markdown file."""


class NotFoundError(WikiMemoryError):
    """A page, revision or commit that does not exist."""


class ConflictError(WikiMemoryError):
    """The change cannot be applied without overwriting something else."""
