"""Deals consistent with what a seat knows, drawn exactly (no rejection) and seeded.

A seat at a decision sees its own cards, the public history and the counts of every hand
(R21); the rest of the deal is hidden. `sample_deals` draws whole deals
(`ddz_env.rules.Deal`) that, replayed with the public history (`replay_for_seat`), give the
seat exactly its observation planes and legal mask at that decision; `sample_hidden`
draws the hidden part from the seat's observation planes alone (what an agent gets, R21).

What the draws honour, ruling by ruling:

* R1, R2: the deal is one 54-card deck, 17/17/17 + 3; the seat's own hand is as dealt.
* R3, R4, R5, R6: bids, doubles and redoubles are choices, not constrained by the cards: they
  tell nothing (a farmer's doubling choice still secret (R5) is not in the seat's view anyway).
* R7, R21: before the bottom is revealed it is unknown (one of the hidden places); once
  revealed it is the real bottom and it joined the landlord's hand, so the landlord still
  holds ``max(bottom - played by the landlord, 0)`` of each rank (the observation's
  ``unseen`` plane takes these out of the unseen cards too).
* R8: every card a seat played was in its hand: a seat's hand as dealt is its cards now plus
  the cards it played (minus the bottom for the landlord).
* R13: a four-with-two (either kind) is legal only if its player did not then hold a whole
  bomb of a kicker rank, or the rocket when a joker is a kicker: each such play by another
  seat caps that seat's cards now (its count at the play is its count now plus what it
  played from then on).
* R17, R21: the number of cards each seat holds.

Nothing else in the observation depends on the hidden cards, so these are all the
constraints: the other hands are free within them.

**The distribution ("uniform").** With ``prior="deck"`` (the default) a consistent deal is
drawn with the probability a shuffled deck gives it once conditioned on what the seat saw:
every one of the 54! orders of the deck equally likely (each card its own identity, R1),
and the seat seeing the ranks (the observation carries no suits). A rank-count deal then
has weight ``prod over ranks r of 4! / prod over places p of c[p, r]!`` (``c[p, r]``: cards of
rank r dealt to place p: the three hands, the bottom), the number of orders of the deck
that deal it. The seat's own hand and a revealed bottom are fixed, so the weight of a draw
is ``prod_r prod_{hidden places p} 1 / (x[p, r] + q[p, r])!`` with ``x`` the hidden cards a
place holds now and ``q`` the cards the place is known to have been dealt (what it played;
for the landlord, what it played beyond the bottom).

``prior="cards"`` instead makes every placement of the unseen cards themselves equally
likely (weight ``prod_r prod_p 1 / x[p, r]!``: shuffle the unseen cards and cut them into
the hidden places). That is the deck's distribution only while nobody has played: it
forgets that a seat dealt more cards of a rank had more ways to play the ones it played.
Example, other things equal: the next seat played three 7s and the fourth 7 is unseen;
``"cards"`` puts it in either other hand at odds 1 : 1, ``"deck"`` in the previous seat's at
4 : 1 (a seat dealt all four 7s is 4 times rarer than a seat dealt three with the fourth
elsewhere: ``1/4!`` against ``1/3! * 1/1!``).

**How.** Exactly, by dynamic programming over the ranks: the hidden places (the next and
previous seats' hands, and the bottom while it is hidden) take the unseen cards of each
rank in some split; the weight of a draw is a product over ranks, and the caps of R13 and
the sizes of the places are the only couplings. A backward pass counts, for every rank and
every number of slots still to fill, the total weight of the ways to finish; a forward pass
then draws the split of each rank for all ``n`` draws (and all tables of a batch) at once.
1,000 draws for one decision take about 1 ms of CPU in the play and 3 ms before the reveal
(three hidden places); 8 draws for each of 256 tables, 30 ms (``python
benchmarks/bench_beliefs.py``).
"""
from __future__ import annotations

from itertools import product
from math import factorial
from typing import NamedTuple

import numpy as np

