"""Hand records: one hand as a versioned JSON document, and the exact :class:`Game` rebuilt from it.

A record holds what is needed to replay the hand and what a reader wants to see at a glance::

    {
      "format": "ddz-hand", "version": 1,
      "deal": {"hands": ["33456...", "...", "..."], "bottom": "7JR",      # 17/17/17 + 3, card strings
               "first_bidder": 2, "landlord": null,                        # landlord: set when bidding is off
               "rules": "rulebook", "doubling": true},                    # Rules.name; doubling: as rules says
      "players": ["pretrained", "rule", "rule"],                          # who sat where (optional)
      "actions": [{"seat": 2, "phase": "BID", "action": 24643, "name": "bid 3"}, ...],
      "result": {"over": true, "void": false, "winner": 0, "landlord": 2, "scores": [-6, -6, 12],
                 "bid": 3, "doubled": [false, true, false], "redoubled": false, "bombs": 0,
                 "rockets": 0, "spring": false, "anti_spring": false, "exponents": [1, 1, 0]},
      "meta": {...}                                                       # free-form (seed, deal index)
    }

``actions`` lists every action in order with its seat and phase; ``action`` is the id of
``actions.py`` and ``name`` its :func:`~ddz_env.actions.action_to_string` (the id decides, the name
is for people). ``result`` is the R19 breakdown: ``exponents[i]`` is farmer ``i``'s exponent
``n_i`` (bombs + rockets + spring + anti-spring + own double + double x redouble), the landlord's
entry holds the common part only. A record of an unfinished hand has ``"over": false``.

``deal`` is the hand's :class:`~ddz_env.rules.Deal` in card strings (``Deal.to_dict(strings=True)``)
plus the rules; :func:`deal_of` reads it back as a ``Deal``. :func:`replay` rebuilds the
:class:`Game` by stepping every action (each is checked legal) and checks the stored result
against the one the rules give; :func:`positions` yields the game after each action, for
viewers. Only the core is needed: no PettingZoo, no torch.
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator, Sequence

from .actions import action_to_string, phase_of
from .files import write_text
from .game import Game, IllegalActionError
from .rules import Deal, Rules
from .scoring import multiplier_exponents

FORMAT = "ddz-hand"
VERSION = 1


class RecordError(ValueError):
    """A record that is malformed, of another format or version, or does not replay."""


def _result(game: Game) -> dict[str, Any]:
    over = game.is_over
    doubled = game.doubled()  # the landlord's entry is False: it never doubles (R5)
    exps = multiplier_exponents(doubled, game.redoubled, game.bombs, game.rockets, game.spring, game.anti_spring)
    return {
        "over": bool(over), "void": bool(game.void), "winner": int(game.winner), "landlord": int(game.landlord),
        "scores": [int(x) for x in game.scores], "bid": int(game.bid),
        "doubled": [bool(x) for x in doubled], "redoubled": bool(game.redoubled),
        "bombs": int(game.bombs), "rockets": int(game.rockets),
        "spring": bool(game.spring), "anti_spring": bool(game.anti_spring),
        "exponents": [int(x) for x in exps],
    }


def record_of(game: Game, players: Sequence[str] | None = None, meta: dict | None = None) -> dict[str, Any]:
    """The record of ``game`` as it stands (finished or not); ``players`` names who sat in seats 0..2."""
    if players is not None:
        players = [str(p) for p in players]
        if len(players) != 3:
            raise ValueError(f"players names the 3 seats, got {len(players)}: {players!r}")
    deal = game.initial_deal
    actions = [{"seat": int(seat), "phase": phase_of(a), "action": int(a), "name": action_to_string(a)}
               for seat, a in game.history]  # (each id's phase from the action table: no replay)
    rec = {
        "format": FORMAT, "version": VERSION,
        "deal": {**deal.to_dict(strings=True), "rules": game.rules.name, "doubling": game.rules.doubling},
        "players": players,
        "actions": actions,
        "result": _result(game),
        "meta": dict(meta or {}),
    }
    return rec


def _check(record: Any) -> dict:
    if not isinstance(record, dict):
        raise RecordError(f"a hand record is a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a hand record: format {record.get('format')!r}, expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise RecordError(f"hand record version {record.get('version')!r} is not supported (this is version {VERSION})")
    for key in ("deal", "actions"):
        if key not in record:
            raise RecordError(f"hand record has no {key!r}")
    deal = record["deal"]
    if not isinstance(deal, dict) or not {"hands", "bottom", "first_bidder"} <= set(deal):
        raise RecordError("record 'deal' needs 'hands', 'bottom' and 'first_bidder'")
    if not isinstance(record["actions"], list):
        raise RecordError("record 'actions' must be a list")
    players = record.get("players")
    if players is not None and not (isinstance(players, list) and len(players) == 3
                                    and all(isinstance(p, str) for p in players)):
        raise RecordError(f"record 'players' must be null or a list of 3 names (strings), got {_short(players)}")
    result = record.get("result")
    if result is not None and not isinstance(result, dict):
        raise RecordError(f"record 'result' must be null or an object (the R19 breakdown), got "
                          f"{type(result).__name__} {_short(result)}")
    return record


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _rules(deal: dict) -> Rules:
    if "rules" in deal:
        return Rules.of(deal["rules"])
    # records written before "rules": the landlord given means bidding was off
    return Rules(bidding=deal.get("landlord") is None, doubling=bool(deal.get("doubling", True)))


def deal_of(record: dict) -> Deal:
    """The record's deal as a :class:`~ddz_env.rules.Deal` (``RecordError`` for a malformed one)."""
    _check(record)
    try:
        return Deal.of(record["deal"])
    except (TypeError, ValueError) as e:
        raise RecordError(f"record 'deal' is not a valid deal: {e}") from None


