"""One hand of Dou Dizhu as a small state machine.

deal -> bidding (R3, R4) -> farmers' secret doubling (R5) -> landlord's redouble,
only if someone doubled (R6) -> bottom cards revealed and added (R7) -> play
(R8, R17) -> over, scored by R18/R19.

Every decision, in every phase, is an action id of ``actions.py``; what is legal
comes from ``legal.py`` (play) and ``rules.legal_choices`` (bids, doubles, redoubles).
``step`` validates first and mutates only a legal action, so an illegal one leaves the
state intact.
"""
from __future__ import annotations

import copy
from typing import Sequence

import numpy as np

from .actions import (
    BID_PASS, DOUBLE, FIRST_CHOICE, NUM_ACTIONS, NUM_CHOICES, REDOUBLE, action_to_string, as_action_id,
)
from .cards import BOTTOM_SIZE, HAND_SIZE, NUM_RANKS, NUM_SEATS, counts_string as to_string
from .legal import legal_ids_unchecked
from .moves import MOVE_COUNTS, MOVE_NCARDS, MOVE_TYPE, NUM_MOVES, PASS, MoveType
from .rules import (
    ROLE_OF, Deal, Phase, Role, Rules, as_seat, bid_outcome, check_hands_arg, deal_hand, default_actions,
    doubling_order, legal_choices, next_first_bidder, redouble_allowed,
)
from .observation import HIDDEN, public_history
from .scoring import finish_hand
_MOVE_TYPE_LIST = MOVE_TYPE.tolist()
_BOMB, _ROCKET = int(MoveType.BOMB), int(MoveType.ROCKET)


class IllegalActionError(ValueError):
    """An action that is not legal now (wrong phase, wrong seat, or not allowed by the rules)."""


def _rules_and_landlord(rules, landlord) -> tuple[Rules, int | None]:
    """``(Rules, landlord seat or None)`` checked: a landlord is given only with bidding off."""
    rules = Rules.of(rules)
    if landlord is not None:
        landlord = as_seat(landlord, "landlord")
        if rules.bidding:
            raise ValueError(f"landlord={landlord} is given only when bidding is off (rules {rules.name!r} bid "
                             f"for it): pass rules='douzero' or Rules(bidding=False, ...)")
    return rules, landlord