from .actions import NO_DOUBLE
from .cards import BLACK_JOKER, MAX_COUNTS, NUM_RANKS, NUM_SEATS, RED_JOKER, as_id
from .moves import FOUR_KICKER_RANKS, MOVE_COUNTS
from .observation import HIDDEN, OBS_CELLS, OBS_SHAPE, seat_history
from .readers import read_cards, read_cards_left, read_history, read_status
from .game import Game
from .rules import Deal, Phase, as_seat

PRIORS = ("deck", "cards")

#: _HEADS[d]: the counts (J, d) that a split of a rank (4 cards at most) gives the first d places (the last takes
#: the rest): 5 for two places, 15 for three
_HEADS = {d: np.array([x for x in product(range(5), repeat=d) if sum(x) <= 4], np.int64) for d in (1, 2)}
#: 1 / k! for every count a place can reach (4 cards of a rank at most)
_INV_FACT = np.array([1.0 / factorial(k) for k in range(5)])
_RANK_BITS = 1 << np.arange(NUM_RANKS)
_OVER = int(Phase.OVER)
_PLAY = int(Phase.PLAY)
_PAD = 4  # zero states before each axis of the forward tables: the most cards of a rank a split gives a place


class Hidden(NamedTuple):
    """What a seat does not know, as the sampler's input (relative places: 0 the next seat's hand,
    1 the previous seat's, 2 the bottom while hidden). All counts (15,) or (P, 15) int64."""

    unseen: np.ndarray  # the cards to place
    sizes: np.ndarray  # (P,) hidden slots of each place
    known: np.ndarray  # (P, 15) cards a place is known to hold now (the landlord's bottom cards)
    dealt: np.ndarray  # (P, 15) cards a place is known to have been dealt (played; see the module doc)
    cap: np.ndarray  # (P, 15) most hidden cards of each rank a place may hold (R13)


# ---------------------------------------------------------------------------------------------- arguments
def _as_n(n) -> int:
    try:
        k = as_id(n, "n")
    except TypeError:
        k = None
    if k is None or k <= 0:
        raise ValueError(f"n must be a positive integer (the number of deals to draw), got {n!r}")
    return k


def _as_rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    try:
        as_id(seed, "seed")
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise ValueError(f"seed must be None, a non-negative integer or a numpy Generator, got {seed!r}") from None


def _as_prior(prior) -> str:
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {', '.join(repr(p) for p in PRIORS)}, got {prior!r}")
    return prior


# ---------------------------------------------------------------------------------------------- constraints
def _four_two_caps(cap: np.ndarray, place: int, kickers: int, later: np.ndarray, known: np.ndarray) -> None:
    """R13 for a four-with-two with kicker ranks ``kickers`` (bits) played by ``place``, which has played
    ``later`` (15,) from that play on (the play included) and holds ``known`` for sure: when it played,
    it held no whole bomb of a kicker rank (count now + later <= 3) and, with a joker kicker, not the
    other joker (count now + later <= 0). Lowers ``cap[place]`` (caps on the hidden cards)."""
    for r in np.flatnonzero(kickers & _RANK_BITS):
        if r < BLACK_JOKER:
            most, rank = 3, r
        else:
            most, rank = 0, BLACK_JOKER + RED_JOKER - r  # the other joker
        cap[place, rank] = min(cap[place, rank], most - later[rank] - known[rank])


def _hidden_places(hand, played, bottom, landlord: int, cards_left, revealed: bool) -> Hidden:
    """The hidden places of a seat's view, observer-relative: ``hand`` (15,) its cards, ``played`` (3, 15)
    the cards each relative seat played, ``bottom`` the bottom (read only if ``revealed``), ``landlord``
    the landlord's relative seat (-1 before bidding ends), ``cards_left`` (3,) the cards held.
    The R13 caps are added by the caller."""
    hand = np.asarray(hand, np.int64)
    played = np.asarray(played, np.int64)
    if not revealed:  # nothing played yet (R7: play starts after the bottom is revealed)
        P = 3
        sizes = np.array([cards_left[1], cards_left[2], 3], np.int64)
        unseen = MAX_COUNTS - hand
        known = dealt = np.zeros((P, NUM_RANKS), np.int64)
    else:
        P = 2
        bottom = np.asarray(bottom, np.int64)
        known = np.zeros((P, NUM_RANKS), np.int64)
        dealt = played[1:].copy()
        if landlord in (1, 2):
            i = landlord - 1
            known[i] = np.maximum(bottom - played[landlord], 0)  # R7: bottom cards the landlord still holds
            dealt[i] = np.maximum(played[landlord] - bottom, 0)  # played beyond the bottom: dealt to it
        sizes = np.array([cards_left[1], cards_left[2]], np.int64) - known.sum(axis=1)
        unseen = MAX_COUNTS - hand - played.sum(axis=0) - known.sum(axis=0)
    cap = np.broadcast_to(MAX_COUNTS.astype(np.int64), (P, NUM_RANKS)).copy()
    return Hidden(unseen.astype(np.int64), sizes, known, dealt, cap)


