"""One action space for every phase of a hand (ids are stable).

:data:`ACTION_TABLE` is the one table of the ids: this table, the AEC env's doc page and docs/environment.md's
table are made from (or checked against) it.

{ACTION_TABLE}

The non-play actions of each phase, in id order (a choice is ``id - first id``), are
:data:`BID_ACTIONS`, :data:`DOUBLE_ACTIONS` and :data:`REDOUBLE_ACTIONS`; which of them are legal
is ``rules.legal_choices``.
"""
from __future__ import annotations

from .cards import as_id
from .moves import NUM_MOVES, PASS, move_id, move_to_string

PLAY_PASS = PASS
BID_PASS = NUM_MOVES
BID_1 = NUM_MOVES + 1
BID_2 = NUM_MOVES + 2
BID_3 = NUM_MOVES + 3
NO_DOUBLE = NUM_MOVES + 4
DOUBLE = NUM_MOVES + 5
NO_REDOUBLE = NUM_MOVES + 6
REDOUBLE = NUM_MOVES + 7
NUM_ACTIONS = NUM_MOVES + 8
#: the non-play actions of each phase, in id order: the one place the pairs are spelled
BID_ACTIONS = (BID_PASS, BID_1, BID_2, BID_3)
DOUBLE_ACTIONS = (NO_DOUBLE, DOUBLE)
REDOUBLE_ACTIONS = (NO_REDOUBLE, REDOUBLE)
#: the first non-play id and how many there are (bids, doubles, redoubles: ids FIRST_CHOICE + 0 .. 7)
FIRST_CHOICE = BID_PASS
NUM_CHOICES = NUM_ACTIONS - NUM_MOVES

#: THE action-id table, in id order: (first id, last id, phase, meaning)
ACTION_TABLE = (
    (PLAY_PASS, PLAY_PASS, "play", "pass (only when responding, R8)"),
    (PLAY_PASS + 1, NUM_MOVES - 1, "play", "a move of the move table (`ddz_env.moves`)"),
    (BID_ACTIONS[0], BID_ACTIONS[-1], "bid", "pass, bid 1, bid 2, bid 3 (R3)"),
    (DOUBLE_ACTIONS[0], DOUBLE_ACTIONS[-1], "double", "no double, double (the farmers, secret until both chose, R5)"),
    (REDOUBLE_ACTIONS[0], REDOUBLE_ACTIONS[-1], "redouble", "no redouble, redouble (the landlord, only if a farmer "
                                                              "doubled, R6)"),
)


def _ids_label(first: int, last: int) -> str:
    if first == last:
        return str(first)
    if last == first + 1:
        return f"{first}, {last}"
    return f"{first} .. {last}"


def action_table(fmt: str = "markdown") -> str:
    """:data:`ACTION_TABLE` as a table: ``"markdown"`` (docs/environment.md, the env's doc page) or ``"rst"`` (this
    module's doc)."""
    rows = [(_ids_label(a, b), phase, meaning) for a, b, phase, meaning in ACTION_TABLE]
    if fmt == "markdown":
        return "\n".join(["| ids | phase | meaning |", "|---|---|---|"] + [f"| {i} | {p} | {m} |" for i, p, m in rows])
    if fmt == "rst":
        w1, w2 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
        w3 = max(len(r[2].replace("`", "``")) for r in rows)
        rule = f"{'=' * w1}  {'=' * w2}  {'=' * w3}"
        out = [rule, f"{'ids':<{w1}}  {'phase':<{w2}}  meaning", rule]
        out += [f"{i:<{w1}}  {p:<{w2}}  {m.replace('`', '``')}" for i, p, m in rows]
        return "\n".join(out + [rule])
    raise ValueError(f"fmt must be 'markdown' or 'rst', got {fmt!r}")


if __doc__ is not None:  # (python -OO strips docstrings)
    __doc__ = __doc__.replace("{ACTION_TABLE}", action_table("rst"))

_NAMES = {
    BID_PASS: "bid pass", BID_1: "bid 1", BID_2: "bid 2", BID_3: "bid 3",
    NO_DOUBLE: "no double", DOUBLE: "double", NO_REDOUBLE: "no redouble", REDOUBLE: "redouble",
}
_BY_NAME = {v: k for k, v in _NAMES.items()}


_PHASE_OF_CHOICE = {a: phase.upper() for first, last, phase, _ in ACTION_TABLE if first >= FIRST_CHOICE
                    for a in range(first, last + 1)}


def phase_of(action: int) -> str:
    """The phase an action id belongs to, read from :data:`ACTION_TABLE`: ``"PLAY"``, ``"BID"``,
    ``"DOUBLE"`` or ``"REDOUBLE"``."""
    return _PHASE_OF_CHOICE.get(int(action), "PLAY")


def bid_action(bid: int) -> int:
    """Action id of a bid (0 = pass, 1..3)."""
    try:
        b = as_id(bid, "bid")
    except TypeError:  # 1.0 or "1" is no bid (and would give a float or fail later)
        b = None
    if b not in (0, 1, 2, 3):
        raise ValueError(f"a bid is 0 (pass), 1, 2 or 3, got {bid!r}")
    return BID_PASS + b


def as_action_id(action) -> int:
    """An action as a Python int (no range check): an int, a numpy integer scalar or a size-1
    integer array; ``TypeError`` naming anything else (a float is never truncated).

    What ``Game.step`` (so ``raw_env.step``) and ``DouDizhuSeatEnv.step`` accept; it is
    :func:`cards.as_id`.
    """
    return as_id(action, "action")


def action_to_string(action: int) -> str:
    """Readable name: a move's cards (``"33344456"``, ``"pass"``) or ``"bid 2"``, ``"double"``..."""
    a = as_id(action, "action")  # TypeError for 2.5: never truncated to 2
    if 0 <= a < NUM_MOVES:
        return move_to_string(a)
    if a in _NAMES:
        return _NAMES[a]
    raise ValueError(f"action id {action} out of range [0, {NUM_ACTIONS})")


def action_from_string(text: str) -> int:
    """Inverse of :func:`action_to_string` (cards in any order are accepted)."""
    if not isinstance(text, str):
        raise TypeError(f"an action name is a string (cards, 'pass', 'bid 2', 'double'...), got {text!r}")
    key = " ".join(text.strip().lower().split())
    if key in _BY_NAME:
        return _BY_NAME[key]
    return move_id(text)


__all__ = [
    "PLAY_PASS", "BID_PASS", "BID_1", "BID_2", "BID_3", "NO_DOUBLE", "DOUBLE", "NO_REDOUBLE", "REDOUBLE",
    "NUM_ACTIONS", "BID_ACTIONS", "DOUBLE_ACTIONS", "REDOUBLE_ACTIONS", "FIRST_CHOICE", "NUM_CHOICES", "ACTION_TABLE",
    "action_table", "bid_action", "action_to_string", "action_from_string", "as_action_id", "phase_of",
]
