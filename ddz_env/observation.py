"""Observation planes of one seat's view, shared by the AEC and the batched env.

Every channel is a 4 x 15 plane: a column per rank (3 .. 2, B, R). Card channels
are thermometer codes (k cards of a rank light rows 0..k-1 of its column).
Scalar channels are one-hot cells, laid out as the table says. "Relative seat"
is 0 for the observer, 1 for the next seat (who acts after it), 2 for the
previous seat.

=======  =====================  ===============================================================
channel  name                   content
=======  =====================  ===============================================================
0        hand                   own cards
1        unseen                 cards whose place the observer cannot know (in the others'
                                hands, minus the known bottom cards the landlord still holds)
2        bottom                 the 3 bottom cards, once revealed (R7); zeros before
3, 4, 5  played                 cards played so far by relative seat 0, 1, 2
6        to_beat                cards of the move to beat; zeros when the observer leads
7..21    history                the last K = 15 plays (passes included), 7 = most recent;
                                a pass is an empty plane
22       history_seats          [r, k] = 1: history slot k (0 = most recent) was played by
                                relative seat r; [3, k] = 1: that slot is a pass
23,24,25 cards_left             cards held by relative seat 0, 1, 2: one-hot over the 60
                                cells, flat index = count (row-major, cell = 15 * row + col)
26       bids                   [r, b] = 1: relative seat r bid b (0 pass, 1, 2, 3);
                                [3, r] = 1: relative seat r was the first bidder
27       doubling               [r, d] = 1: relative seat r chose d (0 no, 1 double): own
                                choice at once, the farmers' choices only once both are made
                                (R5); [3, d] = 1: the landlord chose d (0 no, 1 redouble)
28       status                 [0, p] phase (0 bid, 1 double, 2 redouble, 3 play, 4 over);
                                [1, q] own role once known (0 landlord, 1 farmer after the
                                landlord, 2 farmer before); [2, r] relative seat that played
                                the move to beat; [3, n] n = bombs played (0..13); [3, 14]
                                the rocket was played
=======  =====================  ===============================================================
"""
from __future__ import annotations

import numpy as np

from .cards import MAX_COUNTS, NUM_RANKS
from .moves import MOVE_COUNTS as _MOVE_COUNTS

_PLAY = 3  # game.Phase.PLAY (kept numeric: game.py does not import this module)

HISTORY = 15
CH_HAND, CH_UNSEEN, CH_BOTTOM, CH_PLAYED, CH_TO_BEAT = 0, 1, 2, 3, 6
CH_HISTORY = 7
CH_HISTORY_SEATS = CH_HISTORY + HISTORY  # 22
CH_CARDS_LEFT = CH_HISTORY_SEATS + 1  # 23, 24, 25
CH_BIDS = CH_CARDS_LEFT + 3  # 26
CH_DOUBLING = CH_BIDS + 1  # 27
CH_STATUS = CH_DOUBLING + 1  # 28
NUM_CHANNELS = CH_STATUS + 1  # 29
OBS_SHAPE = (NUM_CHANNELS, 4, NUM_RANKS)
_NUM_CARD_CHANNELS = CH_HISTORY + HISTORY  # channels 0..21 are card planes
_ROWS = np.arange(4, dtype=np.int8)[:, None]


def encode(
    hand: np.ndarray,           # (B, 15) own cards
    unseen: np.ndarray,         # (B, 15)
    bottom: np.ndarray,         # (B, 15) zeros while hidden
    played: np.ndarray,         # (B, 3, 15) by relative seat
    to_beat: np.ndarray,        # (B, 15) zeros when leading
    hist_cards: np.ndarray,     # (B, K, 15) most recent first, zeros for passes/empty slots
    hist_seat: np.ndarray,      # (B, K) relative seat, -1 for an empty slot
    hist_pass: np.ndarray,      # (B, K) bool
    cards_left: np.ndarray,     # (B, 3) by relative seat
    bids: np.ndarray,           # (B, 3) by relative seat: -1 not yet, 0 pass, 1..3
    first_bidder: np.ndarray,   # (B,) relative seat
    doubling: np.ndarray,       # (B, 3) by relative seat: -1 unknown/none, 0, 1
    redouble: np.ndarray,       # (B,) -1 none, 0, 1
    phase: np.ndarray,          # (B,)
    role: np.ndarray,           # (B,) -1 before the landlord is known
    beat_seat: np.ndarray,      # (B,) relative seat that played the move to beat, -1 when leading
    bombs: np.ndarray,          # (B,)
    rocket: np.ndarray,         # (B,) bool
) -> np.ndarray:
    """Planes (B, 29, 4, 15) int8 from the observer-relative public view."""
    B = hand.shape[0]
    obs = np.zeros((B, NUM_CHANNELS, 4, NUM_RANKS), dtype=np.int8)
    cards = np.concatenate(
        [hand[:, None], unseen[:, None], bottom[:, None], played, to_beat[:, None], hist_cards], axis=1
    )  # (B, 22, 15)
    obs[:, :_NUM_CARD_CHANNELS] = _ROWS < cards[:, :, None, :]
    b = np.arange(B)
    # history seats / passes
    bi, k = np.nonzero(hist_seat >= 0)
    obs[bi, CH_HISTORY_SEATS, hist_seat[bi, k], k] = 1
    bi, k = np.nonzero(hist_pass)
    obs[bi, CH_HISTORY_SEATS, 3, k] = 1
    # cards left: one-hot over the flat 60 cells
    flat = obs.reshape(B, NUM_CHANNELS, 60)
    for r in range(3):
        flat[b, CH_CARDS_LEFT + r, cards_left[:, r]] = 1
    # bids
    bi, r = np.nonzero(bids >= 0)
    obs[bi, CH_BIDS, r, bids[bi, r]] = 1
    obs[b, CH_BIDS, 3, first_bidder] = 1
    # doubling
    bi, r = np.nonzero(doubling >= 0)
    obs[bi, CH_DOUBLING, r, doubling[bi, r]] = 1
    bi = np.nonzero(redouble >= 0)[0]
    obs[bi, CH_DOUBLING, 3, redouble[bi]] = 1
    # status
    obs[b, CH_STATUS, 0, phase] = 1
    bi = np.nonzero(role >= 0)[0]
    obs[bi, CH_STATUS, 1, role[bi]] = 1
    bi = np.nonzero(beat_seat >= 0)[0]
    obs[bi, CH_STATUS, 2, beat_seat[bi]] = 1
    obs[b, CH_STATUS, 3, np.minimum(bombs, 13)] = 1
    obs[b, CH_STATUS, 3, 14] = rocket.astype(np.int8)
    return obs


