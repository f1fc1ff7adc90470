"""What the parts of a `Store` share: the wiki's root and git directory, the dulwich
repository, the writer lock, this machine's name and the observers of landed commits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dulwich.repo import Repo

from wiki_memory.errors import NotFoundError
from wiki_memory.store.litter import clean_after_dead_owner
from wiki_memory.store.lock import WriterLock
from wiki_memory.store.records import machine_name


class Context:
    """One open wiki, as every part of its `Store` sees it."""

    def __init__(self, root: Path | str):
        self.root = Path(root).absolute()
        if not (self.root / ".git").is_dir():
            raise NotFoundError(f"{self.root} is not a wiki (no git repository); run `wiki-memory init`")
        self.repo = Repo(str(self.root))
        self.git_dir = self.root / ".git"
        self.state_dir = self.git_dir / "wiki-memory"
        self.state_dir.mkdir(exist_ok=True)
        self.lock = WriterLock(self.git_dir / "wiki-memory.lock", recover=self._after_dead_writer)
        # Which machine wrote a commit (a `Host:` trailer): sync names conflict copies by it.
        self.host = machine_name()
        # Observers (the search index) hear about every landed commit: (commit id, changed paths).
        self.on_commit: list[Callable[[str, tuple[str, ...]], None]] = []

    def close(self) -> None:
        self.repo.close()

    def _after_dead_writer(self, since: float) -> None:
        """A writer died holding the lock: its lock files and temporary files go (see
        `litter`); what it had committed is finished by the next commit (`Committer.recover`)."""
        clean_after_dead_owner(self.git_dir, self.root, since)
