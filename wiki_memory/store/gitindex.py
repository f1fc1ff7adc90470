"""The git index (`.git/index`), read and written without rebuilding it entry by entry.

Why our own: dulwich parses and re-serialises every entry on each commit, which makes a
commit in a big wiki slow. A commit of one page changes one entry, so we keep each entry as the
raw bytes it was read as, decode stat fields only where they are compared, and splice in
only what changed. Extensions are dropped on write: the cache-tree (TREE) would be stale,
and git rebuilds what it needs. Version 4 (path-compressed) indexes are read in full and
written back as version 2. The file format is read by `pages.gitindex`, the one parser the
code repository's index (drift) goes through too.
"""

from __future__ import annotations

import hashlib
import os
import struct

from wiki_memory.pages import gitindex as index_format
from wiki_memory.pages.gitindex import HEADER, NAME_MASK, STAT, u32

# ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size, sha, flags
_ENTRY = struct.Struct(">LLLLLLLLLL20sH")
_MODE = struct.Struct(">24xL")

Entries = dict[bytes, bytes]  # path -> the raw entry


def _padded(raw: bytes) -> bytes:
    """An entry's fields and path, NUL-terminated and padded to a multiple of 8 bytes."""
    return raw + b"\0" * (8 - (len(raw) % 8))  # 1 to 8 NULs: the terminator plus padding


def make_entry(path: bytes, st: os.stat_result, hexsha: bytes, mode: int) -> bytes:
    """The raw entry for a file just written (its lstat result) with the given blob id."""
    return _padded(
        _ENTRY.pack(
            u32(int(st.st_ctime)),
            u32(st.st_ctime_ns % 1_000_000_000),
            u32(int(st.st_mtime)),
            u32(st.st_mtime_ns % 1_000_000_000),
            u32(st.st_dev),
            u32(st.st_ino),
            mode,
            u32(st.st_uid),
            u32(st.st_gid),
            u32(st.st_size),
            bytes.fromhex(hexsha.decode("ascii")),
            min(len(path), NAME_MASK),
        )
        + path
    )


def empty_entry(path: bytes, hexsha: bytes, mode: int) -> bytes:
    """An entry with no stat data: git (and we) re-hash the file before trusting it."""
    sha = bytes.fromhex(hexsha.decode("ascii"))
    return _padded(_ENTRY.pack(0, 0, 0, 0, 0, 0, mode, 0, 0, 0, sha, min(len(path), NAME_MASK)) + path)


def entry_sha(raw: bytes) -> bytes:
    """The entry's blob id, as 40 hex digits (bytes)."""
    return raw[40:60].hex().encode("ascii")


def entry_mode(raw: bytes) -> int:
    return _MODE.unpack_from(raw)[0]


def stat_matches(raw: bytes, st: os.stat_result) -> bool:
    """The file is what the entry says it is, by mtime, size and inode (as git decides)."""
    return index_format.stat_matches(STAT.unpack_from(raw), st)


class IndexDamaged(ValueError):
    """The index file is not one git wrote whole (bad checksum, cut short, garbage): the
    caller rebuilds it from HEAD, as `git read-tree` would."""


def read_index(path: str | os.PathLike[str]) -> tuple[int, Entries]:
    """(version, raw entries by path) of an index file; a missing file is an empty index;
    a damaged one is IndexDamaged."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return 2, {}
    if len(data) < HEADER.size + 20:
        raise IndexDamaged(f"{path}: cut short ({len(data)} bytes)")
    digest = data[-20:]
    # `index.skipHash` writes no checksum (all zeros).
    if digest != b"\0" * 20 and hashlib.sha1(data[:-20]).digest() != digest:
        raise IndexDamaged(f"{path}: its checksum does not match")
    try:
        return _parse(data)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
        raise IndexDamaged(f"{path}: unreadable ({e})") from None


def _parse(data: bytes) -> tuple[int, Entries]:
    """Each entry kept as the bytes it was read as; a version 4 index's (whose paths are
    compressed) re-made as version 2 entries, and the index written back as version 2."""
    version, count = index_format.header(data)
    entries: Entries = {}
    for name, offset, end, _flags in index_format.entries(data, version, count):
        if version == 4:
            fields = _ENTRY.unpack_from(data, offset)
            entries[name] = _padded(_ENTRY.pack(*fields[:-1], min(len(name), NAME_MASK)) + name)
        else:
            entries[name] = data[offset:end]
    return (2 if version == 4 else version), entries


def write_index(path: str | os.PathLike[str], version: int, entries: Entries) -> None:
    """Write entries (sorted by path, as git requires) to `path`, with its checksum."""
    ordered = sorted(entries)
    body = HEADER.pack(b"DIRC", version, len(ordered)) + b"".join(entries[name] for name in ordered)
    with open(path, "wb") as f:
        f.write(body)
        f.write(hashlib.sha1(body).digest())
