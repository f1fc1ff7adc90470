"""Errors a user (or an agent) can cause. The CLI prints them as one line; the MCP
server returns them as tool errors. Anything else is a bug and keeps its traceback."""

from __future__ import annotations


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


class DiskFullError(WikiMemoryError):
    """The disk (or the quota) is full."""


def is_disk_full(error: BaseException) -> bool:
    """Is this OSError a full disk or quota (ENOSPC, EDQUOT)?"""
    import errno

    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


class full_disk_is_one_line:  # (named as the function it reads as: `with full_disk_is_one_line(root):`)
    """Inside it, a full disk is DiskFullError (see `disk_full`). A class, not contextlib:
    the hook path imports this module, and contextlib costs it a few milliseconds."""

    def __init__(self, where: object) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        if isinstance(error, OSError) and is_disk_full(error):
            raise disk_full(error, self.where) from None


def disk_full(error: OSError, where: object) -> DiskFullError:
    """The one line a full disk is, whatever was being written."""
    return DiskFullError(
        f"no space left on device ({error.filename or where}): free some space and run it again; "
        "nothing half-written is left behind (a commit that had landed is finished by the next write)"
    )
