"""The web page's tables: the hands being played, the agents that sit at them, the hands kept, the records read.

:class:`Tables` is everything the page's server holds, with no HTTP in it: :mod:`agents.play.web.server`
translates each request into one call here and each :class:`TableError` into a status and a JSON
message. A game's answer, the stale-action rule, the kept hands and the record folders are described
in :mod:`agents.play.web.server`; what each call refuses is one of

======================  =================================================================================
:class:`BadRequest`     a malformed request: an unknown agent, rules or record, no version, an illegal move
:class:`MoveRefused`    a move refused, in words (a :class:`BadRequest` with :attr:`MoveRefused.refusal`)
:class:`NotFound`       no such game or record
:class:`Conflict`       not now: a stale action, a move after the hand is over, a record before it is
:class:`TooLarge`       a record over :data:`MAX_RECORD_BYTES`
:class:`Busy`           not now, too much at once: :data:`MAX_WATCHES_WAITING` watched hands already wait
:class:`AgentFailure`   an agent of the server's could not be loaded or failed at the table
======================  =================================================================================

A refused request leaves everything as it was. No message shows the server's files or folders:
paths are logged, the client is told names only.

A move is checked and applied once: :meth:`Match.play <agents.play.match.Match.play>` lets
``Game.step`` judge it (the refusal in words is worked out only for a move refused), each view's stake
is computed once (:func:`ddz_env.view.seat_view`), the agents' phase and role come from the game, and
the answer's view is the last step's, not a second one.

**Watched hands** are played off the request path: :meth:`Tables.start_watch` checks the request, queues
the hand and answers at once with its id; one worker thread plays the queued hands one after another,
outside the games' lock, with agents of its own (loaded from the same specs, never the games' objects,
which are used under that lock: an agent may keep per-hand state), handing the GIL over between moves;
it writes the finished hand's answer (the record and its spectator positions) as JSON once, and
:meth:`Tables.watched` serves those bytes as they are. A hand of ``rule`` agents takes the worker tens of
milliseconds; the requests served meanwhile wait for no lock of it.
"""
from __future__ import annotations

import errno
import itertools
import json
import logging
import os
import queue
import secrets
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ddz_env.files import folder_problem, write_failure
from ddz_env.game import IllegalActionError
from ddz_env.record import RecordError, parse as parse_record, positions, save as save_record
from ddz_env.rules import Rules

from ...loader import load, registered
from ..explain import Refusal
from ..match import Match, seat_view

MAX_GAMES = 256  # games kept in memory; the oldest is dropped first
#: a hand record's size limit (one is 2-4 KB; evaluate.py --save-replays writes them with indent 1)
MAX_RECORD_BYTES = 1 << 20
MAX_WATCHES = 64  # watched hands kept (their answers, 0.1-0.3 MB each), the oldest finished dropped first
MAX_WATCHES_WAITING = 16  # watched hands queued or being played at once; one more is refused (Busy)
log = logging.getLogger("agents.play.web")


class TableError(Exception):
    """A request the tables refuse; ``str(error)`` is what the client is told."""


class BadRequest(TableError):
    """A malformed request: an unknown agent, bad rules, a bad record, an action without a version, an illegal move."""


class MoveRefused(BadRequest):
    """A person's move refused in words: :attr:`refusal` is :meth:`Refusal.as_dict
    <agents.play.explain.Refusal.as_dict>` (``text``, ``tried``, ``needs``, ``ruling``, ``suggestion``)."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.text)
        self.refusal = refusal.as_dict()


class NotFound(TableError):
    """No such game, or no such record (or not a regular file)."""


class Conflict(TableError):
    """Not now: a stale action, an action after the hand is over, a record before it is."""


class TooLarge(TableError):
    """A hand record over :data:`MAX_RECORD_BYTES`."""


class Busy(TableError):
    """Not now: too much asked at once (:data:`MAX_WATCHES_WAITING` watched hands wait to be played)."""


class AgentFailure(TableError):
    """The server's own fault: an agent could not be loaded, or failed (or chose an illegal action) at the table."""


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: errors quote what the client sent, not all of it."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def _rules(spec: str) -> Rules:
    try:
        return Rules.of(spec)
    except (TypeError, ValueError) as e:
        raise BadRequest(str(e)) from None