def hidden_of_game(game, seat) -> Hidden:
    """The hidden places of ``seat``'s view of ``game`` at its current decision, from what the seat may
    know only: its own cards, the public plays (all of them: every R13 cap), the counts and the bottom
    once revealed (R21). ``ValueError`` for a seat out of range or a hand that is over."""
    if not isinstance(game, Game):
        raise TypeError(f"game must be a ddz_env.Game, got {type(game).__name__}")
    o = as_seat(seat, "seat")
    if game.phase == _OVER:
        raise ValueError(f"the hand is over ({'void' if game.void else 'won by seat ' + str(game.winner)}): "
                         f"no decision to draw deals for")
    order = [o, (o + 1) % NUM_SEATS, (o + 2) % NUM_SEATS]
    lord = -1 if game.landlord < 0 else (game.landlord - o) % NUM_SEATS
    h = _hidden_places(game.hands[o], game.played[order], game.bottom if game.bottom_revealed else None, lord,
                       [game.n_cards[s] for s in order], bool(game.bottom_revealed))
    later = np.zeros((NUM_SEATS, NUM_RANKS), np.int64)  # by relative seat, from the newest play back
    for s, m in reversed(game.plays):
        r = (s - o) % NUM_SEATS
        later[r] += MOVE_COUNTS[m]
        if r and FOUR_KICKER_RANKS[m]:
            _four_two_caps(h.cap, r - 1, int(FOUR_KICKER_RANKS[m]), later[r], h.known[r - 1])
    return h




def hidden_of_planes(planes) -> Hidden:
    """The hidden places of the seat whose observation ``planes`` (29, 4, 15) are (see
    `sample_hidden`). The R13 caps come from the plays in the planes' history (the last
    ``HISTORY`` plays); ``ValueError`` for planes that are no observation of a hand in progress."""
    p = np.asarray(planes)
    if p.shape != OBS_SHAPE and p.shape != (OBS_CELLS,):
        raise ValueError(f"planes must have shape {OBS_SHAPE} (or the flat {OBS_CELLS},), got {p.shape}")
    p = p.reshape(OBS_SHAPE)
    if p.dtype.kind not in "iub" or p.min() < 0 or p.max() > 1:
        raise ValueError("planes must be 0/1 integers (an observation's int8 planes)")
    st = read_status(p)
    phase, lord = int(st.phase), int(st.landlord)  # (the landlord's relative seat, -1 before bidding ends)
    if phase == _OVER:
        raise ValueError("the planes show a hand that is over (status phase 4): no decision to draw deals for")
    revealed = phase == _PLAY
    h = _hidden_places(read_cards(p, "hand"), read_cards(p, "played"), read_cards(p, "bottom"), lord,
                       read_cards_left(p), revealed)
    unseen_plane = read_cards(p, "unseen").astype(np.int64)
    if (h.unseen < 0).any() or (h.sizes < 0).any() or not np.array_equal(h.unseen, unseen_plane) \
            or h.unseen.sum() != h.sizes.sum():
        raise ValueError("the planes are not one seat's observation of a hand: their cards, counts and unseen "
                         "plane disagree")
    seats, moves, cards = read_history(p)  # most recent first
    later = np.zeros((NUM_SEATS, NUM_RANKS), np.int64)
    for k, r in enumerate(seats.tolist()):
        if r < 0:  # an empty slot: no older plays
            break
        later[r] += cards[k]
        m = int(moves[k])
        if r and m > 0 and FOUR_KICKER_RANKS[m]:
            _four_two_caps(h.cap, r - 1, int(FOUR_KICKER_RANKS[m]), later[r], h.known[r - 1])
    return h


