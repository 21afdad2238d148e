"""Deals consistent with what a seat knows (``ddz_env.beliefs``): every draw replays to the seat's
exact view, the draws follow the documented distribution exactly, the observation-only sampler
agrees with the game-based one, and bad input is refused.

The exact distributions are checked on two recorded endgames (a deal and the action ids of a
random hand, ``POS_R13`` and ``POS_FREE`` below) by brute force, independently of the sampler:
every split of the cards the seat cannot place (``deck - own cards - played``) into the other
two hands is replayed through ``Game``; a split is consistent iff the replay is legal and
gives the seat the same planes and legal moves; its weight under ``prior="deck"`` is the
number of orders of a 54-card deck that deal it (``prod_r 4! / prod of the cells' counts!``),
under ``prior="cards"`` the number of placements of the unseen cards.
"""
from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest
from scipy.stats import chisquare

from ddz_env import Game, Phase, VectorDouDizhu
from ddz_env.actions import BID_PASS
from ddz_env.beliefs import (
    draw_hidden, hidden_of_game, hidden_of_planes, replay_for_seat, sample_deal_arrays, sample_deals, sample_hidden,
    sample_hidden_batch,
)
from ddz_env.cards import MAX_COUNTS
from ddz_env.game import IllegalActionError
from ddz_env.moves import FOUR_KICKER_RANKS
from ddz_env.observation import HISTORY, observe_game, seat_history
from ddz_env.rules import Deal, check_deals

# A rulebook hand (seed 0's 262nd random hand): seat 0 bids 2, seat 1 bids 3 and is landlord, both farmers
# double, the landlord redoubles; its first lead (action 23735) is a four-with-two whose kickers cap its
# hand later on (R13).
POS_R13 = (Deal(["33445679TJQQKKAAB", "33566778999TJK222", "44567888TJJQQKAAR"], "5T2", 0),
           [24642, 24643, 24645, 24645, 24647, 23735, 0, 0, 11, 12, 14, 0, 15, 0, 0, 114, 0, 0, 8, 10, 0, 0, 16, 18,
            0, 0, 19, 24, 26, 0, 0, 4, 7, 11, 0, 0, 10, 12, 0, 0, 10, 0, 12, 0, 0, 5, 9, 0, 0, 12, 0, 0, 17, 20, 0, 0,
            8, 10, 0, 0, 2, 3, 6])
# A rulebook hand without a four-with-two (seed 1's first random hand): seat 1 bids 3, nobody doubles.
POS_FREE = (Deal(["34566788999TJQA2B", "334457788TTTJQK2R", "3455679JJQKKKAAA2"], "6Q2", 1),
            [24643, 24644, 24644, 3, 9, 13, 15, 0, 0, 309, 346, 0, 0, 196, 0, 0, 10, 0, 11, 13, 14, 0, 0, 136, 0, 0,
             19, 21, 0, 0, 28, 0, 0, 20, 0, 0, 1, 5])

RULES = ["rulebook", "douzero", "bidding=true,doubling=false", "bidding=false,doubling=true"]


def _position(recorded, plays: int) -> Game:
    """The recorded hand stepped until ``plays`` plays of the play phase were made."""
    deal, actions = recorded
    g = Game.from_deal(deal)
    for a in actions:
        if g.phase == Phase.PLAY and len(g.plays) == plays:
            break
        g.step(a)
    assert len(g.plays) == plays and not g.is_over
    return g


def _random_positions(seed: int, games: int, rules="rulebook"):
    """Every decision of ``games`` random hands: yields ``(game, rng)`` (step the game only after use)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        g = Game.deal(rng, rules=rules)
        while not g.is_over:
            yield g, rng
            g.step(int(rng.choice(g.legal_actions())))


def _same_view(g: Game, r: Game, seat: int) -> bool:
    """The seat sees the same planes in both games, and, on turn, the same legal moves."""
    if not np.array_equal(observe_game(r, seat), observe_game(g, seat)) or r.current_player != g.current_player:
        return False
    return seat != g.current_player or np.array_equal(r.legal_actions(), g.legal_actions())


def _current_hands(g: Game, hands: np.ndarray) -> np.ndarray:
    """(n, 3, 15): the cards each seat holds now in deals (hands as dealt) replayed to ``g``'s position."""
    cur = hands.astype(np.int64) - g.played[None]
    if g.bottom_revealed:
        cur[:, g.landlord] += g.bottom
    return cur