def check_agents(agents: dict[str, str] | None) -> dict[str, str]:
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


def record_name(name: str) -> bool:
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


def _version(m: Match) -> int:
    """The actions taken so far: a hand only moves forward, one action at a time, so this names one state."""
    return len(m.game.history)


def spectate(record: dict) -> dict:
    """A hand record's positions as a spectator sees them: ``{"record", "positions"}``; :class:`BadRequest`
    for a record whose actions do not replay."""
    try:
        views = [seat_view(g, None, record.get("players") or None) for g in positions(record, copy=False)]
    except RecordError as e:
        raise BadRequest(f"bad hand record: {e}") from None
    return {"record": record, "positions": views}


def parsed(data: bytes, size: int | None = None) -> dict:
    """A record from bytes (a body or a file; ``size``: the body's whole length when only its start was kept):
    :class:`TooLarge` over the size limit, :class:`BadRequest` for anything else wrong (not UTF-8, not JSON,
    nested deeper than a record, not a hand record)."""
    size = len(data) if size is None else size
    if size > MAX_RECORD_BYTES:
        raise TooLarge(f"bad hand record: {size:,} bytes, over the limit of {MAX_RECORD_BYTES:,}")
    try:
        return parse_record(data)
    except RecordError as e:
        raise BadRequest(f"bad hand record: {e}") from None


def listed(folder: Path | None) -> list[str]:
    """The record names of ``folder``, sorted: regular files only (a symlink to one counts): a pipe, a device
    or a folder named x.json is no record, and opening a pipe would wait for a writer (:func:`read_record`
    refuses them too)."""
    if folder is None or not folder.is_dir():
        return []
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if record_name(e.name) and _regular(e))
    except OSError as e:  # the folder went away or cannot be read: logged with the path, listed empty
        log.error("cannot list %s: %s", folder, e)
        return []


def read_record(folder: Path, name: str, flag: str) -> dict:
    """The positions of record ``name`` of ``folder`` (the operator's ``flag``): a regular file only."""
    if not record_name(name):
        raise BadRequest(f"bad record name {short(name)}: a .json file name of the {flag} folder")
    path = folder / name
    not_regular = NotFound(f"no record {name!r} (it is not a regular file)")
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
        raise NotFound(f"no record {name!r}") from None
    except OSError as e:  # unreadable (permissions, I/O): logged with the path, not shown
        log.error("cannot read %s: %s", path, e)
        raise NotFound(f"record {name!r} cannot be read") from None
    return spectate(parsed(data))


#: errors of ``os.link`` that say the file system makes no hard links (then a name is claimed by creating it)
NO_LINKS = {getattr(errno, n) for n in ("EPERM", "EOPNOTSUPP", "ENOTSUP", "ENOSYS", "EXDEV", "EMLINK", "EACCES")
            if hasattr(errno, n)}


