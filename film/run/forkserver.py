"""Scene processes forked from one that has imported manim already (a fork server).

    child = spawn(env, ["--bundle", ..., "--scene", "Scores", ...], log)   # None: run it afresh
    child.wait()           # -> exit code (negative: the signal that ended it), child.cpu in seconds

Every scene process (`python -m onepass.film.run.render_job`) used to spend about two seconds of CPU importing
manim, scipy and the scenes before it drew a frame: at 480p15 that was a third of a scene's time.
Here one server process per environment imports them once, and each scene is a fork of it running
onepass.film.run.render_job.main with the scene's arguments: the same code and arguments as the command, so the
same frames, in a process of its own (its own PID, media folder, log, exit code and CPU account).

* The server is a child of the process that asked (a render, a dask worker), started with the
  scene processes' environment (thread counts are read at import), in the project folder. It
  waits for every scene it forks (os.wait4: each scene's CPU is its own, as before) and tells the
  caller over a socket pair, one JSON line per message.
* Code changed on disk since the server imported it (a file's time or size): the server is
  retired (it finishes what it runs) and a new one imports the code anew, so a scene never runs
  older code than its cache key was read from.
* Ctrl-C reaches the scenes as before (the server ignores it and waits for them); stop()'s SIGTERM
  goes to the scene by way of the server, which alone can tell its PID is still that scene's.
  The server ends its scenes with SIGTERM when the caller goes away (its socket closes; SIGKILL
  for one still unwinding UNWIND_GRACE seconds later, its media folder then removed), and a
  scene whose server dies gets SIGTERM too (PR_SET_PDEATHSIG): each unwinds and removes its media
  folder as an interrupted render does.
* $ONEPASS_FORKSERVER=off (a process setting), or a system without fork: every scene is started
  afresh as before (film/run/runner.py). So is a scene whose server could not start (its import
  failed): the command's own log then says why.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_ENV = "ONEPASS_FORKSERVER"      # "off": no server, every scene process started afresh
_PR_SET_PDEATHSIG = 1
UNWIND_GRACE = 10.0    # seconds a scene has to unwind after its caller is gone, before SIGKILL


def enabled() -> bool:
    return hasattr(os, "fork") and sys.platform.startswith("linux") and os.environ.get(SERVER_ENV, "").lower() != "off"


def _project_files() -> dict[str, list[int]]:
    """The project's modules this process has imported, each with its file's time and size."""
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).is_relative_to(ROOT) and ".venv" not in Path(path).parts:
            try:
                st = os.stat(path)
            except OSError:
                continue
            files[path] = [st.st_mtime_ns, st.st_size]
    return files


class Child:
    """One scene process forked by a Server: poll/terminate/kill as a subprocess.Popen's."""

    def __init__(self, server: "Server", ident: int):
        self.server, self.id = server, ident
        self.pid: int | None = None
        self.returncode: int | None = None
        self.cpu = 0.0
        self.started, self.done = threading.Event(), threading.Event()

    def wait(self) -> int:
        self.done.wait()
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self.done.is_set() else None

    def send_signal(self, sig: int) -> None:
        if not self.done.is_set():
            self.server.send({"op": "signal", "id": self.id, "signal": int(sig)})

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Server:
    """The caller's side of one fork server: starts it, forks scenes on it, hears how they end."""

    def __init__(self, env: dict):
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen([sys.executable, "-m", "onepass.film.run.forkserver", str(theirs.fileno())], cwd=ROOT, env=env,
                                     pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.children: dict[int, Child] = {}
        self.next_id = 0
        self.forked = False
        self.files: dict[str, list[int]] = {}
        self.error: str | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._listen, name="onepass-forkserver", daemon=True).start()

    def send(self, message: dict) -> None:
        try:
            with self.lock:
                self.sock.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass            # the server is gone: _listen has ended (or ends) every child

    def _listen(self) -> None:
        for line in self.sock.makefile("rb"):
            msg = json.loads(line)
            if "ready" in msg:
                self.files, self.error = msg.get("files", {}), msg.get("error")
                self.ready.set()
                continue
            child = self.children.get(msg["id"])
            if child is None:
                continue
            if "pid" in msg:
                child.pid = msg["pid"]
                child.started.set()
            else:
                child.returncode, child.cpu = msg["exit"], msg["cpu"]
                child.started.set()
                child.done.set()
                self.children.pop(child.id, None)
        # the server ended: a child it never reported ended with it (its PR_SET_PDEATHSIG)
        self.error = self.error or "the fork server stopped"
        self.ready.set()
        for child in list(self.children.values()):
            child.returncode = child.returncode if child.returncode is not None else -signal.SIGTERM
            child.started.set()
            child.done.set()

    def usable(self) -> bool:
        """Started, and every project file it imported still as it was then."""
        self.ready.wait()
        if self.error or self.proc.poll() is not None:
            return False
        for path, sig in self.files.items():
            try:
                st = os.stat(path)
            except OSError:
                return False
            if [st.st_mtime_ns, st.st_size] != sig:
                return False
        return True

    def fork(self, args: list[str], log: Path) -> Child:
        with self.lock:
            self.next_id += 1
            child = self.children[self.next_id] = Child(self, self.next_id)
        self.forked = True
        self.send({"op": "run", "id": child.id, "args": [str(a) for a in args], "log": str(log)})
        return child

    def close(self, wait: float | None = 60.0) -> None:
        """Let it finish what it runs and end (at once, if it never forked: it may still be importing);
        after `wait` seconds (None: no limit) it is killed, and its scenes with it."""
        if not self.forked:
            self.proc.kill()
        else:
            self.send({"op": "close"})
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()