def _exact(g: Game, seat: int, prior: str) -> tuple[dict, int]:
    """Brute force (see the module doc): ``({(next's cards, previous's cards): probability}, number of
    splits whose replay was illegal)``."""
    o = seat
    nxt, prv = (o + 1) % 3, (o + 2) % 3
    free = (MAX_COUNTS - g.hands[o] - g.played_total).astype(np.int64)  # the others' cards together
    ranks = np.flatnonzero(free)
    known = np.zeros((3, 15), np.int64)  # R7: bottom cards the landlord still holds, seen by the others
    known[g.landlord] = np.maximum(g.bottom - g.played[g.landlord], 0)
    out, illegal = {}, 0
    for xs in itertools.product(*[range(free[r] + 1) for r in ranks]):
        c1 = np.zeros(15, np.int64)
        c1[ranks] = xs
        if c1.sum() != g.n_cards[nxt]:
            continue
        cur = {nxt: c1, prv: free - c1}
        dealt = np.zeros((3, 15), np.int64)
        dealt[o] = g.initial_hands[o]
        for s in (nxt, prv):
            dealt[s] = cur[s] + g.played[s] - (g.bottom if s == g.landlord else 0)
        if (dealt < 0).any():
            continue
        try:
            r = replay_for_seat(Deal(dealt, g.bottom, g.first_bidder), g, o)
        except IllegalActionError:
            illegal += 1
            continue
        if not _same_view(g, r, o):
            continue
        w = 1.0
        for k in range(15):
            if prior == "deck":
                cells = [dealt[0, k], dealt[1, k], dealt[2, k], g.bottom[k]]
                w *= factorial(MAX_COUNTS[k]) / np.prod([factorial(int(c)) for c in cells])
            else:
                cells = [cur[s][k] - known[s, k] for s in (nxt, prv)]
                w *= factorial(int(sum(cells))) / np.prod([factorial(int(c)) for c in cells])
        out[(tuple(c1), tuple(free - c1))] = w
    total = sum(out.values())
    return {k: w / total for k, w in out.items()}, illegal


def _frequencies(keys, nxt_prv: np.ndarray) -> np.ndarray:
    """Counts of each key (next's, previous's cards) among draws (n, 2, 15); an unknown key fails."""
    index = {k: i for i, k in enumerate(keys)}
    counts = np.zeros(len(keys))
    for row in nxt_prv:
        key = (tuple(row[0].tolist()), tuple(row[1].tolist()))
        assert key in index, f"a draw outside the consistent splits: {key}"
        counts[index[key]] += 1
    return counts


# ---------------------------------------------------------------------------------------------- consistency
@pytest.mark.parametrize("rules", RULES)
def test_r1_r5_r7_r8_r13_r21_every_draw_replays_to_the_seats_exact_view(rules):
    """Over thousands of random decisions of every phase, for the seat to act and another seat:
    every drawn deal is a deal (R1), keeps the seat's hand as dealt, the real bottom once
    revealed (R7), the first bidder and (bidding off) the landlord, and replayed with the
    public history gives the seat exactly its planes and legal moves (R8, R13, R21; R5: a
    secret doubling choice replays as either). The draws are not the real deal itself."""
    phases, checked, differ = set(), 0, 0
    bidding = Game.deal(0, rules=rules).rules.bidding
    games = 14 if rules == "rulebook" else 6
    for g, rng in _random_positions(37, games, rules):
        for seat in {g.current_player, int(rng.integers(3))}:
            hands, bottoms = sample_deal_arrays(g, seat, 4, seed=rng)
            check_deals(hands, bottoms)  # R1, R2
            assert (hands[:, seat] == g.initial_hands[seat]).all()
            if g.bottom_revealed:
                assert (bottoms == g.bottom).all()
            for d in sample_deals(g, seat, 1, seed=rng):
                assert d.first_bidder == g.first_bidder
                assert d.landlord == (None if bidding else g.landlord)
                r = replay_for_seat(d, g, seat)
                assert _same_view(g, r, seat), (g.phase, seat, d)
                checked += 1
                differ += not (np.array_equal(d.hands, g.initial_hands) and np.array_equal(d.bottom, g.bottom))
            phases.add(int(g.phase))
    assert checked > 60 * games
    assert differ > checked // 2
    expected = {Phase.BID, Phase.DOUBLE, Phase.REDOUBLE, Phase.PLAY}
    if not bidding:
        expected.discard(Phase.BID)
    if "doubling=false" in rules or rules == "douzero":
        expected -= {Phase.DOUBLE, Phase.REDOUBLE}
    assert phases == {int(p) for p in expected}


