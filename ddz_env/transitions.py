"""The batched game's transitions: pure functions over a :class:`~ddz_env.batch.BatchState`, one per phase.

:class:`~ddz_env.vector.VectorDouDizhu` validates a step's actions, splits its hands by phase and calls
these; each changes the state of the hands it is given in place, vectorized (no loop over hands):

=========================  ====================================================================
:func:`bid`                R3, R4: the bids; a void hand; the landlord (:func:`make_landlord`)
:func:`double`             R5, R6: the farmers' doubling choices, revealed together
:func:`redouble`           R6: the landlord's redouble, then the play
:func:`start_play`         R7: the bottom to the landlord, who leads
:func:`play`               R8, R9-R17: a move or a pass; bombs counted; a hand goes out
:func:`finish_hands`       R17-R19: the rewards and the summary of the hands that ended
:func:`legal_sets`         the compact legal sets of every hand for its seat to act
=========================  ====================================================================

Declared twins of ``Game``'s one-hand methods (the same rules core: ``rules``, ``legal``, ``scoring``);
the tests play both side by side.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .actions import BID_PASS, FIRST_CHOICE, NO_DOUBLE, NO_REDOUBLE, NUM_CHOICES
from .batch import BatchState
from .cards import BOTTOM_SIZE, NUM_SEATS
from .legal import legal_ids_batch, response_ids_batch
from .moves import IS_BOMB, IS_BOMB_OR_ROCKET, IS_ROCKET, MOVE_COUNTS, MOVE_NCARDS, PASS
from .observation import HISTORY
from .rules import Phase, bid_outcome, doubling_order, legal_choices, redouble_allowed
from .rules import rewards as hand_rewards
from .scoring import finish_hand

_DOUBLE, _REDOUBLE, _PLAY, _OVER = int(Phase.DOUBLE), int(Phase.REDOUBLE), int(Phase.PLAY), int(Phase.OVER)
_IS_BOMB = IS_BOMB.astype(np.int64)
_IS_ROCKET = IS_ROCKET.astype(np.int64)
_NCARDS = MOVE_NCARDS.astype(np.int64)
#: the hand summary's integer keys of step's info: (key, state array, width, blank), in the columns of one block
SUMMARY = (("bids", "bids", 3, -1), ("doubles", "double_choice", 3, -1), ("redouble", "redouble_choice", 1, -1),
           ("bid", "bid", 1, 0), ("first_bidder", "first_bidder", 1, -1), ("bombs", "seat_bombs", 3, 0),
           ("rockets", "seat_rockets", 3, 0), ("plays", "plays", 1, 0))
SUMMARY_BLANK = np.concatenate([np.full(w, blank, np.int64) for _, _, w, blank in SUMMARY])


def bid(st: BatchState, idx: np.ndarray, a: np.ndarray, void: np.ndarray, doubling: bool) -> None:
    """The bids ``a`` of hands ``idx`` (R3); a void hand (R4) marked in ``void``; a landlord made."""
    s = st.current_player[idx]
    v = a - BID_PASS
    st.bids[idx, s] = v
    bid, ended, all_passed, lords = bid_outcome(st.bids[idx], v, st.bid[idx])  # R3, R4
    st.bid[idx] = bid
    st.current_player[idx] = np.where(ended, -1, (s + 1) % NUM_SEATS)
    vi = idx[all_passed]
    if vi.size:  # void hand (R4)
        void[vi] = True
        st.phase[vi] = _OVER
    made = ended & ~all_passed
    if made.any():
        make_landlord(st, idx[made], lords[made], doubling)



def make_landlord(st: BatchState, idx: np.ndarray, seats: np.ndarray, doubling: bool) -> None:
    """``seats`` become the landlords of hands ``idx``: the doubling (R5) or, without it, the play."""
    st.landlord[idx] = seats
    if doubling:
        st.phase[idx] = _DOUBLE
        st.current_player[idx] = doubling_order(seats)[0]  # R5
    else:
        start_play(st, idx)



def double(st: BatchState, idx: np.ndarray, a: np.ndarray) -> None:
    """The farmers' doubling choices ``a`` of hands ``idx``, in R5's order; revealed together; R6."""
    s = st.current_player[idx]
    st.double_choice[idx, s] = a - NO_DOUBLE
    second = doubling_order(st.landlord[idx])[1]
    both = s == second
    st.current_player[idx[~both]] = second[~both]
    if both.any():
        d = idx[both]
        st.doubles_revealed[d] = True  # both chosen: revealed together (R5)
        someone = redouble_allowed(st.double_choice[d])  # R6
        r = d[someone]
        st.phase[r] = _REDOUBLE
        st.current_player[r] = st.landlord[r]
        start_play(st, d[~someone])



def redouble(st: BatchState, idx: np.ndarray, a: np.ndarray) -> None:
    """The landlord's redouble choices ``a`` of hands ``idx`` (R6); then the play."""
    st.redouble_choice[idx] = a - NO_REDOUBLE
    start_play(st, idx)



def start_play(st: BatchState, idx: np.ndarray) -> None:
    """The play of hands ``idx``: the bottom to the landlord (R7), who leads."""
    if idx.size == 0:
        return
    lord = st.landlord[idx]
    st.hands[idx, lord] += st.bottom[idx]  # R7
    st.n_cards[idx, lord] += BOTTOM_SIZE
    st.bottom_revealed[idx] = True
    st.phase[idx] = _PLAY
    st.current_player[idx] = lord
    st.last_move[idx] = PASS
    st.last_mover[idx] = -1



