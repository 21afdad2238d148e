"""A batch of B independent hands as numpy arrays, stepped together.

`VectorDouDizhu` (alias `VectorEnv`) holds B hands ("slots"). Every hand
has exactly one seat to act (``current_player[b]``); ``step(actions)`` takes one
action id per hand, from that seat, advances every hand at once (vectorized per
phase, no loop over hands), and deals a new hand in every slot whose hand ended
(auto-reset). It is the game of the AEC env (``ddz_env.env``), with the same action
ids and the same observation planes, from the same rules core:

* play legality from ``legal.py``: leads through ``legal_ids_batch``; responses
  through `legal.response_ids_batch`, the same algorithm on legal.py's own tables
  restricted to the ~20 body groups that can beat the move on the table (tests
  check it equals ``legal_ids_batch``); bids, doubles and redoubles from
  ``rules.legal_choices``, as ``Game.legal_actions``;
* a finished hand's spring flags and scores from ``scoring.finish_hand``, as ``Game``;
* planes from ``observation.observe_batch`` (the public view of B hands, R5 and R21, beside
  ``observe_game``; tests check both against each other).

Returned by ``reset`` and ``step``, the observation dict:

    observation     (B, 29, 4, 15) int8   the acting seat's view (None with observe=False)
    legal_rows      (M,) int64            compact legal sets, sorted by row then id:
    legal_ids       (M,) int64              hand b may play legal_ids[legal_rows == b]
    legal_starts    (B + 1,) int64        = legal_ids[legal_starts[b]:legal_starts[b + 1]]
    current_player  (B,) int64            the seat to act (0, 1, 2)
    phase           (B,) int8             game.Phase of each hand

The legal arrays are read-only. ``expand_mask(rows, ids, B)`` (or ``env.action_masks()``)
expands them into a dense (B, NUM_ACTIONS) int8 mask; ``env.legal_actions(b)`` is hand
b's id list, ``env.random_actions(rng)`` draws one uniform legal id per hand and
``env.default_actions()`` gives R20's timeout actions.

``step`` returns ``(obs, rewards (B, 3) float32, done (B,) bool, info)``. ``rewards``
are the seats' rewards of the hands that ended on this step (zeros elsewhere, and for
a void hand), as the AEC env gives them (``reward="score"``: the R19 score times
``reward_scale``; ``"win"``: +-reward_scale by side). ``done[b]``: hand b ended on
this step (void hands included); its slot already holds a new hand and ``obs`` is the
new hand's first observation. ``info`` holds each ended hand's summary (absolute seats;
zeros / -1 / False in the rows of hands that did not end):

    final_scores  (B, 3) int64   the raw R19 scores
    void          (B,) bool      all three passed (R4)
    winner        (B,) int64     the seat that went out (-1: void)
    landlord      (B,) int64     (-1: void)
    spring, anti_spring (B,) bool  R18
    bids          (B, 3) int64   each seat's bid: -1 not asked, 0 pass, 1..3
    doubles       (B, 3) int64   each seat's doubling choice: -1 not asked (the landlord, void,
                                 doubling off), 0 no, 1 double
    redouble      (B,) int64     -1 not asked, 0 no, 1 redouble
    bid           (B,) int64     the hand's bid (0: void)
    first_bidder  (B,) int64     (with bidding off: the seat drawn or given as first bidder)
    bombs, rockets (B, 3) int64  bombs / rockets each seat played
    plays         (B,) int64     actions of the play phase, passes included

An illegal action (for any hand) raises ``ValueError`` naming the hand, the action and the
phase, and changes nothing.

``step(actions, active=mask)`` moves only the hands where the (B,) bool ``mask`` is true: the
others keep their position (their entry of ``actions`` is ignored, not checked), so a loop can
hold some tables at a seat's turn while the others play on (a one-seat learner waits at its
tables while opponents act at the rest: ``agents.integrations.seat_vector``).

Seeding: slot b owns the generator ``np.random.default_rng(env.slot_seed(b))`` and
deals every hand of the slot from it exactly as the AEC env deals on ``reset``
(``cards.deal`` then ``integers(3)`` for the first bidder; after a void hand the next
seat bids first, R4). So an AEC env reset with ``seed=env.slot_seed(b)`` and then
reset without a seed after each hand, fed the same actions, replays slot b hand by
hand; and a slot's hands depend only on the seed, its index and its own actions.
The constructor deals the first hands; ``deal_of(b)`` gives slot b's deal (a
``rules.Deal``, for ``Game.from_deal`` or the AEC env's ``options["deal"]``) and ``load_deals``
(``load_deal``) sets deals.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .actions import NUM_ACTIONS, action_to_string
from .cards import DECK_SIZE, NUM_SEATS, as_counts, as_id, shuffle_deck
from .batch import BatchState, checked_deals, deal_arrays, dealt_counts
from .observation import observe_batch
from .rules import (
    ROLE_OF, Deal, Phase, Rules, as_seat, check_hands_arg, default_actions, next_first_bidder,
)
from . import transitions as T

_BID, _DOUBLE, _REDOUBLE, _PLAY, _OVER = (int(Phase.BID), int(Phase.DOUBLE), int(Phase.REDOUBLE),
                                           int(Phase.PLAY), int(Phase.OVER))
#: ROLE_OF flat: _ROLE[4 * o + 1 + landlord] is seat o's role (-1 with no landlord yet)
_ROLE = ROLE_OF.reshape(-1)


# ---------------------------------------------------------------------------------------------- legality
def expand_mask(rows: np.ndarray, ids: np.ndarray, num_envs: int, out: np.ndarray | None = None,
                dtype=np.int8) -> np.ndarray:
    """Dense (num_envs, NUM_ACTIONS) mask from compact legal sets ``(rows, ids)``.

    Pass a reused C-contiguous ``out`` buffer in a loop (a fresh 200 MB array at
    B = 8192 costs more in page faults than filling it).
    """
    num_envs = as_id(num_envs, "num_envs")
    rows, ids = np.asarray(rows), np.asarray(ids)
    for name, x in (("rows", rows), ("ids", ids)):
        if x.size and x.dtype.kind not in "iu":  # a float is never truncated to an index
            raise TypeError(f"expand_mask: {name} must be integers, got an array of dtype {x.dtype}")
    shape = (num_envs, NUM_ACTIONS)
    if out is None:
        out = np.zeros(shape, dtype=dtype)
    else:
        if out.shape != shape or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous array of shape {shape}")
        out[...] = 0
    np.put(out.reshape(-1), rows.astype(np.int64, copy=False) * NUM_ACTIONS + ids.astype(np.int64, copy=False), 1)
    return out


def random_legal_actions(starts: np.ndarray, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal id per hand from compact sets (``legal_starts``, ``legal_ids``)."""
    counts = np.diff(starts)
    pick = starts[:-1] + (rng.random(counts.size) * counts).astype(np.int64)
    np.minimum(pick, starts[1:] - 1, out=pick)  # (a draw of 1 - 2**-53 may round up to counts)
    return ids[pick]


