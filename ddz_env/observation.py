"""Observation planes of one seat's view, shared by the AEC and the batched env.

Every channel is a 4 x 15 plane: a column per rank (3 .. 2, B, R). Card channels
are thermometer codes (k cards of a rank light rows 0..k-1 of its column).
Scalar channels are one-hot cells, laid out as the table says. "Relative seat"
is 0 for the observer, 1 for the next seat (who acts after it), 2 for the
previous seat.

:data:`LAYOUT` is the one table of the layout: the ``CH_*`` constants, the table below, the
AEC env's doc page and the docs' table are all made from (or checked against) it, and
``LAYOUT_BY_NAME[name].of(planes)`` is a named view of any ``(..., 29, 4, 15)`` planes
(``.cells``: its cells in flat ``(..., OBS_CELLS)`` planes, 1,740 cells).

{LAYOUT_TABLE}

What a seat may know (R5, R21) is decided here, for both engines: :func:`observe_game` (one
:class:`~ddz_env.game.Game`) and :func:`observe_batch` (the B hands of a ``VectorDouDizhu``) build
the observer-relative public view, :func:`encode` writes the planes. :mod:`ddz_env.readers` inverts
them through the layout; agents read planes only through it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .cards import MAX_COUNTS, NUM_RANKS, NUM_SEATS
from .moves import MOVE_COUNTS as _MOVE_COUNTS
from .moves import NUM_MOVES, PASS
from .actions import DOUBLE_ACTIONS
from .rules import ROLE_OF, Phase, as_seat

#: a secret doubling choice not yet revealed, as it stands in a public history (:func:`public_history`)
HIDDEN = -1


def public_history(history, doubles_revealed: bool) -> list[tuple[int, int]]:
    """A hand's ``(seat, action)`` history as every seat may see it: each doubling choice is
    ``HIDDEN`` until both farmers have chosen (R5), then all are shown. (The planes' ``doubling``
    channel is the same ruling for the observation: :func:`observe_game`, :func:`observe_batch`.)"""
    if doubles_revealed:
        return list(history)
    return [(s, HIDDEN if a in DOUBLE_ACTIONS else a) for s, a in history]

def seat_history(history, doubles_revealed: bool, seat: int) -> list[tuple[int, int]]:
    """A hand's ``(seat, action)`` history as ``seat`` knows it: :func:`public_history` with the seat's
    own doubling choice shown (R5)."""
    public = public_history(history, doubles_revealed)
    return [(s, a) if (s == seat and a in DOUBLE_ACTIONS) else (s, p) for (s, a), (_, p) in zip(history, public)]


def known_doubles(double_choice, doubles_revealed: bool, seat: int | None) -> np.ndarray:
    """(3,) bool: which seats doubled, as ``seat`` may know it: all once both farmers chose (and for a
    spectator, ``seat=None``), else only its own choice (R5)."""
    doubled = np.asarray(double_choice) == 1
    if doubles_revealed or seat is None:
        return doubled
    known = np.zeros(NUM_SEATS, bool)
    known[seat] = doubled[seat]
    return known


_PLAY = int(Phase.PLAY)

HISTORY = 15  # plays kept in the history channels
#: the cells of one channel (a 4 x 15 plane: a row per card of a rank, a column per rank)
PLANE_CELLS = 4 * NUM_RANKS  # 60


@dataclass(frozen=True)
class Channels:
    """A named run of channels of the layout: ``planes[..., start:start + count, :, :]``."""

    name: str
    start: int
    count: int
    content: str

    @property
    def stop(self) -> int:
        return self.start + self.count

    def of(self, planes: np.ndarray) -> np.ndarray:
        """This slice of ``(..., 29, 4, 15)`` planes (a view)."""
        return planes[..., self.start:self.stop, :, :]

    @property
    def cells(self) -> slice:
        """This run's cells in flat ``(..., OBS_CELLS)`` planes (``PLANE_CELLS`` a channel): ``flat[..., ch.cells]``."""
        return slice(self.start * PLANE_CELLS, self.stop * PLANE_CELLS)

    def label(self) -> str:
        """The channel numbers as the tables write them: ``0``, ``3, 4, 5``, ``7 .. 21``."""
        if self.count == 1:
            return str(self.start)
        if self.count <= 3:
            return ", ".join(str(c) for c in range(self.start, self.stop))
        return f"{self.start} .. {self.stop - 1}"


def _layout(*rows: tuple[str, int, str]) -> tuple[Channels, ...]:
    out, start = [], 0
    for name, count, content in rows:
        out.append(Channels(name, start, count, content))
        start += count
    return tuple(out)