# ---------------------------------------------------------------------------------------------- the sampler
def _split_weights(hidden: Hidden, r: int, prior: str) -> tuple[np.ndarray, np.ndarray]:
    """For B stacked tables: ``(counts (B, J, P), weights (B, J))`` of the splits ``_HEADS[P - 1]`` of
    rank r's unseen cards (the last place takes the rest; a split that leaves it a negative count,
    or breaks a cap, weighs 0)."""
    heads = _HEADS[hidden.sizes.shape[1] - 1]
    rest = hidden.unseen[:, r, None] - heads.sum(axis=1)  # (B, J)
    counts = np.concatenate([np.broadcast_to(heads, rest.shape + heads.shape[1:]), rest[..., None]], axis=2)
    held = counts + hidden.dealt[:, None, :, r] if prior == "deck" else counts  # (at most 4 of a rank)
    w = _INV_FACT[np.clip(held, 0, 4)].prod(axis=2)
    w *= (rest >= 0) & (counts <= hidden.cap[:, None, :, r]).all(axis=2)
    return counts, w


def draw_hidden_batch(hidden: Hidden, n: int, rng: np.random.Generator, prior: str = "deck") -> np.ndarray:
    """(B, n, P, 15) int8: the hidden cards each place holds, ``n`` exact draws for each of B tables
    (``hidden``: `Hidden` fields stacked, B leading; the same number P of places), all
    tables and draws at once (see the module doc).

    Backward pass, rank 14 down to 0: ``tail[b, k]`` is table b's total weight of the ways to deal
    the ranks from this one up with ``k`` slots (of the places but the last, which takes the rest)
    still to fill. Forward pass, rank 0 up: each draw's split of the rank, in proportion to its
    weight times the tail it leaves. ``ValueError`` naming the first table that no deal fits
    (planes of no real position)."""
    B, P = hidden.sizes.shape
    d = P - 1
    heads = _HEADS[d]
    shape = tuple(int(hidden.sizes[:, i].max()) + 1 for i in range(d))
    # the tails kept for the forward pass are padded with _PAD zero states before each axis, so that a split
    # taking more slots than are left reads a zero weight: one gather per rank, no bounds test
    padded = tuple(s + _PAD for s in shape)
    strides = np.cumprod((1,) + padded[:0:-1])[::-1]
    offsets = heads @ strides  # (J,) flat step of each split
    tail = np.zeros((B,) + shape)
    tail[(slice(None),) + (0,) * d] = 1.0
    steps = []
    for r in range(NUM_RANKS - 1, -1, -1):
        if not hidden.unseen[:, r].any():
            continue
        counts, w = _split_weights(hidden, r, prior)
        live = np.flatnonzero(w.any(axis=0) & (heads < shape).all(axis=1))  # splits some table can take
        table = np.zeros((B,) + padded)
        table[(slice(None),) + tuple(slice(_PAD, None) for _ in shape)] = tail
        steps.append((r, counts[:, live].astype(np.int8), w[:, live].T.copy(), offsets[live], table.reshape(B, -1)))
        new = np.zeros_like(tail)
        for j in live:
            x = heads[j]
            new[(slice(None),) + tuple(slice(a, None) for a in x)] += (
                w[:, j].reshape((B,) + (1,) * d) * tail[(slice(None),) + tuple(slice(0, s - a) for s, a in zip(shape, x))])
        tail = new
    total = tail[(np.arange(B),) + tuple(hidden.sizes[:, :d].T)]  # each table's weight of all its deals
    if not (total > 0).all():
        where = f"table {int(np.flatnonzero(~(total > 0))[0])}: " if B > 1 else ""
        raise ValueError(f"{where}no deal is consistent with this view (the counts, the unseen cards and the R13 caps "
                         f"admit none)")
    out = np.zeros((B, n, P, NUM_RANKS), np.int8)
    base = (np.arange(B) * int(np.prod(padded)))[:, None]
    left = np.broadcast_to(base + ((hidden.sizes[:, :d] + _PAD) @ strides)[:, None], (B, n)).copy()  # flat states
    u = rng.random((len(steps), B, n))
    rows = np.arange(B)[:, None]
    for i, (r, counts, w, step, flat) in enumerate(reversed(steps)):
        cum = (flat.reshape(-1)[left[None] - step[:, None, None]] * w[:, :, None]).cumsum(axis=0)  # (J, B, n)
        v = u[i] * cum[-1]
        j = np.zeros((B, n), np.int64)
        for row in cum[:-1]:  # (J - 1 compares of whole (B, n) blocks: cheaper than a compare and sum on axis 0)
            j += row <= v
        out[:, :, :, r] = counts[rows, j]
        left -= step[j]
    return out


