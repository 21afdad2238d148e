"""A seat for outside programs: ``ext:COMMAND`` (a program on standard input and output) and ``http:URL``.

Each decision is one message (`agents.external.message`: the seat's public view, its legal moves, the view
in words) and one reply naming a legal move by id or name. ``ext:`` writes the message as one JSON line to the
program's standard input and reads one line back from its standard output; ``http:`` POSTs it (JSON) to the URL
and reads the reply from the response's body. The decisions of a batch are asked one after another, in order.

Options follow a ``?``, ``&`` between them (``ext:python3 bot.py?timeout=2&text=no``):

* ``timeout=SECONDS`` (default 10): the time a reply may take; a late reply ends the evaluation;
* ``startup=SECONDS`` (default 10, ``ext:`` only): added to the first decision's limit (the program starts);
* ``text=no``: leave the view in words (``"text"``) out of the messages (less to write and read);
* ``stderr=PATH`` (``ext:`` only): append the program's standard error there (default: a temporary file, removed
  when the program stops unless a decision failed and it holds something; an error names it and its last line).

``COMMAND`` is split as a POSIX shell splits words (``shlex.split``: quote a path with spaces), and run without
a shell, in a session of its own; it holds no ``?``. ``URL`` is ``http://...`` or ``https://...`` (the spec may
be the URL itself: ``http://127.0.0.1:8765/``), without a query of its own.

A reply that names no legal move (`~agents.external.message.ReplyError`), a late one, or a program that
ended raises `ExternalError`, one line naming the decision (its number in the seat's hand, the seat,
the phase), what was replied and where the program's standard error is; the evaluation reports it with the
deal (``agents.evaluation.arena.AgentError``) and stops: no hand is scored from a move nobody chose. The program
is started on the first decision and stopped by its process id (its process group) by `ExternalAgent.close`,
at the end of each evaluation chunk, at exit, or as a context manager; a copy (``copy.deepcopy``, pickling for an
evaluation worker) is a new, unstarted agent with the same spec.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shlex
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..base import BatchAgent, Decisions
from .message import Histories, ReplyError, legal_summary, messages, read_reply

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP = 10.0
_OPTIONS = {"ext": ("timeout", "startup", "text", "stderr"), "http": ("timeout", "text"), "https": ("timeout", "text")}
#: the longest reply line read from a program (bytes)
MAX_LINE = 1 << 20


class ExternalError(RuntimeError):
    """An outside seat failed a decision (no reply, a late one, one that names no legal move, a program that
    ended): one line. ``batch_index``: the decision's row in its batch (the evaluation names its deal)."""

    def __init__(self, message: str, batch_index: int = 0):
        super().__init__(message)
        self.batch_index = int(batch_index)

    def __reduce__(self):
        return (type(self), (str(self), self.batch_index))


class _Late(Exception):
    pass


class _Ended(Exception):
    pass


def _seconds(spec: str, key: str, value: str | None) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        x = float("nan")
    if not (0 < x <= 86400):
        raise ValueError(f"{spec!r}: {key} is a number of seconds > 0, got {value!r}")
    return x


def parse_options(spec: str, scheme: str, options) -> dict[str, Any]:
    """The options of an ``ext:`` / ``http:`` spec, checked (``ValueError`` naming the spec)."""
    out: dict[str, Any] = {"timeout": DEFAULT_TIMEOUT, "startup": DEFAULT_STARTUP, "text": True, "stderr": None}
    seen = set()
    for key, value in options:
        if key not in _OPTIONS[scheme]:
            raise ValueError(f"{spec!r}: unknown option {key!r}; {scheme}: takes {', '.join(_OPTIONS[scheme])}")
        if key in seen:
            raise ValueError(f"{spec!r}: option {key!r} given twice")
        seen.add(key)
        if key in ("timeout", "startup"):
            out[key] = _seconds(spec, key, value)
        elif key == "text":
            if value not in ("yes", "no", "1", "0", "true", "false"):
                raise ValueError(f"{spec!r}: text is yes or no, got {value!r}")
            out["text"] = value in ("yes", "1", "true")
        else:
            if not value:
                raise ValueError(f"{spec!r}: stderr=PATH names a file")
            out["stderr"] = value
    return out


