"""A deterministic heuristic player: bids on hand strength, plays by its plan.

Bid, double, redouble: a win-probability estimate from the 17 cards held
(:func:`win_chance`: jokers, 2s, aces, bombs and the number of moves the hand needs,
a logistic fit to rule-vs-rule hands, see ``agents/cli/calibrate.py``), against
thresholds chosen by duplicate matches of the agent against variants of itself.

Play, from the plan of :mod:`agents.baselines.planner` (fewest moves):

* lead: a move that ends the hand; else, when all but one of the plan's moves are
  sure winners (nothing unseen can beat them), a sure winner; else feed a partner
  who is about to go out; else the weakest group (lowest rank, longest first),
  keeping away from singles (pairs) when an opponent holds one card (two);
* respond: pass on a partner's move unless it ends the hand; else the cheapest
  move that beats (least damage to the plan, then the lowest rank), breaking a
  group only when it costs little or an opponent is about to go out; bombs and the
  rocket only to win the hand or to stop an opponent about to go out.

It plays from its seat's features decoded from the planes (:mod:`agents.baselines.features`), so it never
sees hidden cards; it is deterministic: the same features give the same action.
"""
from __future__ import annotations

import math
import numpy as np

from ddz_env.actions import BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, REDOUBLE
from ddz_env.cards import ACE, BLACK_JOKER, RED_JOKER, TWO
from ddz_env.legal import legal_ids as answers_to
from ddz_env.moves import IS_BOMB_OR_ROCKET, MOVE_COUNTS, MOVE_GROUP, MOVE_NCARDS, MOVE_RANK, MOVE_TYPE, PASS, MoveType
from ddz_env.rules import Phase

from ..base import BatchAgent, Decisions
from ..loader import config_of
from .planner import move_of, plan, plan_cost
from .features import SeatFeatures, decode

_BID, _DOUBLE, _REDOUBLE = int(Phase.BID), int(Phase.DOUBLE), int(Phase.REDOUBLE)  # (plain ints: the hot path)
_SINGLE, _PAIR = int(MoveType.SINGLE), int(MoveType.PAIR)
#: bombs and the rocket, by move id (plain arrays: no enum lookups in the hot path)
#: control cards a move spends: its 2s, and its jokers counted twice
_CONTROL = (MOVE_COUNTS[:, TWO] + 2 * MOVE_COUNTS[:, BLACK_JOKER] + 2 * MOVE_COUNTS[:, RED_JOKER]).astype(np.int8)
#: logistic model of the landlord's win chance from its 17 cards before the bottom
#: (intercept, rocket, red joker alone, black joker alone, 2s, aces, bombs, plan moves); fitted
#: by ``agents/cli/calibrate.py`` on rule-vs-rule hands with a fixed landlord
LANDLORD_WEIGHTS = (0.0777, 1.74, 1.23, 0.887, 0.403, 0.228, 0.49, -0.188)
#: the same for the farmers' win chance from one farmer's 17 cards
FARMER_WEIGHTS = (0.443, 1.2, 0.743, 0.552, 0.249, 0.138, 0.549, -0.197)


def features(hand: np.ndarray) -> tuple[float, ...]:
    """(1, rocket, red joker alone, black joker alone, 2s, aces, bombs, plan moves) of a hand."""
    r, b = int(hand[RED_JOKER]), int(hand[BLACK_JOKER])
    bombs = int((hand[:TWO + 1] == 4).sum())
    return (1.0, float(r and b), float(r and not b), float(b and not r), float(hand[TWO]), float(hand[ACE]),
            float(bombs), float(plan(hand).n_moves))


def win_chance(hand: np.ndarray, as_landlord: bool) -> float:
    """Estimated chance that the side of a 17-card hand wins it, as landlord or as farmer."""
    w = LANDLORD_WEIGHTS if as_landlord else FARMER_WEIGHTS
    z = sum(a * x for a, x in zip(w, features(hand)))
    return 1.0 / (1.0 + math.exp(-z))