_servers: dict[tuple, Server] = {}
_servers_lock = threading.Lock()


def _server_for(env: dict) -> Server | None:
    key = tuple(sorted(env.items()))
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = Server(env)
    if server.usable():
        return server
    with _servers_lock:              # changed code or a dead server: a new one, once
        if _servers.get(key) is server:
            del _servers[key]
        retired = server
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = Server(env)
    # a retired server finishes what it runs, however long that takes (a bounded wait killed it, and with
    # it every scene it was rendering, 60 s after a file changed: "exit -15" in a long scene)
    threading.Thread(target=retired.close, kwargs={"wait": None}, daemon=True).start()
    return server if server.usable() else None


def prewarm(env: dict) -> None:
    """Start the server for `env` now (its import overlaps the caller's planning)."""
    if enabled():
        with _servers_lock:
            key = tuple(sorted(env.items()))
            if key not in _servers:
                _servers[key] = Server(env)


def spawn(env: dict, args: list[str], log: Path) -> Child | None:
    """Fork onepass.film.run.render_job.main(args) with its output in `log`; None where no server can (the
    caller starts `python -m onepass.film.run.render_job` instead)."""
    if not enabled():
        return None
    server = _server_for(env)
    return server.fork(args, log) if server is not None else None


@atexit.register
def close_all() -> None:
    """End every server (each once its scenes have ended), so that its CPU counts as this process's
    children's and no process is left behind."""
    with _servers_lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.close()


# ---- the server process -------------------------------------------------------------------------

def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _tell(sock: socket.socket, message: dict) -> None:
    """_send, where the caller may be gone (then nobody is listening)."""
    try:
        _send(sock, message)
    except OSError:
        pass


