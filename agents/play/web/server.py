"""The local web page: play a hand against agents, watch agents play, step through hand records.

    python -m agents.play.web [--port 8000] [--host 127.0.0.1] [--save-dir hands] [--replays DIR] [--agent NAME=SPEC ...]

``--port`` is 1 to 65535, or 0 for any free port (the address printed names the one taken); a port out of
range, or one in use, is one ``error:`` line (exit 2).

A FastAPI app serving one static page (``static/``: plain HTML, JS and CSS, no build step) and a
small JSON API. The server holds the games (:class:`~agents.play.web.tables.Tables`: the page's state, with no
HTTP in it; the routes here only read requests and turn its refusals into a status and ``{"error"}``); the
browser gets only :func:`~agents.play.match.seat_view` of the person's seat, so secrecy is enforced here:
during play no response carries another seat's cards or the bottom before its reveal. A hand's full record
is served once it is over.

======================================  ==========================================================
``GET  /api/agents``                    the agent names a game can seat
``POST /api/games``                     new hand: ``{"seat", "vs": [a, b], "seed", "deal", "rules"}``
``GET  /api/games/{id}``                the person's view
``POST /api/games/{id}/action``         ``{"action": "33" | "pass" | "bid 3" | "double" | id, "version": n}``
``GET  /api/games/{id}/record``         the hand record (409 until the hand is over); ``?download=1``
                                        sends it as a file to save
``GET  /api/games/{id}/replay``         the finished hand's positions (spectator views), as ``/api/replay``
``POST /api/watch``                     agents only: ``{"players": [a, b, c], "seed", "deal", "rules"}``; 202
                                        ``{"id", "done": false, "moves": 0}`` at once: the hand is played
                                        off the request path (below)
``GET  /api/watch/{id}``                a watched hand: ``{"id", "done": false, "moves"}`` while it is
                                        played, then ``{"id", "done": true, "moves", "record", "positions"}``
``POST /api/replay``                    a hand record in, its positions (spectator views) out
``GET  /api/replays``                   the names of the kept hands (``--save-dir``) and of ``--replays DIR``
``GET  /api/kept/{name}``               a kept hand's positions; ``/api/replays/{name}``: a ``--replays`` record's
======================================  ==========================================================

**Watched hands** are played by a worker thread of the server's, one after another, outside the games'
lock and with agents of its own (:meth:`Tables.start_watch <agents.play.web.tables.Tables.start_watch>`):
``POST /api/watch`` answers at once with the hand's id, and the page reads ``GET /api/watch/{id}`` until the
hand is over (its answer, the record and the spectator positions of ``/api/replay``, is made once, as JSON
bytes). A hand that failed is a 500 there, with the agent's name; more than
:data:`~agents.play.web.tables.MAX_WATCHES_WAITING` hands waiting is a 503; the newest
:data:`~agents.play.web.tables.MAX_WATCHES` are kept in memory.

**Threads**: uvicorn serves on one event loop; each route runs in its thread pool (anyio's, 40 threads),
``/api/agents`` on the loop itself. The games change under one lock (a move and the agents' replies to it);
a watched hand holds no lock of theirs, and its worker hands the GIL over after each move.

**Bodies** are bounded before anything parses them: a request body over :data:`MAX_BODY_BYTES` (64 KiB; the
page's are under 100 bytes, a hand record under 8 KB), or a record posted to ``/api/replay`` over
``MAX_RECORD_BYTES`` (1 MiB), is read to its end without being kept (up to :data:`MAX_DRAIN_BYTES`; past that
the connection is closed) and answered with a 413 in one line.

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
a 400. (The page also keeps a new decision's controls off for their first 0.4 s, ``ARM_MS`` in ``static/app.js``:
a double click's second click never lands on them, at any pace.)

**Kept hands**: each hand played on the page is saved, once it is over, in the folder the server's
operator names with ``--save-dir`` (default ``hands/``, as ``ddz-play``; ``--no-save``: none), as
``web-YYYYmmdd-HHMMSS-seedS-dealD-seatX.json``; the Replays tab lists them. The server names the
file; no request names a file or a folder. Of both folders only regular files are listed and read: a pipe, a
device or a folder named ``x.json`` is left out of the list and a 404 when asked for (opening a pipe would wait
for a writer, holding the request).

The page seats agents by name only: the registered names (``random``, ``rule``, ``pretrained``), and
the names the server's operator adds with ``--agent NAME=SPEC`` (any ``agents.load`` spec, those
``agents.loader.SPEC_KINDS`` lists: a checkpoint or policy ``.pt``, a run folder, ``sb3:``, ``rllib:``, ``search:``,
``douzero:DIR``, ``onnx:FILE.onnx``, e.g. ``--agent
douzero=douzero:baselines/douzero_ADP``), listed as ``NAME`` (never as the kind its checkpoint names,
``dmc`` or ``movescore``: :func:`agents.loader.registered` leaves those out).
A request never names a file or a folder.

Only requests whose Host header names this machine (``localhost``, ``127.0.0.1``, ``::1``), the ``--host``
it is bound to or an ``--allowed-host`` are answered; any other Host gets 400 JSON (a page of another site
could otherwise reach the server through DNS rebinding).

Errors are ``{"error": "..."}`` with status 400 (bad request, illegal move, unknown agent,
malformed record), 404 (unknown game, watched hand, file or route), 405, 409, 413 (a body over
:data:`MAX_BODY_BYTES`, a record over ``MAX_RECORD_BYTES``) or 503 (too many watched hands waiting);
a refused move leaves the game as it was. A failure of the server itself
is ``{"error": ...}`` with 500, never a plain-text page. No error text shows the server's files
or folders.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any, Union

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ...loader import SPEC_KINDS
from .tables import (MAX_GAMES, MAX_RECORD_BYTES, AgentFailure, BadRequest, Busy, Conflict, MoveRefused, NotFound,
                     TableError, Tables, TooLarge, parsed, spectate)

STATIC = Path(__file__).parent / "static"
MAX_ERROR_CHARS = 1000  # an error text's length limit
#: a request body's size limit (but a record posted to /api/replay: MAX_RECORD_BYTES). The page's bodies are
#: under 100 bytes (a new hand 87 at most, a watched hand 95, a move less), a hand record under 8 KB (the
#: largest of 200 random hands: 7.6 KB); json and Pydantic took 12-25 s and 1.2 GB over one of 13 MB
MAX_BODY_BYTES = 64 << 10
#: how much of a body over its limit is read (and dropped) so that the client gets its 413 rather than a
#: connection reset under its upload; past this the connection is closed
MAX_DRAIN_BYTES = 64 << 20
#: the HTTP status of each kind of refusal of the tables (a MoveRefused is a BadRequest: 400)
STATUS = {BadRequest: 400, NotFound: 404, Conflict: 409, TooLarge: 413, Busy: 503, AgentFailure: 500}
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
    # that a missing one gets a plain sentence (Tables.act) rather than the validator's "Field required"
    version: Union[int, None] = Field(None, ge=0, strict=True)


class Watch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    players: list[str] = Field(default_factory=lambda: ["rule", "rule", "rule"], min_length=3, max_length=3)
    seed: int = Field(0, ge=0)
    deal: int = Field(0, ge=0)
    rules: str = "rulebook"


def _error_response(status: int, text: str, headers=None) -> JSONResponse:
    if len(text) > MAX_ERROR_CHARS:  # (an error may quote what the client sent: not 100 KB of it)
        text = text[:MAX_ERROR_CHARS] + "..."
    return JSONResponse({"error": text}, status_code=status, headers=headers)


def status_of(error: TableError) -> int:
    """The HTTP status of a refusal of the tables."""
    return next((STATUS[kind] for kind in type(error).__mro__ if kind in STATUS), 400)


#: the Host names the server answers by default (this machine's); others get 400, so that a page of another
#: site cannot reach the server through DNS rebinding (its requests carry that site's name as Host)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The name of a Host header without its port, lower case (``[::1]:8000`` -> ``::1``)."""
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _json(value: Any, status: int = 200) -> JSONResponse:
    """``value`` as JSON, straight (``json.dumps``): a route's dict returned as is would first be walked by
    FastAPI's ``jsonable_encoder``, 60 ms for a watched hand's positions."""
    return JSONResponse(value, status_code=status)


