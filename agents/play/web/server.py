"""The local web page: play a hand against agents, watch agents play, step through hand records.

    python -m agents.play.web [--port 8000] [--host 127.0.0.1] [--save-dir hands] [--replays DIR] [--agent NAME=SPEC ...]

A FastAPI app serving one static page (``static/``: plain HTML, JS and CSS, no build step) and a
small JSON API. The server holds the games; the browser gets only :func:`~agents.play.match.seat_view`
of the person's seat, so secrecy is enforced here: during play no response carries another
seat's cards or the bottom before its reveal. A hand's full record is served once it is over.

======================================  ==========================================================
``GET  /api/agents``                    the agent names a game can seat
``POST /api/games``                     new hand: ``{"seat", "vs": [a, b], "seed", "deal", "rules"}``
``GET  /api/games/{id}``                the person's view
``POST /api/games/{id}/action``         ``{"action": "33" | "pass" | "bid 3" | "double" | id, "version": n}``
``GET  /api/games/{id}/record``         the hand record (409 until the hand is over); ``?download=1``
                                        sends it as a file to save
``GET  /api/games/{id}/replay``         the finished hand's positions (spectator views), as ``/api/replay``
``POST /api/watch``                     agents only: ``{"players": [a, b, c], "seed", "deal", "rules"}``
``POST /api/replay``                    a hand record in, its positions (spectator views) out
``GET  /api/replays``                   the names of the kept hands (``--save-dir``) and of ``--replays DIR``
``GET  /api/kept/{name}``               a kept hand's positions; ``/api/replays/{name}``: a ``--replays`` record's
======================================  ==========================================================

A game's answer is ``{"id", "version", "view", "steps", "kept"}``: ``version`` counts the actions taken in the
hand so far (each action moves it on by one, so it names one state of the hand); ``view`` is the person's view now, ``steps``
the person's views after each action since the last answer (their own move, then each agent's, so
the page can show the agents' moves one after another; the last step is ``view``), ``kept`` where
the finished hand's record was saved (``{"name", "dir"}``: the file's and the folder's names only),
``{"error"}`` if it could not be, ``None`` while the hand runs or when the server keeps no hands.
A refused move is 400 with ``{"error": text, "refusal": {"text", "tried", "needs", "ruling",
"suggestion"}}``: what was tried and what the table needs, in words (:mod:`agents.play.explain`).

**Stale actions**: an action names the ``version`` of the answer whose view it was chosen in. One naming
another version (a double click, a second tap while the agents think, another tab) is refused with 409 and
nothing is played: the person never plays a move in a position they were not shown. One without a version is
a 400.

**Kept hands**: each hand played on the page is saved, once it is over, in the folder the server's
operator names with ``--save-dir`` (default ``hands/``, as ``ddz-play``; ``--no-save``: none), as
``web-YYYYmmdd-HHMMSS-seedS-dealD-seatX.json``; the Replays tab lists them. The server names the
file; no request names a file or a folder. Of both folders only regular files are listed and read: a pipe, a
device or a folder named ``x.json`` is left out of the list and a 404 when asked for (opening a pipe would wait
for a writer, holding the request).

The page seats agents by name only: the registered names (``random``, ``rule``, ``pretrained``), and
the names the server's operator adds with ``--agent NAME=SPEC`` (any ``agents.load`` spec: a
checkpoint or policy ``.pt``, a run folder, ``sb3:``, ``search:``, ``douzero:DIR``, e.g. ``--agent
douzero=douzero:baselines/douzero_ADP``), listed as ``NAME`` (never as the kind its checkpoint names,
``dmc`` or ``movescore``: :func:`agents.loader.registered` leaves those out).
A request never names a file or a folder.

Only requests whose Host header names this machine (``localhost``, ``127.0.0.1``, ``::1``), the ``--host``
it is bound to or an ``--allowed-host`` are answered; any other Host gets 400 JSON (a page of another site
could otherwise reach the server through DNS rebinding).

Errors are ``{"error": "..."}`` with status 400 (bad request, illegal move, unknown agent,
malformed record), 404 (unknown game, file or route), 405, 409 or 413 (a record over
``MAX_RECORD_BYTES``); a refused move leaves the game as it was. A failure of the server itself
is ``{"error": ...}`` with 500, never a plain-text page. No error text shows the server's files
or folders.
"""
from __future__ import annotations

