"""The git index (`.git/index`), read and written without rebuilding it entry by entry.

Why our own: dulwich parses and re-serialises every entry on each commit, which makes a
commit in a big wiki slow. A commit of one page changes one entry, so we keep each entry as the
raw bytes it was read as, decode stat fields only where they are compared, and splice in
only what changed. Extensions are dropped on write: the cache-tree (TREE) would be stale,
and git rebuilds what it needs. Version 4 (path-compressed) indexes are read in full and
written back as version 2.
"""

from __future__ import annotations

import hashlib
import os
import struct

_HEADER = struct.Struct(">4sLL")
# ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size, sha, flags
_ENTRY = struct.Struct(">LLLLLLLLLL20sH")
_STAT = struct.Struct(">8xLL4xL4x4x4xL20s")  # mtime s, mtime ns, ino, size, sha (mode apart)
_MODE = struct.Struct(">24xL")
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF

Entries = dict[bytes, bytes]  # path -> the raw entry


def _u32(value: int) -> int:
    return value & 0xFFFFFFFF


def make_entry(path: bytes, st: os.stat_result, hexsha: bytes, mode: int) -> bytes:
    """The raw entry for a file just written (its lstat result) with the given blob id."""
    raw = (
        _ENTRY.pack(
            _u32(int(st.st_ctime)),
            _u32(st.st_ctime_ns % 1_000_000_000),
            _u32(int(st.st_mtime)),
            _u32(st.st_mtime_ns % 1_000_000_000),
            _u32(st.st_dev),
            _u32(st.st_ino),
            mode,
            _u32(st.st_uid),
            _u32(st.st_gid),
            _u32(st.st_size),
            bytes.fromhex(hexsha.decode("ascii")),
            min(len(path), _NAME_MASK),
        )
        + path
    )
    return raw + b"\0" * (8 - (len(raw) % 8))  # 1 to 8 NULs: the terminator plus padding


def empty_entry(path: bytes, hexsha: bytes, mode: int) -> bytes:
    """An entry with no stat data: git (and we) re-hash the file before trusting it."""
    raw = (
        _ENTRY.pack(0, 0, 0, 0, 0, 0, mode, 0, 0, 0, bytes.fromhex(hexsha.decode("ascii")), min(len(path), _NAME_MASK))
        + path
    )
    return raw + b"\0" * (8 - (len(raw) % 8))


def entry_sha(raw: bytes) -> bytes:
    """The entry's blob id, as 40 hex digits (bytes)."""
    return raw[40:60].hex().encode("ascii")


def entry_mode(raw: bytes) -> int:
    return _MODE.unpack_from(raw)[0]


def stat_matches(raw: bytes, st: os.stat_result) -> bool:
    """The file is what the entry says it is, by mtime, size and inode (as git decides)."""
    mtime_s, mtime_ns, ino, size, _sha = _STAT.unpack_from(raw)
    if mtime_s == 0 and mtime_ns == 0:
        return False
    return (
        mtime_s == _u32(int(st.st_mtime))
        and mtime_ns == _u32(st.st_mtime_ns % 1_000_000_000)
        and size == _u32(st.st_size)
        and ino == _u32(st.st_ino)
    )


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
    if len(data) < _HEADER.size + 20:
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
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise ValueError(f"not a git index (version {version})")
    if version == 4:
        return 2, _read_v4(data, count)
    entries: Entries = {}
    offset = _HEADER.size
    for _ in range(count):
        flags = (data[offset + 60] << 8) | data[offset + 61]
        head = 64 if flags & _EXTENDED else 62
        length = flags & _NAME_MASK
        if length == _NAME_MASK:
            length = data.index(b"\0", offset + head) - offset - head
        end = offset + ((head + length + 8) & ~7)
        entries[data[offset + head : offset + head + length]] = data[offset:end]
        offset = end
    return version, entries


def _read_v4(data: bytes, count: int) -> Entries:
    entries: Entries = {}
    offset = _HEADER.size
    previous = b""
    for _ in range(count):
        fields = _ENTRY.unpack_from(data, offset)
        flags = fields[-1]
        offset += _ENTRY.size + (2 if flags & _EXTENDED else 0)
        # A varint of bytes to strip from the previous path, then the rest of this one.
        byte = data[offset]
        strip = byte & 0x7F
        offset += 1
        while byte & 0x80:
            byte = data[offset]
            strip = ((strip + 1) << 7) | (byte & 0x7F)
            offset += 1
        end = data.index(b"\0", offset)
        name = previous[: len(previous) - strip] + data[offset:end]
        offset = end + 1
        previous = name
        raw = _ENTRY.pack(*fields[:-1], min(len(name), _NAME_MASK)) + name
        entries[name] = raw + b"\0" * (8 - (len(raw) % 8))
    return entries


def write_index(path: str | os.PathLike[str], version: int, entries: Entries) -> None:
    """Write entries (sorted by path, as git requires) to `path`, with its checksum."""
    ordered = sorted(entries)
    body = _HEADER.pack(b"DIRC", version, len(ordered)) + b"".join(entries[name] for name in ordered)
    with open(path, "wb") as f:
        f.write(body)
        f.write(hashlib.sha1(body).digest())