#: THE observation layout, in channel order (name, number of channels, content)
LAYOUT = _layout(
    ("hand", 1, "own cards"),
    ("unseen", 1, "cards whose place the observer cannot know (the others' hands, minus the known bottom "
                  "cards the landlord still holds)"),
    ("bottom", 1, "the 3 bottom cards, once revealed (R7); zeros before"),
    ("played", 3, "cards played so far by relative seat 0, 1, 2"),
    ("to_beat", 1, "cards of the move to beat; zeros when the observer leads"),
    ("history", HISTORY, f"the last {HISTORY} plays (passes included), most recent first; a pass is an empty plane"),
    ("history_seats", 1, "`[r, k]` = 1: history slot k (0 = most recent) was played by relative seat r; "
                         "`[3, k]` = 1: that slot is a pass"),
    ("cards_left", 3, "cards held by relative seat 0, 1, 2: one-hot over the 60 cells, flat index = count "
                      "(row-major, cell = 15 * row + column)"),
    ("bids", 1, "`[r, b]` = 1: relative seat r bid b (0 pass, 1, 2, 3); `[3, r]` = 1: relative seat r was "
                "the first bidder"),
    ("doubling", 1, "`[r, d]` = 1: relative seat r chose d (0 no, 1 double): own choice at once, the "
                    "farmers' choices only once both are made (R5); `[3, d]` = 1: the landlord chose d "
                    "(0 no, 1 redouble)"),
    ("status", 1, "`[0, p]` phase (0 bid, 1 double, 2 redouble, 3 play, 4 over); `[1, q]` own role once "
                  "known (0 landlord, 1 farmer after the landlord, 2 farmer before); `[2, r]` relative seat "
                  "that played the move to beat; `[3, n]` n = bombs played (0..13); `[3, 14]` the rocket "
                  "was played"),
)
LAYOUT_BY_NAME = {c.name: c for c in LAYOUT}
CH_HAND = LAYOUT_BY_NAME["hand"].start  # 0
CH_UNSEEN = LAYOUT_BY_NAME["unseen"].start  # 1
CH_BOTTOM = LAYOUT_BY_NAME["bottom"].start  # 2
CH_PLAYED = LAYOUT_BY_NAME["played"].start  # 3, 4, 5
CH_TO_BEAT = LAYOUT_BY_NAME["to_beat"].start  # 6
CH_HISTORY = LAYOUT_BY_NAME["history"].start  # 7 .. 21
CH_HISTORY_SEATS = LAYOUT_BY_NAME["history_seats"].start  # 22
CH_CARDS_LEFT = LAYOUT_BY_NAME["cards_left"].start  # 23, 24, 25
CH_BIDS = LAYOUT_BY_NAME["bids"].start  # 26
CH_DOUBLING = LAYOUT_BY_NAME["doubling"].start  # 27
CH_STATUS = LAYOUT_BY_NAME["status"].start  # 28
NUM_CHANNELS = LAYOUT[-1].stop  # 29


def layout_table(fmt: str = "markdown") -> str:
    """:data:`LAYOUT` as a table: ``"markdown"`` (docs/environment.md, the env's doc page) or ``"rst"``."""
    if fmt == "markdown":
        rows = ["| channel | name | content |", "|---|---|---|"]
        rows += [f"| {c.label()} | `{c.name}` | {c.content} |" for c in LAYOUT]
        return "\n".join(rows)
    if fmt == "rst":
        w1 = max(len(c.label()) for c in LAYOUT)
        w2 = max(len(c.name) for c in LAYOUT) + 4
        rule = f"{'=' * w1}  {'=' * w2}  {'=' * 60}"
        rows = [rule, f"{'channel':<{w1}}  {'name':<{w2}}  content", rule]
        rows += [f"{c.label():<{w1}}  {'``' + c.name + '``':<{w2}}  {c.content.replace('`', '``')}" for c in LAYOUT]
        return "\n".join(rows + [rule])
    raise ValueError(f"fmt must be 'markdown' or 'rst', got {fmt!r}")


if __doc__ is not None:  # (python -OO strips docstrings)
    __doc__ = __doc__.replace("{LAYOUT_TABLE}", layout_table("rst"))
OBS_SHAPE = (NUM_CHANNELS, 4, NUM_RANKS)
_NUM_CARD_CHANNELS = CH_HISTORY + HISTORY  # channels 0..21 are card planes
_ROWS = np.arange(4, dtype=np.int8)[:, None]