def unseen_cards(own: np.ndarray, played_total: np.ndarray, bottom_known_left: np.ndarray) -> np.ndarray:
    """Cards whose place the observer cannot know: deck - own - played - known bottom still held."""
    return (MAX_COUNTS - own - played_total - bottom_known_left).astype(np.int8)


def decode_cards(plane: np.ndarray) -> np.ndarray:
    """Counts (15,) back from a thermometer plane (4, 15): for tests and debugging."""
    return plane.sum(axis=0).astype(np.int8)


def observe_game(game, seat: int) -> np.ndarray:
    """Planes (29, 4, 15) of ``seat``'s view of a :class:`ddz_env.game.Game`.

    Same layout as :func:`encode`, written with scalar stores: for one view this is
    several times faster than the batched path (the tests check that both agree).
    """
    order = [seat, (seat + 1) % 3, (seat + 2) % 3]  # relative seat -> absolute seat
    lord = game.landlord
    playing = game.phase == _PLAY
    cards = np.zeros((_NUM_CARD_CHANNELS, NUM_RANKS), dtype=np.int8)
    cards[CH_HAND] = game.hands[seat]
    cards[CH_PLAYED:CH_PLAYED + 3] = game.played[order]
    known_left = 0
    if game.bottom_revealed:
        cards[CH_BOTTOM] = game.bottom
        if lord != seat:
            known_left = np.maximum(game.bottom - game.played[lord], 0)
    cards[CH_UNSEEN] = MAX_COUNTS - game.hands[seat] - game.played_total - known_left
    last = game.last_move if playing else 0
    if last:
        cards[CH_TO_BEAT] = _MOVE_COUNTS[last]
    recent = game.plays[-HISTORY:][::-1]
    if recent:
        ids = [m for _, m in recent]
        cards[CH_HISTORY:CH_HISTORY + len(ids)] = _MOVE_COUNTS[ids]
    obs = np.empty(OBS_SHAPE, dtype=np.int8)
    np.less(_ROWS, cards[:, None, :], out=obs[:_NUM_CARD_CHANNELS].view(bool))
    obs[_NUM_CARD_CHANNELS:] = 0
    for k, (s, m) in enumerate(recent):
        obs[CH_HISTORY_SEATS, (s - seat) % 3, k] = 1
        if m == 0:
            obs[CH_HISTORY_SEATS, 3, k] = 1
    flat = obs.reshape(NUM_CHANNELS, 60)
    for r, s in enumerate(order):
        flat[CH_CARDS_LEFT + r, game.n_cards[s]] = 1
        b = int(game.bids[s])
        if b >= 0:
            obs[CH_BIDS, r, b] = 1
        if s != lord and (game.doubles_revealed or s == seat):
            d = int(game.double_choice[s])
            if d >= 0:
                obs[CH_DOUBLING, r, d] = 1
    obs[CH_BIDS, 3, (game.first_bidder - seat) % 3] = 1
    if game.redouble_choice >= 0:
        obs[CH_DOUBLING, 3, game.redouble_choice] = 1
    obs[CH_STATUS, 0, int(game.phase)] = 1
    if lord >= 0:
        obs[CH_STATUS, 1, (seat - lord) % 3] = 1
    if last:
        obs[CH_STATUS, 2, (game.last_mover - seat) % 3] = 1
    obs[CH_STATUS, 3, min(game.bombs, 13)] = 1
    if game.rockets:
        obs[CH_STATUS, 3, 14] = 1
    return obs


__all__ = ["encode", "observe_game", "decode_cards", "unseen_cards", "OBS_SHAPE", "NUM_CHANNELS", "HISTORY"]