class ExternalAgent(BatchAgent):
    """The agent of an ``ext:`` or ``http:`` spec (`from_spec`): each decision asked of the outside
    program, one message a decision. ``close()`` stops the program (also at exit, and as a context manager)."""

    def __init__(self, spec: str, *, command: list[str] | None = None, url: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, startup: float = DEFAULT_STARTUP, text: bool = True,
                 stderr: str | None = None):
        if (command is None) == (url is None):
            raise ValueError("an outside seat has a command or a url")
        self.spec, self.name = spec, spec
        self.command, self.url = command, url
        self.timeout, self.startup, self.text, self.stderr_path = float(timeout), float(startup), bool(text), stderr
        self._numbers: dict[int, int] = {}  # stream -> decisions asked in its hand
        self._histories = Histories()  # stream -> the plays of its hand (the planes carry the last 15)
        self._transport: _Pipe | _Http | None = None
        self._failed = False
        self._lock = threading.RLock()  # (a web server's threads may share the agent: one conversation at a time)

    # ---------------------------------------------------------------- copies: a new, unstarted agent
    def _args(self) -> tuple:
        return (self.spec,), {"command": self.command, "url": self.url, "timeout": self.timeout,
                              "startup": self.startup, "text": self.text, "stderr": self.stderr_path}

    def __deepcopy__(self, memo) -> "ExternalAgent":
        args, kwargs = self._args()
        return type(self)(*args, **kwargs)

    def __reduce__(self):
        args, kwargs = self._args()
        return (_rebuild, (type(self), args, kwargs))

    def __repr__(self) -> str:
        return f"ExternalAgent({self.spec!r})"

    def __enter__(self) -> "ExternalAgent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The program's process id while it runs (``ext:``), else None."""
        t = self._transport
        return t.proc.pid if isinstance(t, _Pipe) and t.proc is not None else None

    def close(self) -> None:
        """Stop the program (its process group: SIGTERM, then SIGKILL after a second) and forget it; the next
        decision starts it again. Its standard error file stays where a decision failed or it was given."""
        with self._lock:
            t, self._transport = self._transport, None
            if t is not None:
                t.close(keep_stderr=self._failed)

    release = close  # (what the evaluation calls when its hands end: the program stops)

    # ---------------------------------------------------------------- decisions
    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for s in np.asarray(streams).tolist():
            self._numbers[int(s)] = 0
            self._histories.begin(int(s))

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        with self._lock:
            return self._act_batch(decisions)

    def _act_batch(self, decisions: Decisions) -> np.ndarray:
        streams = decisions.stream.tolist()
        numbers = [self._numbers.get(s, 0) for s in streams]
        out = np.empty(len(decisions), np.int64)
        for i, m in enumerate(messages(decisions, numbers, self.text, self._histories)):
            line = json.dumps(m, separators=(",", ":")).encode() + b"\n"
            legal = [e["id"] for e in m["legal"]]
            out[i] = self._ask(i, m, line, legal)
            self._numbers[streams[i]] = numbers[i] + 1
        return out

    def _where(self, m: dict) -> str:
        seat = f"seat {m['seat']}" if m["seat"] is not None else "its seat"
        return f"decision {m['decision']} of the hand at {seat} (stream {m['stream']}, phase {m['phase']})"

    def _ask(self, i: int, m: dict, line: bytes, legal: list[int]) -> int:
        if self._transport is None:
            self._transport = _Pipe(self.command, self.stderr_path) if self.command else _Http(self.url)
            limit = self.timeout + (self.startup if self.command else 0.0)
        else:
            limit = self.timeout
        try:
            reply = self._transport.ask(line, limit)
        except _Late as e:
            self._fail(i, m, f"no reply within {limit:g} s ({e}); timeout={self.timeout:g}")
        except _Ended as e:
            self._fail(i, m, str(e))
        try:
            return read_reply(reply, legal)
        except ReplyError as e:
            self._fail(i, m, f"{e.kind} reply {e} ({legal_summary(legal)})")
        raise AssertionError("unreachable")

    def _fail(self, i: int, m: dict, why: str) -> None:
        self._failed = True
        t = self._transport
        where = t.where_stderr() if t is not None else ""
        self.close()
        raise ExternalError(f"{self._where(m)}: {why}{where}", i) from None


def _rebuild(cls, args, kwargs):
    return cls(*args, **kwargs)


# -------------------------------------------------------------------------------------------------- transports
_LIVE: "weakref.WeakSet[_Pipe]" = weakref.WeakSet()


def _stop_all() -> None:  # (at exit: every program still running is stopped)
    for p in list(_LIVE):
        p.close(keep_stderr=True)


atexit.register(_stop_all)


