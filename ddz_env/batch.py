"""The state of B hands of Dou Dizhu as one record of arrays (B leading), what the batched env steps,
and the deals that go into it (:func:`dealt_counts`, :func:`deal_arrays`, :func:`checked_deals`).

:class:`BatchState` is the state of ``VectorDouDizhu`` (``ddz_env.vector``) and what
``observation.observe_batch`` reads: every array below, one row per hand ("slot"). Flat views of
the same memory (``hands2`` (B * 3, 15), ``n_cards1`` (B * 3,), ``hist_moves1`` (B * HISTORY,) ...) serve
1-D fancy indexing by ``hand * 3 + seat``; they are derived, not saved.

====================  ==============  ==================================================================
array                 shape, dtype    meaning
====================  ==============  ==================================================================
hands                 (B, 3, 15) i8   each seat's cards now (the landlord's with the bottom, R7)
initial_hands         (B, 3, 15) i8   as dealt
bottom                (B, 15) i8      the 3 bottom cards; ``bottom_revealed`` (B,) once shown (R7)
phase                 (B,) i8         ``rules.Phase``
current_player        (B,) i64        the seat to act (-1 when the hand is over)
first_bidder          (B,) i64        R3, R4
bids                  (B, 3) i8       each seat's bid: -1 not yet, 0 pass, 1..3; ``bid`` (B,) the top bid
landlord              (B,) i64        -1 before it is known
double_choice         (B, 3) i8       -1 not chosen (always for the landlord), 0, 1 (R5); ``doubles_revealed``
redouble_choice       (B,) i8         -1 not asked (or not yet), 0, 1 (R6)
last_move             (B,) i64        the move id to beat (0: the seat to act leads); ``last_mover`` its seat
passes                (B,) i8         passes since the last move (R8)
played                (B, 3, 15) i8   each seat's cards played; ``played_total`` (B, 15) all of them
n_cards               (B, 3) i64      cards each seat holds (R17, R21)
moves_made            (B, 3) i16      each seat's plays, passes excluded (R18)
bombs, rockets        (B,) i64        played so far (R19); ``seat_bombs``, ``seat_rockets`` (B, 3) by seat
plays                 (B,) i64        actions of the play phase, passes included
hist_moves            (B, HISTORY)    the last plays as a ring (``EMPTY_SLOT``: empty); ``hist_seats``
                                      their seats (-1: empty); ``hist_head`` (B,) the next slot
hand_count            (B,) i64        hands dealt in each slot so far (the current one included)
void                  (B,) bool       the slot's last finished hand was void (R4)
_next_first_bidder    (B,) i64        R4: the first bidder of the next hand after a void one (-1: drawn)
slot_seeds            (B,) u64        each slot's generator seed
====================  ==============  ==================================================================

:meth:`BatchState.load_view` puts into slots the position one seat sees in its observation, with
the cards it cannot see filled in (for search: ``agents/search``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from .cards import CARD_RANK, DECK_SIZE, HAND_SIZE, NUM_RANKS, NUM_SEATS, check_integral
from .moves import MOVE_COUNTS, PASS, move_of_counts
from .observation import EMPTY_SLOT, HISTORY, OBS_SHAPE
from .readers import read_bids, read_cards, read_cards_left, read_doubling, read_history, read_status
from .rules import Deal, Phase, Rules, check_deals

_BID, _PLAY = int(Phase.BID), int(Phase.PLAY)
# deck position -> 0, 1, 2 (the seats' 17 cards) or 3 (the bottom), as cards.deal splits the shuffled deck
_SEGMENTS = NUM_SEATS + 1
_DEAL_SEGMENT = np.minimum(np.arange(DECK_SIZE) // HAND_SIZE, NUM_SEATS)
#: saved, but optional on load (checkpoints written before they were saved; the hand summary's
#: per-seat counts of the hands in progress then count from the load)
OPTIONAL = frozenset({"slot_seeds", "seat_bombs", "seat_rockets", "plays"})


def _arr(shape, dtype, fill=0):
    return field(metadata={"shape": shape, "dtype": dtype, "fill": fill})


@dataclass(eq=False)
class BatchState:
    """B hands as arrays (see the module doc for each one). Build with :meth:`empty`."""

    hands: np.ndarray = _arr((3, NUM_RANKS), np.int8)
    initial_hands: np.ndarray = _arr((3, NUM_RANKS), np.int8)
    bottom: np.ndarray = _arr((NUM_RANKS,), np.int8)
    phase: np.ndarray = _arr((), np.int8)
    current_player: np.ndarray = _arr((), np.int64)
    first_bidder: np.ndarray = _arr((), np.int64)
    bids: np.ndarray = _arr((3,), np.int8)
    bid: np.ndarray = _arr((), np.int64)
    landlord: np.ndarray = _arr((), np.int64)
    double_choice: np.ndarray = _arr((3,), np.int8)
    doubles_revealed: np.ndarray = _arr((), bool)
    redouble_choice: np.ndarray = _arr((), np.int8)
    bottom_revealed: np.ndarray = _arr((), bool)
    last_move: np.ndarray = _arr((), np.int64)
    last_mover: np.ndarray = _arr((), np.int64)
    passes: np.ndarray = _arr((), np.int8)
    played: np.ndarray = _arr((3, NUM_RANKS), np.int8)
    played_total: np.ndarray = _arr((NUM_RANKS,), np.int8)
    n_cards: np.ndarray = _arr((3,), np.int64)
    moves_made: np.ndarray = _arr((3,), np.int16)
    bombs: np.ndarray = _arr((), np.int64)
    rockets: np.ndarray = _arr((), np.int64)
    seat_bombs: np.ndarray = _arr((3,), np.int64)
    seat_rockets: np.ndarray = _arr((3,), np.int64)
    plays: np.ndarray = _arr((), np.int64)
    hist_moves: np.ndarray = _arr((HISTORY,), np.int32)
    hist_seats: np.ndarray = _arr((HISTORY,), np.int8)
    hist_head: np.ndarray = _arr((), np.int64)
    hand_count: np.ndarray = _arr((), np.int64)
    void: np.ndarray = _arr((), bool)
    _next_first_bidder: np.ndarray = _arr((), np.int64, -1)
    slot_seeds: np.ndarray = _arr((), np.uint64)

    @classmethod
    def empty(cls, size: int) -> "BatchState":
        """The arrays of ``size`` hands, zeros (``_next_first_bidder`` -1), with their flat views."""
        st = cls(**{f.name: np.full((size,) + f.metadata["shape"], f.metadata["fill"], f.metadata["dtype"])
                    for f in fields(cls)})
        st.size = size
        st.b = np.arange(size)
        st.b3 = st.b * 3
        # flat views of the same memory, for 1-D fancy indexing by hand * 3 + seat (or hand * HISTORY + slot)
        st.hands2 = st.hands.reshape(-1, NUM_RANKS)
        st.played2 = st.played.reshape(-1, NUM_RANKS)
        st.n_cards1 = st.n_cards.reshape(-1)
        st.moves_made1 = st.moves_made.reshape(-1)
        st.hist_moves1 = st.hist_moves.reshape(-1)
        st.hist_seats1 = st.hist_seats.reshape(-1)
        st.seat_bombs1 = st.seat_bombs.reshape(-1)
        st.seat_rockets1 = st.seat_rockets.reshape(-1)
        return st

    def arrays(self) -> dict[str, np.ndarray]:
        """The saved arrays by name (the state dict's ``"arrays"``; the flat views are not among them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def checked_arrays(self, arrays: dict) -> dict[str, np.ndarray]:
        """``arrays`` (a state dict's, numpy or anything ``np.asarray`` reads) checked against these: the
        same names (those of ``OPTIONAL`` may be missing) and shapes; ``ValueError`` naming the first
        mismatch. Nothing is changed (:meth:`assign` puts them in)."""
        mine = self.arrays()
        missing = sorted(set(mine) - set(arrays) - OPTIONAL)
        extra = sorted(set(arrays) - set(mine))
        if missing or extra:
            raise ValueError(f"load_state_dict: state arrays differ: missing {missing}, unknown {extra}")
        new = {}
        for k, v in arrays.items():
            a = np.asarray(v)
            if a.shape != mine[k].shape:
                raise ValueError(f"load_state_dict: {k!r} has shape {a.shape}, this env {mine[k].shape} "
                                 f"(num_envs {self.size})")
            new[k] = a
        return new

    def assign(self, arrays: dict[str, np.ndarray]) -> None:
        """Copy :meth:`checked_arrays`' result into these arrays, in place (the flat views stay valid); an
        optional array missing from it is zeroed (``slot_seeds`` kept)."""
        mine = self.arrays()
        for k in OPTIONAL - set(arrays) - {"slot_seeds"}:
            mine[k][...] = 0
        for k, a in arrays.items():
            mine[k][...] = a

    def start_hands(self, slots: np.ndarray, hands: np.ndarray, bottom: np.ndarray, fb: np.ndarray) -> None:
        """Fresh hands (K, 3, 15) + bottoms (K, 15) with first bidders (K,) in ``slots``, at the first bid."""
        st = self
        st.hands[slots] = hands
        st.initial_hands[slots] = hands
        st.bottom[slots] = bottom
        st.first_bidder[slots] = fb
        st.current_player[slots] = fb
        st.phase[slots] = _BID
        st.bids[slots] = -1
        st.bid[slots] = 0
        st.landlord[slots] = -1
        st.double_choice[slots] = -1
        st.doubles_revealed[slots] = False
        st.redouble_choice[slots] = -1
        st.bottom_revealed[slots] = False
        st.last_move[slots] = PASS
        st.last_mover[slots] = -1
        st.passes[slots] = 0
        st.played[slots] = 0
        st.played_total[slots] = 0
        st.n_cards[slots] = HAND_SIZE
        st.moves_made[slots] = 0
        st.bombs[slots] = 0
        st.rockets[slots] = 0
        st.seat_bombs[slots] = 0
        st.seat_rockets[slots] = 0
        st.plays[slots] = 0
        st.hist_moves[slots] = EMPTY_SLOT
        st.hist_seats[slots] = -1
        st.hist_head[slots] = 0
        st.hand_count[slots] += 1

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
        The env's view of seat 0 in each slot is then ``planes``, and its legal set the seat's.

        ``ValueError`` naming what is wrong (not a play decision, hands that disagree with the
        planes' counts or unseen cards, a move to beat the seat's legal set does not fit), nothing
        changed."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        K = slots.size
        if K and (slots.min() < 0 or slots.max() >= self.size or np.unique(slots).size != K):
            raise ValueError(f"load_view: slots must be distinct indices in [0, {self.size}), got {slots}")
        p = np.asarray(planes)
        if p.shape != OBS_SHAPE:
            raise ValueError(f"load_view: planes must have shape {OBS_SHAPE}, got {p.shape}")
        h = np.asarray(hands)
        bt = np.asarray(bottoms)
        if h.shape != (K, 2, NUM_RANKS) or bt.shape != (K, NUM_RANKS):
            raise ValueError(f"load_view: expected hands (K, 2, 15) and bottoms (K, 15) for K = {K} slots, got "
                             f"{h.shape} and {bt.shape}")
        status = read_status(p)
        if int(status.phase) != _PLAY or int(status.role) < 0:
            raise ValueError(f"load_view: the planes show phase {Phase(int(status.phase)).name}, not a play decision")
        own = read_cards(p, "hand").astype(np.int8)
        played = read_cards(p, "played").astype(np.int8)
        left = read_cards_left(p)
        full = np.concatenate([np.broadcast_to(own, (K, 1, NUM_RANKS)), h.astype(np.int8)], axis=1)
        unseen = read_cards(p, "unseen").astype(np.int64)
        lord = int(status.landlord)
        bottom_plane = read_cards(p, "bottom").astype(np.int64)
        still = np.maximum(bottom_plane - played[lord], 0)  # the revealed bottom cards the landlord still holds
        hidden_cards = h.astype(np.int64).sum(axis=1)
        hidden_cards[:, :] -= still if lord else 0
        if K and (not np.array_equal(full.sum(axis=2), np.broadcast_to(left, (K, NUM_SEATS)))
                  or (h < 0).any() or not (hidden_cards == unseen).all()
                  or not (bt.astype(np.int64) == bottom_plane).all()):
            raise ValueError("load_view: the hands or bottoms disagree with the planes (the cards each seat holds, "
                             "the unseen cards, the revealed bottom)")
        # the move to beat: the one move of the to_beat cards (each card multiset is one move id)
        to_beat = read_cards(p, "to_beat")
        last = move_of_counts(to_beat)
        if last < 0:
            raise ValueError(f"load_view: the to_beat cards {to_beat.tolist()} are no move")
        seats, moves, _ = read_history(p)  # (HISTORY,) relative seat (-1 empty) and move id, most recent first
        n_hist = int((seats >= 0).sum())
        bad = np.flatnonzero(moves[:n_hist] < 0)
        if bad.size:
            raise ValueError(f"load_view: history slot {int(bad[0])} holds cards that are no move")
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
        self.last_mover[slots] = int(status.beat_seat) if last != PASS else -1
        self.passes[slots] = passes
        self.played[slots] = played
        self.played_total[slots] = played.sum(axis=0)
        self.n_cards[slots] = left
        self.moves_made[slots] = made
        self.bombs[slots] = int(status.bombs)
        self.rockets[slots] = int(bool(status.rocket))
        self.seat_bombs[slots] = 0
        self.seat_rockets[slots] = 0
        self.plays[slots] = n_hist
        self.hist_moves[slots] = ring_moves
        self.hist_seats[slots] = ring_seats
        self.hist_head[slots] = head
        self.void[slots] = False
        self._next_first_bidder[slots] = -1


# ---------------------------------------------------------------------------------------------- deals in
def dealt_counts(perms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hands (K, 3, 15) and bottoms (K, 15) of K shuffled decks (K, 54) of card ids, split as
    ``cards.deal`` splits one (17 cards a seat in deck order, the last 3 the bottom)."""
    K = perms.shape[0]
    key = (np.arange(K)[:, None] * _SEGMENTS + _DEAL_SEGMENT) * NUM_RANKS + CARD_RANK[perms]
    counts = np.bincount(key.ravel(), minlength=K * _SEGMENTS * NUM_RANKS).reshape(K, _SEGMENTS, NUM_RANKS)
    counts = counts.astype(np.int8)
    return counts[:, :NUM_SEATS], counts[:, NUM_SEATS]


def deal_arrays(deals, rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """K :class:`~ddz_env.rules.Deal` values (or what ``Deal.of`` reads) as arrays: hands (K, 3, 15),
    bottoms (K, 15), first bidders (K,) and, where a deal names one (bidding off only), the landlords
    (K,; None when none does). ``ValueError`` for a landlord given under bidding rules."""
    deals = [Deal.of(d) for d in deals]
    given = [k for k, d in enumerate(deals) if d.landlord is not None]
    if given and rules.bidding:
        raise ValueError(f"load_deals: deal {given[0]} names landlord {deals[given[0]].landlord}; a landlord "
                         f"is given only when bidding is off (rules {rules.name!r})")
    hands = np.stack([d.hands for d in deals]) if deals else np.zeros((0, 3, NUM_RANKS), np.int8)
    bottoms = np.stack([d.bottom for d in deals]) if deals else np.zeros((0, NUM_RANKS), np.int8)
    first_bidders = np.array([d.first_bidder for d in deals], np.int64)
    lords = (np.array([d.first_bidder if d.landlord is None else d.landlord for d in deals], np.int64)
             if given else None)
    return hands, bottoms, first_bidders, lords


def checked_deals(slots, hands, bottoms, first_bidders, num_envs: int):
    """``(slots, hands, bottoms, first_bidders)`` as int64 (K,), int8 (K, 3, 15), int8 (K, 15), int64 (K,),
    checked for ``load_deals``: distinct slots in ``[0, num_envs)``, whole card counts that make full
    deals (R1, R2), seats 0..2. ``TypeError`` / ``ValueError`` naming the first bad entry."""
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
    if K and (slots.min() < 0 or slots.max() >= num_envs or np.unique(slots).size != K):
        raise ValueError(f"load_deals: slots must be distinct indices in [0, {num_envs}), got {slots}")
    check_integral(h, "load_deals: hands")
    check_integral(bt, "load_deals: bottoms")
    check_deals(h, bt, "load_deals: ")  # R1, R2
    bad = (fb < 0) | (fb > 2)
    if bad.any():
        raise ValueError(f"first_bidder must be 0, 1 or 2, got {int(fb[bad][0])!r}")
    return slots, h.astype(np.int8), bt.astype(np.int8), fb


__all__ = ["BatchState", "OPTIONAL"]