def _run_scene(args: list[str]) -> int:
    """onepass.film.run.render_job.main(args) as `python -m onepass.film.run.render_job` would end: its exit code, a
    SystemExit's message on stderr, an exception's traceback."""
    from onepass.film.run import render_job
    try:
        code = render_job.main(args)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        render_job.end_as_ctrl_c()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _child(sock: socket.socket, wake: tuple[int, int], args: list[str], log: str, on_int) -> None:
    """In the forked scene process: its own signals, output and parent's death; then the scene."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, on_int)
        sock.close()
        for fd in wake:
            os.close(fd)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        code = _run_scene(args)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _read_once() -> dict[str, list[int]]:
    """What every scene process would read for itself, read here once for all of them: the English
    catalog, parsed and checked (every scene's words stand on it: about 0.04 s of CPU per scene), and
    GPT-2's merge ranks and byte vocabulary (chapter 00's facts, in each of its scenes: 0.05 s). The
    catalog's files and folder, each with its time and size (taken before it is read), go with the
    project's files: one changed (or added) retires the server as changed code does, whether the
    reading succeeded or not (a catalog found wrong is kept wrong, as read, until then). A reading that
    fails is left to each scene, which reads for itself and says what is wrong, as before."""
    from onepass.data.arch.gpt2 import bpe
    from onepass.words import catalog
    folder = catalog.CATALOGS / catalog.SOURCE
    try:
        stats = {str(path): os.stat(path) for path in (folder, *sorted(folder.glob("*.po")))}
    except OSError:
        return {}
    with contextlib.suppress(Exception):
        catalog.Words.load(catalog.SOURCE)
    with contextlib.suppress(Exception):
        bpe.merge_ranks()
        bpe.byte_vocab()
    return {path: [st.st_mtime_ns, st.st_size] for path, st in stats.items()}


def serve(fd: int) -> int:
    """The server: import what a scene needs, say so, then fork a scene per request and report
    each one's end, until told to close (or the caller is gone)."""
    sock = socket.socket(fileno=fd)
    # a scene takes Ctrl-C as `python -m onepass.film.run.render_job` would: as KeyboardInterrupt, or not at all
    # where the caller was started with it ignored (as `nohup` or a shell's `&` start it)
    on_int = signal.SIG_IGN if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else signal.default_int_handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is for the scenes; this waits for them
    try:
        import onepass.film.run.render_job  # noqa: F401  (manim, its plugins, the frame path)
        from onepass.data.arch.gpt2 import bpe
        from onepass.scenes.registry import chapters, scenes_of
        for chapter in chapters():
            scenes_of(chapter)
        bpe.load()       # GPT-2's vocabulary, which each GPT-2 scene's narration reads (0.1 s per scene)
    except BaseException:
        _send(sock, {"ready": False, "error": traceback.format_exc()})
        return 1
    read = _read_once()
    gc.freeze()          # what the import made stays shared with the forks (no copy on write by gc)
    _send(sock, {"ready": True, "files": {**_project_files(), **read}})

    wake = os.pipe()
    for w in wake:
        os.set_blocking(w, False)
    signal.set_wakeup_fd(wake[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake[0], selectors.EVENT_READ)
    running: dict[int, int] = {}         # pid -> request id
    pending, closing = b"", False
    gone_at, killed = None, False        # when the caller went; whether scenes had to be killed
    while not (closing and not running):
        if gone_at is not None and not killed and time.monotonic() - gone_at > UNWIND_GRACE:
            killed = True                 # a scene stuck unwinding (e.g. in an encoder thread's join)
            for pid in running:
                os.kill(pid, signal.SIGKILL)
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj is not sock:
                os.read(wake[0], 4096)
                continue
            data = sock.recv(65536)
            if not data:                  # the caller is gone: end its scenes (they unwind)
                closing, gone_at = True, time.monotonic()
                selector.unregister(sock)
                for pid in running:
                    os.kill(pid, signal.SIGTERM)
                continue
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                if msg["op"] == "close":
                    closing = True
                elif msg["op"] == "signal":
                    for pid, ident in running.items():
                        if ident == msg["id"]:
                            os.kill(pid, msg["signal"])
                elif msg["op"] == "run":
                    pid = os.fork()
                    if pid == 0:
                        _child(sock, wake, msg["args"], msg["log"], on_int)
                    running[pid] = msg["id"]
                    _tell(sock, {"id": msg["id"], "pid": pid})
        while running:                    # reap every scene that ended
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            ident = running.pop(pid, None)
            if ident is not None:
                _tell(sock, {"id": ident, "exit": os.waitstatus_to_exitcode(status),
                             "cpu": usage.ru_utime + usage.ru_stime})
    if killed:                            # their media folders: nobody else is left to remove them
        from onepass.film.run.media import remove_dead_media
        remove_dead_media()
    return 0


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
