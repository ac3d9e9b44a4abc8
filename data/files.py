"""Files written whole or not at all.

Each writer puts the data in a fresh temporary file in the destination's own folder (a unique
name from `tempfile`, so two writers never share one) and then renames it over the
destination (`os.replace`, atomic on one file system): a reader sees the old file or the new
one, never half of one, and an interrupted write leaves the old file as it was.

    from onepass.data.files import write_json, write_text, write_bytes
    write_json(path, {"key": ...})

Files other programs make (ffmpeg, manim) go to `temp_name(final)` first, are checked, and
then `replace_together([(tmp, final), ...])`; `FolderLock(folder)` keeps a second run out of a
folder the first is writing to.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from onepass.data.bundle import sha256_file

# mkstemp makes its file 0600; the finished file gets what open() would have given it.
# Read once, at import (changing the umask to read it is not thread-safe later on).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _part_prefix(path: Path) -> str:
    """`.<name>.p<PID>-`: a temporary file names the process writing it, so a clean-up can tell a
    live writer's file from a killed one's (`part_owner`)."""
    return f".{path.name}.p{os.getpid()}-"


_PART_OWNER = re.compile(r"\.p([0-9]+)-[^.]+\.part(?:\.[^.]*)?$")


def part_owner(name: str) -> int | None:
    """The process id a temporary file's name gives (`write_bytes`, `temp_name`), or None (an older
    version's name, or not a temporary file)."""
    m = _PART_OWNER.search(name)
    return int(m.group(1)) if m else None


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Write `data` to `path` atomically; returns the path."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=_part_prefix(path), suffix=".part", dir=path.parent)
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


def write_text_if_changed(path: Path | str, text: str, force: bool = False) -> bool:
    """Write `text` to `path` (atomically) unless it already holds exactly that; True if written."""
    try:
        if not force and Path(path).read_text(encoding="utf-8") == text:
            return False
    except (OSError, ValueError):
        pass
    write_text(path, text)
    return True


def _stamp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.key")


def stamped(path: Path | str, key: str) -> bool:
    """True when `path`'s stamp (`.<name>.key` beside it) says it was made for `key` and the file
    is still the bytes written then (a damaged or replaced file is made again)."""
    path = Path(path)
    try:
        return _stamp_path(path).read_text(encoding="utf-8") == f"{key}\n{sha256_file(path)}"
    except OSError:
        return False


def write_stamp(path: Path | str, key: str) -> None:
    """Record that `path`, as it is now, was made for `key` (see `stamped`)."""
    path = Path(path)
    write_text(_stamp_path(path), f"{key}\n{sha256_file(path)}")


def write_json(path: Path | str, data) -> Path:
    """Write `data` as JSON (indent 1, UTF-8 kept as is) to `path` atomically; returns the path."""
    return write_text(path, json.dumps(data, indent=1, ensure_ascii=False))


# ---------------------------------------------------------------------------------------
# Files made by other programs (ffmpeg, manim): a unique temporary name first, checked, then
# renamed over the finished file, several files together

def remove_stale_parts(folder: Path | str, older_than: float = 3600.0) -> int:
    """Remove the temporary files (`.<name>.<random>.part*`, as `write_bytes` and `temp_name`
    name them) that a killed process left in `folder` over `older_than` seconds ago. For a
    folder many processes write at once without a lock (the voice cache): a writer finishes in
    seconds, so a part file an hour old has none. Returns how many were removed."""
    removed, now = 0, time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for e in entries:
        if e.name.startswith(".") and ".part" in e.name and e.is_file(follow_symlinks=False):
            try:
                if now - e.stat(follow_symlinks=False).st_mtime > older_than:
                    os.unlink(e.path)
                    removed += 1
            except OSError:        # removed meanwhile by another process: as good
                pass
    return removed


def temp_name(path: Path | str, suffix: str | None = None) -> Path:
    """A fresh, unique, empty file beside `path` (same folder, so a rename is atomic), named
    `.<name>.p<PID>-<random>.part<suffix>`; `suffix` defaults to the path's own (ffmpeg picks its
    format by it). The caller removes it (`discard`) if it never replaces `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=_part_prefix(path), suffix=".part" + (path.suffix if suffix is None else suffix),
                               dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)
    return Path(tmp)


def discard(*paths: Path | str | None):
    """Remove temporary files this run made (missing ones are fine)."""
    for p in paths:
        if p is not None:
            Path(p).unlink(missing_ok=True)


class _Deferred:
    """Holds SIGINT/SIGTERM back while a few renames run (main thread only; elsewhere Python
    never delivers them), then delivers what arrived."""

    def __enter__(self):
        self.caught, self.old = [], {}
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self.old[s] = signal.signal(s, lambda n, f: self.caught.append(n))
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        for n in self.caught[:1]:
            signal.raise_signal(n)
        return False


def replace_together(pairs: list[tuple[Path | str, Path | str]]):
    """Rename each checked temporary over its final file, in order (put the main file last),
    with interrupts held back until all are done: a group of files (a video, its captions,
    its thumbnail) is replaced as one."""
    with _Deferred():
        for tmp, final in pairs:
            os.replace(tmp, final)


# ---------------------------------------------------------------------------------------
# One writer per output folder

class FolderLock:
    """An advisory lock (fcntl.flock) on `<folder>/.onepass.lock`: a second run into the same
    folder waits for the first (calling `on_wait` once with a line saying so) instead of racing
    it. Released when the holder exits, however it exits (the kernel drops the lock with the
    process), so a killed run never leaves the folder locked. Re-entrant within one thread (a
    render holds it from its first write to its last, and the build and each kit inside take it
    again); another thread, like another process, waits.

        with FolderLock(dest, on_wait=print):
            ...
    """

    NAME = ".onepass.lock"
    _held: dict[tuple[str, int], list] = {}       # (folder, thread) -> [descriptor, depth]

    def __init__(self, folder: Path | str, on_wait=None):
        self.folder, self.on_wait, self.fd = Path(folder), on_wait, None

    def __enter__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        self.key = (os.path.realpath(self.folder), threading.get_ident())
        held = self._held.get(self.key)
        if held is not None:            # this thread holds it already: only one thread touches its key
            held[1] += 1
            self.fd = held[0]
            return self
        self.fd = os.open(self.folder / self.NAME, os.O_RDWR | os.O_CREAT, 0o666 & ~_UMASK)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if self.on_wait:
                self.on_wait(f"another render is writing to {self.folder}; waiting for it to finish")
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(self.fd)
                raise
        self._held[self.key] = [self.fd, 1]
        return self

    def __exit__(self, *exc):
        held = self._held[self.key]
        held[1] -= 1
        if held[1] == 0:
            del self._held[self.key]
            os.close(self.fd)       # closing the descriptor releases the lock
        self.fd = None
        return False


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs on this machine (another user's process counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:          # another user's process: alive
        return True
    return True


def remove_dead_owned(root: Path | str, owner) -> int:
    """Remove the folders in `root` that a process named as their owner and that outlived it (one killed
    with SIGKILL cannot remove its own): `owner(name)` is a match whose group 1 is the owner's process
    id, or None for a folder that is not of this kind. A live owner's folder is kept; links are never
    followed. Returns how many were removed."""
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for e in entries:
        m = owner(e.name)
        if m and not process_alive(int(m.group(1))) and e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
            removed += not os.path.exists(e.path)
    return removed
