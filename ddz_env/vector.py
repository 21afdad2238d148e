"""A batch of B independent hands as numpy arrays, stepped together.

:class:`VectorDouDizhu` (alias :data:`VectorEnv`) holds B hands ("slots"). Every hand
has exactly one seat to act (``current_player[b]``); ``step(actions)`` takes one
action id per hand, from that seat, advances every hand at once, and deals a new
hand in every slot whose hand ended (auto-reset). It is the same game as the AEC
env (``ddz_env.env``): the same rules core (``legal.legal_ids_batch`` for the play,
the bid/double rules of :class:`ddz_env.game.Game`, ``scoring.hand_scores``), the
same action ids and the same observation planes (``observation.encode``).

Returned by ``reset`` and ``step``, the observation dict::

    observation     (B, 29, 4, 15) int8   the acting seat's view (None with observe=False)
    legal_rows      (M,) int64            compact legal sets, sorted by row then id:
    legal_ids       (M,) int64              hand b may play legal_ids[legal_rows == b]
    legal_starts    (B + 1,) int64        = legal_ids[legal_starts[b]:legal_starts[b + 1]]
    current_player  (B,) int64            the seat to act (0, 1, 2)
    phase           (B,) int8             game.Phase of each hand

``expand_mask(rows, ids, B)`` (or ``env.action_masks()``) turns the compact sets into
a dense (B, NUM_ACTIONS) int8 mask; ``env.legal_actions(b)`` is hand b's id list.

``step`` returns ``(obs, rewards (B, 3) float32, done (B,) bool, info)``. ``rewards``
are the seats' rewards of the hands that ended on this step (zeros elsewhere, and for
a void hand), as the AEC env gives them (``reward="score"``: the R19 score times
``reward_scale``; ``"win"``: +-reward_scale by side). ``done[b]``: hand b ended on
this step (void hands included); its slot already holds a new hand and ``obs`` is the
new hand's first observation. ``info`` holds, for the ended hands (zeros / -1 /
False elsewhere): ``final_scores`` (B, 3) int64 (the raw R19 scores), ``void``,
``winner``, ``landlord``, ``spring``, ``anti_spring``.

Seeding: slot b owns the generator ``np.random.default_rng(env.slot_seed(b))`` and
deals every hand of the slot from it exactly as the AEC env deals on ``reset``
(``cards.deal`` then ``integers(3)`` for the first bidder; after a void hand the next
seat bids first, R4). So an AEC env reset with ``seed=env.slot_seed(b)`` and then
reset without a seed after each hand, fed the same actions, replays slot b hand by
hand.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .actions import BID_PASS, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, action_to_string
from .cards import CARD_RANK, DECK_SIZE, HAND_SIZE, MAX_COUNTS, NUM_RANKS, as_counts, shuffle_deck
from .game import NUM_SEATS, Phase
from .legal import _EXT_BEATS, _EXT_BODY, _EXT_SIZE, _EXT_START, bomb_rank_bits, legal_ids_batch
from .moves import FOUR_KICKER_RANKS, MOVE_BITS, MOVE_COUNTS, MOVE_GROUP, MOVE_NCARDS, MOVE_TYPE, PASS, THERMO, MoveType
from .observation import (
    CH_BIDS, CH_CARDS_LEFT, CH_DOUBLING, CH_HISTORY, CH_HISTORY_SEATS, CH_STATUS, CH_TO_BEAT, HISTORY, NUM_CHANNELS,
    OBS_SHAPE,
)
from .scoring import hand_scores

_BID, _DOUBLE, _REDOUBLE, _PLAY, _OVER = (int(Phase.BID), int(Phase.DOUBLE), int(Phase.REDOUBLE),
                                           int(Phase.PLAY), int(Phase.OVER))
# deck position -> 0, 1, 2 (the seats' 17 cards) or 3 (the bottom), as cards.deal splits the shuffled deck
_DEAL_SEGMENT = np.minimum(np.arange(DECK_SIZE) // HAND_SIZE, 3)
_IS_BOMB = (MOVE_TYPE == MoveType.BOMB).astype(np.int64)
_IS_ROCKET = (MOVE_TYPE == MoveType.ROCKET).astype(np.int64)
_NCARDS = MOVE_NCARDS.astype(np.int64)
_SEAT3 = np.arange(NUM_SEATS)
_HIST_BACK = np.arange(1, HISTORY + 1)  # slot k (0 = most recent) sits at ring position head - 1 - k


# ---------------------------------------------------------------------------------------------- observation
_CELLS = NUM_CHANNELS * 4 * NUM_RANKS  # 1740 cells per view, 60 per channel
_PLANE = 4 * NUM_RANKS
#: the thermometer plane (4 x 15, flattened) of every move's cards: history and to_beat planes are one lookup
MOVE_PLANES = np.ascontiguousarray(
    (np.arange(4)[:, None] < MOVE_COUNTS[:, None, :]).astype(np.int8).reshape(len(MOVE_COUNTS), _PLANE))
MOVE_PLANES.flags.writeable = False
_K = np.arange(HISTORY)
_R3_15 = _SEAT3 * NUM_RANKS
# the 46 one-hot cells of a view: history seats (15), history passes (15), cards left (3), bids (3), first bidder,
# doubling (3), redouble, phase, role, beat seat, bombs, rocket; see encode_fast
_ONEHOT_MUL = np.array([NUM_RANKS] * 15 + [0] * 15 + [1] * 16, np.int64)
_ONEHOT_OFF = np.concatenate([
    CH_HISTORY_SEATS * _PLANE + _K, CH_HISTORY_SEATS * _PLANE + 3 * NUM_RANKS + _K,
    (CH_CARDS_LEFT + _SEAT3) * _PLANE, CH_BIDS * _PLANE + _R3_15, [CH_BIDS * _PLANE + 3 * NUM_RANKS],
    CH_DOUBLING * _PLANE + _R3_15, [CH_DOUBLING * _PLANE + 3 * NUM_RANKS],
    CH_STATUS * _PLANE + np.array([0, 1, 2, 3]) * NUM_RANKS, [CH_STATUS * _PLANE + 4 * NUM_RANKS - 1],
]).astype(np.int64)


def encode_fast(hand, unseen, bottom, played, to_beat, hist_cards, hist_seat, hist_pass, cards_left, bids,
                first_bidder, doubling, redouble, phase, role, beat_seat, bombs, rocket, *,
                to_beat_move=None, hist_moves=None) -> np.ndarray:
    """:func:`ddz_env.observation.encode`, the same inputs and the same planes, ~2-4x faster.

    With ``to_beat_move`` (B,) / ``hist_moves`` (B, K) move ids given, ``to_beat`` /
    ``hist_cards`` may be None: their planes are then looked up in :data:`MOVE_PLANES`.
    Every one-hot cell is written by one flat scatter (no 2-D ``nonzero``, which is slow).
    """
    hand = np.asarray(hand)
    B = hand.shape[0]
    obs = np.empty((B, _CELLS), np.int8)
    o4 = obs.reshape(B, NUM_CHANNELS, 4, NUM_RANKS)
    cards = np.empty((B, 6, NUM_RANKS), np.int8)
    cards[:, 0] = hand
    cards[:, 1] = unseen
    cards[:, 2] = bottom
    cards[:, 3:6] = played
    v = o4[:, :6].view(bool)
    for r in range(4):  # four compares of long runs beat one broadcast compare of 15-wide rows
        np.greater(cards, r, out=v[:, :, r, :])
    if to_beat_move is not None:
        obs[:, CH_TO_BEAT * _PLANE:(CH_TO_BEAT + 1) * _PLANE] = np.take(MOVE_PLANES, to_beat_move, axis=0)
    else:
        tb = np.asarray(to_beat)
        for r in range(4):
            np.greater(tb, r, out=o4[:, CH_TO_BEAT, r, :].view(bool))
    if hist_moves is not None:
        hm = np.asarray(hist_moves)
        obs[:, CH_HISTORY * _PLANE:CH_HISTORY_SEATS * _PLANE] = np.take(
            MOVE_PLANES, hm.reshape(-1), axis=0).reshape(B, HISTORY * _PLANE)
    else:
        hc = np.asarray(hist_cards)
        vh = o4[:, CH_HISTORY:CH_HISTORY_SEATS].view(bool)
        for r in range(4):
            np.greater(hc, r, out=vh[:, :, r, :])
    obs[:, CH_HISTORY_SEATS * _PLANE:] = 0
    # one-hot cells: (cell, value) pairs, value 0 where a cell stays empty (pointing at a cell no one else sets);
    # cell = raw * _ONEHOT_MUL + _ONEHOT_OFF, in int64 whatever the inputs' dtypes
    raw = np.zeros((B, 46), np.int64)
    val = np.empty((B, 46), np.int8)
    hist_seat = np.asarray(hist_seat)
    filled = hist_seat >= 0
    raw[:, :15] = np.where(filled, hist_seat, 0)
    val[:, :15] = filled
    val[:, 15:30] = hist_pass
    raw[:, 30:33] = cards_left
    val[:, 30:33] = 1
    bids = np.asarray(bids)
    ok = bids >= 0
    raw[:, 33:36] = np.where(ok, bids, 0)
    val[:, 33:36] = ok
    raw[:, 36] = first_bidder
    val[:, 36] = 1
    doubling = np.asarray(doubling)
    ok = doubling >= 0
    raw[:, 37:40] = np.where(ok, doubling, 0)
    val[:, 37:40] = ok
    redouble = np.asarray(redouble)
    ok = redouble >= 0
    raw[:, 40] = np.where(ok, redouble, 0)
    val[:, 40] = ok
    raw[:, 41] = phase
    val[:, 41] = 1
    role = np.asarray(role)
    ok = role >= 0
    raw[:, 42] = np.where(ok, role, 0)
    val[:, 42] = ok
    beat_seat = np.asarray(beat_seat)
    ok = beat_seat >= 0
    raw[:, 43] = np.where(ok, beat_seat, 0)
    val[:, 43] = ok
    raw[:, 44] = np.minimum(bombs, 13)
    val[:, 44] = 1
    val[:, 45] = rocket
    raw *= _ONEHOT_MUL
    raw += _ONEHOT_OFF
    raw += (np.arange(B) * _CELLS)[:, None]
    obs.reshape(-1)[raw.reshape(-1)] = val.reshape(-1)
    return o4


# ---------------------------------------------------------------------------------------------- legality
# candidate body groups of a response, by the group of the move to beat (rows of legal._EXT_BEATS as lists)
_CAND_PTR = np.concatenate([[0], np.cumsum(_EXT_BEATS.sum(axis=1))]).astype(np.int64)
_CAND_GROUP = np.nonzero(_EXT_BEATS)[1].astype(np.int64)
_CAND_BODY = _EXT_BODY[_CAND_GROUP]
_RANK_IDX = np.arange(NUM_RANKS)


def _response_ids(hands: np.ndarray, last_moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``legal_ids_batch`` for hands that respond (every ``last_moves`` != 0), with legal.py's own tables.

    A response can only be one of the ~20 body groups that beat the move on the table, so
    only those are tested instead of all ~300 (leads go through ``legal_ids_batch``).
    """
    B = hands.shape[0]
    not_held = ~np.bitwise_or.reduce(THERMO[_RANK_IDX, hands], axis=1)  # moves.thermometer
    h = MOVE_GROUP[last_moves]
    start = _CAND_PTR[h]
    n = _CAND_PTR[h + 1] - start
    ends = np.cumsum(n)
    rows = np.repeat(np.arange(B), n)
    c = np.arange(int(ends[-1])) + np.repeat(start - (ends - n), n)
    ok = (_CAND_BODY[c] & not_held[rows]) == 0
    b = rows[ok]
    g = _CAND_GROUP[c[ok]]
    # from here on as legal_ids_batch: expand the surviving groups, test every move, then R13
    sizes = _EXT_SIZE[g]
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if ends.size else 0
    rows = np.repeat(b, sizes)
    ids = np.arange(total, dtype=np.int64) + np.repeat(_EXT_START[g] - (ends - sizes), sizes)
    ok = (MOVE_BITS[ids] & not_held[rows]) == 0
    bombs = bomb_rank_bits(hands)
    if bombs.any():
        ok &= (FOUR_KICKER_RANKS[ids] & bombs[rows]) == 0
    return rows[ok], ids[ok]


