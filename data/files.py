"""Files written whole or not at all.

Each writer puts the data in a fresh temporary file in the destination's own folder (a unique
name from `tempfile`, so two writers never share one) and then renames it over the
destination (`os.replace`, atomic on one file system): a reader sees the old file or the new
one, never half of one, and an interrupted write leaves the old file as it was.

    from data.files import write_json, write_text, write_bytes
    write_json(path, {"key": ...})
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

# mkstemp makes its file 0600; the finished file gets what open() would have given it.
# Read once, at import (changing the umask to read it is not thread-safe later on).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Write `data` to `path` atomically; returns the path."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: Path | str, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically; returns the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: Path | str, data) -> Path:
    """Write `data` as JSON (indent 1, UTF-8 kept as is) to `path` atomically; returns the path."""
    return write_text(path, json.dumps(data, indent=1, ensure_ascii=False))