class RuleAgent(BatchAgent):
    """Heuristic Dou Dizhu player (see the module docstring); deterministic, no hidden information.

    ``bid_at``: win-chance thresholds for bids 1, 2, 3; ``double_at`` / ``redouble_at``:
    the farmers' / landlord's win chance needed to double / redouble.
    """

    name = "rule"
    #: extra moves (plan cost) the agent accepts to beat an opponent's move when not in danger
    break_allowance = 2.0
    #: an opponent holding this many cards or fewer is about to go out
    danger_cards = 2
    #: ... and so is the opponent who made the move to beat when holding this many or fewer
    danger_mover_cards = 6
    #: what spending a 2 or a joker on a response costs, in moves (per card, jokers count double)
    control_weight = 0.6
    #: kicker variants tried per body when responding (the lowest kickers come first)
    kicker_variants = 6

    def __init__(self, bid_at: tuple[float, float, float] = (0.34, 0.37, 0.40), double_at: float = 0.62,
                 redouble_at: float = 0.62):
        """``bid_at``: the three win chances at which it bids 1, 2, 3; ``double_at``, ``redouble_at``: those at
        which it doubles / redoubles. Each a finite number (above 1: never; at most 0: always); ``ValueError``
        naming the argument."""
        if isinstance(bid_at, (str, bytes)) or not hasattr(bid_at, "__len__") or len(bid_at) != 3:
            raise ValueError(f"RuleAgent bid_at: three win chances (bid 1, 2, 3), got {bid_at!r}")
        self.bid_at = tuple(_chance(f"bid_at[{i}]", v) for i, v in enumerate(bid_at))
        self.double_at = _chance("double_at", double_at)
        self.redouble_at = _chance("redouble_at", redouble_at)

    def __repr__(self) -> str:
        return f"RuleAgent(bid_at={self.bid_at}, double_at={self.double_at}, redouble_at={self.redouble_at})"

    # ------------------------------------------------------------------ entry point
    def act_batch(self, decisions: Decisions) -> np.ndarray:
        """One action per decision (a loop: each decision decodes its own planes)."""
        out = np.empty(len(decisions), np.int64)
        for i in range(len(decisions)):
            out[i] = self.decide(decisions.observation[i], decisions.legal(i))
        return out

    def decide(self, planes: np.ndarray, legal: np.ndarray) -> int:
        """The action for one seat's planes (29, 4, 15) and its legal ids."""
        if legal.size == 0:
            raise ValueError("RuleAgent: no legal action (is this seat on turn?)")
        if legal.size == 1:
            return int(legal[0])
        known = decode(planes)
        if known.phase == _BID:
            return self._bid(known, legal)
        if known.phase == _DOUBLE:
            return DOUBLE if win_chance(known.hand, False) >= self.double_at else NO_DOUBLE
        if known.phase == _REDOUBLE:
            return REDOUBLE if win_chance(known.hand, True) >= self.redouble_at else NO_REDOUBLE
        a = self._play(known, legal)
        if not np.any(legal == a):  # a safety net: never happens by construction
            a = int(legal[0])
        return int(a)

    # ------------------------------------------------------------------ bidding
    def _bid(self, known: SeatFeatures, legal: np.ndarray) -> int:
        p = win_chance(known.hand, True)
        want = sum(1 for t in self.bid_at if p >= t)
        a = BID_PASS + want
        return a if want > 0 and np.any(legal == a) else BID_PASS

    # ------------------------------------------------------------------ play
    def _play(self, known: SeatFeatures, legal: np.ndarray) -> int:
        n = known.n_cards
        moves = legal[legal != PASS]
        finish = moves[MOVE_NCARDS[moves] == n]
        if finish.size:  # the whole hand in one move wins it
            return int(finish[0])
        if known.to_beat == PASS:
            return self._lead(known, legal)
        if known.beat_seat == known.partner:
            return PASS  # never overplay a partner who is winning the trick
        return self._respond(known, moves)

    def _beatable(self, known: SeatFeatures, m: int) -> bool:
        """Whether an opponent might beat move ``m`` (from the unseen cards and the cards they hold)."""
        ids = answers_to(known.others, m)  # what the unseen cards, all in one hand, could answer
        ids = ids[ids != PASS]
        return bool(ids.size) and bool((MOVE_NCARDS[ids] <= known.max_opponent_left()).any())

    def _lead(self, known: SeatFeatures, legal: np.ndarray) -> int:
        p = plan(known.hand)
        moves = list(p.moves)
        # run out: all but one move are sure winners -> play the sure ones first (ordinary before bombs)
        if len(moves) <= 4:
            sure = [m for m in moves if not self._beatable(known, m)]
            if len(moves) - len(sure) <= 1 and sure:
                sure.sort(key=lambda m: (bool(IS_BOMB_OR_ROCKET[m]), int(MOVE_RANK[m])))
                return sure[0]
        partner = known.partner
        if partner == 1 and known.left[partner] <= 2:  # partner acts next and is about to go out
            k = known.left[partner]
            lows = [r for r in range(15) if known.hand[r] >= k]
            if lows:
                m = np.zeros(15, dtype=np.int8)
                m[lows[0]] = k
                return move_of(m)
        ordinary = [m for m in moves if not IS_BOMB_OR_ROCKET[m]] or moves
        danger = known.min_opponent_left()
        if danger <= 2:  # an opponent with one card cannot follow a pair, one with two cannot follow a trio
            avoid = _SINGLE if danger == 1 else _PAIR
            safe = [m for m in ordinary if MOVE_TYPE[m] != avoid]
            if safe:
                ordinary = safe
            else:  # only such moves left: lead the highest, it is the least likely to be beaten
                return max(ordinary, key=lambda m: MOVE_RANK[m])
        low = [m for m in ordinary if MOVE_RANK[m] < TWO or MOVE_TYPE[m] not in (_SINGLE, _PAIR)]
        return min(low or ordinary, key=lambda m: (MOVE_RANK[m], -int(MOVE_NCARDS[m])))

    def _respond(self, known: SeatFeatures, moves: np.ndarray) -> int:
        hand = known.hand
        base = plan_cost(hand)
        danger = (known.min_opponent_left() <= self.danger_cards
                  or known.left[known.beat_seat] <= self.danger_mover_cards)
        ordinary = moves[~IS_BOMB_OR_ROCKET[moves]]
        best, best_key = PASS, None
        if ordinary.size:
            # a few kicker choices per body (the lowest kickers come first in id order)
            groups = MOVE_GROUP[ordinary]
            keep = np.ones(ordinary.size, dtype=bool)
            for g in np.unique(groups):
                idx = np.flatnonzero(groups == g)
                keep[idx[self.kicker_variants:]] = False
            whole = np.zeros(15, dtype=bool)  # ranks of the bombs and the rocket held: kept whole
            whole[:TWO + 1] = hand[:TWO + 1] == 4
            whole[BLACK_JOKER:] = bool(hand[BLACK_JOKER] and hand[RED_JOKER])
            for m in ordinary[keep]:
                if not danger and (MOVE_COUNTS[m][whole] > 0).any():
                    continue  # never break a bomb or the rocket for an ordinary move, unless in danger
                delta = plan_cost(hand - MOVE_COUNTS[m]) - (base - 1)
                spend = self.control_weight * float(_CONTROL[m])
                key = (round(delta + spend, 6), int(MOVE_RANK[m]), int(m), delta)
                if best_key is None or key < best_key:
                    best, best_key = int(m), key
            allowed = math.inf if danger else self.break_allowance
            if best_key is not None and round(best_key[3]) <= allowed:  # whole moves (the rest breaks ties)
                return best
        bombs = moves[IS_BOMB_OR_ROCKET[moves]]
        if bombs.size:
            bomb = int(bombs[0])  # ids order bombs by rank, the rocket last
            if danger or self._wins_after(known, bomb):
                return bomb
        return PASS

    def _wins_after(self, known: SeatFeatures, bomb: int) -> bool:
        """Whether playing ``bomb`` now likely wins the hand: unbeatable, then at most one move that is not."""
        if self._beatable(known, bomb):
            return False
        rest = known.hand - MOVE_COUNTS[bomb]
        moves = plan(rest).moves
        if len(moves) > 3:
            return False
        return sum(1 for m in moves if self._beatable(known, m)) <= 1


def _chance(name: str, value) -> float:
    """A threshold of a win chance: a finite real (not a bool, a string, NaN or inf), else ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ValueError(f"RuleAgent {name}: a win-chance threshold (a finite number), got {value!r}")
    return float(value)


def from_checkpoint(checkpoint: dict) -> RuleAgent:
    """The factory of ``agents.load("rule", **kwargs)`` (and of checkpoints of this kind): kwargs in ``"config"``."""
    return RuleAgent(**config_of(checkpoint))


__all__ = ["RuleAgent", "win_chance", "features", "LANDLORD_WEIGHTS", "FARMER_WEIGHTS"]