class VectorDouDizhu:
    """B independent hands of Dou Dizhu held in arrays and stepped together (see the module doc).

    Options as the AEC env: ``rules`` (a `ddz_env.rules.Rules`, a preset name or fields;
    with bidding off the drawn first bidder is the landlord at bid 1); ``reward`` is ``"score"``
    or ``"win"``, multiplied by ``reward_scale``.
    """

    def __init__(self, num_envs: int, seed: int | None = 0, rules: Rules | str | None = None,
                 reward: str = "score", reward_scale: float = 1.0):
        num_envs = as_id(num_envs, "num_envs")  # TypeError for 2.5: never truncated
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if reward not in ("score", "win"):
            raise ValueError(f"reward must be 'score' or 'win', got {reward!r}")
        self.rules = Rules.of(rules)
        self.num_envs = B = num_envs
        self.reward_kind = reward
        self.reward_scale = float(reward_scale)
        self.state = st = BatchState.empty(B)
        self._rngs: list[np.random.Generator] = []
        self._rows = self._ids = self._starts = None
        self._summary_blank = np.ascontiguousarray(np.broadcast_to(T.SUMMARY_BLANK, (B, T.SUMMARY_BLANK.size)))
        self._seed(seed)
        self._deal(st.b)
        self._refresh_legal()
        self._fresh = True  # the constructor's deal is the seeded reset: a plain reset() right after keeps it

    # ------------------------------------------------------------------ seeding and dealing
    def _seed(self, seed: int | None) -> None:
        st = self.state
        ss = np.random.SeedSequence(seed)
        self.seed = ss.entropy
        st.slot_seeds = ss.generate_state(self.num_envs, dtype=np.uint64)
        self._rngs = [np.random.default_rng(int(s)) for s in st.slot_seeds]
        st.hand_count[:] = 0
        st._next_first_bidder[:] = -1

    def slot_seed(self, b: int) -> int:
        """The integer seed of slot b's generator: ``ddz_env.raw_env().reset(seed=...)`` deals the same first hand."""
        st = self.state
        return int(st.slot_seeds[self._slot(b, "slot_seed")])

    def _slot(self, b, what: str) -> int:
        """Slot index ``b`` as an int in [0, B): ``TypeError`` for a float, ``ValueError`` out of range
        (a negative index would silently wrap to the last slots)."""
        i = as_id(b, f"{what}: a slot index")
        if not 0 <= i < self.num_envs:
            raise ValueError(f"{what}: slot index {i} out of range [0, {self.num_envs})")
        return i

    def _deal(self, slots: np.ndarray) -> None:
        """New hands in ``slots`` from their generators, exactly as the AEC env's ``reset`` deals.

        Declared twin of ``rules.deal_hand`` (the same shuffle and first-bidder draw per slot; the
        card counting batched over the slots)."""
        st = self.state
        K = slots.size
        if K == 0:
            return
        perms = np.empty((K, DECK_SIZE), np.int64)
        drawn = np.empty(K, np.int64)
        rngs = self._rngs
        for j, b in enumerate(slots.tolist()):
            rng = rngs[b]
            perms[j] = shuffle_deck(rng)  # cards.deal's shuffle
            drawn[j] = rng.integers(NUM_SEATS)  # always drawn, as the AEC env does
        hands, bottoms = dealt_counts(perms)
        nfb = st._next_first_bidder[slots]
        fb = np.where(nfb >= 0, nfb, drawn)
        st._next_first_bidder[slots] = -1
        self._start_hands(slots, hands, bottoms, fb)

    def _start_hands(self, slots: np.ndarray, hands: np.ndarray, bottom: np.ndarray, fb: np.ndarray,
                     lords: np.ndarray | None = None) -> None:
        """Put fresh hands (K, 3, 15) + bottoms (K, 15) with first bidders (K,) into ``slots``; with
        bidding off the landlords are ``lords`` (K,) (None: the first bidders)."""
        self.state.start_hands(slots, hands, bottom, fb)
        if not self.rules.bidding:  # the drawn first bidder is landlord at bid 1 (as Game)
            self.state.bid[slots] = 1
            T.make_landlord(self.state, slots, fb if lords is None else lords, self.rules.doubling)

    def deal_of(self, b: int) -> Deal:
        """The `ddz_env.rules.Deal` of slot b's current hand (with bidding off, its ``landlord``):
        what ``Game.from_deal``, ``load_deals`` and the AEC env's ``options["deal"]`` take."""
        st = self.state
        b = self._slot(b, "deal_of")
        return Deal._trusted(st.initial_hands[b], st.bottom[b], int(st.first_bidder[b]),
                             None if self.rules.bidding else int(st.landlord[b]))

    def load_deal(self, b: int, hands, bottom=None, first_bidder: int = 0) -> dict[str, np.ndarray]:
        """Replace slot b's hand by a fresh one: a `ddz_env.rules.Deal` (or what ``Deal.of`` reads),
        or the given cards (strings or counts) and first bidder; no generator draw.

        Returns the observation dict of the whole batch (hand b's entries are the new hand's).
        """
        b = self._slot(b, "load_deal")
        if bottom is None and isinstance(hands, (Deal, dict, tuple)):
            self.load_deals([b], [hands])
            return self._obs_dict(True)
        check_hands_arg(hands)
        h = np.stack([as_counts(x) for x in hands]).astype(np.int8)
        fb = as_seat(first_bidder, "load_deal: first_bidder")  # 1.5 is no seat: never truncated
        self.load_deals([b], h[None], as_counts(bottom)[None], [fb])
        return self._obs_dict(True)

    def load_deals(self, slots, hands, bottoms=None, first_bidders=None) -> None:
        """Fresh hands in ``slots`` (K,): ``load_deals(slots, deals)`` with K `ddz_env.rules.Deal`
        values (or what ``Deal.of`` reads), or from count arrays ``load_deals(slots, hands (K, 3, 15),
        bottoms (K, 15), first_bidders (K,))`` (with bidding off the first bidders are the landlords).
        No generator draw; no observation is built (call ``observe()``). ``ValueError`` naming the
        first bad entry, nothing changed."""
        lords = None
        if bottoms is None and first_bidders is None:
            hands, bottoms, first_bidders, lords = deal_arrays(hands, self.rules)
        elif bottoms is None or first_bidders is None:
            raise TypeError("load_deals takes (slots, deals) or (slots, hands, bottoms, first_bidders)")
        slots, h, bt, fb = checked_deals(slots, hands, bottoms, first_bidders, self.num_envs)
        if slots.size == 0:
            return
        self.state.hand_count[slots] -= 1  # the replaced hands do not count
        self._start_hands(slots, h, bt, fb, lords)
        self._refresh_legal()

    def load_view(self, slots, planes, hands, bottoms) -> None:
        """Put into ``slots`` (K,) the position one seat sees in ``planes`` with the cards it cannot see
        filled in (``hands`` (K, 2, 15) of the next and previous seats, ``bottoms`` (K, 15)): the observer
        at seat 0 of every slot, on turn (`BatchState.load_view`
        says what is read and how). ``ValueError`` naming what is wrong, nothing changed."""
        self.state.load_view(slots, planes, hands, bottoms)
        self._refresh_legal()

    def roles(self) -> np.ndarray:
        """(B,) ``Role`` of the seat to act (``rules.ROLE_OF``): 0 landlord, 1 farmer after it, 2 before
        it; -1 while bidding."""
        st = self.state
        return _ROLE.take(st.current_player * 4 + 1 + st.landlord).astype(np.int64)

    # ------------------------------------------------------------------ state (checkpoints)
    def state_dict(self) -> dict:
        """Everything needed to continue these hands exactly: ``{"arrays": {name: array copy},
        "rngs": [generator states], "fresh": bool}`` (numpy and plain containers; a trainer
        converts the arrays to what its checkpoint format holds)."""
        return {"arrays": {k: v.copy() for k, v in self.state.arrays().items()},
                "rngs": [r.bit_generator.state for r in self._rngs], "fresh": bool(self._fresh)}

    def load_state_dict(self, state: dict) -> None:
        """Continue from `state_dict` of an env of the same size; arrays may be numpy arrays or
        anything ``np.asarray`` reads (tensors). Checked first (names, shapes, number of
        generators): ``ValueError`` naming the first mismatch, and nothing is changed."""
        try:
            arrays, rngs, fresh = state["arrays"], state["rngs"], state["fresh"]
        except (TypeError, KeyError) as e:
            raise ValueError(f"load_state_dict: not a VectorDouDizhu state (missing {e})") from None
        new = self.state.checked_arrays(arrays)
        if len(rngs) != len(self._rngs):
            raise ValueError(f"load_state_dict: {len(rngs)} generator states for {len(self._rngs)} slots")
        self.state.assign(new)
        for r, st in zip(self._rngs, rngs):
            r.bit_generator.state = st
        self._fresh = bool(fresh)
        self._refresh_legal()

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Deal a new hand in every slot, reseeding every slot's generator when ``seed`` is given.

        Without a seed the current hands are abandoned and the next ones dealt from the slots'
        generators (as the AEC env's ``reset()``), except right after the constructor, which has
        dealt the first hands already: then those are returned.
        """
        st = self.state
        if seed is not None:
            self._seed(seed)
        elif self._fresh:
            self._fresh = False
            return self._obs_dict(True)
        st.void[:] = False
        self._deal(st.b)
        self._refresh_legal()
        self._fresh = False
        return self._obs_dict(True)

    def step(self, actions, observe: bool = True, active=None) -> tuple[dict, np.ndarray, np.ndarray, dict]:
        """Apply one action per hand (from its ``current_player``); see the module doc for what comes back.

        An illegal action for any hand raises ``ValueError`` naming the hand, the action and the
        phase, and changes nothing. ``observe=False`` skips the observation planes (``None``).
        ``active``: (B,) bool, the hands that move (None: all); the others stay as they are and
        their actions are ignored.
        """
        st = self.state
        B = self.num_envs
        try:
            a = np.asarray(actions)
            if a.dtype.kind not in "iub":
                a = a.astype(np.int64, casting="safe")
            a = a.astype(np.int64, copy=False)
        except (TypeError, ValueError):
            raise ValueError(f"actions must be {B} integer action ids, got {actions!r}") from None
        if a.shape != (B,):  # (a (2, 3) array for B = 6 is no batch of actions)
            raise ValueError(f"actions must have shape ({B},), one action id per hand, got shape {a.shape}")
        if active is not None:
            on = np.asarray(active)
            if on.shape != (B,) or on.dtype != bool:
                raise ValueError(f"active must be a ({B},) bool array, got {on.dtype} of shape {on.shape}")
            if on.all():
                active = None
            else:  # the idle hands play their own first legal id in the check, and are then left out
                a = np.where(on, a, self._ids[np.minimum(self._starts[:-1], self._ids.size - 1)])
        self._validate(a)
        self._fresh = False

        phase = st.phase if active is None else np.where(on, st.phase, -1)
        done = np.zeros(B, bool)
        void = np.zeros(B, bool)
        winner = np.full(B, -1, np.int64)
        in_play = phase == _PLAY
        st.plays += in_play
        play = in_play.nonzero()[0]
        if play.size < B:
            bid_i = (phase == _BID).nonzero()[0]
            dbl_i = (phase == _DOUBLE).nonzero()[0]
            red_i = (phase == _REDOUBLE).nonzero()[0]
        else:
            bid_i = dbl_i = red_i = None
        # the phase index sets are fixed before any change: a hand moves at most one step
        if play.size:
            T.play(st, play, a[play] if play.size < B else a, winner)
        if bid_i is not None:
            if bid_i.size:
                T.bid(st, bid_i, a[bid_i], void, self.rules.doubling)
            if dbl_i.size:
                T.double(st, dbl_i, a[dbl_i])
            if red_i.size:
                T.redouble(st, red_i, a[red_i])

        won = (winner >= 0).nonzero()[0]
        done[won] = True
        done |= void
        ended = done.nonzero()[0]
        rewards, info = T.finish_hands(st, ended, won, winner, void, self.reward_kind, self.reward_scale,
                                       self._summary_blank)
        if ended.size:
            st.void[ended] = void[ended]
            vi = void.nonzero()[0]
            if vi.size:  # R4: after a void hand the next seat bids first
                st._next_first_bidder[vi] = next_first_bidder(st.first_bidder[vi])
            self._deal(ended)
        self._refresh_legal()
        return self._obs_dict(observe), rewards, done, info

    # ------------------------------------------------------------------ transitions (ddz_env.transitions)
    def _refresh_legal(self) -> None:
        self._rows, self._ids, self._starts = T.legal_sets(self.state)

    def _validate(self, a: np.ndarray) -> None:
        st = self.state
        B = self.num_envs
        key = self._rows * NUM_ACTIONS + self._ids
        q = st.b * NUM_ACTIONS + a
        pos = np.searchsorted(key, q)
        ok = (a >= 0) & (a < NUM_ACTIONS) & (pos < key.size)
        ok[ok] = key[pos[ok]] == q[ok]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            act = int(a[b])
            name = action_to_string(act) if 0 <= act < NUM_ACTIONS else "out of range"
            n = int(self._starts[b + 1] - self._starts[b])
            raise ValueError(f"illegal action {act} ({name}) for hand {b} in phase {Phase(int(st.phase[b])).name} "
                             f"(seat {int(st.current_player[b])} to act, {n} legal actions); "
                             f"{int((~ok).sum())} of {B} actions illegal; nothing was changed")

    def legal_actions(self, b: int) -> np.ndarray:
        """Sorted legal action ids of hand b's seat to act."""
        b = self._slot(b, "legal_actions")
        return self._ids[self._starts[b]:self._starts[b + 1]]

    def legal_lists(self) -> list[np.ndarray]:
        """Every hand's legal ids, as a list of B arrays (views into ``legal_ids``)."""
        return np.split(self._ids, self._starts[1:-1])

    def legal_sets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, ids, starts)`` of the current compact legal sets."""
        return self._rows, self._ids, self._starts

    def action_masks(self, out: np.ndarray | None = None) -> np.ndarray:
        """Dense (B, NUM_ACTIONS) int8 masks of the current legal sets."""
        return expand_mask(self._rows, self._ids, self.num_envs, out=out)

    def default_actions(self) -> np.ndarray:
        """R20's timeout action of every hand (``rules.default_actions``, as ``Game.default_action``): bid
        pass, no double, no redouble; in play pass when responding, else lead the smallest single."""
        st = self.state
        hand = st.hands2[st.b3 + np.maximum(st.current_player, 0)]
        return default_actions(st.phase, st.last_move, hand).astype(np.int64)

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per hand."""
        return random_legal_actions(self._starts, self._ids, rng)

    # ------------------------------------------------------------------ observation
    def observe(self, seat=None) -> np.ndarray:
        """Planes (B, 29, 4, 15) of ``seat``'s view (an int, or (B,) seats; None: the seat to act)."""
        st = self.state
        B = self.num_envs
        if seat is None:
            o = st.current_player
        else:
            o = np.asarray(seat)
            if o.dtype.kind not in "iu":  # 1.5 is no seat: never truncated
                raise TypeError(f"observe: seat must be an integer or ({B},) integers, got {seat!r}")
            try:
                o = np.broadcast_to(o.astype(np.int64, copy=False), (B,))
            except ValueError:
                raise ValueError(f"observe: seat must be one seat or ({B},) seats, got shape {o.shape}") from None
            if o.size and (o.min() < 0 or o.max() > 2):
                raise ValueError(f"seats are 0, 1, 2, got {seat!r}")
        return observe_batch(st, o)  # the public view of R5 and R21, beside observe_game

    def _obs_dict(self, observe: bool) -> dict[str, Any]:
        st = self.state
        return {
            "observation": self.observe() if observe else None,
            "legal_rows": self._rows,
            "legal_ids": self._ids,
            "legal_starts": self._starts,
            "current_player": st.current_player.copy(),
            "phase": st.phase.copy(),
        }

    # the state's arrays a player's loop reads through the env; the others are ``env.state.NAME``
    # (`ddz_env.batch.BatchState`)
    @property
    def phase(self) -> np.ndarray:
        """(B,) int8: each table's `ddz_env.rules.Phase` (``state.phase``, not a copy)."""
        return self.state.phase

    @property
    def current_player(self) -> np.ndarray:
        """(B,) int64: the seat on turn at each table (``state.current_player``, not a copy)."""
        return self.state.current_player

    @property
    def hands(self) -> np.ndarray:
        """(B, 3, 15) int8: every seat's true hand (``state.hands``, not a copy; never an agent's input)."""
        return self.state.hands

    @property
    def landlord(self) -> np.ndarray:
        """(B,) int64: each table's landlord seat, -1 before bidding ends (``state.landlord``, not a copy)."""
        return self.state.landlord

    def __repr__(self) -> str:
        return f"VectorDouDizhu(num_envs={self.num_envs}, rules={self.rules.name!r})"


VectorEnv = VectorDouDizhu

__all__ = ["VectorDouDizhu", "VectorEnv", "expand_mask", "random_legal_actions"]