def play(st: BatchState, idx: np.ndarray, m: np.ndarray, winner: np.ndarray) -> None:
    """Every play-phase hand at once: a pass is the move of no cards, so one update serves both (R8, R17).
    Declared twin of ``Game._play`` (the same rules, one hand at a time)."""
    s = st.current_player[idx]
    flat = idx * NUM_SEATS + s  # row of (hand, seat) in the (B * 3, ...) views
    cards = MOVE_COUNTS.take(m, axis=0)
    st.hands2[flat] -= cards
    st.played2[flat] += cards
    st.played_total[idx] += cards
    n_cards = st.n_cards1
    left = n_cards[flat] - _NCARDS[m]
    n_cards[flat] = left
    # history ring (plays of the play phase, passes included, as Game.plays)
    head = st.hist_head[idx]
    ring = idx * HISTORY + head
    st.hist_moves1[ring] = m
    st.hist_seats1[ring] = s
    head += 1
    head[head == HISTORY] = 0
    st.hist_head[idx] = head
    is_pass = m == PASS
    moved = ~is_pass
    st.moves_made1[flat] += moved
    big = IS_BOMB_OR_ROCKET[m]
    if big.any():  # (rare: most steps play no bomb)
        k = big.nonzero()[0]
        bm, rk = _IS_BOMB[m[k]], _IS_ROCKET[m[k]]
        st.bombs[idx[k]] += bm
        st.rockets[idx[k]] += rk
        st.seat_bombs1[flat[k]] += bm
        st.seat_rockets1[flat[k]] += rk
    passes = np.where(is_pass, st.passes[idx] + 1, 0)
    lead_again = passes == 2  # two passes: the last player to play leads again (R8)
    passes[lead_again] = 0
    st.passes[idx] = passes
    st.last_move[idx] = np.where(moved, m, np.where(lead_again, PASS, st.last_move[idx]))
    st.last_mover[idx] = np.where(moved, s, st.last_mover[idx])
    out = left == 0  # R17
    nxt = s + 1
    nxt[nxt == NUM_SEATS] = 0
    nxt[out] = -1
    st.current_player[idx] = nxt
    if out.any():
        f = idx[out]
        winner[f] = s[out]
        st.phase[f] = _OVER



def finish_hands(st: BatchState, ended: np.ndarray, won: np.ndarray, winner: np.ndarray, void: np.ndarray,
                 reward_kind: str, reward_scale: float, summary_blank: np.ndarray
                 ) -> tuple[np.ndarray, dict[str, Any]]:
    """``VectorDouDizhu.step``'s rewards and ``info`` (the summary) of the hands ``ended`` (``won``: those a seat went
    out of), finished by ``scoring.finish_hand`` (R17-R19, as ``Game._finish``) before their slots
    are dealt afresh."""
    B = st.phase.shape[0]
    rewards = np.zeros((B, NUM_SEATS), np.float32)
    final = np.zeros((B, NUM_SEATS), np.int64)
    landlord = np.full(B, -1, np.int64)
    spring_out = np.zeros(B, bool)
    anti_out = np.zeros(B, bool)
    if won.size:
        lord = st.landlord[won]
        w = winner[won]
        _, spring, anti, scores = finish_hand(w, lord, st.moves_made[won], st.bid[won],
                                              st.double_choice[won] == 1, st.redouble_choice[won] == 1,
                                              st.bombs[won], st.rockets[won])
        final[won] = scores
        landlord[won] = lord
        spring_out[won] = spring
        anti_out[won] = anti
        rewards[won] = hand_rewards(scores, w, lord, reward_kind, reward_scale)
    info: dict[str, Any] = {"final_scores": final, "void": void, "winner": winner, "landlord": landlord,
                            "spring": spring_out, "anti_spring": anti_out}
    block = summary_blank.copy()  # the eight summary arrays: one block (a copy beats a fill)
    if ended.size:
        block[ended] = np.concatenate([getattr(st, name)[ended].reshape(ended.size, width)
                                       for _, name, width, _ in SUMMARY], axis=1)
    col = 0
    for key, _, width, _ in SUMMARY:
        info[key] = block[:, col] if width == 1 else block[:, col:col + width]
        col += width
    return rewards, info



def legal_sets(st: BatchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, ids, starts)``: the compact legal sets of every hand (sorted by row, then id) for the seat to
    act, read-only."""
    B = st.phase.shape[0]
    phase = st.phase
    cur = st.current_player
    is_play = phase == _PLAY
    lead = (is_play & (st.last_move == PASS)).nonzero()[0]
    resp = (st.last_move != PASS).nonzero()[0]  # (last_move is 0 outside the play phase)
    parts = []
    if lead.size:
        lead_hands = st.hands2[lead * NUM_SEATS + cur[lead]]
        parts.append((lead, *legal_ids_batch(lead_hands, st.last_move[lead], validate=False)))
    if resp.size:
        parts.append((resp, *response_ids_batch(st.hands2[resp * NUM_SEATS + cur[resp]], st.last_move[resp])))
    counts = np.zeros(B, np.int64)
    for gidx, prow, _ in parts:
        counts[gidx] = np.bincount(prow, minlength=gidx.size)
    other = (~is_play).nonzero()[0]
    if other.size:  # bids, doubles, redoubles (R3, R5, R6): the legal cells, by hand then id
        row, col = np.divmod(np.flatnonzero(legal_choices(phase[other], st.bid[other])), NUM_CHOICES)
        counts[other] = np.bincount(row, minlength=other.size)
    starts = np.zeros(B + 1, np.int64)
    counts.cumsum(out=starts[1:])
    ids = np.empty(int(starts[-1]), np.int64)
    rows = st.b.repeat(counts)
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
    return rows, ids, starts


__all__ = ["bid", "make_landlord", "double", "redouble", "start_play", "play", "finish_hands", "legal_sets",
           "SUMMARY", "SUMMARY_BLANK"]
