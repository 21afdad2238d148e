"""The once-per-hand decisions of the rulebook as pure functions; scalars or arrays alike.

``Game`` (one hand) and ``VectorDouDizhu`` (B hands in arrays) both call these, so each ruling
below is decided in one place (RULES.md lists, per ruling, the function that decides it). The
per-play step (R8, R17: which moves beat which, who leads, who went out) stays as two declared
twins, ``Game._play`` and ``VectorDouDizhu._play``, each naming the other: the batched one updates
B hands with array ops, and routing the scalar engine through arrays costs it several times
its speed. Scores, and finishing a hand, are `ddz_env.scoring` (R18, R19).

=====================  =====================================================================
function               ruling
=====================  =====================================================================
``deal_hand``          R1 (17/17/17 + 3 from one shuffled deck) and the first-bidder draw: a ``Deal``
``check_deals``        R1, R2: a given deal is three 17-card hands + 3 bottom cards of one deck
``Deal``               one deal (cards, first bidder, a fixed landlord), checked by ``check_deals``
``legal_choices``      R3, R5, R6: the legal bids (pass, or any bid above the top bid so far),
                       doubles and redoubles (the table ``LEGAL_CHOICES``); ``legal_bids``: R3's ids
``bid_outcome``        R3 (a 3 ends the bidding; after three bids the top bidder is landlord),
                       R4 (three passes: a void hand)
``next_first_bidder``  R4: after a void hand the next seat bids first
``doubling_order``     R5: the farmer after the landlord chooses first, then the other
``redouble_allowed``   R6: the landlord may redouble only if a farmer doubled
``default_actions``    R20: the timeout action of every phase
``rewards``            the env's reward: the R19 score, or +1 / -1 by side, times a scale
``Rules``              which phases a hand has (the rulebook, or the DouZero/RLCard setting)
``role_of``            a seat's role (``Role``: landlord, farmer after it, farmer before it; the
                       table ``ROLE_OF``)
``as_seat``            a seat argument checked (0, 1 or 2; never a float)
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

from .actions import (
    BID_ACTIONS, BID_PASS, DOUBLE_ACTIONS, FIRST_CHOICE, NO_DOUBLE, NO_REDOUBLE, NUM_CHOICES, REDOUBLE_ACTIONS,
)
from . import cards as _cards  # dealt through the module attribute (a test may substitute a rigged deal)
from .cards import NUM_SEATS, as_counts, as_id
from .moves import PASS


class Phase(IntEnum):
    """The phases of a hand, in order (the status plane of the observation uses these numbers)."""

    BID = 0
    DOUBLE = 1
    REDOUBLE = 2
    PLAY = 3
    OVER = 4


class Role(IntEnum):
    """A seat's role once the landlord is known (the status plane of the observation uses these numbers)."""

    LANDLORD = 0
    FARMER_AFTER = 1  # the farmer who plays after the landlord ("down")
    FARMER_BEFORE = 2  # the farmer who plays before it ("up")


#: ROLE_OF[seat, landlord + 1]: the ``Role`` of ``seat`` (-1 in column 0: no landlord yet); a table
#: built once at import, read-only. The one place roles are spelled (``Game.role``, ``role_of``, the
#: planes of both encoders and ``VectorDouDizhu.roles`` read it).
ROLE_OF = np.array([[-1] + [(seat - lord) % NUM_SEATS for lord in range(NUM_SEATS)] for seat in range(NUM_SEATS)],
                   np.int8)
ROLE_OF.flags.writeable = False


def role_of(seat, landlord):
    """The role (``Role``: 0 landlord, 1 the farmer after it, 2 the farmer before it) of ``seat`` when
    ``landlord`` is the landlord's seat; -1 while there is none (``landlord`` -1). Scalars or arrays."""
    return ROLE_OF[seat, np.asarray(landlord) + 1]


def as_seat(value, what: str = "seat") -> int:
    """``value`` as a seat 0, 1 or 2 (an integer, as `cards.as_id` reads one); ``ValueError``
    naming ``what`` and the value otherwise (a float such as 1.0 or 1.5 is no seat, nor a string)."""
    try:
        s = as_id(value, what)
    except TypeError:
        s = None
    if s not in (0, 1, 2):
        raise ValueError(f"{what} must be 0, 1 or 2, got {value!r}")
    return s