def _start(record: dict) -> Game:
    try:
        return Game.from_deal(Deal.of(record["deal"]), rules=_rules(record["deal"]))
    except (TypeError, ValueError) as e:
        raise RecordError(f"record 'deal' is not a valid deal: {e}") from None


def _played(record: dict) -> Iterator[Game]:
    """The record's game before any action, then after each action: one :class:`Game`, stepped in place
    (each action checked legal; ``RecordError`` at the first that is not)."""
    game = _start(record)
    yield game
    for k, item in enumerate(record["actions"]):
        if not isinstance(item, dict) or "action" not in item:
            raise RecordError(f"action #{k} of the record is not an object with an 'action' id: {item!r}")
        try:
            game.step(item["action"], seat=item.get("seat"))
        except IllegalActionError as e:
            raise RecordError(f"action #{k} ({item.get('name', item['action'])!r}) does not replay: {e}") from None
        yield game


def positions(record: dict, copy: bool = True) -> Iterator[Game]:
    """The game before any action, then after each action (copies; each action checked legal).
    ``copy=False``: one game, stepped in place, each position good until the next is asked for (a reader
    that only looks at each, such as a spectator's views, saves a deep copy per action)."""
    _check(record)
    for game in _played(record):
        yield game.copy() if copy else game


def replay(record: dict, check_result: bool = True) -> Game:
    """The :class:`Game` after every action of ``record``; with ``check_result`` the stored
    ``result`` (when present) must equal the one the rules give (``RecordError`` otherwise)."""
    _check(record)
    *_, game = _played(record)  # (the one game, after the last action)
    if check_result and record.get("result") is not None:
        want, got = record["result"], _result(game)
        diff = [k for k in got if k in want and want[k] != got[k]]
        if diff:
            k = diff[0]
            raise RecordError(f"record result {k!r} is {want[k]!r} but the replayed hand gives {got[k]!r}")
    return game


def save(record: dict, path: str | os.PathLike) -> None:
    """Write ``record`` as JSON (checked first: nothing is written for a malformed record).

    The file is written whole or not at all (a temporary file, then ``os.replace``): a full disk or
    an interruption leaves the previous file, or none, never a truncated record. ``OSError`` if
    the folder cannot be written."""
    _check(record)
    text = json.dumps(record, indent=1) + "\n"
    write_text(path, text)


#: nesting deeper than this is no hand record (one is 3 levels deep); refused before ``json`` recurses
MAX_DEPTH = 32


def parse(data: str | bytes) -> dict:
    """A record from its JSON text (``bytes`` are read as UTF-8); ``RecordError`` for anything that is
    not one: text that is not UTF-8 or not JSON, nesting deeper than :data:`MAX_DEPTH`, another format."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise RecordError(f"not UTF-8 text (byte {e.start}: {bytes(data[e.start:e.start + 1])!r})") from None
    if not isinstance(data, str):
        raise TypeError(f"a record is parsed from str or bytes, got {type(data).__name__}")
    try:
        record = json.loads(data)
    except json.JSONDecodeError as e:
        raise RecordError(f"not JSON: {e}") from None
    except RecursionError:  # json's C decoder stops nesting (100,000 levels) at the recursion limit
        raise RecordError(f"not a hand record: JSON nested too deeply (a record has 3 levels; at most {MAX_DEPTH})") from None
    depth = _depth(record)
    if depth > MAX_DEPTH:  # else whatever walks it next (a JSON encoder, a copy) may recurse too deep
        raise RecordError(f"not a hand record: JSON nested {depth} levels deep (a record has 3; at most {MAX_DEPTH})")
    return _check(record)


def _depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (without recursion: it may be deeper than the limit)."""
    best = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            best = max(best, d)
            stack.extend((x, d + 1) for x in v)
    return best


def load(path: str | os.PathLike) -> dict:
    """Read a record written by :func:`save`; ``RecordError`` (naming the file) for anything that is
    not one, ``OSError`` for a file that cannot be read."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return parse(data)
    except RecordError as e:
        raise RecordError(f"{os.fspath(path)}: {e}") from None


__all__ = ["FORMAT", "VERSION", "MAX_DEPTH", "RecordError", "record_of", "deal_of", "replay", "positions", "save", "load",
           "parse"]