def test_r5_the_seats_history_shows_its_own_doubling_choice_only():
    """R5: the second farmer to choose sees neither the first's choice (HIDDEN) nor is it needed:
    the replay gives the same planes; its own choice it knows."""
    g = Game.from_deal(POS_R13[0])
    for a in POS_R13[1][:3]:  # bid 2, bid 3, then the first farmer's double
        g.step(a)
    first, second = g.history[-1][0], g.current_player
    assert g.phase == Phase.DOUBLE and seat_history(g.history, g.doubles_revealed, second)[-1] == (first, -1)
    assert seat_history(g.history, g.doubles_revealed, first)[-1] == g.history[-1]
    for d in sample_deals(g, second, 20, seed=5):
        assert _same_view(g, replay_for_seat(d, g, second), second)


def test_r13_four_with_two_kickers_cap_the_players_hand():
    """R13: at ``POS_R13`` the landlord's early four-with-two rules out every split giving it, back
    then, a whole bomb of a kicker rank: brute force finds such splits (their replay is
    illegal), the sampler's caps exclude them, and without the caps the draws hit them."""
    g = _position(POS_R13, 52)
    seat = g.current_player
    exact, illegal = _exact(g, seat, "deck")
    assert illegal > 0 and len(exact) > 1
    hidden = hidden_of_game(g, seat)
    assert (hidden.cap < MAX_COUNTS).any()
    hands, _ = sample_deal_arrays(g, seat, 3000, seed=1)
    cur = _current_hands(g, hands)[:, [(seat + 1) % 3, (seat + 2) % 3]]
    _frequencies(list(exact), cur)  # every draw is one of the consistent splits
    uncapped = hidden._replace(cap=np.broadcast_to(MAX_COUNTS, hidden.cap.shape).astype(np.int64))
    x = draw_hidden(uncapped, 3000, np.random.default_rng(1))
    cur_free = x + hidden.known[None]
    keys = {(tuple(a.tolist()), tuple(b.tolist())) for a, b in cur_free}
    assert keys - set(exact), "without the R13 caps some draws replay illegally"


# ---------------------------------------------------------------------------------------------- the distribution
@pytest.mark.parametrize("prior", ["deck", "cards"])
@pytest.mark.parametrize("where", ["r13_52", "r13_58", "free_35"])
def test_r1_draws_follow_the_exact_distribution(where, prior):
    """R1 (a shuffled deck): on small endgames the draws' frequencies match the brute-force
    probabilities of ``prior`` (chi-square, fixed seed), and the other prior's are rejected
    where they differ (the test can tell them apart)."""
    recorded, plays = {"r13_52": (POS_R13, 52), "r13_58": (POS_R13, 58), "free_35": (POS_FREE, 35)}[where]
    g = _position(recorded, plays)
    seat = g.current_player
    exact = _exact(g, seat, prior)[0]
    other = _exact(g, seat, "cards" if prior == "deck" else "deck")[0]
    keys = list(exact)
    assert set(other) == set(exact) and len(keys) >= 4
    n = 20_000
    hands, _ = sample_deal_arrays(g, seat, n, seed=11, prior=prior)
    counts = _frequencies(keys, _current_hands(g, hands)[:, [(seat + 1) % 3, (seat + 2) % 3]])
    p = np.array([exact[k] for k in keys])
    q = np.array([other[k] for k in keys])
    assert p.min() * n >= 5  # chi-square's rule of thumb
    assert chisquare(counts, p * n).pvalue > 1e-3
    assert np.abs(p - q).max() > 0.01
    assert chisquare(counts, q * n).pvalue < 1e-6


