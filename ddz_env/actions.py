"""One action space for every phase of a hand (ids are stable).

==================  ==================  ======================================
ids                 phase               meaning
==================  ==================  ======================================
0                   play                pass (only when responding, R8)
1 .. 24639          play                a move of the table (``moves.py``)
24640 .. 24643      bid                 pass, bid 1, bid 2, bid 3 (R3)
24644, 24645        double              no double, double (R5)
24646, 24647        redouble            no redouble, redouble (R6)
==================  ==================  ======================================
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

_NAMES = {
    BID_PASS: "bid pass", BID_1: "bid 1", BID_2: "bid 2", BID_3: "bid 3",
    NO_DOUBLE: "no double", DOUBLE: "double", NO_REDOUBLE: "no redouble", REDOUBLE: "redouble",
}
_BY_NAME = {v: k for k, v in _NAMES.items()}


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
    "NUM_ACTIONS", "bid_action", "action_to_string", "action_from_string", "as_action_id",
]