def _header(scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


async def _drain(receive, size: int) -> tuple[int, bool]:
    """Read and drop a body's rest, up to :data:`MAX_DRAIN_BYTES` in all; (bytes seen, whether it ended)."""
    more = True
    while more and size <= MAX_DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return size, False
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    return size, not more


class Guard:
    """ASGI middleware in front of the app: only requests to a served Host name (:data:`LOCAL_HOSTS` and the
    operator's), and only bodies within their limit (:data:`MAX_BODY_BYTES`; ``/api/replay``:
    ``MAX_RECORD_BYTES``), reach it. A body is read here, in full, before any route parses it; one over its
    limit (said by its Content-Length, or counted as it comes) is drained and answered 413 in one line."""

    def __init__(self, app, allowed: set[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        name = host_name(_header(scope, b"host") or "")
        if name not in self.allowed:
            shown = name[:64] + ("..." if len(name) > 64 else "")
            await _error_response(400, f"Host {shown!r} is not served here (served: {', '.join(sorted(self.allowed))}; "
                                       f"the operator adds names with --allowed-host)")(scope, receive, send)
            return
        record = scope["path"] == "/api/replay"
        limit = MAX_RECORD_BYTES if record else MAX_BODY_BYTES
        try:
            declared = int(_header(scope, b"content-length") or -1)
        except ValueError:
            declared = -1
        chunks: list[bytes] = []
        size, more, too_big = 0, True, declared > limit  # (a Content-Length over the limit: no byte is kept)
        while more and not too_big:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body = message.get("body", b"")
            size += len(body)
            more, too_big = message.get("more_body", False), size > limit
            if not too_big:
                chunks.append(body)
        if too_big:
            ended = not more
            if more:
                size, ended = await _drain(receive, size)
            said = f"{max(size, declared):,} bytes" if ended or declared > limit else f"over {size:,} bytes"
            what = "bad hand record" if record else "request body"
            await _error_response(413, f"{what}: {said}, over the limit of {limit:,}",
                                  None if ended else {"Connection": "close"})(scope, receive, send)
            return
        body, sent = b"".join(chunks), False

        async def replay():  # the body, whole, then what the server says next (a disconnect)
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def create_app(replay_dir: str | os.PathLike | None = None, agents: dict[str, str] | None = None,
               hosts: tuple[str, ...] | list[str] = (), save_dir: str | os.PathLike | None = None) -> FastAPI:
    """The app; ``replay_dir`` is a folder of hand records to list and open (optional); ``agents``: more
    names the page may seat, ``{name: agents.load spec}`` (the operator's ``--agent NAME=SPEC``); ``hosts``:
    Host names served besides :data:`LOCAL_HOSTS` (the ``--host`` it is bound to, ``--allowed-host``);
    ``save_dir``: the folder that keeps each hand played on the page once it is over (``None``: none kept;
    ``ValueError`` if it cannot be written). What it holds is a :class:`~agents.play.web.tables.Tables`; the
    routes only read requests and turn its refusals into a status and ``{"error"}``."""
    tables = Tables(replay_dir, agents, save_dir)
    allowed = {host_name(h) for h in (*LOCAL_HOSTS, *hosts)}

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        tables.close()  # the watcher thread ends

    app = FastAPI(title="ddz-env", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.tables = tables
    app.add_middleware(Guard, allowed=allowed)

    @app.exception_handler(TableError)
    async def _refused(request: Request, exc: TableError):
        if isinstance(exc, MoveRefused):  # what was tried and what the table needs, in words
            return JSONResponse({"error": str(exc), "refusal": exc.refusal}, status_code=400)
        return _error_response(status_of(exc), str(exc))

    @app.exception_handler(StarletteHTTPException)  # (also FastAPI's, and the router's 404 / 405)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        return _error_response(exc.status_code, str(exc.detail), exc.headers)

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

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/agents")
    async def agents_list():  # (no lock, no file: on the event loop, no thread)
        return _json({"agents": tables.names()})

    @app.post("/api/games")
    def new_game(req: NewGame):
        return _json(tables.new_game(req.seat, req.vs, req.seed, req.deal, req.rules))

    @app.get("/api/games/{gid}")
    def get_game(gid: str):
        return _json(tables.game(gid))

    @app.post("/api/games/{gid}/action")
    def act(gid: str, req: Action):
        return _json(tables.act(gid, req.action, req.version))

    @app.get("/api/games/{gid}/record")
    def game_record(gid: str, download: bool = False):
        rec, name = tables.record(gid)
        if not download:
            return _json(rec)
        return JSONResponse(rec, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/api/games/{gid}/replay")
    def game_replay(gid: str):
        return _json(tables.replay(gid))

    @app.post("/api/watch", status_code=202)
    def watch(req: Watch):
        return _json(tables.start_watch(req.players, req.seed, req.deal, req.rules), status=202)

    @app.get("/api/watch/{wid}")
    def watched(wid: str):
        answer = tables.watched(wid)
        if isinstance(answer, bytes):  # the finished hand's answer, made once
            return Response(answer, media_type="application/json")
        return _json(answer)

    @app.post("/api/replay")
    async def replay(request: Request):
        # the body is read to its end but kept only up to the limit: answering before the client has
        # sent it all would reset the connection under it (a broken pipe) instead of giving this 413
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= MAX_RECORD_BYTES:
                chunks.append(chunk)
        return _json(spectate(parsed(b"".join(chunks), size)))

    @app.get("/api/replays")
    def replay_list():
        return _json(tables.replay_list())

    @app.get("/api/replays/{name}")
    def replay_file(name: str):
        return _json(tables.replay_file(name))

    @app.get("/api/kept/{name}")
    def kept_file(name: str):
        return _json(tables.kept_file(name))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def port_number(text: str) -> int:
    """``--port``'s value: 0 (any free port) to 65535; ``argparse.ArgumentTypeError`` in words otherwise."""
    try:
        port = int(text, 10)
    except ValueError:
        port = None
    if port is None or not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535 (0: any free port)")
    return port


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as the server's other errors (no usage block above it)
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")


def parse_args(argv=None):
    ap = _Parser(prog="ddz-web", description="Play and watch Dou Dizhu in the browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=port_number, default=8000,
                    help="port to listen on, 1 to 65535 (default 8000; 0: any free port, printed)")
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
                    help=f"let the page seat agent SPEC under the name NAME; the menus list NAME; repeatable. SPEC "
                         f"is any spec evaluate.py --a takes: {SPEC_KINDS}")
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


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` as uvicorn binds one (IPv6 for a host with a colon, SO_REUSEADDR) and
    listening, for uvicorn to serve on: the address printed is the one served (``port`` 0: the free port
    taken), and no other server can take it in between. ``ValueError`` in one line for a port in use or a
    host not of this machine, before the page's address is printed."""
    family = socket.AF_INET6 if host and ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host or None, port, family, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ValueError(f"--host {host!r} is not a name or address of this machine ({e.strerror})") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(2048)  # (uvicorn's backlog): a request sent once the address is printed waits, not refused
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise ValueError(f"port {port} is in use on {host} (another ddz-web, or another server): give another "
                             f"one, e.g. --port {port + 1 if 0 < port < 65535 else 8001}") from None
        raise ValueError(f"cannot listen on {host}:{port} ({e.strerror or e}): give another --port or --host") from None
    return sock


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
    try:  # said before the address is printed, not as uvicorn's error after it
        sock = listen_socket(args.host, args.port)
    except ValueError as e:
        print(f"ddz-web: error: {e}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"ddz-env web: http://{shown}:{port}/", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=port, log_level="warning"))
    server.run(sockets=[sock])
    return 0


__all__ = ["create_app", "agent_options", "host_name", "status_of", "listen_socket", "port_number", "LOCAL_HOSTS",
           "MAX_GAMES", "MAX_RECORD_BYTES", "MAX_BODY_BYTES", "main"]