def expand_mask(rows: np.ndarray, ids: np.ndarray, num_envs: int, out: np.ndarray | None = None,
                dtype=np.int8) -> np.ndarray:
    """Dense (num_envs, NUM_ACTIONS) mask from compact legal sets ``(rows, ids)``.

    Pass a reused C-contiguous ``out`` buffer in a loop (a fresh 200 MB array at
    B = 8192 costs more in page faults than filling it).
    """
    shape = (num_envs, NUM_ACTIONS)
    if out is None:
        out = np.zeros(shape, dtype=dtype)
    else:
        if out.shape != shape or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous array of shape {shape}")
        out[...] = 0
    np.put(out.reshape(-1), np.asarray(rows, dtype=np.int64) * NUM_ACTIONS + np.asarray(ids, dtype=np.int64), 1)
    return out


def random_legal_actions(starts: np.ndarray, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal id per hand from compact sets (``legal_starts``, ``legal_ids``)."""
    counts = np.diff(starts)
    pick = starts[:-1] + (rng.random(counts.size) * counts).astype(np.int64)
    return ids[pick]


class VectorDouDizhu:
    """B independent hands of Dou Dizhu held in arrays and stepped together (see the module doc).

    Options as the AEC env: ``bidding=False`` makes the drawn first bidder the landlord at
    bid 1 (no bidding phase); ``doubling=False`` skips doubling and redouble; ``reward``
    is ``"score"`` or ``"win"``, multiplied by ``reward_scale``.
    """

    def __init__(self, num_envs: int, seed: int | None = 0, bidding: bool = True, doubling: bool = True,
                 reward: str = "score", reward_scale: float = 1.0):
        num_envs = int(num_envs)
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if reward not in ("score", "win"):
            raise ValueError(f"reward must be 'score' or 'win', got {reward!r}")
        self.num_envs = B = num_envs
        self.bidding = bool(bidding)
        self.doubling = bool(doubling)
        self.reward_kind = reward
        self.reward_scale = float(reward_scale)
        self._b = np.arange(B)
        i8, ip = np.int8, np.int64
        # --- the state, one row per hand
        self.hands = np.zeros((B, 3, NUM_RANKS), i8)
        self.initial_hands = np.zeros((B, 3, NUM_RANKS), i8)
        self.bottom = np.zeros((B, NUM_RANKS), i8)
        self.phase = np.zeros(B, i8)
        self.current_player = np.zeros(B, ip)
        self.first_bidder = np.zeros(B, ip)
        self.bids = np.zeros((B, 3), i8)  # -1: not yet, 0: pass, 1..3
        self.bid = np.zeros(B, ip)
        self.landlord = np.zeros(B, ip)
        self.double_choice = np.zeros((B, 3), i8)  # -1: not chosen (always for the landlord)
        self.doubles_revealed = np.zeros(B, bool)
        self.redouble_choice = np.zeros(B, i8)  # -1: not asked (or not yet), 0, 1
        self.bottom_revealed = np.zeros(B, bool)
        self.last_move = np.zeros(B, ip)  # move id to beat; 0 when the player to act leads
        self.last_mover = np.zeros(B, ip)
        self.passes = np.zeros(B, i8)
        self.played = np.zeros((B, 3, NUM_RANKS), i8)
        self.played_total = np.zeros((B, NUM_RANKS), i8)
        self.n_cards = np.zeros((B, 3), ip)
        self.moves_made = np.zeros((B, 3), np.int16)
        self.bombs = np.zeros(B, ip)
        self.rockets = np.zeros(B, ip)
        # ring buffer of the last HISTORY plays (passes included): the next one goes to hist_head
        self.hist_moves = np.zeros((B, HISTORY), ip)
        self.hist_seats = np.zeros((B, HISTORY), ip)  # -1: empty slot
        self.hist_head = np.zeros(B, ip)
        self.hand_count = np.zeros(B, ip)  # hands dealt so far in each slot (the current one included)
        self.void = np.zeros(B, bool)  # the last finished hand of each slot was void
        self._next_first_bidder = np.full(B, -1, ip)  # R4: set after a void hand
        self._rngs: list[np.random.Generator] = []
        self.slot_seeds = np.zeros(B, np.uint64)
        self._rows = self._ids = self._starts = None
        # flat views of the same memory, for 1-D fancy indexing by hand * 3 + seat (or hand * HISTORY + slot)
        self._b3 = self._b * 3
        self._b15 = self._b * HISTORY
        self._hands2 = self.hands.reshape(-1, NUM_RANKS)
        self._played2 = self.played.reshape(-1, NUM_RANKS)
        self._n_cards1 = self.n_cards.reshape(-1)
        self._moves_made1 = self.moves_made.reshape(-1)
        self._hist_moves1 = self.hist_moves.reshape(-1)
        self._hist_seats1 = self.hist_seats.reshape(-1)
        self._seed(seed)
        self._deal(self._b)
        self._refresh_legal()
        self._fresh = True  # the constructor's deal is the seeded reset: a plain reset() right after keeps it

    # ------------------------------------------------------------------ seeding and dealing
    def _seed(self, seed: int | None) -> None:
        ss = np.random.SeedSequence(seed)
        self.seed = ss.entropy
        self.slot_seeds = ss.generate_state(self.num_envs, dtype=np.uint64)
        self._rngs = [np.random.default_rng(int(s)) for s in self.slot_seeds]
        self.hand_count[:] = 0
        self._next_first_bidder[:] = -1

    def slot_seed(self, b: int) -> int:
        """The integer seed of slot b's generator: ``ddz_env.raw_env().reset(seed=...)`` deals the same first hand."""
        return int(self.slot_seeds[b])

    def _deal(self, slots: np.ndarray) -> None:
        """New hands in ``slots`` from their generators, exactly as the AEC env's ``reset`` deals."""
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
        key = (np.arange(K)[:, None] * 4 + _DEAL_SEGMENT) * NUM_RANKS + CARD_RANK[perms]
        counts = np.bincount(key.ravel(), minlength=K * 4 * NUM_RANKS).reshape(K, 4, NUM_RANKS).astype(np.int8)
        nfb = self._next_first_bidder[slots]
        fb = np.where(nfb >= 0, nfb, drawn)
        self._next_first_bidder[slots] = -1
        self._start_hands(slots, counts[:, :3], counts[:, 3], fb)

    def _start_hands(self, slots: np.ndarray, hands: np.ndarray, bottom: np.ndarray, fb: np.ndarray) -> None:
        """Put fresh hands (K, 3, 15) + bottoms (K, 15) with first bidders (K,) into ``slots``."""
        self.hands[slots] = hands
        self.initial_hands[slots] = hands
        self.bottom[slots] = bottom
        self.first_bidder[slots] = fb
        self.current_player[slots] = fb
        self.phase[slots] = _BID
        self.bids[slots] = -1
        self.bid[slots] = 0
        self.landlord[slots] = -1
        self.double_choice[slots] = -1
        self.doubles_revealed[slots] = False
        self.redouble_choice[slots] = -1
        self.bottom_revealed[slots] = False
        self.last_move[slots] = PASS
        self.last_mover[slots] = -1
        self.passes[slots] = 0
        self.played[slots] = 0
        self.played_total[slots] = 0
        self.n_cards[slots] = HAND_SIZE
        self.moves_made[slots] = 0
        self.bombs[slots] = 0
        self.rockets[slots] = 0
        self.hist_moves[slots] = 0
        self.hist_seats[slots] = -1
        self.hist_head[slots] = 0
        self.hand_count[slots] += 1
        if not self.bidding:  # the drawn first bidder is landlord at bid 1 (Game(landlord=...))
            self.bid[slots] = 1
            self._make_landlord(slots, fb)

    def deal_of(self, b: int) -> dict[str, Any]:
        """The deal of slot b's current hand: what ``Game(...)`` / the AEC env's ``options["deal"]`` take."""
        d = {"hands": self.initial_hands[b].copy(), "bottom": self.bottom[b].copy(),
             "first_bidder": int(self.first_bidder[b])}
        if not self.bidding:
            d["landlord"] = int(self.first_bidder[b])
        return d

    def load_deal(self, b: int, hands, bottom, first_bidder: int = 0) -> dict[str, np.ndarray]:
        """Replace slot b's hand by a fresh one with the given cards (strings or counts); no generator draw.

        Returns the observation dict of the whole batch (hand b's entries are the new hand's).
        """
        h = np.stack([as_counts(x) for x in hands]).astype(np.int8)
        bt = as_counts(bottom).astype(np.int8)
        if h.shape != (3, NUM_RANKS) or not (h.sum(axis=1) == HAND_SIZE).all() or bt.sum() != 3 \
                or (h.sum(axis=0) + bt != MAX_COUNTS).any():
            raise ValueError("a deal is three 17-card hands + 3 bottom cards of one 54-card deck")
        if first_bidder not in (0, 1, 2):
            raise ValueError(f"first_bidder must be 0, 1 or 2, got {first_bidder!r}")
        slots = np.array([b])
        self.hand_count[slots] -= 1  # the replaced hand does not count
        self._start_hands(slots, h[None], bt[None], np.array([first_bidder]))
        self._refresh_legal()
        return self._obs_dict(True)

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Deal a new hand in every slot, reseeding every slot's generator when ``seed`` is given.

        Without a seed the current hands are abandoned and the next ones dealt from the slots'
        generators (as the AEC env's ``reset()``), except right after the constructor, which has
        dealt the first hands already: then those are returned.
        """
        if seed is not None:
            self._seed(seed)
        elif self._fresh:
            self._fresh = False
            return self._obs_dict(True)
        self.void[:] = False
        self._deal(self._b)
        self._refresh_legal()
        self._fresh = False
        return self._obs_dict(True)

    def step(self, actions, observe: bool = True) -> tuple[dict, np.ndarray, np.ndarray, dict]:
        """Apply one action per hand (from its ``current_player``); see the module doc for what comes back.

        An illegal action for any hand raises ``ValueError`` naming the hand, the action and the
        phase, and changes nothing. ``observe=False`` skips the observation planes (``None``).
        """
        B = self.num_envs
        try:
            a = np.asarray(actions)
            if a.dtype.kind not in "iub":
                a = a.astype(np.int64, casting="safe")
            a = a.astype(np.int64, copy=False).reshape(B)
        except (TypeError, ValueError):
            raise ValueError(f"actions must be {B} integer action ids, got {actions!r}") from None
        self._validate(a)
        self._fresh = False

        phase = self.phase
        s = self.current_player
        done = np.zeros(B, bool)
        void = np.zeros(B, bool)
        winner = np.full(B, -1, np.int64)
        play = np.flatnonzero(phase == _PLAY)
        if play.size < B:
            bid_i = np.flatnonzero(phase == _BID)
            dbl_i = np.flatnonzero(phase == _DOUBLE)
            red_i = np.flatnonzero(phase == _REDOUBLE)
        else:
            bid_i = dbl_i = red_i = None
        # the phase index sets are fixed before any change: a hand moves at most one step
        if play.size:
            self._play(play, a[play] if play.size < B else a, winner)
        if bid_i is not None:
            if bid_i.size:
                self._bid(bid_i, a[bid_i], void)
            if dbl_i.size:
                self._double(dbl_i, a[dbl_i])
            if red_i.size:
                self.redouble_choice[red_i] = a[red_i] - NO_REDOUBLE
                self._start_play(red_i)

        rewards = np.zeros((B, 3), np.float32)
        final = np.zeros((B, 3), np.int64)
        info: dict[str, Any] = {}
        won = np.flatnonzero(winner >= 0)
        done[won] = True
        done |= void
        info_landlord = np.full(B, -1, np.int64)
        spring_out = np.zeros(B, bool)
        anti_out = np.zeros(B, bool)
        if won.size:
            lord = self.landlord[won]
            w = winner[won]
            farmers_won = w != lord
            mm = self.moves_made[won]
            farmer_moves = mm.sum(axis=1) - mm[np.arange(won.size), lord]
            spring = ~farmers_won & (farmer_moves == 0)
            anti = farmers_won & (mm[np.arange(won.size), lord] == 1)
            scores = hand_scores(self.bid[won], lord, self.double_choice[won] == 1, self.redouble_choice[won] == 1,
                                 self.bombs[won], self.rockets[won], spring, anti, farmers_won)
            final[won] = scores
            info_landlord[won] = lord
            spring_out[won] = spring
            anti_out[won] = anti
            if self.reward_kind == "score":
                rewards[won] = scores * self.reward_scale
            else:
                lord_side = _SEAT3 == lord[:, None]
                rewards[won] = np.where(lord_side == (w == lord)[:, None], 1.0, -1.0) * self.reward_scale
        info["final_scores"] = final
        info["void"] = void
        info["winner"] = winner
        info["landlord"] = info_landlord
        info["spring"] = spring_out
        info["anti_spring"] = anti_out
        ended = np.flatnonzero(done)
        if ended.size:
            self.void[ended] = void[ended]
            vi = np.flatnonzero(void)
            if vi.size:  # R4: after a void hand the next seat bids first
                self._next_first_bidder[vi] = (self.first_bidder[vi] + 1) % NUM_SEATS
            self._deal(ended)
        self._refresh_legal()
        return self._obs_dict(observe), rewards, done, info

    # ------------------------------------------------------------------ transitions (one per phase)
    def _bid(self, idx: np.ndarray, a: np.ndarray, void: np.ndarray) -> None:
        s = self.current_player[idx]
        v = a - BID_PASS
        self.bids[idx, s] = v
        bid = np.where(v > 0, v, self.bid[idx])
        self.bid[idx] = bid
        ended = (v == 3) | ((self.bids[idx] >= 0).sum(axis=1) == NUM_SEATS)
        self.current_player[idx] = np.where(ended, -1, (s + 1) % NUM_SEATS)
        if ended.any():
            e = idx[ended]
            all_passed = bid[ended] == 0
            if all_passed.any():  # void hand (R4)
                vi = e[all_passed]
                void[vi] = True
                self.phase[vi] = _OVER
            lords = e[~all_passed]
            if lords.size:
                self._make_landlord(lords, np.argmax(self.bids[lords], axis=1))

    def _make_landlord(self, idx: np.ndarray, seats: np.ndarray) -> None:
        self.landlord[idx] = seats
        if self.doubling:
            self.phase[idx] = _DOUBLE
            self.current_player[idx] = (seats + 1) % NUM_SEATS
        else:
            self._start_play(idx)

    def _double(self, idx: np.ndarray, a: np.ndarray) -> None:
        s = self.current_player[idx]
        self.double_choice[idx, s] = a - NO_DOUBLE
        lord = self.landlord[idx]
        second = (lord + 2) % NUM_SEATS
        both = s == second
        self.current_player[idx[~both]] = second[~both]
        if both.any():
            d = idx[both]
            self.doubles_revealed[d] = True  # both chosen: revealed together (R5)
            someone = self.double_choice[d].max(axis=1) == 1
            r = d[someone]  # R6: the landlord may redouble only if someone doubled
            self.phase[r] = _REDOUBLE
            self.current_player[r] = self.landlord[r]
            self._start_play(d[~someone])

    def _start_play(self, idx: np.ndarray) -> None:
        if idx.size == 0:
            return
        lord = self.landlord[idx]
        self.hands[idx, lord] += self.bottom[idx]  # R7
        self.n_cards[idx, lord] += 3
        self.bottom_revealed[idx] = True
        self.phase[idx] = _PLAY
        self.current_player[idx] = lord
        self.last_move[idx] = PASS
        self.last_mover[idx] = -1

    def _play(self, idx: np.ndarray, m: np.ndarray, winner: np.ndarray) -> None:
        """Every play-phase hand at once: a pass is the move of no cards, so one update serves both."""
        s = self.current_player[idx]
        flat = idx * 3 + s  # row of (hand, seat) in the (B * 3, ...) views
        cards = np.take(MOVE_COUNTS, m, axis=0)
        self._hands2[flat] -= cards
        self._played2[flat] += cards
        self.played_total[idx] += cards
        n_cards = self._n_cards1
        left = n_cards[flat] - _NCARDS[m]
        n_cards[flat] = left
        # history ring (plays of the play phase, passes included, as Game.plays)
        head = self.hist_head[idx]
        ring = idx * HISTORY + head
        self._hist_moves1[ring] = m
        self._hist_seats1[ring] = s
        head += 1
        head[head == HISTORY] = 0
        self.hist_head[idx] = head
        is_pass = m == PASS
        moved = ~is_pass
        self._moves_made1[flat] += moved
        self.bombs[idx] += _IS_BOMB[m]
        self.rockets[idx] += _IS_ROCKET[m]
        passes = np.where(is_pass, self.passes[idx] + 1, 0)
        lead_again = passes == 2  # two passes: the last player to play leads again (R8)
        passes[lead_again] = 0
        self.passes[idx] = passes
        self.last_move[idx] = np.where(moved, m, np.where(lead_again, PASS, self.last_move[idx]))
        self.last_mover[idx] = np.where(moved, s, self.last_mover[idx])
        out = left == 0  # R17
        nxt = s + 1
        nxt[nxt == NUM_SEATS] = 0
        nxt[out] = -1
        self.current_player[idx] = nxt
        if out.any():
            f = idx[out]
            winner[f] = s[out]
            self.phase[f] = _OVER

    # ------------------------------------------------------------------ legality
    def _refresh_legal(self) -> None:
        """Compact legal sets of every hand (sorted by row, then id) for the seat to act."""
        B = self.num_envs
        phase = self.phase
        cur = self.current_player
        is_play = phase == _PLAY
        lead = np.flatnonzero(is_play & (self.last_move == PASS))
        resp = np.flatnonzero(self.last_move != PASS)  # (last_move is 0 outside the play phase)
        parts = []
        if lead.size:
            parts.append((lead, *legal_ids_batch(self._hands2[lead * 3 + cur[lead]], self.last_move[lead])))
        if resp.size:
            parts.append((resp, *_response_ids(self._hands2[resp * 3 + cur[resp]], self.last_move[resp])))
        counts = np.zeros(B, np.int64)
        for gidx, prow, _ in parts:
            counts[gidx] = np.bincount(prow, minlength=gidx.size)
        other = np.flatnonzero(~is_play)
        if other.size:  # bid: pass, then bid + 1 .. 3 (R3); double / redouble: no, yes
            ph = phase[other]
            counts[other] = np.where(ph == _BID, 4 - self.bid[other], 2)
        starts = np.zeros(B + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        ids = np.empty(int(starts[-1]), np.int64)
        rows = np.repeat(self._b, counts)
        for gidx, prow, pids in parts:
            sub = counts[gidx]
            # entry j of part row i goes to starts[gidx[i]] + (j - first entry of row i in the part)
            ids[np.arange(pids.size) + np.repeat(starts[gidx] - (np.cumsum(sub) - sub), sub)] = pids
        if other.size:
            ph = phase[other]
            c = counts[other]
            n = int(c.sum())
            r = np.repeat(other, c)
            offset = np.arange(n) - np.repeat(np.cumsum(c) - c, c)
            base = np.where(ph == _BID, BID_PASS, np.where(ph == _DOUBLE, NO_DOUBLE, NO_REDOUBLE))
            step_bid = np.where((self.phase[r] == _BID) & (offset > 0), self.bid[r], 0)
            ids[np.repeat(starts[other], c) + offset] = np.repeat(base, c) + offset + step_bid
        for x in (rows, ids, starts):
            x.flags.writeable = False
        self._rows, self._ids, self._starts = rows, ids, starts

    def _validate(self, a: np.ndarray) -> None:
        B = self.num_envs
        key = self._rows * NUM_ACTIONS + self._ids
        q = self._b * NUM_ACTIONS + a
        pos = np.searchsorted(key, q)
        ok = (a >= 0) & (a < NUM_ACTIONS) & (pos < key.size)
        ok[ok] = key[pos[ok]] == q[ok]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            act = int(a[b])
            name = action_to_string(act) if 0 <= act < NUM_ACTIONS else "out of range"
            n = int(self._starts[b + 1] - self._starts[b])
            raise ValueError(f"illegal action {act} ({name}) for hand {b} in phase {Phase(int(self.phase[b])).name} "
                             f"(seat {int(self.current_player[b])} to act, {n} legal actions); "
                             f"{int((~ok).sum())} of {B} actions illegal; nothing was changed")

    def legal_actions(self, b: int) -> np.ndarray:
        """Sorted legal action ids of hand b's seat to act."""
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

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per hand."""
        return random_legal_actions(self._starts, self._ids, rng)

    # ------------------------------------------------------------------ observation
    def observe(self, seat=None) -> np.ndarray:
        """Planes (B, 29, 4, 15) of ``seat``'s view (an int, or (B,) seats; None: the seat to act)."""
        B = self.num_envs
        if seat is None:
            o = self.current_player
        else:
            o = np.broadcast_to(np.asarray(seat, dtype=np.int64), (B,))
            if o.size and (o.min() < 0 or o.max() > 2):
                raise ValueError(f"seats are 0, 1, 2, got {seat!r}")
        b3 = self._b3
        order = (o[:, None] + _SEAT3) % NUM_SEATS  # relative seat -> absolute seat
        flat = b3[:, None] + order  # rows of the (B * 3, ...) views
        own = flat[:, 0]
        hand = np.take(self._hands2, own, axis=0)
        played = np.take(self._played2, flat.reshape(-1), axis=0).reshape(B, 3, NUM_RANKS)
        revealed = self.bottom_revealed
        bottom = self.bottom * revealed[:, None]
        lord = self.landlord
        unseen = MAX_COUNTS - hand - self.played_total
        sees_lord = revealed & (lord != o)  # the known bottom cards the landlord still holds
        if sees_lord.any():
            k = np.flatnonzero(sees_lord)
            unseen[k] -= np.maximum(self.bottom[k] - self._played2[k * 3 + lord[k]], 0)
        last = self.last_move  # 0 outside the play phase
        ring = self._b15[:, None] + (self.hist_head[:, None] - _HIST_BACK) % HISTORY
        hm = np.take(self.hist_moves, ring)
        hs = np.take(self.hist_seats, ring)
        filled = hs >= 0
        hist_seat = np.where(filled, (hs - o[:, None]) % NUM_SEATS, -1)
        hist_pass = filled & (hm == PASS)
        cards_left = np.take(self.n_cards, flat)
        bids = np.take(self.bids, flat)
        dbl = np.take(self.double_choice, flat)
        dbl = np.where(self.doubles_revealed[:, None] | (_SEAT3 == 0), dbl, -1)  # R5: own choice at once
        role = np.where(lord >= 0, (o - lord) % NUM_SEATS, -1)
        beat_seat = np.where(last != PASS, (self.last_mover - o) % NUM_SEATS, -1)
        return encode_fast(hand, unseen, bottom, played, None, None, hist_seat, hist_pass, cards_left, bids,
                           (self.first_bidder - o) % NUM_SEATS, dbl, self.redouble_choice, self.phase, role,
                           beat_seat, self.bombs, self.rockets > 0, to_beat_move=last, hist_moves=hm)

    def _obs_dict(self, observe: bool) -> dict[str, Any]:
        return {
            "observation": self.observe() if observe else None,
            "legal_rows": self._rows,
            "legal_ids": self._ids,
            "legal_starts": self._starts,
            "current_player": self.current_player.copy(),
            "phase": self.phase.copy(),
        }

    def __repr__(self) -> str:
        return f"VectorDouDizhu(num_envs={self.num_envs}, bidding={self.bidding}, doubling={self.doubling})"


VectorEnv = VectorDouDizhu

__all__ = ["VectorDouDizhu", "VectorEnv", "expand_mask", "random_legal_actions"]