def check_hands_arg(hands) -> None:
    """``TypeError`` unless ``hands`` is a sequence, ``ValueError`` unless of 3 hands."""
    try:
        n = None if isinstance(hands, (str, bytes, dict)) else len(hands)
    except TypeError:
        n = None
    if n is None:
        raise TypeError(f"hands must be a sequence of 3 hands (card strings or ({_cards.NUM_RANKS},) count vectors), "
                        f"got {type(hands).__name__} {hands!r}")
    if n != NUM_SEATS:
        raise ValueError(f"need 3 hands, got {n}")


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
        """The preset's name, else the spec string that `of` reads back."""
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


@dataclass(frozen=True, eq=False)
class Deal:
    """One deal: the three hands (3, 15) and the bottom (15,) as read-only int8 counts (R1, R2:
    checked by `check_deals`), the first bidder, and ``landlord``: the fixed landlord of a
    hand without bidding (``None``: the first bidder is landlord then; with bidding it must be None).

    The one deal value: `deal_hand` deals one, ``Game.from_deal`` / ``Game.initial_deal``,
    ``VectorDouDizhu.load_deals`` / ``deal_of``, the AEC env's ``options["deal"]``, hand records
    and the arena take or give it. Built from card strings or counts (``Deal(hands, bottom,
    first_bidder)``) or by `of` from the shapes people write (a dict, a tuple). Read it by its
    fields (``d.hands``, ``d.bottom``, ``d.first_bidder``, ``d.landlord``); ``to_dict`` gives the
    dict of a record.
    """

    hands: np.ndarray
    bottom: np.ndarray
    first_bidder: int = 0
    landlord: int | None = None

    def __post_init__(self) -> None:
        check_hands_arg(self.hands)
        fb = as_seat(self.first_bidder, "first_bidder")
        lord = None if self.landlord is None else as_seat(self.landlord, "landlord")
        h = np.stack([as_counts(x) for x in self.hands]).astype(np.int8)
        b = as_counts(self.bottom).astype(np.int8)
        check_deals(h, b)  # R1, R2
        self._set(h, b, fb, lord)

    def _set(self, h: np.ndarray, b: np.ndarray, fb: int, lord: int | None) -> None:
        h.flags.writeable = False
        b.flags.writeable = False
        for name, v in (("hands", h), ("bottom", b), ("first_bidder", fb), ("landlord", lord)):
            object.__setattr__(self, name, v)

    @classmethod
    def _trusted(cls, hands: np.ndarray, bottom: np.ndarray, first_bidder: int, landlord: int | None = None) -> "Deal":
        """A deal from counts known to be good (dealt, or held by a checked hand): no check, copied."""
        d = object.__new__(cls)
        d._set(np.array(hands, np.int8), np.array(bottom, np.int8), int(first_bidder),
               None if landlord is None else int(landlord))
        return d

    @classmethod
    def of(cls, value: "Deal | Mapping[str, Any] | tuple") -> "Deal":
        """``value`` as a ``Deal``: a ``Deal``; a tuple ``(hands, bottom, first_bidder[, landlord])``; a
        mapping with ``hands``, ``bottom`` and optionally ``first_bidder`` (default 0) and ``landlord``
        (the AEC env's ``options["deal"]``, a record's ``deal``: other keys are not read)."""
        if isinstance(value, Deal):
            return value
        if isinstance(value, Mapping):
            if "hands" not in value or "bottom" not in value:
                raise ValueError(f"a deal needs 'hands' (3 hands) and 'bottom', got keys {sorted(value)}")
            return cls(value["hands"], value["bottom"], value.get("first_bidder", 0), value.get("landlord"))
        if isinstance(value, (tuple, list)) and len(value) in (3, 4):
            return cls(*value)
        raise TypeError(f"a deal is a Deal, a (hands, bottom, first_bidder) tuple or a dict with 'hands' and "
                        f"'bottom', got {type(value).__name__} {value!r}")

    def to_dict(self, strings: bool = False) -> dict[str, Any]:
        """``{"hands", "bottom", "first_bidder", "landlord"}``: count arrays (copies), or card strings
        with ``strings`` (a record's ``deal``)."""
        if strings:
            hands: Any = [_cards.counts_string(h) for h in self.hands]
            bottom: Any = _cards.counts_string(self.bottom)
        else:
            hands, bottom = self.hands.copy(), self.bottom.copy()
        return {"hands": hands, "bottom": bottom, "first_bidder": self.first_bidder, "landlord": self.landlord}

    def __reduce__(self):  # (pickled for evaluation workers: unpickled read-only, unchecked)
        return (Deal._trusted, (self.hands, self.bottom, self.first_bidder, self.landlord))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deal):
            return NotImplemented
        return (np.array_equal(self.hands, other.hands) and np.array_equal(self.bottom, other.bottom)
                and self.first_bidder == other.first_bidder and self.landlord == other.landlord)

    def __hash__(self) -> int:
        return hash((self.hands.tobytes(), self.bottom.tobytes(), self.first_bidder, self.landlord))

    def __repr__(self) -> str:
        d = self.to_dict(strings=True)
        lord = "" if self.landlord is None else f", landlord={self.landlord}"
        return f"Deal(hands={tuple(d['hands'])!r}, bottom={d['bottom']!r}, first_bidder={self.first_bidder}{lord})"