def draw_hidden(hidden: Hidden, n: int, rng: np.random.Generator, prior: str = "deck") -> np.ndarray:
    """(n, P, 15) int8: `draw_hidden_batch` for one table."""
    return draw_hidden_batch(Hidden(*(np.asarray(f)[None] for f in hidden)), n, rng, prior)[0]


# ---------------------------------------------------------------------------------------------- public API
def sample_deal_arrays(game, seat, n, seed=None, prior: str = "deck") -> tuple[np.ndarray, np.ndarray]:
    """``n`` deals consistent with what ``seat`` knows at ``game``'s current decision, as arrays:
    ``(hands (n, 3, 15), bottoms (n, 15))`` int8, the hands as dealt (absolute seats; ``hands[:, seat]``
    is the seat's own hand as dealt). The vectorized core of `sample_deals` (see the module doc
    for the constraints and the distribution). ``seed``: an int, a ``numpy.random.Generator`` or None.
    ``ValueError`` naming a bad ``n``, ``seat``, ``seed`` or ``prior``, or a hand that is over; nothing
    is drawn from a given generator then."""
    n = _as_n(n)
    prior = _as_prior(prior)
    hidden = hidden_of_game(game, seat)
    rng = _as_rng(seed)
    o = as_seat(seat)
    x = draw_hidden(hidden, n, rng, prior)
    hands = np.empty((n, NUM_SEATS, NUM_RANKS), np.int8)
    hands[:, o] = game.initial_hands[o]
    for i in range(2):
        hands[:, (o + 1 + i) % NUM_SEATS] = x[:, i] + hidden.dealt[i]  # its hidden cards now + what it was surely dealt (R8, R7)
    if game.bottom_revealed:
        bottoms = np.broadcast_to(game.bottom.astype(np.int8), (n, NUM_RANKS)).copy()
    else:
        bottoms = x[:, 2].copy()
    return hands, bottoms


def sample_deals(game, seat, n, seed=None, prior: str = "deck") -> list[Deal]:
    """``n`` `ddz_env.rules.Deal` consistent with what ``seat`` knows at ``game``'s current
    decision: each, replayed with the public history (`replay_for_seat`), gives the seat exactly its
    observation planes and legal mask. The first bidder is the game's; with bidding off each
    deal's ``landlord`` is the game's (as ``Game.initial_deal``). Drawn exactly from the
    distribution the module doc defines (``prior``); seeded by ``seed`` (an int, a Generator)."""
    hands, bottoms = sample_deal_arrays(game, seat, n, seed, prior)
    lord = None if game.rules.bidding else int(game.landlord)
    fb = int(game.first_bidder)
    deals = []
    for h, b in zip(hands, bottoms):  # read-only views of the two arrays: no copy per deal (checked: R1 holds)
        d = object.__new__(Deal)
        d._set(h, b, fb, lord)
        deals.append(d)
    return deals