#: the cells of one view, flattened: ``planes.reshape(..., OBS_CELLS)``
OBS_CELLS = NUM_CHANNELS * PLANE_CELLS  # 1740
#: the thermometer plane (4 x 15, flattened) of every move's cards: history and to_beat planes are one lookup
#: (row NUM_MOVES, an empty plane, stands for an empty history slot)
MOVE_PLANES = np.zeros((NUM_MOVES + 1, PLANE_CELLS), np.int8)
MOVE_PLANES[:NUM_MOVES] = (np.arange(4)[:, None] < _MOVE_COUNTS[:, None, :]).reshape(NUM_MOVES, PLANE_CELLS)
EMPTY_SLOT = NUM_MOVES
MOVE_PLANES.flags.writeable = False
_SEATS = np.arange(NUM_SEATS)
_R3_15 = _SEATS * NUM_RANKS
# the 16 scattered one-hot cells of a view: cards left (3), bids (3), first bidder, doubling (3), redouble, phase,
# role, beat seat, bombs, rocket; written by encode
_ONEHOT_MUL = np.array([1] * 15 + [0], np.int64)
_ONEHOT_OFF = np.concatenate([
    (CH_CARDS_LEFT + _SEATS) * PLANE_CELLS, CH_BIDS * PLANE_CELLS + _R3_15, [CH_BIDS * PLANE_CELLS + 3 * NUM_RANKS],
    CH_DOUBLING * PLANE_CELLS + _R3_15, [CH_DOUBLING * PLANE_CELLS + 3 * NUM_RANKS],
    CH_STATUS * PLANE_CELLS + np.array([0, 1, 2, 3]) * NUM_RANKS, [CH_STATUS * PLANE_CELLS + PLANE_CELLS - 1],
]).astype(np.int64)


class PublicView(NamedTuple):
    """What a seat may know of B hands, observer-relative (seat 0 = the observer, 1 the next, 2 the
    previous), B leading every field: the input of :func:`encode`."""

    hand: Any  # (B, 15) own cards
    unseen: Any  # (B, 15) cards whose place the observer cannot know
    bottom: Any  # (B, 15) the bottom cards; zeros while hidden
    played: Any  # (B, 3, 15) cards played so far by relative seat
    to_beat: Any  # (B, 15) the move to beat; zeros when leading (None: given as to_beat_move ids)
    hist_cards: Any  # (B, K, 15) the last K plays, most recent first (None: given as hist_moves ids)
    hist_seat: Any  # (B, K) relative seat of each history slot, -1 for an empty slot
    hist_pass: Any  # (B, K) the slot is a pass
    cards_left: Any  # (B, 3) cards held by relative seat
    bids: Any  # (B, 3) -1 not yet, 0 pass, 1..3
    first_bidder: Any  # (B,) relative seat
    doubling: Any  # (B, 3) -1 unknown, 0 no, 1 double
    redouble: Any  # (B,) -1 not asked, 0 no, 1 redouble
    phase: Any  # (B,) Phase
    role: Any  # (B,) own role, -1 before the landlord is known
    beat_seat: Any  # (B,) relative seat that played the move to beat, -1 when leading
    bombs: Any  # (B,) bombs played
    rocket: Any  # (B,) bool: the rocket was played