@pytest.mark.parametrize("rules", ["rulebook", "bidding=false,doubling=true"])
def test_r7_before_the_reveal_the_bottom_is_a_hidden_place(rules):
    """R7: before the bottom is revealed the 37 cards the seat cannot see are dealt 17 / 17 / 3 to
    the next seat, the previous seat and the bottom like a shuffled deck: the split of the
    four cards of a rank the seat does not hold is multivariate hypergeometric."""
    g = Game.deal(4, rules=rules)
    seat = g.current_player
    assert not g.bottom_revealed
    rank = int(np.flatnonzero(g.hands[seat][:13] == 0)[0])
    n = 20_000
    hands, bottoms = sample_deal_arrays(g, seat, n, seed=3)
    a = hands[:, (seat + 1) % 3, rank].astype(np.int64)
    b = hands[:, (seat + 2) % 3, rank].astype(np.int64)
    c = bottoms[:, rank].astype(np.int64)
    assert (a + b + c == 4).all()
    splits = [(i, j, 4 - i - j) for i in range(5) for j in range(5 - i) if 4 - i - j <= 3]
    p = np.array([comb(17, i) * comb(17, j) * comb(3, k) for i, j, k in splits], float) / comb(37, 4)
    assert abs(p.sum() - 1) < 1e-12
    counts = np.array([np.sum((a == i) & (b == j)) for i, j, _ in splits])
    assert p.min() * n >= 5  # chi-square's rule of thumb
    assert chisquare(counts, p * n).pvalue > 1e-3
    # the two priors agree before any card is played
    h2, b2 = sample_deal_arrays(g, seat, 50, seed=9, prior="cards")
    h1, b1 = sample_deal_arrays(g, seat, 50, seed=9)
    assert np.array_equal(h1, h2) and np.array_equal(b1, b2)


# ---------------------------------------------------------------------------------------------- observation only
def _windowed(g: Game, seat: int) -> bool:
    """Whether every four-with-two by another seat is still in the planes' history."""
    old = g.plays[:-HISTORY] if len(g.plays) > HISTORY else []
    return not any(FOUR_KICKER_RANKS[m] and s != seat for s, m in old)


def test_r21_observation_only_draws_equal_the_game_based_ones():
    """R21: from the planes alone (what an agent has) the hidden places are the game-based ones, and
    the same seed draws the same cards (so the same distribution), at random decisions of every
    phase; when a four-with-two has left the planes' history only its R13 caps are lost (the
    planes' caps are looser, all else is equal)."""
    same = looser = 0
    for g, rng in _random_positions(5, 40):
        seat = int(rng.integers(3))
        if rng.random() > 0.25:  # (a quarter of the decisions of 40 hands: more hands reach the old plays)
            continue
        obs = observe_game(g, seat)
        hg, hp = hidden_of_game(g, seat), hidden_of_planes(obs)
        for name in ("unseen", "sizes", "known", "dealt"):
            assert np.array_equal(getattr(hg, name), getattr(hp, name)), name
        if not _windowed(g, seat):
            assert (hp.cap >= hg.cap).all()
            looser += not np.array_equal(hp.cap, hg.cap)
            continue
        assert np.array_equal(hp.cap, hg.cap)
        hands, bottoms = sample_deal_arrays(g, seat, 20, seed=7)
        cur, bot = sample_hidden(obs, 20, seed=7)
        assert np.array_equal(cur, _current_hands(g, hands)[:, [(seat + 1) % 3, (seat + 2) % 3]])
        assert np.array_equal(bot, bottoms)
        same += 1
    assert same > 400 and looser > 20


@pytest.mark.parametrize("where", ["free_35", "r13_52"])
def test_r13_r21_observation_only_support_on_small_endgames(where):
    """On the enumerable endgames: with every four-with-two in the planes' history (``free_35``)
    the observation-only draws cover exactly the consistent splits, with the exact frequencies;
    at ``r13_52`` the landlord's four-with-two is 52 plays old, beyond the planes' 15, so the
    planes admit more splits than the game (the documented limit, R13)."""
    recorded, plays = {"free_35": (POS_FREE, 35), "r13_52": (POS_R13, 52)}[where]
    g = _position(recorded, plays)
    seat = g.current_player
    exact = _exact(g, seat, "deck")[0]
    n = 20_000
    cur, _ = sample_hidden(observe_game(g, seat), n, seed=2)
    drawn = {(tuple(a.tolist()), tuple(b.tolist())) for a, b in cur}
    if where == "free_35":
        assert drawn == set(exact)
        keys = list(exact)
        counts = _frequencies(keys, cur)
        assert chisquare(counts, np.array([exact[k] for k in keys]) * n).pvalue > 1e-3
    else:
        assert drawn > set(exact)