import itertools
import logging
import errno
import os
import socket
import stat
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Union

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ddz_env.files import folder_problem, write_failure
from ddz_env.game import IllegalActionError
from ddz_env.record import RecordError, parse as parse_record, positions, save as save_record
from ddz_env.rules import Rules

from ...loader import load, registered
from ..explain import Refusal
from ..match import Match, seat_view

STATIC = Path(__file__).parent / "static"
MAX_GAMES = 256  # games kept in memory; the oldest is dropped first
#: a hand record's size limit (one is 2-4 KB; evaluate.py --save-replays writes them with indent 1)
MAX_RECORD_BYTES = 1 << 20
MAX_ERROR_CHARS = 1000  # an error text's length limit
log = logging.getLogger("agents.play.web")


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt key ("sead") is a 400, not a silent default
    seat: int = Field(0, ge=0, le=2)
    vs: Union[str, list[str]] = "rule"
    seed: int = Field(0, ge=0)
    deal: int = Field(0, ge=0)
    rules: str = "rulebook"


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Union[int, str]
    # the answer's "version" the action was chosen in; strict: true or "3" is no version. Optional here only so
    # that a missing one gets a plain sentence (act) rather than the validator's "Field required"
    version: Union[int, None] = Field(None, ge=0, strict=True)


class Watch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    players: list[str] = Field(default_factory=lambda: ["rule", "rule", "rule"], min_length=3, max_length=3)
    seed: int = Field(0, ge=0)
    deal: int = Field(0, ge=0)
    rules: str = "rulebook"


def _error(status: int, message: str) -> HTTPException:
    return HTTPException(status_code=status, detail=message)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: errors quote what the client sent, not all of it."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def _rules(spec: str) -> Rules:
    try:
        return Rules.of(spec)
    except (TypeError, ValueError) as e:
        raise _error(400, str(e)) from None


def _check_agents(agents: dict[str, str] | None) -> dict[str, str]:
    """The operator's ``{name: spec}``: names are plain words, not a registered name; ``ValueError`` otherwise."""
    out = {}
    for name, spec in (agents or {}).items():
        if not isinstance(name, str) or not name or any(c in name for c in "/\\:=?. ") or not isinstance(spec, str) \
                or not spec:
            raise ValueError(f"--agent NAME=SPEC: NAME is a plain word (no / \\ : = ? . or space) and SPEC an agent "
                             f"spec, got {name!r}={spec!r}")
        if name in registered():
            raise ValueError(f"--agent {name}={spec}: {name!r} is already a registered agent; choose another name")
        out[name] = spec
    return out


#: the Host names the server answers by default (this machine's); others get 400, so that a page of another
#: site cannot reach the server through DNS rebinding (its requests carry that site's name as Host)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The name of a Host header without its port, lower case (``[::1]:8000`` -> ``::1``)."""
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _record_name(name: str) -> bool:
    """A plain ``.json`` file name (no folder, no hidden file): the only names the record routes open."""
    return name.endswith(".json") and not name.startswith(".") and len(name) <= 255 and not any(
        c in name for c in "/\\\0")


def _regular(entry: os.DirEntry) -> bool:
    """Whether a folder entry is a regular file (following a symlink); one that vanished or cannot be
    stat'ed is not."""
    try:
        return entry.is_file()
    except OSError:
        return False


