"""The git index file format (`.git/index`), read: the one parser of it, for the code
repository's index (`pages.drift`, on the hook path) and the wiki's own (`store.gitindex`,
which also writes it back).

An index is a header (`DIRC`, version 2 to 4, the number of entries), then the entries in
path order: stat data, mode, blob id (20 bytes; 32 in a sha256 repository), flags, the path
(in version 4, written as what it shares with the previous entry's path and the rest), padded
with NULs to a multiple of 8 bytes in versions 2 and 3.

Standard library only, no `typing` at run time: the hook path loads it.
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Iterator, Sequence

HEADER = struct.Struct(">4sLL")
#: The stat data git compares: mtime seconds, mtime nanoseconds, inode, size.
STAT = struct.Struct(">8xLL4xL4x4x4xL")
EXTENDED = 0x4000
NAME_MASK = 0x0FFF


def header(data: bytes) -> tuple[int, int]:
    """(version, number of entries) of an index file's bytes; ValueError if git wrote no
    index of a version we read."""
    if len(data) < HEADER.size:
        raise ValueError(f"cut short ({len(data)} bytes)")
    signature, version, count = HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise ValueError(f"not a git index (version {version})")
    return version, count


def entries(data: bytes, version: int, count: int, width: int = 20) -> Iterator[tuple[bytes, int, int, int]]:
    """(path, offset of the entry, offset of the next one, flags) of each entry, in order.
    The entry's fixed fields (stat data, mode, blob id of `width` bytes) are at its offset
    in every version. A torn file raises IndexError, ValueError or struct.error."""
    flags_at = 40 + width
    offset = HEADER.size
    previous = b""
    for _ in range(count):
        flags = (data[offset + flags_at] << 8) | data[offset + flags_at + 1]
        head = flags_at + 2 + (2 if flags & EXTENDED and version >= 3 else 0)
        if version == 4:
            # A varint of bytes to strip from the previous path, then the rest of this one.
            at = offset + head
            byte = data[at]
            strip = byte & 0x7F
            at += 1
            while byte & 0x80:
                byte = data[at]
                strip = ((strip + 1) << 7) | (byte & 0x7F)
                at += 1
            end = data.index(b"\0", at)
            name = previous[: len(previous) - strip] + data[at:end]
            previous = name
            next_offset = end + 1
        else:
            length = flags & NAME_MASK
            if length == NAME_MASK:
                length = data.index(b"\0", offset + head) - offset - head
            name = data[offset + head : offset + head + length]
            next_offset = offset + ((head + length + 8) & ~7)
        yield name, offset, next_offset, flags
        offset = next_offset


def u32(value: int) -> int:
    """A stat value as the index stores it (its low 32 bits)."""
    return value & 0xFFFFFFFF


def stat_matches(recorded: Sequence[int], st: os.stat_result) -> bool:
    """The file is what its entry recorded (`recorded`: mtime s, mtime ns, inode, size, as
    `STAT` reads them), by mtime, size and inode, as git decides. An entry written without
    stat data never matches: git re-hashes that file too."""
    mtime_s, mtime_ns, ino, size = recorded[0], recorded[1], recorded[2], recorded[3]
    if mtime_s == 0 and mtime_ns == 0:
        return False
    return (
        mtime_s == u32(int(st.st_mtime))
        and mtime_ns == u32(st.st_mtime_ns % 1_000_000_000)
        and size == u32(st.st_size)
        and ino == u32(st.st_ino)
    )