class _Pipe:
    """A program on pipes: one line out, one line back, within a deadline (select on the raw descriptors)."""

    def __init__(self, command: list[str], stderr_path: str | None):
        self.keep = stderr_path is not None
        if stderr_path is None:
            fd, stderr_path = tempfile.mkstemp(prefix="ddz-ext-", suffix=".stderr")
            os.close(fd)
        self.stderr_path = stderr_path
        self._err = open(stderr_path, "ab")
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                         bufsize=0, start_new_session=True)
        except OSError as e:
            self._err.close()
            self.proc = None
            raise ValueError(f"cannot start {shlex.join(command)!r}: {e.strerror or e}") from None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._buf = b""
        _LIVE.add(self)

    def ask(self, line: bytes, limit: float) -> bytes:
        deadline = time.monotonic() + limit
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        view = memoryview(line)
        while view:
            try:
                n = os.write(wfd, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise _Ended(self._ended("before reading its message")) from None
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [wfd], [], left)[1]:
                raise _Late("it did not read its message")
        while True:
            k = self._buf.find(b"\n")
            if k >= 0:
                reply, self._buf = self._buf[:k], self._buf[k + 1:]
                return reply
            if len(self._buf) > MAX_LINE:
                raise _Ended(f"replied a line longer than {MAX_LINE:,} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                raise _Late("no line came" if not self._buf else f"a line without its end came: {self._buf[:60]!r}")
            chunk = os.read(rfd, 65536)
            if not chunk:
                raise _Ended(self._ended("before replying"))
            self._buf += chunk

    def _ended(self, when: str) -> str:
        try:
            code = self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        how = f"exit status {code}" if code is not None and code >= 0 else (
            f"signal {-code}" if code is not None else "its output closed")
        return f"the program ended {when} ({how})"

    def where_stderr(self) -> str:
        try:
            self._err.flush()
            with open(self.stderr_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.stderr_path) - 2000))
                tail = [x for x in f.read().decode("utf-8", "replace").splitlines() if x.strip()]
        except OSError:
            tail = []
        if not tail and not self.keep:
            return "; its standard error was empty"
        last = f", its last line: {tail[-1].strip()[:160]!r}" if tail else ", empty"
        return f"; its standard error: {self.stderr_path}{last}"

    def close(self, keep_stderr: bool = False) -> None:
        _LIVE.discard(self)
        p, self.proc = self.proc, None
        if p is not None:
            for f in (p.stdin, p.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            if p.poll() is None:
                _signal(p.pid, signal.SIGTERM)
                try:
                    p.wait(1.0)
                except subprocess.TimeoutExpired:
                    _signal(p.pid, signal.SIGKILL)
                    p.wait()
        if not self._err.closed:
            self._err.close()
            if not self.keep and not (keep_stderr and _size(self.stderr_path)):
                try:
                    os.remove(self.stderr_path)
                except OSError:
                    pass


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _signal(pid: int, sig: int) -> None:
    """``sig`` to the program's process group (its own session: the program and what it started), else to it."""
    try:
        os.killpg(pid, sig)
    except OSError:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


class _Http:
    """A URL: each message POSTed (JSON), the reply the response's body; one connection kept open."""

    def __init__(self, url: str):
        import http.client

        u = urlsplit(url)
        self.url = url
        self.path = u.path or "/"
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        self._make = lambda limit: cls(u.hostname, u.port, timeout=limit)
        self._conn = None

    def ask(self, line: bytes, limit: float) -> bytes:
        import http.client
        import socket

        t0 = time.monotonic()
        for attempt in (0, 1):  # (a kept connection the server closed: once more on a new one)
            if self._conn is None:
                self._conn = self._make(limit)
            self._conn.timeout = limit
            if self._conn.sock is not None:
                self._conn.sock.settimeout(limit)
            try:
                self._conn.request("POST", self.path, body=line, headers={"Content-Type": "application/json"})
                resp = self._conn.getresponse()
                body = resp.read(MAX_LINE + 1)
                break
            except (socket.timeout, TimeoutError):
                self.close()
                raise _Late(f"POST {self.url}") from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self.close()
                if attempt:
                    raise _Ended(f"POST {self.url} failed: {type(e).__name__}: {e}") from None
            except OSError as e:
                self.close()
                raise _Ended(f"POST {self.url} failed: {e.strerror or e}") from None
        if time.monotonic() - t0 > limit:
            raise _Late(f"POST {self.url} answered after {time.monotonic() - t0:.2f} s")
        if resp.status != 200:
            raise _Ended(f"POST {self.url} answered HTTP {resp.status} {resp.reason}: {body[:80]!r}")
        if resp.getheader("Connection", "").lower() == "close" or resp.will_close:
            self.close()
        return body

    def where_stderr(self) -> str:
        return ""

    def close(self, keep_stderr: bool = False) -> None:
        c, self._conn = self._conn, None
        if c is not None:
            c.close()


def from_spec(spec, **kwargs: Any) -> ExternalAgent:
    """The loader's entry point for ``ext:COMMAND[?options]``, ``http:URL[?options]`` and ``http://HOST/...``."""
    scheme, target, text = spec.scheme, spec.target, spec.text
    opts = parse_options(text, scheme, spec.options)
    opts.update(kwargs)
    if scheme == "ext":
        try:
            command = shlex.split(target)
        except ValueError as e:
            raise ValueError(f"{text!r}: the command cannot be split into words ({e})") from None
        if not command:
            raise ValueError(f"{text!r}: ext:COMMAND names a program (ext:python3 examples/ext_client.py)")
        return ExternalAgent(text, command=command, **opts)
    url = f"{scheme}:{target}" if target.startswith("//") else target
    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"{text!r}: http:URL names a URL, http://HOST[:PORT]/PATH (got {url!r})")
    opts.pop("startup")
    if opts.pop("stderr") is not None:
        raise ValueError(f"{text!r}: stderr= is an ext: option")
    return ExternalAgent(text, url=url, **opts)


__all__ = ["ExternalAgent", "ExternalError", "from_spec", "parse_options", "DEFAULT_TIMEOUT"]