def create_app(replay_dir: str | os.PathLike | None = None, agents: dict[str, str] | None = None,
               hosts: tuple[str, ...] | list[str] = (), save_dir: str | os.PathLike | None = None) -> FastAPI:
    """The app; ``replay_dir`` is a folder of hand records to list and open (optional); ``agents``: more
    names the page may seat, ``{name: agents.load spec}`` (the operator's ``--agent NAME=SPEC``); ``hosts``:
    Host names served besides :data:`LOCAL_HOSTS` (the ``--host`` it is bound to, ``--allowed-host``);
    ``save_dir``: the folder that keeps each hand played on the page once it is over (``None``: none kept;
    ``ValueError`` if it cannot be written)."""
    extra = _check_agents(agents)
    keep = Path(save_dir) if save_dir is not None else None
    if keep is not None:
        problem = folder_problem(str(keep))
        if problem is not None:
            raise ValueError(f"--save-dir {str(keep)!r}: {problem}; give a folder that can be written")
        keep.mkdir(parents=True, exist_ok=True)
    allowed = {host_name(h) for h in (*LOCAL_HOSTS, *hosts)}
    app = FastAPI(title="ddz-env", docs_url=None, redoc_url=None)

    @app.middleware("http")
    async def _only_served_hosts(request: Request, call_next):
        name = host_name(request.headers.get("host", ""))
        if name not in allowed:
            shown = name[:64] + ("..." if len(name) > 64 else "")
            return JSONResponse({"error": f"Host {shown!r} is not served here (served: {', '.join(sorted(allowed))}; "
                                          f"the operator adds names with --allowed-host)"}, status_code=400)
        return await call_next(request)
    games: OrderedDict[str, Match] = OrderedDict()
    kept: dict[str, dict] = {}  # game id -> {"name", "dir"} or {"error"}, once its hand is over
    lock = threading.Lock()
    ids = itertools.count(1)
    cache: dict[str, Any] = {}
    for name, spec in extra.items():  # the operator's agents load now: a bad folder fails at start-up
        try:
            cache[name] = load(spec)
        except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
            raise ValueError(f"--agent {name}={spec}: {e}") from None
    replays = Path(replay_dir) if replay_dir is not None else None

    @app.exception_handler(StarletteHTTPException)  # (also FastAPI's, and the router's 404 / 405)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        text = str(exc.detail)
        if len(text) > MAX_ERROR_CHARS:  # (an error may quote what the client sent: not 100 KB of it)
            text = text[:MAX_ERROR_CHARS] + "..."
        return JSONResponse({"error": text}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _server_error(request: Request, exc: Exception):  # a bug: logged here, never shown to the client
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"error": "internal server error (the server's log has the details)"}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def _bad_body(request: Request, exc: RequestValidationError):
        errs = exc.errors()
        first = errs[0] if errs else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return JSONResponse({"error": f"bad request: {where or 'body'}: {first.get('msg', 'invalid')}"}, status_code=400)

    def agent(spec: str):
        # a registered name or nothing: anything else would reach load(), which opens files by path
        # (a client's "..", "notes" or "/etc/x" is a file of the server's, and its errors tell folders apart)
        if not isinstance(spec, str) or spec not in names():
            raise _error(400, f"unknown agent {_short(spec)}: the page seats the registered agents only "
                              f"({', '.join(names())})")
        if spec == "random":  # per-stream state: a fresh one per game
            return load(spec)
        if spec not in cache:
            try:
                cache[spec] = load(extra.get(spec, spec))
            except Exception as e:  # noqa: BLE001 - the server's own setup (no torch, a missing file): logged
                log.error("agent %r cannot be loaded: %s: %s", spec, type(e).__name__, e)
                raise _error(500, f"agent {spec!r} cannot be played on this server ({type(e).__name__}; the "
                                  f"server's log has the details)") from None
        return cache[spec]

    def names() -> list[str]:
        return registered() + sorted(extra)

    def game(gid: str) -> Match:
        m = games.get(gid)
        if m is None:
            raise _error(404, f"no game {gid!r} (games are kept in memory: a restarted server forgets them)")
        return m

    def keep_hand(gid: str, m: Match) -> dict | None:
        """Save the finished hand in ``--save-dir`` (once); where it went, by names only."""
        if keep is None or not m.game.is_over:
            return None
        if gid not in kept:
            seat = m.people[0]
            stem = f"web-{time.strftime('%Y%m%d-%H%M%S')}-seed{m.seed}-deal{m.index}-seat{seat}"
            name = f"{stem}.json"
            for k in itertools.count(2):
                if not (keep / name).exists():
                    break
                name = f"{stem}-{k}.json"
            try:
                save_record(m.record({"human_seat": seat}), keep / name)
                kept[gid] = {"name": name, "dir": keep.name or "."}
            except OSError as e:  # the path is logged, the client gets the reason only
                log.error("cannot keep the hand of game %s in %s: %s", gid, keep / name, e)
                kept[gid] = {"error": f"the hand could not be kept on the server ({write_failure(e)}); download it"}
        return kept[gid]

    def version(m: Match) -> int:
        # the actions taken so far: a hand only moves forward, one action at a time, so this names one state
        return len(m.game.history)

    def state(gid: str, m: Match, steps: list | None = None) -> dict:
        seat = m.people[0]
        view = m.view(seat)
        return {"id": gid, "version": version(m), "view": view, "steps": steps if steps else [view],
                "kept": keep_hand(gid, m)}

    def spectate(record: dict) -> dict:
        try:
            views = [seat_view(g, None, record.get("players") or None) for g in positions(record)]
        except RecordError as e:
            raise _error(400, f"bad hand record: {e}") from None
        return {"record": record, "positions": views}

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/agents")
    def agents_list():
        return {"agents": names()}

    @app.post("/api/games")
    def new_game(req: NewGame):
        vs = [req.vs, req.vs] if isinstance(req.vs, str) else list(req.vs)
        if len(vs) != 2:
            raise _error(400, f"vs names the 2 other seats' agents, got {len(vs)}")
        rules = _rules(req.rules)
        seats = [(req.seat + 1) % 3, (req.seat + 2) % 3]
        agents: list = [None, None, None]
        labels = ["you", "you", "you"]
        for s, spec in zip(seats, vs):
            agents[s], labels[s] = agent(spec), spec
        with lock:
            try:
                m = Match.deal(agents, labels, seed=req.seed, index=req.deal, rules=rules)
                steps = [m.view(req.seat)] + m.advance_views(req.seat)  # the deal, then each agent's move
            except RuntimeError as e:
                raise _error(500, str(e)) from None
            gid = f"g{next(ids)}"
            games[gid] = m
            while len(games) > MAX_GAMES:
                old, _ = games.popitem(last=False)
                kept.pop(old, None)
            return state(gid, m, steps)

    @app.get("/api/games/{gid}")
    def get_game(gid: str):
        with lock:
            m = game(gid)
            return state(gid, m)

    @app.post("/api/games/{gid}/action")
    def act(gid: str, req: Action):
        with lock:
            m = game(gid)
            if m.game.is_over:
                raise _error(409, "the hand is over")
            if req.version is None:
                raise _error(400, "the action names no version: send the \"version\" of the answer whose view it "
                                  "was chosen in")
            now = version(m)
            if req.version != now:  # checked before anything moves: a refused action plays nothing
                raise _error(409, f"stale action {_short(req.action)}: it was chosen at move {req.version} of the "
                                  f"hand, which is at move {now} now (a second click, or another page, acted "
                                  f"first); nothing was played")
            seat = m.people[0]
            try:
                m.play(seat, req.action)
            except Refusal as e:  # what was tried and what the table needs, in words
                return JSONResponse({"error": e.text, "refusal": e.as_dict()}, status_code=400)
            except (IllegalActionError, ValueError, TypeError) as e:
                raise _error(400, f"{_short(req.action)}: {e}") from None
            steps = [m.view(seat)]
            try:
                steps += m.advance_views(seat)
            except RuntimeError as e:
                raise _error(500, str(e)) from None
            return state(gid, m, steps)

    def finished(gid: str) -> tuple[Match, dict]:
        m = game(gid)
        if not m.game.is_over:
            raise _error(409, "the hand is not over: its record would show the hidden cards")
        return m, m.record({"human_seat": m.people[0]})

    @app.get("/api/games/{gid}/record")
    def game_record(gid: str, download: bool = False):
        with lock:
            m, rec = finished(gid)
            if not download:
                return rec
            name = (kept.get(gid) or {}).get("name") or f"hand-seed{m.seed}-deal{m.index}-seat{m.people[0]}.json"
            return JSONResponse(rec, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/api/games/{gid}/replay")
    def game_replay(gid: str):
        with lock:
            _, rec = finished(gid)
        return spectate(rec)

    @app.post("/api/watch")
    def watch(req: Watch):
        rules = _rules(req.rules)
        ags = [agent(p) for p in req.players]
        with lock:
            m = Match.deal(ags, req.players, seed=req.seed, index=req.deal, rules=rules)
            try:
                m.advance()
            except RuntimeError as e:
                raise _error(500, str(e)) from None
        return spectate(m.record())

    def parsed(data: bytes) -> dict:
        """A record from bytes (a body or a file): 413 over the size limit, 400 for anything else wrong
        (not UTF-8, not JSON, nested deeper than a record, not a hand record)."""
        if len(data) > MAX_RECORD_BYTES:
            raise _error(413, f"bad hand record: {len(data):,} bytes, over the limit of {MAX_RECORD_BYTES:,}")
        try:
            return parse_record(data)
        except RecordError as e:
            raise _error(400, f"bad hand record: {e}") from None

    @app.post("/api/replay")
    async def replay(request: Request):
        # the body is read to its end but kept only up to the limit: answering before the client has
        # sent it all would reset the connection under it (a broken pipe) instead of giving this 413
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= MAX_RECORD_BYTES:
                chunks.append(chunk)
        if size > MAX_RECORD_BYTES:
            raise _error(413, f"bad hand record: {size:,} bytes, over the limit of {MAX_RECORD_BYTES:,}")
        return spectate(parsed(b"".join(chunks)))

    def listed(folder: Path | None) -> list[str]:
        # regular files only (a symlink to one counts): a pipe, a device or a folder named x.json is no
        # record, and opening a pipe would wait for a writer (read_record refuses them too)
        if folder is None or not folder.is_dir():
            return []
        try:
            with os.scandir(folder) as entries:
                return sorted(e.name for e in entries if _record_name(e.name) and _regular(e))
        except OSError as e:  # the folder went away or cannot be read: logged with the path, listed empty
            log.error("cannot list %s: %s", folder, e)
            return []

    @app.get("/api/replays")
    def replay_list():
        # the folders' names only: no server path travels; the kept hands newest first
        return {"dir": None if replays is None else (replays.name or "."), "records": listed(replays),
                "kept_dir": None if keep is None else (keep.name or "."), "kept": listed(keep)[::-1]}

    @app.get("/api/replays/{name}")
    def replay_file(name: str):
        if replays is None:
            raise _error(404, "the server was started without --replays DIR")
        return read_record(replays, name, "--replays")

    @app.get("/api/kept/{name}")
    def kept_file(name: str):
        if keep is None:
            raise _error(404, "the server keeps no hands (started with --no-save)")
        return read_record(keep, name, "--save-dir")

    def read_record(folder: Path, name: str, flag: str) -> dict:
        if not _record_name(name):
            raise _error(400, f"bad record name {_short(name)}: a .json file name of the {flag} folder")
        path = folder / name
        not_regular = _error(404, f"no record {name!r} (it is not a regular file)")
        try:
            # a pipe named x.json would block open() until something writes to it, and a device would be
            # opened at all: stat first, then open without blocking and check the file opened (it may have
            # been swapped in between); on a regular file O_NONBLOCK changes nothing
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise not_regular
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
            with open(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise not_regular
                data = f.read(MAX_RECORD_BYTES + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise _error(404, f"no record {name!r}") from None
        except OSError as e:  # unreadable (permissions, I/O): logged with the path, not shown
            log.error("cannot read %s: %s", path, e)
            raise _error(404, f"record {name!r} cannot be read") from None
        return spectate(parsed(data))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def parse_args(argv=None):
    import argparse

    ap = argparse.ArgumentParser(prog="ddz-web", description="Play and watch Dou Dizhu in the browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                    help="a Host name to answer besides localhost, 127.0.0.1, ::1 and --host (repeatable; requests "
                         "naming any other host get 400, against DNS rebinding)")
    ap.add_argument("--replays", default=None, help="a folder of hand records to open (evaluate.py --save-replays)")
    ap.add_argument("--save-dir", default="hands",
                    help="the folder that keeps each hand played on the page, once it is over (default: hands/, as "
                         "ddz-play); the Replays tab lists them")
    ap.add_argument("--no-save", action="store_true", help="keep no hands on disk (a finished hand can still be "
                                                          "replayed and downloaded from the page)")
    ap.add_argument("--agent", action="append", default=[], metavar="NAME=SPEC",
                    help="let the page seat agent SPEC under the name NAME (any spec evaluate.py --a takes: a run "
                         "folder, a checkpoint or policy .pt, sb3:MODEL.zip, search:BASE, douzero:DIR[?bidder=SPEC]: "
                         "DouZero's networks, a bidder agent bidding and doubling for them, default rule); the "
                         "menus list NAME; repeatable")
    return ap.parse_args(argv)


def agent_options(items: list[str]) -> dict[str, str]:
    """``["dz=douzero:DIR", ...]`` -> ``{"dz": "douzero:DIR"}``; ``ValueError`` naming a bad item."""
    out = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise ValueError(f"--agent takes NAME=SPEC, got {item!r}")
        if name in out:
            raise ValueError(f"--agent {name} is given twice")
        out[name] = spec
    return out


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (a port in use, a host not of this machine), or None:
    tried with a socket bound as uvicorn binds it (SO_REUSEADDR), before the page's address is printed."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"--host {host!r} is not a name or address of this machine ({e.strerror})"
    for family, kind, proto, _, addr in infos:
        with socket.socket(family, kind, proto) as s:
            if os.name != "nt":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(addr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return (f"port {port} is in use on {host} (another ddz-web, or another server): give another "
                            f"one, e.g. --port {port + 1 if 0 < port < 65535 else 8001}")
                return f"cannot listen on {host}:{port} ({e.strerror or e}): give another --port or --host"
    return None


def main(argv=None) -> int:
    import uvicorn

    args = parse_args(argv)
    if args.replays is not None and not os.path.isdir(args.replays):  # said now, not as an empty Replays tab
        print(f"ddz-web: error: --replays {args.replays!r} is not a folder (give the folder of hand records that "
              f"evaluate.py --save-replays wrote)", file=sys.stderr)
        return 2
    try:
        bound = () if args.host in ("0.0.0.0", "::", "") else (args.host,)
        app = create_app(args.replays, agent_options(args.agent), hosts=(*bound, *args.allowed_host),
                         save_dir=None if args.no_save else args.save_dir)
    except ValueError as e:
        print(f"ddz-web: error: {e}", file=sys.stderr)
        return 2
    problem = port_problem(args.host, args.port)  # said before the address is printed, not as uvicorn's error after it
    if problem:
        print(f"ddz-web: error: {problem}", file=sys.stderr)
        return 2
    print(f"ddz-env web: http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


__all__ = ["create_app", "agent_options", "host_name", "LOCAL_HOSTS", "main"]
