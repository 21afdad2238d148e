"""A batch of B independent hands as numpy arrays, stepped together.

:class:`VectorDouDizhu` (alias :data:`VectorEnv`) holds B hands ("slots"). Every hand
has exactly one seat to act (``current_player[b]``); ``step(actions)`` takes one
action id per hand, from that seat, advances every hand at once (vectorized per
phase, no loop over hands), and deals a new hand in every slot whose hand ended
(auto-reset). It is the game of the AEC env (``ddz_env.env``), with the same action
ids and the same observation planes, from the same rules core:

* play legality from ``legal.py``: leads through ``legal_ids_batch``; responses
  through :func:`legal.response_ids_batch`, the same algorithm on legal.py's own tables
  restricted to the ~20 body groups that can beat the move on the table (tests
  check it equals ``legal_ids_batch``); bids, doubles and redoubles from
  ``rules.legal_choices``, as ``Game.legal_actions``;
* a finished hand's spring flags and scores from ``scoring.finish_hand``, as ``Game``;
* planes from ``observation.observe_batch`` (the public view of B hands, R5 and R21, beside
  ``observe_game``; tests check both against each other).

Returned by ``reset`` and ``step``, the observation dict::

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
zeros / -1 / False in the rows of hands that did not end)::

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

from .actions import BID_PASS, FIRST_CHOICE, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, NUM_CHOICES, action_to_string
from .cards import CARD_RANK, DECK_SIZE, HAND_SIZE, NUM_RANKS, NUM_SEATS, as_counts, as_id, check_integral, shuffle_deck
from .legal import legal_ids_batch, response_ids_batch
from .moves import MOVE_COUNTS, MOVE_NCARDS, MOVE_TYPE, PASS, MoveType
from .observation import (EMPTY_SLOT, HISTORY, OBS_SHAPE, observe_batch, read_bids, read_cards, read_cards_left,
                          read_doubling, read_history_seats, read_status)
from .rules import (
    ROLE_OF, Deal, Phase, Rules, as_seat, bid_outcome, check_deals, check_hands_arg, default_actions, doubling_order,
    legal_choices, next_first_bidder, redouble_allowed,
)
from .rules import rewards as hand_rewards
from .scoring import finish_hand

_BID, _DOUBLE, _REDOUBLE, _PLAY, _OVER = (int(Phase.BID), int(Phase.DOUBLE), int(Phase.REDOUBLE),
                                           int(Phase.PLAY), int(Phase.OVER))
# deck position -> 0, 1, 2 (the seats' 17 cards) or 3 (the bottom), as cards.deal splits the shuffled deck
_DEAL_SEGMENT = np.minimum(np.arange(DECK_SIZE) // HAND_SIZE, 3)
_IS_BOMB = (MOVE_TYPE == MoveType.BOMB).astype(np.int64)
_IS_ROCKET = (MOVE_TYPE == MoveType.ROCKET).astype(np.int64)
_IS_BOMBISH = (_IS_BOMB + _IS_ROCKET).astype(bool)
_NCARDS = MOVE_NCARDS.astype(np.int64)
#: a card multiset -> its move id (each multiset is exactly one move of the table; ``load_view`` reads moves back)
_MOVE_OF_COUNTS = {MOVE_COUNTS[m].tobytes(): m for m in range(1, len(MOVE_COUNTS))}
#: ROLE_OF flat: _ROLE[4 * o + 1 + landlord] is seat o's role (-1 with no landlord yet)
_ROLE = ROLE_OF.reshape(-1)
#: the hand summary's integer keys of step's info: (key, state array, width, blank), in the columns of one block
_SUMMARY = (("bids", "bids", 3, -1), ("doubles", "double_choice", 3, -1), ("redouble", "redouble_choice", 1, -1),
            ("bid", "bid", 1, 0), ("first_bidder", "first_bidder", 1, -1), ("bombs", "seat_bombs", 3, 0),
            ("rockets", "seat_rockets", 3, 0), ("plays", "plays", 1, 0))
_SUMMARY_BLANK = np.concatenate([np.full(w, blank, np.int64) for _, _, w, blank in _SUMMARY])


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

    Options as the AEC env: ``rules`` (a :class:`~ddz_env.rules.Rules`, a preset name or fields;
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
        self.seat_bombs = np.zeros((B, 3), ip)  # bombs / rockets each seat played (the hand summary)
        self.seat_rockets = np.zeros((B, 3), ip)
        self.plays = np.zeros(B, ip)  # actions of the play phase, passes included
        # ring buffer of the last HISTORY plays (passes included): the next one goes to hist_head
        self.hist_moves = np.zeros((B, HISTORY), np.int32)  # NUM_MOVES: empty slot
        self.hist_seats = np.zeros((B, HISTORY), i8)  # -1: empty slot
        self.hist_head = np.zeros(B, ip)
        self.hand_count = np.zeros(B, ip)  # hands dealt so far in each slot (the current one included)
        self.void = np.zeros(B, bool)  # the last finished hand of each slot was void
        self._next_first_bidder = np.full(B, -1, ip)  # R4: set after a void hand
        self._rngs: list[np.random.Generator] = []
        self.slot_seeds = np.zeros(B, np.uint64)
        self._rows = self._ids = self._starts = None
        # flat views of the same memory, for 1-D fancy indexing by hand * 3 + seat (or hand * HISTORY + slot)
        self._b3 = self._b * 3
        self._hands2 = self.hands.reshape(-1, NUM_RANKS)
        self._played2 = self.played.reshape(-1, NUM_RANKS)
        self._n_cards1 = self.n_cards.reshape(-1)
        self._moves_made1 = self.moves_made.reshape(-1)
        self._hist_moves1 = self.hist_moves.reshape(-1)
        self._hist_seats1 = self.hist_seats.reshape(-1)
        self._seat_bombs1 = self.seat_bombs.reshape(-1)
        self._seat_rockets1 = self.seat_rockets.reshape(-1)
        self._summary_blank = np.ascontiguousarray(np.broadcast_to(_SUMMARY_BLANK, (B, _SUMMARY_BLANK.size)))
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
        return int(self.slot_seeds[self._slot(b, "slot_seed")])

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

    def _start_hands(self, slots: np.ndarray, hands: np.ndarray, bottom: np.ndarray, fb: np.ndarray,
                     lords: np.ndarray | None = None) -> None:
        """Put fresh hands (K, 3, 15) + bottoms (K, 15) with first bidders (K,) into ``slots``; with
        bidding off the landlords are ``lords`` (K,) (None: the first bidders)."""
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
        self.seat_bombs[slots] = 0
        self.seat_rockets[slots] = 0
        self.plays[slots] = 0
        self.hist_moves[slots] = EMPTY_SLOT
        self.hist_seats[slots] = -1
        self.hist_head[slots] = 0
        self.hand_count[slots] += 1
        if not self.rules.bidding:  # the drawn first bidder is landlord at bid 1 (as Game)
            self.bid[slots] = 1
            self._make_landlord(slots, fb if lords is None else lords)

    def deal_of(self, b: int) -> Deal:
        """The :class:`~ddz_env.rules.Deal` of slot b's current hand (with bidding off, its ``landlord``):
        what ``Game.from_deal``, ``load_deals`` and the AEC env's ``options["deal"]`` take. (It reads as
        the dict this returned before: ``d["hands"]``, ``d.get("landlord")``.)"""
        b = self._slot(b, "deal_of")
        return Deal._trusted(self.initial_hands[b], self.bottom[b], int(self.first_bidder[b]),
                             None if self.rules.bidding else int(self.landlord[b]))

    def load_deal(self, b: int, hands, bottom=None, first_bidder: int = 0) -> dict[str, np.ndarray]:
        """Replace slot b's hand by a fresh one: a :class:`~ddz_env.rules.Deal` (or what ``Deal.of`` reads),
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
        """Fresh hands in ``slots`` (K,): ``load_deals(slots, deals)`` with K :class:`~ddz_env.rules.Deal`
        values (or what ``Deal.of`` reads), or from count arrays ``load_deals(slots, hands (K, 3, 15),
        bottoms (K, 15), first_bidders (K,))`` (with bidding off the first bidders are the landlords).
        No generator draw; no observation is built (call ``observe()``). ``ValueError`` naming the
        first bad entry, nothing changed."""
        lords = None
        if bottoms is None and first_bidders is None:
            deals = [Deal.of(d) for d in hands]
            given = [k for k, d in enumerate(deals) if d.landlord is not None]
            if given and self.rules.bidding:
                raise ValueError(f"load_deals: deal {given[0]} names landlord {deals[given[0]].landlord}; a landlord "
                                 f"is given only when bidding is off (rules {self.rules.name!r})")
            hands = np.stack([d.hands for d in deals]) if deals else np.zeros((0, 3, NUM_RANKS), np.int8)
            bottoms = np.stack([d.bottom for d in deals]) if deals else np.zeros((0, NUM_RANKS), np.int8)
            first_bidders = np.array([d.first_bidder for d in deals], np.int64)
            if given:
                lords = np.array([d.first_bidder if d.landlord is None else d.landlord for d in deals], np.int64)
        elif bottoms is None or first_bidders is None:
            raise TypeError("load_deals takes (slots, deals) or (slots, hands, bottoms, first_bidders)")
        slots = np.asarray(slots).reshape(-1)
        fb = np.asarray(first_bidders).reshape(-1)
        for name, x in (("slots", slots), ("first_bidders", fb)):
            if x.size and x.dtype.kind not in "iu":  # 1.7 is no slot, 1.5 no seat: never truncated
                raise TypeError(f"load_deals: {name} must be integers, got {x.tolist()!r} (dtype {x.dtype})")
        slots = slots.astype(np.int64, copy=False)
        fb = fb.astype(np.int64, copy=False)
        K = slots.size
        h = np.asarray(hands)
        bt = np.asarray(bottoms)
        if h.shape != (K, 3, NUM_RANKS) or bt.shape != (K, NUM_RANKS) or fb.shape != (K,):
            raise ValueError(f"load_deals: expected hands (K, 3, 15), bottoms (K, 15) and first_bidders (K,) "
                             f"for K = {K} slots, got {h.shape}, {bt.shape}, {fb.shape}")
        if K and (slots.min() < 0 or slots.max() >= self.num_envs or np.unique(slots).size != K):
            raise ValueError(f"load_deals: slots must be distinct indices in [0, {self.num_envs}), got {slots}")
        check_integral(h, "load_deals: hands")
        check_integral(bt, "load_deals: bottoms")
        check_deals(h, bt, "load_deals: ")  # R1, R2
        bad = (fb < 0) | (fb > 2)
        if bad.any():
            raise ValueError(f"first_bidder must be 0, 1 or 2, got {int(fb[bad][0])!r}")
        if K == 0:
            return
        self.hand_count[slots] -= 1  # the replaced hands do not count
        self._start_hands(slots, h.astype(np.int8), bt.astype(np.int8), fb, lords)
        self._refresh_legal()

    def load_view(self, slots, planes, hands, bottoms) -> None:
        """Put into ``slots`` (K,) the position one seat sees in ``planes`` (its (29, 4, 15) observation
        of a play-phase decision), with the cards it cannot see filled in: ``hands`` (K, 2, 15), the
        next and the previous seat's cards now, and ``bottoms`` (K, 15) (what
        ``beliefs.sample_hidden(planes, K)`` draws). For search: the observer sits at seat 0 of every
        slot, on turn, and the slots continue the hand from there.

        Everything that decides the rest of the hand is read from the planes: hands and counts,
        the landlord, bids, doubles and redouble (R3-R6), bombs and the rocket so far (R19), the
        move to beat and who played it, the passes since (R8), whether each seat has played (R18),
        and the last ``HISTORY`` plays (what the agents see). The one fact the planes cannot
        always give is R18's "the landlord played once" when its first play has left the history:
        its plays are counted as those in the history plus one for the cards played before it.
        ``observe(0)`` of each slot is then ``planes`` and its legal set the seat's.

        ``ValueError`` naming what is wrong (not a play decision, hands that disagree with the
        planes' counts or unseen cards, a move to beat the seat's legal set does not fit), nothing
        changed."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        K = slots.size
        if K and (slots.min() < 0 or slots.max() >= self.num_envs or np.unique(slots).size != K):
            raise ValueError(f"load_view: slots must be distinct indices in [0, {self.num_envs}), got {slots}")
        p = np.asarray(planes)
        if p.shape != OBS_SHAPE:
            raise ValueError(f"load_view: planes must have shape {OBS_SHAPE}, got {p.shape}")
        h = np.asarray(hands)
        bt = np.asarray(bottoms)
        if h.shape != (K, 2, NUM_RANKS) or bt.shape != (K, NUM_RANKS):
            raise ValueError(f"load_view: expected hands (K, 2, 15) and bottoms (K, 15) for K = {K} slots, got "
                             f"{h.shape} and {bt.shape}")
        st = read_status(p)
        if int(st.phase) != _PLAY or int(st.role) < 0:
            raise ValueError(f"load_view: the planes show phase {Phase(int(st.phase)).name}, not a play decision")
        own = read_cards(p, "hand").astype(np.int8)
        played = read_cards(p, "played").astype(np.int8)
        left = read_cards_left(p)
        full = np.concatenate([np.broadcast_to(own, (K, 1, NUM_RANKS)), h.astype(np.int8)], axis=1)
        unseen = read_cards(p, "unseen").astype(np.int64)
        lord = (-int(st.role)) % NUM_SEATS
        bottom_plane = read_cards(p, "bottom").astype(np.int64)
        still = np.maximum(bottom_plane - played[lord], 0)  # the revealed bottom cards the landlord still holds
        hidden_cards = h.astype(np.int64).sum(axis=1)
        hidden_cards[:, :] -= still if lord else 0
        if K and (not np.array_equal(full.sum(axis=2), np.broadcast_to(left, (K, 3)))
                  or (h < 0).any() or not (hidden_cards == unseen).all()
                  or not (bt.astype(np.int64) == bottom_plane).all()):
            raise ValueError("load_view: the hands or bottoms disagree with the planes (the cards each seat holds, "
                             "the unseen cards, the revealed bottom)")
        # the move to beat: the one move of the to_beat cards (each card multiset is one move id)
        to_beat = read_cards(p, "to_beat")
        last = PASS
        if to_beat.any():
            last = _MOVE_OF_COUNTS.get(to_beat.astype(np.int8).tobytes(), -1)
            if last < 0:
                raise ValueError(f"load_view: the to_beat cards {to_beat.tolist()} are no move")
        hist = read_cards(p, "history").astype(np.int8)  # (HISTORY, 15) most recent first
        seats = read_history_seats(p)  # (HISTORY,) relative seat, -1 empty
        n_hist = int((seats >= 0).sum())
        moves = np.full(HISTORY, EMPTY_SLOT, np.int64)
        for k in range(n_hist):
            moves[k] = _MOVE_OF_COUNTS.get(hist[k].tobytes(), -1) if hist[k].any() else PASS
            if moves[k] < 0:
                raise ValueError(f"load_view: history slot {k} holds cards that are no move")
        passes = 0
        if last != PASS:
            while passes < n_hist and moves[passes] == PASS:
                passes += 1
        made = np.zeros(NUM_SEATS, np.int16)
        seen = np.zeros((NUM_SEATS, NUM_RANKS), np.int64)
        for k in range(n_hist):
            if moves[k] != PASS:
                made[seats[k]] += 1
                seen[seats[k]] += MOVE_COUNTS[moves[k]]
        made += (played.astype(np.int64) > seen).any(axis=1)  # plays older than the history: at least one
        bids, first = read_bids(p)
        dbl, redouble = read_doubling(p)
        # the ring: the most recent play just before the head
        ring_moves = np.full(HISTORY, EMPTY_SLOT, np.int32)
        ring_seats = np.full(HISTORY, -1, np.int8)
        head = n_hist % HISTORY
        for k in range(n_hist):
            j = (head - 1 - k) % HISTORY
            ring_moves[j] = moves[k]
            ring_seats[j] = seats[k]
        initial = full + played[None]
        initial[:, lord] -= bt.astype(np.int8)
        if K == 0:
            return
        self.hands[slots] = full
        self.initial_hands[slots] = initial
        self.bottom[slots] = bt
        self.phase[slots] = _PLAY
        self.current_player[slots] = 0
        self.first_bidder[slots] = max(int(first), 0)
        self.bids[slots] = bids
        self.bid[slots] = max(int(bids.max()), 1)
        self.landlord[slots] = lord
        self.double_choice[slots] = dbl
        self.double_choice[slots, lord] = -1
        self.doubles_revealed[slots] = True
        self.redouble_choice[slots] = redouble
        self.bottom_revealed[slots] = True
        self.last_move[slots] = last
        self.last_mover[slots] = int(st.beat_seat) if last != PASS else -1
        self.passes[slots] = passes
        self.played[slots] = played
        self.played_total[slots] = played.sum(axis=0)
        self.n_cards[slots] = left
        self.moves_made[slots] = made
        self.bombs[slots] = int(st.bombs)
        self.rockets[slots] = int(bool(st.rocket))
        self.seat_bombs[slots] = 0
        self.seat_rockets[slots] = 0
        self.plays[slots] = n_hist
        self.hist_moves[slots] = ring_moves
        self.hist_seats[slots] = ring_seats
        self.hist_head[slots] = head
        self.void[slots] = False
        self._next_first_bidder[slots] = -1
        self._refresh_legal()

    def roles(self) -> np.ndarray:
        """(B,) ``Role`` of the seat to act (``rules.ROLE_OF``): 0 landlord, 1 farmer after it, 2 before
        it; -1 while bidding."""
        return _ROLE.take(self.current_player * 4 + 1 + self.landlord).astype(np.int64)

    # ------------------------------------------------------------------ state (checkpoints)
    #: arrays derived from the state (flat views, index helpers, the legal-set cache): not saved
    _DERIVED = frozenset({"_b", "_b3", "_hands2", "_played2", "_n_cards1", "_moves_made1",
                          "_hist_moves1", "_hist_seats1", "_seat_bombs1", "_seat_rockets1", "_summary_blank", "_rows",
                          "_ids", "_starts"})
    #: saved, but optional on load (checkpoints written before they were saved; the hand summary's
    #: per-seat counts of the hands in progress then count from the load)
    _OPTIONAL = frozenset({"slot_seeds", "seat_bombs", "seat_rockets", "plays"})

    def _state_arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in vars(self).items() if isinstance(v, np.ndarray) and k not in self._DERIVED}

    def state_dict(self) -> dict:
        """Everything needed to continue these hands exactly: ``{"arrays": {name: array copy},
        "rngs": [generator states], "fresh": bool}`` (numpy and plain containers; a trainer
        converts the arrays to what its checkpoint format holds)."""
        return {"arrays": {k: v.copy() for k, v in self._state_arrays().items()},
                "rngs": [r.bit_generator.state for r in self._rngs], "fresh": bool(self._fresh)}

    def load_state_dict(self, state: dict) -> None:
        """Continue from :meth:`state_dict` of an env of the same size; arrays may be numpy arrays or
        anything ``np.asarray`` reads (tensors). Checked first (names, shapes, number of
        generators): ``ValueError`` naming the first mismatch, and nothing is changed."""
        try:
            arrays, rngs, fresh = state["arrays"], state["rngs"], state["fresh"]
        except (TypeError, KeyError) as e:
            raise ValueError(f"load_state_dict: not a VectorDouDizhu state (missing {e})") from None
        mine = self._state_arrays()
        missing = sorted(set(mine) - set(arrays) - self._OPTIONAL)
        extra = sorted(set(arrays) - set(mine))
        if missing or extra:
            raise ValueError(f"load_state_dict: state arrays differ: missing {missing}, unknown {extra}")
        new = {}
        for k, v in arrays.items():
            a = np.asarray(v)
            if a.shape != mine[k].shape:
                raise ValueError(f"load_state_dict: {k!r} has shape {a.shape}, this env {mine[k].shape} "
                                 f"(num_envs {self.num_envs})")
            new[k] = a
        if len(rngs) != len(self._rngs):
            raise ValueError(f"load_state_dict: {len(rngs)} generator states for {len(self._rngs)} slots")
        for k in self._OPTIONAL - set(new) - {"slot_seeds"}:
            mine[k][...] = 0
        for k, a in new.items():
            mine[k][...] = a  # in place: the flat views stay valid
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
            a = a.astype(np.int64, copy=False)
        except (TypeError, ValueError):
            raise ValueError(f"actions must be {B} integer action ids, got {actions!r}") from None
        if a.shape != (B,):  # (a (2, 3) array for B = 6 is no batch of actions)
            raise ValueError(f"actions must have shape ({B},), one action id per hand, got shape {a.shape}")
        self._validate(a)
        self._fresh = False

        phase = self.phase
        done = np.zeros(B, bool)
        void = np.zeros(B, bool)
        winner = np.full(B, -1, np.int64)
        in_play = phase == _PLAY
        self.plays += in_play
        play = in_play.nonzero()[0]
        if play.size < B:
            bid_i = (phase == _BID).nonzero()[0]
            dbl_i = (phase == _DOUBLE).nonzero()[0]
            red_i = (phase == _REDOUBLE).nonzero()[0]
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

        won = (winner >= 0).nonzero()[0]
        done[won] = True
        done |= void
        ended = done.nonzero()[0]
        rewards, info = self._finish_hands(ended, won, winner, void)
        if ended.size:
            self.void[ended] = void[ended]
            vi = void.nonzero()[0]
            if vi.size:  # R4: after a void hand the next seat bids first
                self._next_first_bidder[vi] = next_first_bidder(self.first_bidder[vi])
            self._deal(ended)
        self._refresh_legal()
        return self._obs_dict(observe), rewards, done, info

    def _finish_hands(self, ended: np.ndarray, won: np.ndarray, winner: np.ndarray,
                      void: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """``step``'s rewards and ``info`` (the summary) of the hands ``ended`` (``won``: those a seat went
        out of), finished by ``scoring.finish_hand`` (R17-R19, as ``Game._finish``) before their slots
        are dealt afresh."""
        B = self.num_envs
        rewards = np.zeros((B, 3), np.float32)
        final = np.zeros((B, 3), np.int64)
        landlord = np.full(B, -1, np.int64)
        spring_out = np.zeros(B, bool)
        anti_out = np.zeros(B, bool)
        if won.size:
            lord = self.landlord[won]
            w = winner[won]
            _, spring, anti, scores = finish_hand(w, lord, self.moves_made[won], self.bid[won],
                                                  self.double_choice[won] == 1, self.redouble_choice[won] == 1,
                                                  self.bombs[won], self.rockets[won])
            final[won] = scores
            landlord[won] = lord
            spring_out[won] = spring
            anti_out[won] = anti
            rewards[won] = hand_rewards(scores, w, lord, self.reward_kind, self.reward_scale)
        info: dict[str, Any] = {"final_scores": final, "void": void, "winner": winner, "landlord": landlord,
                                "spring": spring_out, "anti_spring": anti_out}
        block = self._summary_blank.copy()  # the eight summary arrays: one block (a copy beats a fill)
        if ended.size:
            block[ended] = np.concatenate([getattr(self, name)[ended].reshape(ended.size, width)
                                           for _, name, width, _ in _SUMMARY], axis=1)
        col = 0
        for key, _, width, _ in _SUMMARY:
            info[key] = block[:, col] if width == 1 else block[:, col:col + width]
            col += width
        return rewards, info

    # ------------------------------------------------------------------ transitions (one per phase)
    def _bid(self, idx: np.ndarray, a: np.ndarray, void: np.ndarray) -> None:
        s = self.current_player[idx]
        v = a - BID_PASS
        self.bids[idx, s] = v
        bid, ended, all_passed, lords = bid_outcome(self.bids[idx], v, self.bid[idx])  # R3, R4
        self.bid[idx] = bid
        self.current_player[idx] = np.where(ended, -1, (s + 1) % NUM_SEATS)
        vi = idx[all_passed]
        if vi.size:  # void hand (R4)
            void[vi] = True
            self.phase[vi] = _OVER
        made = ended & ~all_passed
        if made.any():
            self._make_landlord(idx[made], lords[made])

    def _make_landlord(self, idx: np.ndarray, seats: np.ndarray) -> None:
        self.landlord[idx] = seats
        if self.rules.doubling:
            self.phase[idx] = _DOUBLE
            self.current_player[idx] = doubling_order(seats)[0]  # R5
        else:
            self._start_play(idx)

    def _double(self, idx: np.ndarray, a: np.ndarray) -> None:
        s = self.current_player[idx]
        self.double_choice[idx, s] = a - NO_DOUBLE
        second = doubling_order(self.landlord[idx])[1]
        both = s == second
        self.current_player[idx[~both]] = second[~both]
        if both.any():
            d = idx[both]
            self.doubles_revealed[d] = True  # both chosen: revealed together (R5)
            someone = redouble_allowed(self.double_choice[d])  # R6
            r = d[someone]
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
        """Every play-phase hand at once: a pass is the move of no cards, so one update serves both (R8, R17).
        Declared twin of ``Game._play`` (the same rules, one hand at a time)."""
        s = self.current_player[idx]
        flat = idx * 3 + s  # row of (hand, seat) in the (B * 3, ...) views
        cards = MOVE_COUNTS.take(m, axis=0)
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
        big = _IS_BOMBISH[m]
        if big.any():  # (rare: most steps play no bomb)
            k = big.nonzero()[0]
            bm, rk = _IS_BOMB[m[k]], _IS_ROCKET[m[k]]
            self.bombs[idx[k]] += bm
            self.rockets[idx[k]] += rk
            self._seat_bombs1[flat[k]] += bm
            self._seat_rockets1[flat[k]] += rk
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
        lead = (is_play & (self.last_move == PASS)).nonzero()[0]
        resp = (self.last_move != PASS).nonzero()[0]  # (last_move is 0 outside the play phase)
        parts = []
        if lead.size:
            lead_hands = self._hands2[lead * 3 + cur[lead]]
            parts.append((lead, *legal_ids_batch(lead_hands, self.last_move[lead], validate=False)))
        if resp.size:
            parts.append((resp, *response_ids_batch(self._hands2[resp * 3 + cur[resp]], self.last_move[resp])))
        counts = np.zeros(B, np.int64)
        for gidx, prow, _ in parts:
            counts[gidx] = np.bincount(prow, minlength=gidx.size)
        other = (~is_play).nonzero()[0]
        if other.size:  # bids, doubles, redoubles (R3, R5, R6): the legal cells, by hand then id
            row, col = np.divmod(np.flatnonzero(legal_choices(phase[other], self.bid[other])), NUM_CHOICES)
            counts[other] = np.bincount(row, minlength=other.size)
        starts = np.zeros(B + 1, np.int64)
        counts.cumsum(out=starts[1:])
        ids = np.empty(int(starts[-1]), np.int64)
        rows = self._b.repeat(counts)
        for gidx, _prow, pids in parts:
            sub = counts[gidx]
            # entry j of part row i goes to starts[gidx[i]] + (j - first entry of row i in the part)
            ids[np.arange(pids.size) + (starts[gidx] - (sub.cumsum() - sub)).repeat(sub)] = pids
        if other.size:
            c = counts[other]
            offset = np.arange(col.size) - (c.cumsum() - c).repeat(c)
            ids[starts[other].repeat(c) + offset] = FIRST_CHOICE + col
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
        hand = self._hands2[self._b3 + np.maximum(self.current_player, 0)]
        return default_actions(self.phase, self.last_move, hand).astype(np.int64)

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
            o = np.asarray(seat)
            if o.dtype.kind not in "iu":  # 1.5 is no seat: never truncated
                raise TypeError(f"observe: seat must be an integer or ({B},) integers, got {seat!r}")
            try:
                o = np.broadcast_to(o.astype(np.int64, copy=False), (B,))
            except ValueError:
                raise ValueError(f"observe: seat must be one seat or ({B},) seats, got shape {o.shape}") from None
            if o.size and (o.min() < 0 or o.max() > 2):
                raise ValueError(f"seats are 0, 1, 2, got {seat!r}")
        return observe_batch(self, o)  # the public view of R5 and R21, beside observe_game

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
        return f"VectorDouDizhu(num_envs={self.num_envs}, rules={self.rules.name!r})"


VectorEnv = VectorDouDizhu

__all__ = ["VectorDouDizhu", "VectorEnv", "expand_mask", "random_legal_actions"]
