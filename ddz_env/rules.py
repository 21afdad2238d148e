"""The once-per-hand decisions of the rulebook as pure functions; scalars or arrays alike.

``Game`` (one hand) and ``VectorDouDizhu`` (B hands in arrays) both call these, so each ruling
below is decided in one place (RULES.md lists, per ruling, the function that decides it). The
per-play step (R8, R17: which moves beat which, who leads, who went out) stays as two declared
twins, ``Game._play`` and ``VectorDouDizhu._play``, each naming the other: the batched one updates
B hands with array ops, and routing the scalar engine through arrays costs it several times
its speed. Scores are :mod:`ddz_env.scoring` (R18, R19).

=====================  =====================================================================
function               ruling
=====================  =====================================================================
``deal_hand``          R1 (17/17/17 + 3 from one shuffled deck) and the first-bidder draw
``check_deals``        R1, R2: a given deal is three 17-card hands + 3 bottom cards of one deck
``legal_bids``         R3: pass, or any bid above the top bid so far
``bid_outcome``        R3 (a 3 ends the bidding; after three bids the top bidder is landlord),
                       R4 (three passes: a void hand)
``next_first_bidder``  R4: after a void hand the next seat bids first
``doubling_order``     R5: the farmer after the landlord chooses first, then the other
``redouble_allowed``   R6: the landlord may redouble only if a farmer doubled
``default_actions``    R20: the timeout action of every phase
``rewards``            the env's reward: the R19 score, or +1 / -1 by side, times a scale
``Rules``              which phases a hand has (the rulebook, or the DouZero/RLCard setting)
=====================  =====================================================================

``Rules`` is the one value that ``Game``, ``raw_env``, ``VectorDouDizhu``, the seat env, evaluation
and the training config take (``rules="rulebook"`` by default); nothing else carries a
bidding or doubling flag.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import IntEnum
from typing import Any, Mapping

import numpy as np

from .actions import BID_1, BID_3, BID_PASS, NO_DOUBLE, NO_REDOUBLE
from . import cards as _cards  # dealt through the module attribute (a test may substitute a rigged deal)
from .moves import PASS

NUM_SEATS = 3


class Phase(IntEnum):
    """The phases of a hand, in order (the status plane of the observation uses these numbers)."""

    BID = 0
    DOUBLE = 1
    REDOUBLE = 2
    PLAY = 3
    OVER = 4


@dataclass(frozen=True)
class Rules:
    """Which phases a hand has; frozen, compared by value. Presets: ``Rules.of("rulebook")`` (every
    phase, the default) and ``Rules.of("douzero")`` (the DouZero / RLCard setting).

    * ``bidding`` (R3, R4): ``False``: no bidding; the first bidder (drawn as always, or a given
      ``landlord``) is landlord at bid 1.
    * ``doubling`` (R5, R6): ``False``: no doubling and no redouble phase.

    These are the two training settings of the field (R22: they skip phases, they add no
    variant); the rulebook has both on.
    """

    bidding: bool = True
    doubling: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (bool, np.bool_)):  # "false" or 0 would read as a setting nobody meant
                raise TypeError(f"Rules.{f.name} must be True or False, got {v!r}")
            object.__setattr__(self, f.name, bool(v))

    @classmethod
    def of(cls, value: "Rules | str | Mapping[str, Any] | None") -> "Rules":
        """``value`` as a ``Rules``: a ``Rules``; ``None`` (the rulebook); a preset name; a mapping
        or a spec string of fields, e.g. ``{"doubling": False}`` or ``"bidding=true,doubling=false"``
        (fields not given keep the rulebook's). ``ValueError``/``TypeError`` naming what is wrong."""
        if value is None:
            return PRESETS["rulebook"]
        if isinstance(value, Rules):
            return value
        if isinstance(value, str):
            if value in PRESETS:
                return PRESETS[value]
            if "=" not in value:
                raise ValueError(f"rules: unknown preset {value!r}; presets: {', '.join(PRESETS)}, or fields as "
                                 f"'bidding=true,doubling=false'")
            items: dict[str, Any] = {}
            for part in value.split(","):
                key, sep, text = (x.strip() for x in part.partition("="))
                if not sep or text.lower() not in ("true", "false"):
                    raise ValueError(f"rules: bad field {part.strip()!r} in {value!r}; write name=true or name=false")
                items[key] = text.lower() == "true"
            value = items
        if not isinstance(value, Mapping):
            raise TypeError(f"rules must be a Rules, a preset name ({', '.join(PRESETS)}), a mapping of fields or None, "
                            f"got {type(value).__name__} {value!r}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ValueError(f"rules: unknown field(s) {unknown}; fields: {', '.join(sorted(names))}")
        return cls(**value)

    @property
    def name(self) -> str:
        """The preset's name, else the spec string that :meth:`of` reads back."""
        for key, preset in PRESETS.items():
            if preset == self:
                return key
        return ",".join(f"{k}={str(v).lower()}" for k, v in asdict(self).items())

    def to_dict(self) -> dict[str, bool]:
        return asdict(self)

    def __str__(self) -> str:
        return self.name


#: the presets, by name: the 2016 rulebook, and DouZero / RLCard's (fixed landlord at bid 1, no doubling)
PRESETS: dict[str, Rules] = {"rulebook": Rules(), "douzero": Rules(bidding=False, doubling=False)}
RULEBOOK = PRESETS["rulebook"]


def deal_hand(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """``(hands (3, 15), bottom (15,), first_bidder)``: the cards (R1), then the first bidder drawn
    from the same generator (always drawn, so the stream never depends on options).

    Declared twin: ``VectorDouDizhu._deal`` makes the same two draws from each slot's generator
    and counts the cards of many hands at once (the equivalence tests and the golden file hold
    the two together)."""
    hands, bottom = _cards.deal(rng)
    return hands, bottom, int(rng.integers(NUM_SEATS))


def check_deals(hands, bottoms, what: str = "") -> None:
    """R1, R2: each deal (``hands`` (..., 3, 15), ``bottoms`` (..., 15) counts) is three 17-card hands
    and 3 bottom cards of one 54-card deck. ``ValueError`` naming the first bad deal (its index
    when batched) and what is wrong; ``what`` prefixes the message (the caller's name)."""
    h = np.asarray(hands)
    batched = h.ndim == 3
    h = h.reshape(-1, NUM_SEATS, _cards.NUM_RANKS)
    b = np.asarray(bottoms).reshape(-1, _cards.NUM_RANKS)
    sizes, bottom_sizes = h.sum(axis=2), b.sum(axis=1)
    total = h.sum(axis=1) + b
    bad_size = ~((sizes == _cards.HAND_SIZE).all(axis=1) & (bottom_sizes == 3))
    bad = bad_size | (total != _cards.MAX_COUNTS).any(axis=1)
    if not bad.any():
        return
    k = int(np.flatnonzero(bad)[0])
    where = what + (f"deal {k}: " if batched else "")
    if bad_size[k]:
        raise ValueError(f"{where}a deal is 17/17/17 cards + 3 bottom, got {sizes[k].tolist()} + {int(bottom_sizes[k])}")
    r = int(np.flatnonzero(total[k] != _cards.MAX_COUNTS)[0])
    raise ValueError(f"{where}the deal is not one 54-card deck: rank {_cards.RANKS[r]!r} appears {int(total[k, r])} "
                     f"times")


def legal_bids(top: int) -> np.ndarray:
    """R3: the legal bid ids when the top bid so far is ``top`` (0: nobody bid yet)."""
    return np.array([BID_PASS] + list(range(BID_1 + int(top), BID_3 + 1)), dtype=np.int64)


def bid_outcome(bids, value, top):
    """After a seat bid ``value`` (0 pass, 1..3), with ``bids`` (..., 3) already holding it (-1: not
    yet) and ``top`` the top bid before it: ``(top bid now, bidding over, void, landlord)``.

    R3: a 3 ends the bidding at once, else it ends when all three have bid; the top bidder is
    landlord (-1 while bidding goes on, and for a void hand). R4: all three passed: void.
    """
    bids = np.asarray(bids)
    value = np.asarray(value)
    new_top = np.where(value > 0, value, top)
    over = (value == 3) | ((bids >= 0).sum(axis=-1) == NUM_SEATS)
    void = over & (new_top == 0)
    landlord = np.where(over & ~void, np.argmax(bids, axis=-1), -1)
    return new_top, over, void, landlord


def next_first_bidder(first_bidder):
    """R4: after a void hand, the next hand's first bidder is the next seat."""
    return (np.asarray(first_bidder) + 1) % NUM_SEATS


def doubling_order(landlord):
    """R5: ``(first, second)`` farmer to choose (the seat after the landlord, then the one before)."""
    landlord = np.asarray(landlord)
    return (landlord + 1) % NUM_SEATS, (landlord + 2) % NUM_SEATS


def redouble_allowed(double_choice):
    """R6: whether the landlord is asked to redouble, from the farmers' choices (..., 3) (1: doubled)."""
    return (np.asarray(double_choice) == 1).any(axis=-1)


def default_actions(phase, last_move, hand):
    """R20's timeout action: pass the bid, no double, no redouble; in play, pass when responding,
    else lead the smallest single. ``hand`` (..., 15) is the counts of the seat to act."""
    phase = np.asarray(phase)
    lowest = 1 + (np.asarray(hand) > 0).argmax(axis=-1)  # single moves have ids 1..15 in rank order
    play = np.where(np.asarray(last_move) != PASS, PASS, lowest)
    return np.select([phase == Phase.BID, phase == Phase.DOUBLE, phase == Phase.REDOUBLE],
                     [BID_PASS, NO_DOUBLE, NO_REDOUBLE], play)


def rewards(scores, winner, landlord, kind: str = "score", scale: float = 1.0) -> np.ndarray:
    """Each seat's reward (..., 3) float: ``"score"``, the R19 score; ``"win"``, +1 for the winning
    side and -1 for the other (a void hand: 0); times ``scale``."""
    scores = np.asarray(scores)
    if kind == "score":
        return scores * float(scale)
    if kind != "win":
        raise ValueError(f"reward must be 'score' or 'win', got {kind!r}")
    winner = np.asarray(winner)[..., None]
    landlord = np.asarray(landlord)[..., None]
    seats = np.arange(NUM_SEATS)
    won = (seats == landlord) == (winner == landlord)
    out = np.where(won, 1.0, -1.0) * float(scale)
    return np.where(winner >= 0, out, 0.0)


__all__ = ["Rules", "PRESETS", "RULEBOOK", "Phase", "NUM_SEATS", "deal_hand", "check_deals", "legal_bids", "bid_outcome", "next_first_bidder", "doubling_order",
           "redouble_allowed", "default_actions", "rewards"]