def encode(view: PublicView, *, to_beat_move=None, hist_moves=None, out: np.ndarray | None = None) -> np.ndarray:
    """Planes (B, 29, 4, 15) int8 from the observer-relative public views of B hands (:class:`PublicView`).

    With ``to_beat_move`` (B,) / ``hist_moves`` (B, K) move ids given, ``view.to_beat`` /
    ``view.hist_cards`` may be None: their planes are then looked up in :data:`MOVE_PLANES`
    (an empty history slot may hold any id whose plane is empty: 0 or ``NUM_MOVES``).
    Card planes are four compares of whole arrays, one per thermometer row; the other
    one-hot cells are written by one flat scatter (2-D ``np.nonzero`` is slow). ``out``: a
    C-contiguous int8 array of B * OBS_CELLS cells to fill (every cell is written).
    """
    (hand, unseen, bottom, played, to_beat, hist_cards, hist_seat, hist_pass, cards_left, bids, first_bidder,
     doubling, redouble, phase, role, beat_seat, bombs, rocket) = view
    hand = np.asarray(hand)
    B = hand.shape[0]
    if out is None:
        obs = np.empty((B, OBS_CELLS), np.int8)
    else:
        if out.dtype != np.int8 or out.size != B * OBS_CELLS or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous int8 array of {B} x {OBS_CELLS} cells")
        obs = out.reshape(B, OBS_CELLS)
    o4 = obs.reshape(B, NUM_CHANNELS, 4, NUM_RANKS)
    cards = np.empty((B, 6, NUM_RANKS), np.int8)
    cards[:, 0] = hand
    cards[:, 1] = unseen
    cards[:, 2] = bottom
    cards[:, 3:6] = played
    v = o4.view(bool)
    for r in range(4):  # four compares of long runs beat one broadcast compare of 15-wide rows
        np.greater(cards, r, out=v[:, :6, r, :])
    if to_beat_move is not None:
        obs[:, CH_TO_BEAT * PLANE_CELLS:(CH_TO_BEAT + 1) * PLANE_CELLS] = MOVE_PLANES.take(to_beat_move, axis=0)
    else:
        tb = np.asarray(to_beat)
        for r in range(4):
            np.greater(tb, r, out=v[:, CH_TO_BEAT, r, :])
    if hist_moves is not None:
        obs[:, CH_HISTORY * PLANE_CELLS:CH_HISTORY_SEATS * PLANE_CELLS] = MOVE_PLANES.take(
            np.asarray(hist_moves).reshape(-1), axis=0).reshape(B, HISTORY * PLANE_CELLS)
    else:
        hc = np.asarray(hist_cards)
        for r in range(4):
            np.greater(hc, r, out=v[:, CH_HISTORY:CH_HISTORY_SEATS, r, :])
    # history seats: row r < 3 marks relative seat r (-1, an empty slot, matches no row); row 3 the passes
    hist_seat = np.asarray(hist_seat)
    for r in range(NUM_SEATS):
        np.equal(hist_seat, r, out=v[:, CH_HISTORY_SEATS, r, :])
    v[:, CH_HISTORY_SEATS, 3, :] = hist_pass
    obs[:, CH_CARDS_LEFT * PLANE_CELLS:] = 0
    # the 16 other one-hot cells: cell = max(raw, 0) * _ONEHOT_MUL + _ONEHOT_OFF, set where raw >= 0
    raw = np.empty((B, 16), np.int64)
    raw[:, 0:3] = cards_left
    raw[:, 3:6] = bids
    raw[:, 6] = first_bidder
    raw[:, 7:10] = doubling
    raw[:, 10] = redouble
    raw[:, 11] = phase
    raw[:, 12] = role
    raw[:, 13] = beat_seat
    np.minimum(bombs, 13, out=raw[:, 14])
    raw[:, 15] = rocket
    raw[:, 15] -= 1  # -1 (no cell) without the rocket, else 0 (its fixed cell)
    val = raw >= 0
    np.maximum(raw, 0, out=raw)
    raw *= _ONEHOT_MUL
    raw += _ONEHOT_OFF
    raw += (np.arange(0, B * OBS_CELLS, OBS_CELLS))[:, None]
    obs.reshape(-1)[raw.reshape(-1)] = val.reshape(-1)
    return o4


def decode_cards(plane: np.ndarray) -> np.ndarray:
    """Counts (15,) back from a thermometer plane (4, 15): for tests and debugging."""
    return plane.sum(axis=0).astype(np.int8)


#: _SEAT_ORDER[o]: the absolute seat of each relative seat seen from seat o (0 o itself, 1 the next, 2 the
#: previous); _SEAT_REL[o][s]: seat s relative to seat o (lists: observe_game looks seats up, one hand at a time)
_SEAT_ORDER = [[(o + r) % NUM_SEATS for r in range(NUM_SEATS)] for o in range(NUM_SEATS)]
_SEAT_REL = [[(s - o) % NUM_SEATS for s in range(NUM_SEATS)] for o in range(NUM_SEATS)]