def deal_hand(rng: np.random.Generator) -> Deal:
    """A `Deal`: the cards (R1), then the first bidder drawn from the same generator (always
    drawn, so the stream never depends on options).

    Declared twin: ``VectorDouDizhu._deal`` makes the same two draws from each slot's generator
    and counts the cards of many hands at once (the equivalence tests and the golden file hold
    the two together)."""
    hands, bottom = _cards.deal(rng)
    return Deal._trusted(hands, bottom, int(rng.integers(NUM_SEATS)))


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


def _legal_choices_table() -> np.ndarray:
    table = np.zeros((len(Phase), 4, NUM_CHOICES), bool)
    for top in range(4):
        for a in BID_ACTIONS:  # R3: pass, or a bid above the top bid so far
            table[Phase.BID, top, a - FIRST_CHOICE] = a == BID_PASS or a - BID_PASS > top
        for a in DOUBLE_ACTIONS:  # R5: each farmer, double or not
            table[Phase.DOUBLE, top, a - FIRST_CHOICE] = True
        for a in REDOUBLE_ACTIONS:  # R6: the landlord (asked only if a farmer doubled), redouble or not
            table[Phase.REDOUBLE, top, a - FIRST_CHOICE] = True
    table.flags.writeable = False
    return table


#: LEGAL_CHOICES[phase, top bid]: which of the NUM_CHOICES non-play actions (ids FIRST_CHOICE + k: the
#: bids, doubles and redoubles) are legal; none in PLAY and OVER. A table built once at import, read-only.
LEGAL_CHOICES = _legal_choices_table()
_CHOICES_BY_KEY = LEGAL_CHOICES.reshape(-1, NUM_CHOICES)  # row phase * 4 + top


def legal_choices(phase, top):
    """R3, R5, R6: the legal non-play actions, ``(..., NUM_CHOICES)`` bool over the ids ``FIRST_CHOICE + k``
    (``BID_ACTIONS``, ``DOUBLE_ACTIONS``, ``REDOUBLE_ACTIONS`` in id order), when the phase is ``phase``
    and the top bid so far is ``top`` (0..3; 0: nobody bid yet). In the bidding, pass or any bid above
    ``top``; in the doubling, double or not; in the redouble, redouble or not; nothing in play (its
    legal moves are `ddz_env.legal`'s) or once over. Scalars or arrays; the one place these
    sets are decided (``Game.legal_actions``, ``Game.is_legal`` and ``VectorDouDizhu`` read it)."""
    if np.ndim(phase) == 0 and np.ndim(top) == 0:
        return LEGAL_CHOICES[phase, top]
    # arrays: one take of whole rows (a 2-D fancy index costs several times more)
    return _CHOICES_BY_KEY.take(np.asarray(phase, np.int64) * LEGAL_CHOICES.shape[1] + top, axis=0)


def legal_bids(top: int) -> np.ndarray:
    """R3: the legal bid ids when the top bid so far is ``top`` (0: nobody bid yet), from `legal_choices`."""
    return FIRST_CHOICE + np.flatnonzero(legal_choices(Phase.BID, int(top)))


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


__all__ = ["Rules", "PRESETS", "RULEBOOK", "Phase", "Role", "ROLE_OF", "role_of", "NUM_SEATS", "Deal", "deal_hand",
           "check_deals", "as_seat", "check_hands_arg", "LEGAL_CHOICES", "legal_choices", "legal_bids", "bid_outcome",
           "next_first_bidder", "doubling_order", "redouble_allowed", "default_actions", "rewards"]