def sample_hidden(planes, n, seed=None, prior: str = "deck") -> tuple[np.ndarray, np.ndarray]:
    """The hidden part of a deal consistent with one seat's observation ``planes`` (29, 4, 15) alone
    (R21: what an agent is given): ``(hands (n, 2, 15), bottoms (n, 15))`` int8, the cards the next
    and the previous seat hold now (relative seats 1 and 2, as the planes order them; the
    landlord's include the bottom cards it still holds) and the bottom: drawn while it is hidden,
    the revealed one (repeated) once shown (R7).

    While every four-with-two is still among the planes' last ``HISTORY`` plays these are the
    draws of `sample_deal_arrays` (the same seed gives the same hidden cards); an older one
    no longer caps its player's cards (R13: the planes do not carry it), so then the support can
    be larger than the game's.
    ``ValueError`` naming what is wrong with the planes, ``n``, ``seed`` or ``prior``."""
    n = _as_n(n)
    prior = _as_prior(prior)
    hidden = hidden_of_planes(planes)
    rng = _as_rng(seed)
    x = draw_hidden(hidden, n, rng, prior)
    hands = (x[:, :2] + hidden.known[None, :2]).astype(np.int8)
    if hidden.sizes.size == 3:
        bottoms = x[:, 2].copy()
    else:
        bottoms = np.broadcast_to(read_cards(np.asarray(planes).reshape(OBS_SHAPE), "bottom"), (n, NUM_RANKS)).copy()
    return hands, bottoms


def sample_hidden_batch(planes, n, seed=None, prior: str = "deck") -> tuple[np.ndarray, np.ndarray]:
    """`sample_hidden` for the views of B tables at once (``planes`` (B, 29, 4, 15), e.g.
    ``VectorDouDizhu.observe(seats)``): ``(hands (B, n, 2, 15), bottoms (B, n, 15))`` int8, each
    table's draws from the same distribution as ``sample_hidden(planes[b], n)``, all drawn together
    (one pass for the tables in play, one for those before the reveal). Every table is checked
    before anything is drawn; ``ValueError`` names the first bad one."""
    n = _as_n(n)
    prior = _as_prior(prior)
    p = np.asarray(planes)
    if p.ndim not in (2, 4) or p.shape[1:] not in (OBS_SHAPE, (OBS_CELLS,)):
        raise ValueError(f"planes must have shape (B,) + {OBS_SHAPE} (or (B, {OBS_CELLS})), "
                         f"got {p.shape}")
    hidden = []
    for b in range(p.shape[0]):
        try:
            hidden.append(hidden_of_planes(p[b]))
        except ValueError as e:
            raise ValueError(f"table {b}: {e}") from None
    rng = _as_rng(seed)
    hands = np.empty((len(hidden), n, 2, NUM_RANKS), np.int8)
    bottoms = np.empty((len(hidden), n, NUM_RANKS), np.int8)
    places = np.array([h.sizes.size for h in hidden])
    for P in (2, 3):  # the tables in play, then those before the reveal (the bottom a hidden place)
        idx = np.flatnonzero(places == P)
        if idx.size == 0:
            continue
        group = Hidden(*(np.stack(f) for f in zip(*(hidden[b] for b in idx))))
        x = draw_hidden_batch(group, n, rng, prior)
        hands[idx] = x[:, :, :2] + group.known[:, None, :2]
        bottoms[idx] = x[:, :, 2] if P == 3 else read_cards(p[idx].reshape((-1,) + OBS_SHAPE), "bottom")[:, None]
    return hands, bottoms


def replay_for_seat(deal, game, seat):
    """A fresh `ddz_env.game.Game` of ``deal`` (same rules as ``game``) stepped through
    ``game``'s history as ``seat`` knows it (`ddz_env.observation.seat_history`: R5, another farmer's
    doubling choice hidden until both chose); a hidden doubling choice is replayed as "no double" (it
    shows in no plane until both farmers chose, so either gives the seat the same view). Raises
    ``IllegalActionError`` if the deal cannot replay the history."""
    g = Game.from_deal(Deal.of(deal), rules=game.rules)
    for s, a in seat_history(game.history, game.doubles_revealed, as_seat(seat, "seat")):
        g.step(NO_DOUBLE if a == HIDDEN else a, s)
    return g


__all__ = ["sample_deals", "sample_deal_arrays", "sample_hidden", "sample_hidden_batch", "replay_for_seat",
           "Hidden", "hidden_of_game", "hidden_of_planes", "draw_hidden", "PRIORS"]