def observe_game(game, seat: int) -> np.ndarray:
    """Planes (29, 4, 15) of ``seat``'s view of a :class:`ddz_env.game.Game`.

    Same layout as :func:`encode`, built for one view: the 7 card channels in one compare,
    the history planes looked up in :data:`MOVE_PLANES`, every one-hot cell in one ``put``
    (the tests check both encoders against each other).
    """
    if type(seat) is not int or not 0 <= seat <= 2:  # (one cheap check for the usual int seat)
        seat = as_seat(seat)  # a numpy integer; ValueError for 1.5 or -1 (which would wrap to seat 2)
    order, rel = _SEAT_ORDER[seat], _SEAT_REL[seat]  # relative seat -> absolute seat, and back
    lord = game.landlord
    cards = np.zeros((CH_HISTORY, NUM_RANKS), dtype=np.int8)
    cards[CH_HAND] = game.hands[seat]
    cards[CH_PLAYED:CH_PLAYED + 3] = game.played[order]
    unseen = MAX_COUNTS - game.played_total - game.hands[seat]
    if game.bottom_revealed:
        cards[CH_BOTTOM] = game.bottom
        if lord != seat:
            unseen -= np.maximum(game.bottom - game.played[lord], 0)
    cards[CH_UNSEEN] = unseen
    last = game.last_move if game.phase == _PLAY else 0
    if last:
        cards[CH_TO_BEAT] = _MOVE_COUNTS[last]
    flat = np.zeros(OBS_CELLS, dtype=np.int8)
    np.less(_ROWS, cards[:, None, :], out=flat[:CH_HISTORY * PLANE_CELLS].reshape(CH_HISTORY, 4, NUM_RANKS).view(bool))
    cells = []  # flat indices of the one-hot cells
    recent = game.plays[-HISTORY:][::-1]
    if recent:
        n = len(recent)
        flat[CH_HISTORY * PLANE_CELLS:(CH_HISTORY + n) * PLANE_CELLS] = MOVE_PLANES.take([m for _, m in recent], axis=0).reshape(-1)
        base = CH_HISTORY_SEATS * PLANE_CELLS
        for k, (s, m) in enumerate(recent):
            cells.append(base + rel[s] * NUM_RANKS + k)
            if m == 0:
                cells.append(base + 3 * NUM_RANKS + k)
    for r, s in enumerate(order):
        cells.append((CH_CARDS_LEFT + r) * PLANE_CELLS + game.n_cards[s])
        b = int(game.bids[s])
        if b >= 0:
            cells.append(CH_BIDS * PLANE_CELLS + r * NUM_RANKS + b)
        if s != lord and (game.doubles_revealed or s == seat):
            d = int(game.double_choice[s])
            if d >= 0:
                cells.append(CH_DOUBLING * PLANE_CELLS + r * NUM_RANKS + d)
    cells.append(CH_BIDS * PLANE_CELLS + 3 * NUM_RANKS + rel[game.first_bidder])
    if game.redouble_choice >= 0:
        cells.append(CH_DOUBLING * PLANE_CELLS + 3 * NUM_RANKS + game.redouble_choice)
    st = CH_STATUS * PLANE_CELLS
    cells.append(st + int(game.phase))
    if lord >= 0:
        cells.append(st + NUM_RANKS + int(ROLE_OF[seat, lord + 1]))
    if last:
        cells.append(st + 2 * NUM_RANKS + rel[game.last_mover])
    cells.append(st + 3 * NUM_RANKS + min(game.bombs, 13))
    if game.rockets:
        cells.append(st + 3 * NUM_RANKS + 14)
    np.put(flat, cells, 1)
    return flat.reshape(OBS_SHAPE)


# ---------------------------------------------------------------------------------------------- B hands
_OBS_CHUNK = 1024  # views encoded per pass: the temporaries of a few thousand views stay in the caches
_AR = np.arange(_OBS_CHUNK)
_B3 = _AR * NUM_SEATS
#: _RING[head]: the ring positions of the history slots, most recent first (slot k sits at head - 1 - k)
_RING = (np.arange(HISTORY)[:, None] - np.arange(1, HISTORY + 1)) % HISTORY
_RING_BASE = (_AR * HISTORY)[:, None]
#: _REL[4 * o + 1 + s]: seat s seen from seat o (0 self, 1 next, 2 previous); -1 stays -1 (no seat)
_REL = np.array([[-1] + [(s - o) % NUM_SEATS for s in range(NUM_SEATS)] for o in range(NUM_SEATS)],
                np.int8).reshape(-1)
#: _ORDER[o]: the absolute seats of relative seats 0, 1, 2
_ORDER = (np.arange(NUM_SEATS)[:, None] + np.arange(NUM_SEATS)) % NUM_SEATS
#: ROLE_OF flat: _ROLE[4 * o + 1 + landlord] is seat o's role (-1 with no landlord yet)
_ROLE = ROLE_OF.reshape(-1)