class Game:
    """State of one hand. Build with `deal` (seeded) or `from_deal` (a `ddz_env.rules.Deal`
    or given cards); `initial_deal` is the hand's ``Deal``.

    Seats are 0, 1, 2 and play passes from seat s to seat (s + 1) % 3. ``rules``
    (`ddz_env.rules.Rules`, a preset name or fields; default the rulebook) says which
    phases the hand has. With ``rules.bidding`` off the hand starts with ``landlord`` (default:
    the first bidder) as landlord at bid 1 (the DouZero/RLCard setting); a ``landlord`` with
    bidding on is an error.
    """

    def __init__(self, hands: Sequence, bottom, first_bidder: int, *, rules: Rules | str | None = None,
                 landlord: int | None = None):
        check_hands_arg(hands)
        first_bidder = as_seat(first_bidder, "first_bidder")
        rules, landlord = _rules_and_landlord(rules, landlord)
        self._setup(Deal(hands, bottom, first_bidder), rules, landlord)  # Deal: R1, R2 checked

    @classmethod
    def _of(cls, deal: Deal, rules: Rules, landlord: int | None) -> "Game":
        """A hand of a ``Deal`` with ``rules`` and ``landlord`` already checked."""
        g = cls.__new__(cls)
        g._setup(deal, rules, landlord)
        return g

    def _setup(self, deal: Deal, rules: Rules, landlord: int | None) -> None:
        if landlord is None and not rules.bidding:
            landlord = deal.first_bidder
        self.initial_hands = deal.hands.copy()
        self.hands = deal.hands.copy()
        self.bottom = deal.bottom.copy()
        self.first_bidder = deal.first_bidder
        self.rules = rules
        self.phase = Phase.BID
        self.current_player = self.first_bidder
        self.bids = np.full(NUM_SEATS, -1, dtype=np.int8)  # -1: not yet, 0: pass, 1..3
        self.bid = 0
        self.landlord = -1
        self.double_choice = np.full(NUM_SEATS, -1, dtype=np.int8)  # secret until revealed
        self.doubles_revealed = False
        self.redoubled = False
        self.redouble_choice = -1  # -1: not asked (or not yet), 0 no, 1 yes
        self.bottom_revealed = False
        self.last_move = PASS  # move id to beat; 0 when the player to act leads
        self.last_mover = -1
        self.passes = 0
        self.played = np.zeros((NUM_SEATS, NUM_RANKS), dtype=np.int8)
        self.played_total = np.zeros(NUM_RANKS, dtype=np.int8)  # all seats together
        self.n_cards = [HAND_SIZE] * NUM_SEATS  # cards held per seat, public (R21)
        self.moves_made = np.zeros(NUM_SEATS, dtype=np.int16)  # non-pass moves per seat
        self.bombs = 0
        self.rockets = 0
        self.history: list[tuple[int, int]] = []  # (seat, action id), every action in order
        self.plays: list[tuple[int, int]] = []  # (seat, move id) of the play phase, passes included
        self.winner = -1
        self.spring = False
        self.anti_spring = False
        self.void = False
        self.scores = np.zeros(NUM_SEATS, dtype=np.int64)
        self._legal_cache: np.ndarray | None = None
        if landlord is not None:
            self.bid = 1
            self._make_landlord(landlord)

    # ------------------------------------------------------------------ construction
    @classmethod
    def deal(cls, seed: int | np.random.Generator | None = None, first_bidder: int | None = None,
             **kwargs) -> "Game":
        """A seeded random deal; the first bidder is drawn from the same generator unless given.

        The seats are checked before anything is drawn, so a rejected call leaves a given generator as it was.
        """
        if first_bidder is not None:
            first_bidder = as_seat(first_bidder, "first_bidder")
        rules, landlord = _rules_and_landlord(kwargs.pop("rules", None), kwargs.pop("landlord", None))
        if kwargs:
            raise TypeError(f"Game.deal: unexpected arguments {sorted(kwargs)}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        deal = deal_hand(rng)
        if first_bidder is not None:
            deal = Deal._trusted(deal.hands, deal.bottom, first_bidder)
        return cls._of(deal, rules, landlord)

    @classmethod
    def from_deal(cls, hands, bottom=None, first_bidder: int = 0, **kwargs) -> "Game":
        """A hand of a `ddz_env.rules.Deal` (or anything ``Deal.of`` reads: a ``(hands, bottom,
        first_bidder)`` tuple, a dict), or of given cards: three 17-card hands and 3 bottom cards
        (strings or counts) and the first bidder. A deal's ``landlord`` is used unless ``landlord``
        is given."""
        if bottom is None and not isinstance(hands, (str, bytes)):
            deal = Deal.of(hands)
            if deal.landlord is not None and kwargs.get("landlord") is None:
                kwargs["landlord"] = deal.landlord
            rules, landlord = _rules_and_landlord(kwargs.pop("rules", None), kwargs.pop("landlord", None))
            if kwargs:
                raise TypeError(f"from_deal: unexpected arguments {sorted(kwargs)}")
            return cls._of(deal, rules, landlord)
        return cls(hands, bottom, first_bidder, **kwargs)

    def copy(self) -> "Game":
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ queries
    @property
    def is_over(self) -> bool:
        return self.phase == Phase.OVER

    @property
    def next_first_bidder(self) -> int:
        """After a void hand the next hand's first bidder is the next seat (R4: ``rules.next_first_bidder``)."""
        return int(next_first_bidder(self.first_bidder))

    @property
    def initial_deal(self) -> Deal:
        """The hand's `ddz_env.rules.Deal` (its ``landlord`` set when bidding is off)."""
        return Deal._trusted(self.initial_hands, self.bottom, self.first_bidder,
                             None if self.rules.bidding else self.landlord)

    def role(self, seat: int) -> int:
        """``seat``'s ``Role``: 0 landlord, 1 the farmer after the landlord, 2 the farmer before; -1
        before bidding ends (``rules.ROLE_OF``)."""
        return int(ROLE_OF[seat, self.landlord + 1])

    def cards_left(self) -> np.ndarray:
        return np.array(self.n_cards, dtype=np.int64)

    def doubled(self) -> np.ndarray:
        """(3,) bool: which farmers doubled (only meaningful once revealed)."""
        return self.double_choice == 1

    def legal_actions(self) -> np.ndarray:
        """Sorted legal action ids for the player to act (empty when the hand is over)."""
        if self.phase == Phase.PLAY:
            return self._play_ids()
        return FIRST_CHOICE + np.flatnonzero(legal_choices(self.phase, self.bid))  # R3, R5, R6; none once over

    def _play_ids(self) -> np.ndarray:
        """Legal move ids now, computed once per position (observe and step both ask)."""
        if self._legal_cache is None:
            ids = legal_ids_unchecked(self.hands[self.current_player], self.last_move)
            ids.flags.writeable = False
            self._legal_cache = ids
        return self._legal_cache

    def legal_action_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[self.legal_actions()] = True
        return mask

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now; ``False`` for anything that is no integer id (24640.5 is
        not action 24640)."""
        p = self.phase
        try:
            a = as_action_id(action)
        except TypeError:
            return False
        if p == Phase.PLAY:
            if not 0 <= a < NUM_MOVES:
                return False
            ids = self._play_ids()
            i = np.searchsorted(ids, a)
            return bool(i < ids.size and ids[i] == a)
        k = a - FIRST_CHOICE
        return 0 <= k < NUM_CHOICES and bool(legal_choices(p, self.bid)[k])  # R3, R5, R6

    def default_action(self) -> int:
        """R20's timeout action (``rules.default_actions``): pass the bid, no double, no redouble, lead
        the smallest single, else pass."""
        if self.phase == Phase.OVER:
            raise IllegalActionError("the hand is over: there is no action to default to")
        return int(default_actions(self.phase, self.last_move, self.hands[self.current_player]))

    def public_history(self) -> list[tuple[int, int]]:
        """The history as every player may see it: a doubling choice is ``HIDDEN`` until both are made
        (R5; decided by `ddz_env.observation.public_history`)."""
        return public_history(self.history, self.doubles_revealed)

    # ------------------------------------------------------------------ transitions
    def step(self, action: int, seat: int | None = None) -> None:
        """Apply ``action`` for the player to act (``seat``, if given, must be that player)."""
        if self.phase == Phase.OVER:
            raise IllegalActionError(f"the hand is over; action {action} refused")
        if seat is not None:
            try:
                s = as_seat(seat)
            except ValueError as e:
                raise IllegalActionError(str(e)) from None
            if s != self.current_player:
                raise IllegalActionError(f"seat {seat} acted out of turn: seat {self.current_player} is to act")
        try:
            a = as_action_id(action)  # ints, numpy integers, size-1 integer arrays; not floats or strings
        except TypeError as e:
            raise IllegalActionError(str(e)) from None
        if not self.is_legal(a):
            name = action_to_string(a) if 0 <= a < NUM_ACTIONS else "out of range"
            raise IllegalActionError(
                f"action {a} ({name}) is illegal in phase {self.phase.name} for seat {self.current_player}; "
                f"{len(self.legal_actions())} legal actions"
            )
        s = self.current_player
        self._legal_cache = None
        self.history.append((s, a))
        p = self.phase
        if p == Phase.BID:
            self._bid(s, a - BID_PASS)
        elif p == Phase.DOUBLE:
            self._double(s, a == DOUBLE)
        elif p == Phase.REDOUBLE:
            self.redoubled = a == REDOUBLE
            self.redouble_choice = int(self.redoubled)
            self._start_play()
        else:
            self._play(s, a)

    def _bid(self, s: int, value: int) -> None:
        self.bids[s] = value
        top, over, void, landlord = bid_outcome(self.bids, value, self.bid)  # R3, R4
        self.bid = int(top)
        if not over:
            self.current_player = (s + 1) % NUM_SEATS
        elif void:
            self.void = True
            self.phase = Phase.OVER
            self.current_player = -1
        else:
            self._make_landlord(int(landlord))

    def _make_landlord(self, seat: int) -> None:
        self.landlord = seat
        if self.rules.doubling:
            self.phase = Phase.DOUBLE
            self.current_player = int(doubling_order(seat)[0])  # R5
        else:
            self._start_play()

    def _double(self, s: int, doubled: bool) -> None:
        self.double_choice[s] = int(doubled)
        second = int(doubling_order(self.landlord)[1])
        if s != second:
            self.current_player = second
            return
        self.doubles_revealed = True  # both chosen: revealed together (R5)
        if redouble_allowed(self.double_choice):  # R6
            self.phase = Phase.REDOUBLE
            self.current_player = self.landlord
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.hands[self.landlord] += self.bottom  # R7
        self.n_cards[self.landlord] += BOTTOM_SIZE
        self.bottom_revealed = True
        self.phase = Phase.PLAY
        self.current_player = self.landlord
        self.last_move = PASS
        self.last_mover = -1

    def _play(self, s: int, m: int) -> None:
        """One play (R8, R17). Declared twin of ``transitions.play`` (the same rules over B hands)."""
        nxt = (s + 1) % NUM_SEATS
        self.plays.append((s, m))
        if m == PASS:
            self.passes += 1
            if self.passes == 2:  # two passes: the last player to play leads again (R8)
                self.last_move = PASS
                self.passes = 0
            self.current_player = nxt
            return
        cards = MOVE_COUNTS[m]
        self.hands[s] -= cards
        self.played[s] += cards
        self.played_total += cards
        self.n_cards[s] -= int(MOVE_NCARDS[m])
        self.moves_made[s] += 1
        t = _MOVE_TYPE_LIST[m]  # a Python int: numpy scalar == IntEnum costs microseconds
        if t == _BOMB:
            self.bombs += 1
        elif t == _ROCKET:
            self.rockets += 1
        self.last_move = m
        self.last_mover = s
        self.passes = 0
        if self.n_cards[s] == 0:  # R17
            self._finish(s)
        else:
            self.current_player = nxt

    def _finish(self, winner: int) -> None:
        self.winner = winner
        self.phase = Phase.OVER
        self.current_player = -1
        _, spring, anti, self.scores = finish_hand(winner, self.landlord, self.moves_made, self.bid, self.doubled(),
                                                   self.redoubled, self.bombs, self.rockets)  # R17-R19
        self.spring, self.anti_spring = bool(spring), bool(anti)

    # ------------------------------------------------------------------ display
    def render(self, spectator: bool = False) -> str:
        """A readable table; hidden hands are shown only to a spectator."""
        names = {Role.LANDLORD: "landlord", Role.FARMER_AFTER: "farmer(down)", Role.FARMER_BEFORE: "farmer(up)", -1: "?"}
        lines = [f"phase {self.phase.name}  bid {self.bid}  landlord {self.landlord}  "
                 f"bombs {self.bombs}  rockets {self.rockets}"]
        for s in range(NUM_SEATS):
            mark = "*" if s == self.current_player else " "
            cards = to_string(self.hands[s]) if spectator else ""
            dbl = ""
            if self.doubles_revealed and self.double_choice[s] >= 0:
                dbl = " doubled" if self.double_choice[s] == 1 else ""
            lines.append(f"{mark} seat {s} {names[self.role(s)]:<13} {self.n_cards[s]:>2} cards{dbl}  {cards}")
        if self.bottom_revealed or spectator:
            lines.append(f"  bottom {to_string(self.bottom)}")
        recent = self.public_history()[-6:]
        if recent:
            lines.append("  last: " + ", ".join(f"{s}:{'?' if a == HIDDEN else action_to_string(a)}" for s, a in recent))
        if self.is_over:
            lines.append("  void hand" if self.void else f"  winner seat {self.winner}  scores {self.scores.tolist()}"
                         + ("  spring" if self.spring else "") + ("  anti-spring" if self.anti_spring else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Game(phase={self.phase.name}, current={self.current_player}, landlord={self.landlord})"


__all__ = ["Game", "Phase", "Role", "Deal", "IllegalActionError", "NUM_SEATS", "as_seat"]
