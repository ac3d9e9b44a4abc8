"""What the scene keys read from a source file, kept on disk between runs.

Reading the keys means parsing and walking the syntax tree of every module a chapter imports
(about a second for chapter 02), which was most of an unchanged re-run. Each fact read from a
file (its tree's fingerprint, its imports, the beats and words it names) is a pure function of
the file's text, so it is stored under a hash of that text, the function's name and arguments,
the code that reads it (film/plan/keys.py) and Python's version (the `ast` module's shapes): an edited
file, an edited reader or another Python gives another name, never a stale fact. A fact that
raises (a scene the cache cannot read) is not stored. Stores are atomic (a temporary name, then
a rename), so processes sharing the folder never read half a file; one that cannot be read back,
or is not a record of this very fact (JSON naming the file's own hash: a planted or misplaced
file), is computed again and stored over. JSON only: nothing read here can run.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

from onepass.data import home

SOURCES_ENV = home.SOURCES_ENV


def folder() -> Path | None:
    """The folder (onepass.data.home.source_memo_path: $ONEPASS_SOURCE_CACHE, else sources/ in onepass's
    cache folder); None: "off"."""
    return home.source_memo_path()


class SourceMemo:
    """remember(kind, text, args, compute): compute() once per (kind, text, args) and reader."""

    def __init__(self, reader: Path):
        self.reader = Path(reader)          # the module whose functions compute the facts
        self._salt: bytes | None = None

    def salt(self) -> bytes:
        if self._salt is None:
            h = hashlib.sha256(self.reader.read_bytes())
            h.update(repr(sys.version_info[:3]).encode())
            self._salt = h.digest()
        return self._salt

    def remember(self, kind: str, text: str, args, compute: Callable[[], object]):
        """compute()'s value (JSON: lists, not tuples or sets), from disk when kept."""
        where = folder()
        if where is None:
            return compute()
        h = hashlib.sha256(self.salt())
        h.update(json.dumps([kind, args], ensure_ascii=False).encode("utf-8"))
        h.update(text.encode("utf-8"))
        name = h.hexdigest()[:32]
        path = where / f"{name}.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(record, dict) and record.get("fact") == name and "value" in record:
                return record["value"]
        except (OSError, ValueError):        # absent, damaged: compute it again
            pass
        value = compute()
        with contextlib.suppress(OSError):   # a full disk, a read-only folder: the next run computes it
            where.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".fact.", dir=where)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"fact": name, "value": value}, f, ensure_ascii=False)
                os.replace(tmp, path)
            finally:
                Path(tmp).unlink(missing_ok=True)
        return value