def test_r7_r21_batched_observation_only_draws_for_many_tables():
    """The batched env's views of 32 tables at random steps (some before the reveal, some in play):
    each hidden hand ``sample_hidden_batch`` draws holds the seat's public count (R21), the hidden
    places together hold exactly the cards they really hold (the bottom as a hidden place before
    the reveal, the real one after, R7); a batch of one table draws what ``sample_hidden`` draws."""
    env = VectorDouDizhu(32, seed=3)
    rng = np.random.default_rng(3)
    b = np.arange(32)
    for step in range(60):
        if step % 6 == 0:
            seats = rng.integers(3, size=32)
            planes = env.observe(seats)
            hands, bottoms = sample_hidden_batch(planes, 8, seed=np.random.default_rng(step))
            t = step % 32
            h, bt = sample_hidden(planes[t], 8, seed=step)
            h1, bt1 = sample_hidden_batch(planes[t:t + 1], 8, seed=step)
            assert np.array_equal(h1[0], h) and np.array_equal(bt1[0], bt)
            nxt, prv = (seats + 1) % 3, (seats + 2) % 3
            assert (hands.sum(axis=3) == env.state.n_cards[b, nxt][:, None, None] * [1, 0]
                    + env.state.n_cards[b, prv][:, None, None] * [0, 1]).all()
            real = env.hands[b, nxt] + env.hands[b, prv]
            real_b = np.where(env.state.bottom_revealed[:, None], 0, env.state.bottom)
            drawn_b = np.where(env.state.bottom_revealed[:, None, None], 0, bottoms)
            assert (hands.sum(axis=2) + drawn_b == (real + real_b)[:, None]).all()
            assert (bottoms[env.state.bottom_revealed] == env.state.bottom[env.state.bottom_revealed][:, None]).all()
        env.step(env.random_actions(rng), observe=False)
    with pytest.raises(ValueError, match="table 1: the planes are not one seat.s observation"):
        sample_hidden_batch(np.stack([planes[0], np.zeros_like(planes[0])]), 2)


def test_r1_batched_draws_follow_the_exact_distribution():
    """R1: tables drawn together in one batch (two copies of the ``free_35`` endgame among a table
    before the reveal and the ``r13_52`` one) each follow their exact distribution (chi-square)."""
    free = _position(POS_FREE, 35)
    seat = free.current_player
    exact = _exact(free, seat, "deck")[0]
    keys = list(exact)
    r13 = _position(POS_R13, 52)
    bid = Game.deal(4)
    planes = np.stack([observe_game(free, seat), observe_game(bid, bid.current_player), observe_game(free, seat),
                       observe_game(r13, r13.current_player)])
    n = 20_000
    hands, bottoms = sample_hidden_batch(planes, n, seed=8)
    assert (bottoms[0] == free.bottom).all() and (bottoms[2] == free.bottom).all() and (bottoms[3] == r13.bottom).all()
    assert (bottoms[1].sum(axis=1) == 3).all() and len(np.unique(bottoms[1], axis=0)) > 100  # R7: hidden
    for t in (0, 2):
        counts = _frequencies(keys, hands[t])
        assert chisquare(counts, np.array([exact[k] for k in keys]) * n).pvalue > 1e-3
    assert not np.array_equal(hands[0], hands[2])


def test_r21_draws_read_nothing_hidden():
    """R21: two positions that differ only in cards the seat cannot see (the real deal, and a drawn
    one replayed) give the same draws for the same seed."""
    checked = differ = 0
    for g, rng in _random_positions(9, 6):
        seat = int(rng.integers(3))
        if len(g.history) % 5:  # (every fifth decision)
            continue
        other = replay_for_seat(sample_deals(g, seat, 1, seed=rng)[0], g, seat)
        differ += not (np.array_equal(other.hands, g.hands) and np.array_equal(other.bottom, g.bottom))
        a = sample_deal_arrays(g, seat, 30, seed=4)
        b = sample_deal_arrays(other, seat, 30, seed=4)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        checked += 1
    assert checked > 30 and differ > checked // 2