def keep_new(folder: Path, stem: str, record: dict) -> str:
    """Save ``record`` in ``folder`` under the first free name of ``stem.json``, ``stem-2.json``, ...; the name.

    The name is claimed so that no other writer, in this process or another (two servers on one
    ``--save-dir``), can hold it too: the record is written whole into a hidden temporary file, then linked
    to the name, which fails if the name exists (``os.link`` never replaces), and the next name is tried.
    On a file system without hard links the name is created with ``O_EXCL`` (the same guarantee) and the
    whole record then replaces that empty file. ``OSError`` if the folder cannot be written."""
    tmp = folder / f".{stem}.{secrets.token_hex(6)}.tmp"  # (hidden: no listing shows it)
    save_record(record, tmp)  # checked, and written whole or not at all
    try:
        linked = True
        for k in itertools.count(1):
            name = f"{stem}.json" if k == 1 else f"{stem}-{k}.json"
            if linked:
                try:
                    os.link(tmp, folder / name)
                    return name
                except FileExistsError:
                    continue
                except OSError as e:
                    if e.errno not in NO_LINKS:
                        raise
                    linked = False
            try:  # no hard links: claim the name by creating it, then put the record in its place
                os.close(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                continue
            os.replace(tmp, folder / name)
            return name
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


@dataclass
class Watched:
    """A hand agents play for the page to watch: what was asked, then how far it went and its answer."""

    players: list
    seed: int
    deal: int
    rules: Rules
    moves: int = 0  # actions taken so far
    answer: bytes | None = None  # the finished hand's answer, as JSON
    error: TableError | None = None  # why it could not be played

    @property
    def finished(self) -> bool:
        return self.answer is not None or self.error is not None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class Tables:
    """The games played on the page (the newest :data:`MAX_GAMES`), the agents they seat, the hands kept in
    ``save_dir`` and the records of ``replay_dir``.

    ``agents``: more names the page may seat, ``{name: agents.load spec}`` (the operator's ``--agent
    NAME=SPEC``), loaded now; ``save_dir``: the folder that keeps each hand played, once it is over
    (``None``: none kept). ``ValueError`` for a bad name or spec, or a folder that cannot be written. Safe to
    call from several threads: the games are changed under one lock; watched hands are played by a worker
    thread of their own (started at the first one; :meth:`close` ends it), under no lock of the games'.
    """

    def __init__(self, replay_dir: str | os.PathLike | None = None, agents: dict[str, str] | None = None,
                 save_dir: str | os.PathLike | None = None) -> None:
        self.extra = check_agents(agents)
        keep = Path(save_dir) if save_dir is not None else None
        if keep is not None:
            problem = folder_problem(str(keep))
            if problem is not None:
                raise ValueError(f"--save-dir {str(keep)!r}: {problem}; give a folder that can be written")
            keep.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.replays = Path(replay_dir) if replay_dir is not None else None
        self.games: OrderedDict[str, Match] = OrderedDict()
        self.kept: dict[str, dict] = {}  # game id -> {"name", "dir"} or {"error"}, once its hand is over
        self.cache: dict[str, Any] = {}  # loaded agents by name ("random" is never kept: one per game)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.watches: OrderedDict[str, Watched] = OrderedDict()  # watched hands by id, oldest first
        self._watch_agents: dict[str, Any] = {}  # the watcher's own agents (never the games')
        self._watch_lock = threading.Lock()  # the watches' (never held while a hand is played)
        self._watch_ids = itertools.count(1)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._watcher: threading.Thread | None = None
        for name, spec in self.extra.items():  # the operator's agents load now: a bad folder fails at start-up
            try:
                self.cache[name] = load(spec)
            except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
                raise ValueError(f"--agent {name}={spec}: {e}") from None

    # ------------------------------------------------------------------ agents
    def names(self) -> list[str]:
        """The agent names a game can seat: the registered ones, then the operator's."""
        return registered() + sorted(self.extra)

    def _known(self, name: str) -> str:
        """``name`` if the page may seat it; :class:`BadRequest` (one text, whatever the name) otherwise."""
        # a registered name or nothing: anything else would reach load(), which opens files by path
        # (a client's "..", "notes" or "/etc/x" is a file of the server's, and its errors tell folders apart)
        names = self.names()
        if not isinstance(name, str) or name not in names:
            raise BadRequest(f"unknown agent {short(name)}: the page seats the registered agents only "
                             f"({', '.join(names)})")
        return name

    def _load(self, name: str, cache: dict[str, Any]) -> Any:
        """Agent ``name`` of ``cache`` (loaded once; ``random`` fresh each time: it keeps per-stream state)."""
        if name == "random":  # per-stream state: a fresh one per game
            return load(name)
        if name not in cache:
            try:
                cache[name] = load(self.extra.get(name, name))
            except Exception as e:  # noqa: BLE001 - the server's own setup (no torch, a missing file): logged
                log.error("agent %r cannot be loaded: %s: %s", name, type(e).__name__, e)
                raise AgentFailure(f"agent {name!r} cannot be played on this server ({type(e).__name__}; the "
                                   f"server's log has the details)") from None
        return cache[name]

    def agent(self, name: str) -> Any:
        """The agent named ``name`` (loaded once; ``random`` fresh each time: it keeps per-stream state)."""
        return self._load(self._known(name), self.cache)

    # ------------------------------------------------------------------ games
    def _game(self, gid: str) -> Match:
        m = self.games.get(gid)
        if m is None:
            raise NotFound(f"no game {gid!r} (games are kept in memory: a restarted server forgets them)")
        return m

    def _keep_hand(self, gid: str, m: Match) -> dict | None:
        """Save the finished hand in ``save_dir`` (once); where it went, by names only."""
        keep = self.keep
        if keep is None or not m.game.is_over:
            return None
        if gid not in self.kept:
            seat = m.people[0]
            stem = f"web-{time.strftime('%Y%m%d-%H%M%S')}-seed{m.seed}-deal{m.index}-seat{seat}"
            try:  # a name no other server on this folder holds (keep_new claims it)
                name = keep_new(keep, stem, m.record({"human_seat": seat}))
                self.kept[gid] = {"name": name, "dir": keep.name or "."}
            except OSError as e:  # the path is logged, the client gets the reason only
                log.error("cannot keep the hand of game %s in %s: %s", gid, keep / f"{stem}.json", e)
                self.kept[gid] = {"error": f"the hand could not be kept on the server ({write_failure(e)}); "
                                           f"download it"}
        return self.kept[gid]

    def _answer(self, gid: str, m: Match, steps: list | None = None) -> dict:
        """A game's answer: ``{"id", "version", "view", "steps", "kept"}``; the view is the last step's."""
        view = steps[-1] if steps else m.view(m.people[0])
        return {"id": gid, "version": _version(m), "view": view, "steps": steps if steps else [view],
                "kept": self._keep_hand(gid, m)}

    def new_game(self, seat: int = 0, vs: str | Sequence[str] = "rule", seed: int = 0, deal: int = 0,
                 rules: str = "rulebook") -> dict:
        """Deal ``deal`` of ``seed`` with the person at ``seat`` and agents ``vs`` (one name for both, or
        the next seat's and the one after's); the agents act until the person is to act."""
        vs = [vs, vs] if isinstance(vs, str) else list(vs)
        if len(vs) != 2:
            raise BadRequest(f"vs names the 2 other seats' agents, got {len(vs)}")
        table_rules = _rules(rules)
        seats = [(seat + 1) % 3, (seat + 2) % 3]
        agents: list = [None, None, None]
        labels = ["you", "you", "you"]
        for s, name in zip(seats, vs):
            agents[s], labels[s] = self.agent(name), name
        with self._lock:
            try:
                m = Match.deal(agents, labels, seed=seed, index=deal, rules=table_rules)
                steps = [m.view(seat)] + m.advance_views(seat)  # the deal, then each agent's move
            except RuntimeError as e:
                raise AgentFailure(str(e)) from None
            gid = f"g{next(self._ids)}"
            self.games[gid] = m
            while len(self.games) > MAX_GAMES:
                old, _ = self.games.popitem(last=False)
                self.kept.pop(old, None)
            return self._answer(gid, m, steps)

    def game(self, gid: str) -> dict:
        """Game ``gid``'s answer now (its one step: the view)."""
        with self._lock:
            return self._answer(gid, self._game(gid))

    def act(self, gid: str, action: int | str, version: int | None) -> dict:
        """The person of game ``gid`` plays ``action`` (an id or words), chosen in the answer of
        ``version``; then the agents act until the person is to act again. A refused action (the hand
        over, no version, a stale one, an illegal move) plays nothing."""
        with self._lock:
            m = self._game(gid)
            if m.game.is_over:
                raise Conflict("the hand is over")
            if version is None:
                raise BadRequest("the action names no version: send the \"version\" of the answer whose view it "
                                 "was chosen in")
            now = _version(m)
            if version != now:  # checked before anything moves: a refused action plays nothing
                raise Conflict(f"stale action {short(action)}: it was chosen at move {version} of the hand, "
                               f"which is at move {now} now (a second click, or another page, acted first); "
                               f"nothing was played")
            seat = m.people[0]
            try:
                m.play(seat, action)
            except Refusal as e:  # what was tried and what the table needs, in words
                raise MoveRefused(e) from None
            except (IllegalActionError, ValueError, TypeError) as e:
                raise BadRequest(f"{short(action)}: {e}") from None
            steps = [m.view(seat)]
            try:
                steps += m.advance_views(seat)
            except RuntimeError as e:
                raise AgentFailure(str(e)) from None
            return self._answer(gid, m, steps)

    def _finished(self, gid: str) -> tuple[Match, dict]:
        m = self._game(gid)
        if not m.game.is_over:
            raise Conflict("the hand is not over: its record would show the hidden cards")
        return m, m.record({"human_seat": m.people[0]})

    def record(self, gid: str) -> tuple[dict, str]:
        """The finished hand's record and the file name to save it as (the kept file's, else its own)."""
        with self._lock:
            m, rec = self._finished(gid)
            name = (self.kept.get(gid) or {}).get("name") or f"hand-seed{m.seed}-deal{m.index}-seat{m.people[0]}.json"
            return rec, name

    def replay(self, gid: str) -> dict:
        """The finished hand's positions (spectator views)."""
        with self._lock:
            _, rec = self._finished(gid)
        return spectate(rec)

    def watch(self, players: Sequence[str], seed: int = 0, deal: int = 0, rules: str = "rulebook") -> dict:
        """Agents ``players`` play deal ``deal`` of ``seed`` to its end, now, in the caller, with the games'
        agents and under their lock; its positions (spectator views). The server uses :meth:`start_watch`."""
        table_rules = _rules(rules)
        ags = [self.agent(p) for p in players]
        with self._lock:
            m = Match.deal(ags, players, seed=seed, index=deal, rules=table_rules)
            try:
                m.advance()
            except RuntimeError as e:
                raise AgentFailure(str(e)) from None
        return spectate(m.record())

    # ------------------------------------------------------------------ watched hands, off the request path
    def start_watch(self, players: Sequence[str], seed: int = 0, deal: int = 0, rules: str = "rulebook") -> dict:
        """Queue a hand for agents ``players`` to play, deal ``deal`` of ``seed``; at once ``{"id", "done":
        False, "moves": 0}`` (:meth:`watched` tells the rest). The names and rules are checked now
        (:class:`BadRequest`); :class:`Busy` while :data:`MAX_WATCHES_WAITING` hands wait already."""
        table_rules = _rules(rules)
        players = [self._known(p) for p in players]
        if len(players) != 3:
            raise BadRequest(f"players names the 3 seats' agents, got {len(players)}")
        with self._watch_lock:
            waiting = sum(not w.finished for w in self.watches.values())
            if waiting >= MAX_WATCHES_WAITING:
                raise Busy(f"{waiting} watched hands are waiting to be played already: try again in a moment")
            wid = f"w{next(self._watch_ids)}"
            self.watches[wid] = Watched(players, seed, deal, table_rules)
            done = [k for k, w in self.watches.items() if w.finished]  # the oldest finished ones go first
            for k in done[:max(0, len(self.watches) - MAX_WATCHES)]:
                del self.watches[k]
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch_loop, name="ddz-watch", daemon=True)
                self._watcher.start()
            self._jobs.put(wid)
        return {"id": wid, "done": False, "moves": 0}

    def watched(self, wid: str) -> dict | bytes:
        """Watched hand ``wid``: ``{"id", "done": False, "moves"}`` while it is played; once over, its answer
        ``{"id", "done": True, "moves", "record", "positions"}`` as the JSON bytes made once (a spectator's
        views: :func:`spectate`'s). :class:`NotFound` for no such hand; why it failed (:class:`AgentFailure`)."""
        with self._watch_lock:
            w = self.watches.get(wid) if isinstance(wid, str) else None
        if w is None:
            raise NotFound(f"no watched hand {short(wid)} (they are kept in memory, the newest {MAX_WATCHES})")
        if w.error is not None:
            raise type(w.error)(str(w.error))
        if w.answer is not None:
            return w.answer
        return {"id": wid, "done": False, "moves": w.moves}

    def close(self) -> None:
        """End the watcher thread once the hand it plays is over (the hands still queued are not played)."""
        with self._watch_lock:
            if self._watcher is not None:
                self._jobs.put(None)
                self._watcher = None

    def _watch_loop(self) -> None:
        while True:
            wid = self._jobs.get()
            if wid is None:
                return
            with self._watch_lock:
                w = self.watches.get(wid)
            if w is None:
                continue
            try:
                w.answer = self._play_watched(wid, w)
            except TableError as e:
                w.error = e
            except Exception as e:  # noqa: BLE001 - a bug: logged, the page gets a 500 without details
                log.error("watched hand %s failed", wid, exc_info=e)
                w.error = AgentFailure("the watched hand failed on the server (the server's log has the details)")

    def _play_watched(self, wid: str, w: Watched) -> bytes:
        """Play ``w`` (in the watcher thread, under no lock of the games'); its answer as JSON bytes. The GIL is
        handed over after each move and each view (``time.sleep(0)``): the requests in flight meanwhile wait
        for a move of the hand, not for the hand."""
        ags = [self._load(p, self._watch_agents) for p in w.players]
        m = Match.deal(ags, w.players, seed=w.seed, index=w.deal, rules=w.rules)
        views = [_dumps(m.view(None))]
        while not m.game.is_over:
            try:
                m.step_agent()
            except RuntimeError as e:
                raise AgentFailure(str(e)) from None
            w.moves += 1
            time.sleep(0)
            views.append(_dumps(m.view(None)))
        head = _dumps({"id": wid, "done": True, "moves": w.moves, "record": m.record()})
        return f'{head[:-1]},"positions":[{",".join(views)}]}}'.encode()

    # ------------------------------------------------------------------ records
    def replay_list(self) -> dict:
        """The folders' names (no server path) and their records; the kept hands newest first."""
        replays, keep = self.replays, self.keep
        return {"dir": None if replays is None else (replays.name or "."), "records": listed(replays),
                "kept_dir": None if keep is None else (keep.name or "."), "kept": listed(keep)[::-1]}

    def replay_file(self, name: str) -> dict:
        """The positions of record ``name`` of ``replay_dir``."""
        if self.replays is None:
            raise NotFound("the server was started without --replays DIR")
        return read_record(self.replays, name, "--replays")

    def kept_file(self, name: str) -> dict:
        """The positions of kept hand ``name``."""
        if self.keep is None:
            raise NotFound("the server keeps no hands (started with --no-save)")
        return read_record(self.keep, name, "--save-dir")


__all__ = ["Tables", "TableError", "BadRequest", "MoveRefused", "NotFound", "Conflict", "TooLarge", "Busy",
           "AgentFailure", "Watched", "spectate", "parsed", "keep_new", "MAX_GAMES", "MAX_RECORD_BYTES", "MAX_WATCHES",
           "MAX_WATCHES_WAITING"]
