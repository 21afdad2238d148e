"""The local web page: play a hand against agents, watch agents play, step through hand records.

    python -m agents.web [--port 8000] [--host 127.0.0.1] [--replays DIR] [--agent NAME=SPEC ...]

A FastAPI app serving one static page (``static/``: plain HTML, JS and CSS, no build step) and a
small JSON API. The server holds the games; the browser gets only :func:`~agents.match.seat_view`
of the person's seat, so secrecy is enforced here: during play no response carries another
seat's cards or the bottom before its reveal. A hand's full record is served once it is over.

======================================  ==========================================================
``GET  /api/agents``                    the agent names a game can seat
``POST /api/games``                     new hand: ``{"seat", "vs": [a, b], "seed", "deal", "rules"}``
``GET  /api/games/{id}``                the person's view
``POST /api/games/{id}/action``         ``{"action": "33" | "pass" | "bid 3" | "double" | id}``
``GET  /api/games/{id}/record``         the hand record (409 until the hand is over)
``POST /api/watch``                     agents only: ``{"players": [a, b, c], "seed", "deal", "rules"}``
``POST /api/replay``                    a hand record in, its positions (spectator views) out
``GET  /api/replays``, ``/api/replays/{name}``   the records of ``--replays DIR``
======================================  ==========================================================

The page seats agents by name only: the registered names (``random``, ``rule``, ``pretrained``), and
the names the server's operator adds with ``--agent NAME=SPEC`` (any ``agents.load`` spec: a
checkpoint, a run folder, ``douzero:DIR``, e.g. ``--agent douzero=douzero:baselines/douzero_ADP``).
A request never names a file or a folder.

Errors are ``{"error": "..."}`` with status 400 (bad request, illegal move, unknown agent,
malformed record), 404 (unknown game or file) or 409; a refused move leaves the game as it was.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Union

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from ddz_env.game import IllegalActionError
from ddz_env.record import RecordError, load as load_record, positions
from ddz_env.rules import Rules

from ..loader import load, registered
from ..match import Match, seat_view

STATIC = Path(__file__).parent / "static"
MAX_GAMES = 256  # games kept in memory; the oldest is dropped first


class NewGame(BaseModel):
    seat: int = Field(0, ge=0, le=2)
    vs: Union[str, list[str]] = "rule"
    seed: int = 0
    deal: int = Field(0, ge=0)
    rules: str = "rulebook"


class Action(BaseModel):
    action: Union[int, str]


class Watch(BaseModel):
    players: list[str] = Field(default_factory=lambda: ["rule", "rule", "rule"], min_length=3, max_length=3)
    seed: int = 0
    deal: int = Field(0, ge=0)
    rules: str = "rulebook"


def _error(status: int, message: str) -> HTTPException:
    return HTTPException(status_code=status, detail=message)


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


def create_app(replay_dir: str | os.PathLike | None = None, agents: dict[str, str] | None = None) -> FastAPI:
    """The app; ``replay_dir`` is a folder of hand records to list and open (optional); ``agents``: more
    names the page may seat, ``{name: agents.load spec}`` (the operator's ``--agent NAME=SPEC``)."""
    extra = _check_agents(agents)
    app = FastAPI(title="ddz-env", docs_url=None, redoc_url=None)
    games: OrderedDict[str, Match] = OrderedDict()
    lock = threading.Lock()
    ids = itertools.count(1)
    cache: dict[str, Any] = {}
    for name, spec in extra.items():  # the operator's agents load now: a bad folder fails at start-up
        try:
            cache[name] = load(spec)
        except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
            raise ValueError(f"--agent {name}={spec}: {e}") from None
    replays = Path(replay_dir) if replay_dir is not None else None

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _bad_body(request: Request, exc: RequestValidationError):
        errs = exc.errors()
        first = errs[0] if errs else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return JSONResponse({"error": f"bad request: {where or 'body'}: {first.get('msg', 'invalid')}"}, status_code=400)

    def agent(spec: str):
        if not isinstance(spec, str) or not spec:
            raise _error(400, f"an agent is a name, got {spec!r}")
        if spec not in names():  # names only: never a path or a folder from a request
            raise _error(400, f"unknown agent {spec!r}: the page seats these agents only ({', '.join(names())})")
        if spec == "random":  # per-stream state: a fresh one per game
            return load(spec)
        if spec not in cache:
            try:
                cache[spec] = load(extra.get(spec, spec))
            except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
                raise _error(400, str(e)) from None
        return cache[spec]

    def names() -> list[str]:
        return registered() + sorted(extra)

    def game(gid: str) -> Match:
        m = games.get(gid)
        if m is None:
            raise _error(404, f"no game {gid!r} (games are kept in memory: a restarted server forgets them)")
        return m

    def state(gid: str, m: Match) -> dict:
        seat = m.people[0]
        return {"id": gid, "view": m.view(seat)}

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
                m.advance()
            except RuntimeError as e:
                raise _error(500, str(e)) from None
            gid = f"g{next(ids)}"
            games[gid] = m
            while len(games) > MAX_GAMES:
                games.popitem(last=False)
            return state(gid, m)

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
            seat = m.people[0]
            try:
                m.play(seat, req.action)
            except (IllegalActionError, ValueError, TypeError) as e:
                raise _error(400, f"{req.action!r}: {e}") from None
            try:
                m.advance()
            except RuntimeError as e:
                raise _error(500, str(e)) from None
            return state(gid, m)

    @app.get("/api/games/{gid}/record")
    def game_record(gid: str):
        with lock:
            m = game(gid)
            if not m.game.is_over:
                raise _error(409, "the hand is not over: its record would show the hidden cards")
            return m.record({"human_seat": m.people[0]})

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

    @app.post("/api/replay")
    async def replay(request: Request):
        try:
            record = await request.json()
        except ValueError:
            raise _error(400, "bad hand record: the body is not JSON") from None
        return spectate(record)

    @app.get("/api/replays")
    def replay_list():
        if replays is None:
            return {"dir": None, "records": []}
        files = sorted(p.name for p in replays.glob("*.json")) if replays.is_dir() else []
        return {"dir": str(replays), "records": files}

    @app.get("/api/replays/{name}")
    def replay_file(name: str):
        if replays is None:
            raise _error(404, "the server was started without --replays DIR")
        if "/" in name or "\\" in name or name.startswith(".") or not name.endswith(".json"):
            raise _error(400, f"bad record name {name!r}")
        path = replays / name
        if not path.is_file():
            raise _error(404, f"no record {name!r} in {replays}")
        try:
            record = load_record(path)
        except RecordError as e:
            raise _error(400, f"bad hand record: {e}") from None
        return spectate(record)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def parse_args(argv=None):
    import argparse

    ap = argparse.ArgumentParser(prog="ddz-web", description="Play and watch Dou Dizhu in the browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--replays", default=None, help="a folder of hand records to open (evaluate.py --save-replays)")
    ap.add_argument("--agent", action="append", default=[], metavar="NAME=SPEC",
                    help="let the page seat agent SPEC (a checkpoint, a run folder, douzero:DIR[?bidder=SPEC]: "
                         "DouZero's networks, a bidder agent bidding and doubling for them, default rule) under "
                         "the name NAME; repeatable")
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


def main(argv=None) -> int:
    import uvicorn

    args = parse_args(argv)
    try:
        app = create_app(args.replays, agent_options(args.agent))
    except ValueError as e:
        print(f"ddz-web: error: {e}", file=sys.stderr)
        return 2
    print(f"ddz-env web: http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


__all__ = ["create_app", "agent_options", "main"]