def observe_batch(state, seats: np.ndarray) -> np.ndarray:
    """Planes (B, 29, 4, 15) of seat ``seats[b]``'s view of hand b, for the B hands held as arrays
    in ``state`` (a ``VectorDouDizhu``; ``seats`` (B,) int64, checked by the caller): the batched
    twin of :func:`observe_game`, the same public view (R21: own cards, public plays, cards left,
    the bottom once revealed; R5: the farmers' doubling choices only once both are made) and the
    same planes (the tests check both against each other).

    ``state``'s arrays, B leading: ``hands``, ``played`` (B, 3, 15), ``played_total``, ``bottom``
    (B, 15), ``bottom_revealed``, ``doubles_revealed`` (B,) bool, ``n_cards``, ``bids``,
    ``double_choice`` (B, 3), ``landlord``, ``first_bidder``, ``redouble_choice``, ``phase``,
    ``last_move``, ``last_mover``, ``bombs``, ``rockets`` (B,), and the play history ring
    ``hist_moves``, ``hist_seats`` (B, HISTORY) with its next slot ``hist_head`` (B,)."""
    B = seats.shape[0]
    obs = np.empty((B, OBS_CELLS), np.int8)
    for lo in range(0, B, _OBS_CHUNK):
        hi = min(lo + _OBS_CHUNK, B)
        _observe_into(state, obs[lo:hi], lo, hi, seats[lo:hi])
    return obs.reshape((B,) + OBS_SHAPE)


def _observe_into(st, out: np.ndarray, lo: int, hi: int, o: np.ndarray) -> None:
    """Views of hands lo..hi-1 by seats ``o``: encode's inputs from the arrays, as observe_game builds them."""
    n = hi - lo
    if n > _AR.size:  # (a chunk larger than the tables were built for)
        b3, ring_base = np.arange(n) * NUM_SEATS, (np.arange(n) * HISTORY)[:, None]
    else:
        b3, ring_base = _B3[:n], _RING_BASE[:n]
    hands2 = st.hands[lo:hi].reshape(-1, NUM_RANKS)
    played2 = st.played[lo:hi].reshape(-1, NUM_RANKS)
    flat = b3[:, None] + _ORDER.take(o, axis=0)  # rows of (hand, relative seat 0, 1, 2)
    hand = hands2.take(flat[:, 0], axis=0)
    played = played2.take(flat, axis=0)
    lord = st.landlord[lo:hi]
    bottom = st.bottom[lo:hi] * st.bottom_revealed[lo:hi, None]  # R21: public once revealed (R7)
    # unseen: deck - own - played - the known bottom cards the landlord still holds (seen by the others)
    known = bottom - played2.take(b3 + np.maximum(lord, 0), axis=0)
    np.maximum(known, 0, out=known)
    known *= (lord != o)[:, None]
    unseen = MAX_COUNTS - hand
    unseen -= st.played_total[lo:hi]
    unseen -= known
    last = st.last_move[lo:hi]  # 0 outside the play phase
    ring = ring_base + _RING.take(st.hist_head[lo:hi], axis=0)  # most recent first
    hm = st.hist_moves[lo:hi].take(ring)
    o41 = o * 4 + 1
    hist_seat = _REL.take(o41[:, None] + st.hist_seats[lo:hi].take(ring))
    dbl = st.double_choice[lo:hi].take(flat)
    dbl[:, 1:] |= np.where(st.doubles_revealed[lo:hi], 0, -1)[:, None]  # R5: the others' once both chose
    beat_mover = np.where(last != PASS, st.last_mover[lo:hi], -1)
    view = PublicView(
        hand=hand, unseen=unseen, bottom=bottom, played=played, to_beat=None, hist_cards=None,
        hist_seat=hist_seat, hist_pass=hm == PASS, cards_left=st.n_cards[lo:hi].take(flat),
        bids=st.bids[lo:hi].take(flat), first_bidder=_REL.take(o41 + st.first_bidder[lo:hi]),
        doubling=dbl, redouble=st.redouble_choice[lo:hi], phase=st.phase[lo:hi], role=_ROLE.take(o41 + lord),
        beat_seat=_REL.take(o41 + beat_mover), bombs=st.bombs[lo:hi], rocket=st.rockets[lo:hi] > 0)
    encode(view, to_beat_move=last, hist_moves=hm, out=out)


__all__ = ["LAYOUT", "LAYOUT_BY_NAME", "Channels", "layout_table", "PublicView", "MOVE_PLANES", "encode", "observe_game",
           "observe_batch", "decode_cards", "EMPTY_SLOT", "public_history", "seat_history", "known_doubles", "HIDDEN",
           "OBS_SHAPE", "OBS_CELLS", "PLANE_CELLS", "NUM_CHANNELS", "HISTORY"]