def test_seeding_is_reproducible():
    g = _position(POS_FREE, 35)
    a = sample_deals(g, 0, 10, seed=3)
    assert a == sample_deals(g, 0, 10, seed=3)
    assert a == sample_deals(g, 0, 10, seed=np.random.default_rng(3))
    assert a != sample_deals(g, 0, 10, seed=4)


# ---------------------------------------------------------------------------------------------- the env
def test_env_sample_deals_replay_to_the_agents_observation():
    import ddz_env

    e = ddz_env.env()
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(20):
        e.step(int(rng.choice(e.unwrapped.legal_actions())))
    g = e.unwrapped.game
    assert not g.is_over
    for seat, agent in enumerate(e.possible_agents):
        deals = e.unwrapped.sample_deals(agent, 5, seed=1)
        assert len(deals) == 5 and all(isinstance(d, Deal) for d in deals)
        obs = e.observe(agent)
        for d in deals:
            r = replay_for_seat(d, g, seat)
            assert np.array_equal(observe_game(r, seat), obs["observation"])
            assert np.array_equal(np.flatnonzero(obs["action_mask"]),
                                  r.legal_actions() if seat == g.current_player else [])
    with pytest.raises(ValueError, match="player_7"):
        e.unwrapped.sample_deals("player_7", 2)
    with pytest.raises(RuntimeError, match="reset"):
        ddz_env.raw_env().sample_deals("player_0", 2)


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"n": 0}, "n must be a positive integer.*0"), ({"n": -2}, "-2"), ({"n": 2.5}, "2.5"), ({"n": "3"}, "'3'"),
    ({"seat": 3}, "seat must be 0, 1 or 2, got 3"), ({"seat": -1}, "-1"), ({"seat": 1.0}, "1.0"),
    ({"seed": "x"}, "seed.*'x'"), ({"seed": 1.5}, "1.5"), ({"prior": "uniform"}, "prior.*'uniform'"),
])
def test_bad_arguments_raise_one_line_value_errors_and_draw_nothing(kwargs, match):
    g = _position(POS_FREE, 35)
    before = (list(g.history), g.hands.copy())
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    args = {"game": g, "seat": 0, "n": 3, "seed": rng, "prior": "deck"} | kwargs
    for f in (sample_deals, sample_deal_arrays):
        with pytest.raises(ValueError, match=match) as e:
            f(**args)
        assert "\n" not in str(e.value)
    assert rng.bit_generator.state == state
    assert g.history == before[0] and np.array_equal(g.hands, before[1])


def test_a_finished_hand_and_bad_planes_are_refused():
    won = _position(POS_FREE, 35)
    for a in POS_FREE[1][len(won.history):]:
        won.step(a)
    while not won.is_over:
        won.step(int(won.legal_actions()[-1]))
    void = Game.from_deal(POS_FREE[0])
    for _ in range(3):
        void.step(BID_PASS)  # three passes: R4
    for g, what in ((won, "won by seat"), (void, "void")):
        with pytest.raises(ValueError, match=f"hand is over.*{what}"):
            sample_deals(g, 0, 1)
        with pytest.raises(ValueError, match="over"):
            sample_hidden(observe_game(g, 0), 1)
    with pytest.raises(TypeError, match="Game"):
        sample_deals("a game", 0, 1)
    obs = observe_game(_position(POS_FREE, 35), 0)
    with pytest.raises(ValueError, match="shape"):
        sample_hidden(obs[:5], 1)
    bad = obs.copy()
    bad[1, 0, 0] ^= 1  # the unseen plane disagrees with the cards
    with pytest.raises(ValueError, match="not one seat's observation"):
        sample_hidden(bad, 1)
    with pytest.raises(ValueError, match="0/1"):
        sample_hidden(obs * 2, 1)
    h = hidden_of_planes(obs)
    with pytest.raises(ValueError, match="no deal is consistent"):  # caps that no split meets
        draw_hidden(h._replace(cap=np.zeros_like(h.cap)), 1, np.random.default_rng(0))
