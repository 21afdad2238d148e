"""Whole hands through the AEC env: random full hands (conservation, rewards, dead steps), void hands
(R4), fixed deals, secret doubling (R5), the R19 worked example, no leak of hidden cards (R21)."""
from __future__ import annotations

import numpy as np
import pytest

import ddz_env
from ddz_env import Game, Phase, Rules, raw_env
from ddz_env.actions import (
    BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, REDOUBLE,
)
from ddz_env.cards import MAX_COUNTS, parse_cards, to_string
from ddz_env.game import IllegalActionError
from ddz_env.observation import CH_DOUBLING, observe_game
from ddz_env.scoring import hand_scores

from aec import AGENTS, R19_DEAL, a, assert_obs_equal, conserved, finish_dead_steps, obs_all, play_out, random_legal  # tests/helpers/aec.py



pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


# ---------------------------------------------------------------------------- random full hands
def test_random_hands_invariants():
    """200 seeded random hands: conservation, mask, termination, rewards == game.scores, dead steps."""
    rng = np.random.default_rng(3)
    e = raw_env()
    n_void = n_played = 0
    for seed in range(200):
        e.reset(seed=seed)
        g = e.game
        assert conserved(g)
        assert not any(e.terminations.values()) and not any(e.truncations.values())
        while True:
            obs, rew, term, trunc, info = e.last()
            assert not term and not trunc and rew == 0
            mask = obs["action_mask"]
            x = int(rng.choice(np.flatnonzero(mask)))
            assert mask[x] == 1 and g.is_legal(x)
            before = dict(e.terminations)
            assert not any(before.values()), "an agent terminated before the others"
            e.step(x)
            assert conserved(g)
            assert not any(e.truncations.values())
            if any(e.terminations.values()):
                assert all(e.terminations.values()), "agents did not all terminate on the same step"
                break
            assert all(r == 0 for r in e.rewards.values())
        assert g.is_over
        expected = [float(v) for v in g.scores]
        if g.void:
            n_void += 1
            assert expected == [0.0, 0.0, 0.0]
        else:
            n_played += 1
            assert g.hands[g.winner].sum() == 0
            np.testing.assert_array_equal(
                g.scores,
                hand_scores(g.bid, g.landlord, g.doubled(), g.redoubled, g.bombs, g.rockets, g.spring,
                            g.anti_spring, g.winner != g.landlord),
            )
            assert sum(expected) == 0
        assert [e.rewards[ag] for ag in AGENTS] == expected
        assert [e._cumulative_rewards[ag] for ag in AGENTS] == expected
        # the agent selected after the last step sees its reward through last()
        _, rew, term, trunc, _ = e.last()
        assert term and rew == e.rewards[e.agent_selection]
        # dead steps: each agent steps None once, reading its final reward
        seen = []
        while e.agents:
            ag = e.agent_selection
            _, rew, term, _, info = e.last()
            assert term and rew == expected[AGENTS.index(ag)]
            assert not e.observe(ag)["action_mask"].any()
            seen.append(ag)
            e.step(None)
        assert sorted(seen) == AGENTS
    assert n_played > 150 and n_void >= 1


def test_dead_step_rejects_an_action():
    e = raw_env()
    e.reset(seed=0)
    play_out(e, np.random.default_rng(0))
    with pytest.raises(ValueError):
        e.step(0)


def test_reset_after_a_hand_restores_everything():
    e = raw_env()
    e.reset(seed=0)
    play_out(e, np.random.default_rng(0))
    finish_dead_steps(e)
    assert e.agents == []
    e.reset(seed=1)
    assert e.agents == AGENTS
    assert not any(e.terminations.values()) and not any(e.truncations.values())
    assert all(v == 0 for v in e.rewards.values()) and all(v == 0 for v in e._cumulative_rewards.values())
    assert e.game.phase == Phase.BID and e.game.plays == [] and e.game.history == []


def _rewards_of_random_hands(n, rng, **kwargs):
    e = raw_env(**kwargs)
    out = []
    for seed in range(n):
        e.reset(seed=seed)
        play_out(e, rng)
        out.append((e.game, [e.rewards[ag] for ag in AGENTS], [e._cumulative_rewards[ag] for ag in AGENTS]))
    return out


def test_reward_win_mode():
    seen_lord_win = seen_farmer_win = False
    for g, rewards, cumulative in _rewards_of_random_hands(60, np.random.default_rng(4), reward="win"):
        assert rewards == cumulative
        if g.void:
            assert rewards == [0.0, 0.0, 0.0]
            continue
        lord_won = g.winner == g.landlord
        seen_lord_win |= lord_won
        seen_farmer_win |= not lord_won
        for s in range(3):
            on_winning_side = (s == g.landlord) == lord_won
            assert rewards[s] == (1.0 if on_winning_side else -1.0)
    assert seen_lord_win and seen_farmer_win


def test_reward_scale():
    for g, rewards, _ in _rewards_of_random_hands(40, np.random.default_rng(5), reward_scale=0.25):
        assert rewards == [0.25 * float(x) for x in g.scores]
    for g, rewards, _ in _rewards_of_random_hands(20, np.random.default_rng(5), reward="win", reward_scale=3.0):
        if not g.void:
            assert sorted(rewards) in ([-3.0, -3.0, 3.0], [-3.0, 3.0, 3.0])


def test_bad_constructor_options():
    with pytest.raises(ValueError):
        raw_env(reward="money")
    with pytest.raises(ValueError):
        raw_env(render_mode="rgb")


def test_bidding_off_fixed_landlord():
    for doubling, phase in ((True, Phase.DOUBLE), (False, Phase.PLAY)):
        e = raw_env(rules=Rules(bidding=False, doubling=doubling))
        for lord in range(3):
            e.reset(seed=lord, options={"landlord": lord})
            assert e.game.landlord == lord and e.game.bid == 1 and e.game.phase == phase
            assert all(e.infos[ag]["landlord"] == lord for ag in AGENTS)
            first = (lord + 1) % 3 if doubling else lord
            assert e.agent_selection == AGENTS[first]
            play_out(e, np.random.default_rng(lord))
            assert not e.game.void and sum(e.rewards.values()) == 0


# ---------------------------------------------------------------------------- void hands (R4)
def _void_hand(e):
    for _ in range(3):
        e.step(BID_PASS)


def test_r4_void_hand_terminates_with_zero_rewards():
    e = raw_env()
    e.reset(seed=3)
    first = e.agent_selection
    _void_hand(e)
    assert all(e.terminations.values())
    assert e.rewards == {ag: 0.0 for ag in AGENTS}
    assert e._cumulative_rewards == {ag: 0.0 for ag in AGENTS}
    for ag in AGENTS:
        assert e.infos[ag]["void"] == 1
        assert e.infos[ag]["landlord"] == -1 and e.infos[ag]["role"] == -1
        assert e.infos[ag]["phase"] == int(Phase.OVER)
        assert not e.observe(ag)["action_mask"].any()
    assert e.game.void and e.game.first_bidder == AGENTS.index(first)
    assert finish_dead_steps(e) == 3


@pytest.mark.parametrize("wrapped", [False, True])
def test_r4_next_hand_after_void_starts_with_next_bidder(wrapped):
    e = ddz_env.env() if wrapped else raw_env()
    e.reset(seed=11)
    fb = e.unwrapped.game.first_bidder
    deals = set()
    for k in range(1, 7):
        deals.add(e.unwrapped.game.hands.tobytes())
        _void_hand(e)
        finish_dead_steps(e)
        e.reset()  # no seed: R4
        assert e.unwrapped.game.first_bidder == (fb + k) % 3
        assert e.agent_selection == AGENTS[(fb + k) % 3]
        assert e.infos[AGENTS[0]]["void"] == 0
    assert len(deals) == 6, "a void hand must be dealt afresh"


def test_r4_next_bidder_only_after_a_void_hand():
    e = raw_env()
    e.reset(seed=11)
    fb = e.game.first_bidder
    _void_hand(e)
    finish_dead_steps(e)
    e.reset()
    assert e.game.first_bidder == (fb + 1) % 3
    # a hand that is not void: the next first bidder comes from the generator again, no rotation forced
    e.step(BID_3)
    play_out(e, np.random.default_rng(0))
    finish_dead_steps(e)
    firsts = set()
    for _ in range(30):
        e.reset()
        firsts.add(e.game.first_bidder)
        e.step(BID_3)
        play_out(e, np.random.default_rng(0))
    assert firsts == {0, 1, 2}


def test_r4_options_override_the_rotation():
    e = raw_env()
    e.reset(seed=5)
    fb = e.game.first_bidder
    _void_hand(e)
    e.reset(options={"first_bidder": fb})
    assert e.game.first_bidder == fb
    _void_hand(e)
    deal = {"hands": R19_DEAL["hands"], "bottom": R19_DEAL["bottom"], "first_bidder": 2}
    e.reset(options={"deal": deal})
    assert e.game.first_bidder == 2
    # the override consumed the pending rotation only for that hand; a void then rotates from 2
    _void_hand(e)
    e.reset()
    assert e.game.first_bidder == 0


# ---------------------------------------------------------------------------- fixed deals
def _record(e, rng, n_max=10**6):
    """Random hand from the current state: list of (action, observations of all agents before it)."""
    out = []
    while not e.terminations[e.agent_selection] and len(out) < n_max:
        o = obs_all(e)
        x = random_legal(e, rng)
        out.append((x, o, e.agent_selection))
        e.step(x)
    out.append((None, obs_all(e), e.agent_selection))
    return out


def _random_deal(seed):
    rng = np.random.default_rng(seed)
    deck = rng.permutation(np.repeat(np.arange(15), MAX_COUNTS))
    hands = [np.bincount(deck[17 * i:17 * (i + 1)], minlength=15).astype(np.int8) for i in range(3)]
    bottom = np.bincount(deck[51:], minlength=15).astype(np.int8)
    return hands, bottom


@pytest.mark.parametrize("seed", range(6))
def test_fixed_deal_replays_identically(seed):
    hands, bottom = _random_deal(seed)
    deal = {"hands": [to_string(h) for h in hands], "bottom": to_string(bottom), "first_bidder": seed % 3}
    e = raw_env()
    e.reset(options={"deal": deal})
    g = e.game
    np.testing.assert_array_equal(g.initial_hands, np.stack(hands))
    np.testing.assert_array_equal(g.bottom, bottom)
    assert g.first_bidder == seed % 3 and e.agent_selection == AGENTS[seed % 3]
    run1 = _record(e, np.random.default_rng(100 + seed))
    final1 = (dict(e.rewards), e.game.scores.tolist())
    # replay the same actions, deal given as count vectors, with a seed that must not matter
    deal2 = {"hands": [h.copy() for h in hands], "bottom": bottom.copy(), "first_bidder": seed % 3}
    e2 = raw_env()
    e2.reset(seed=999, options={"deal": deal2})
    for x, o, ag in run1:
        assert e2.agent_selection == ag
        assert_obs_equal(o, obs_all(e2))
        if x is not None:
            e2.step(x)
    assert (dict(e2.rewards), e2.game.scores.tolist()) == final1
    # and a third time on the same env object
    e.reset(options={"deal": deal})
    run3 = _record(e, np.random.default_rng(100 + seed))
    assert [x for x, _, _ in run3] == [x for x, _, _ in run1]
    for (_, o1, _), (_, o3, _) in zip(run1, run3):
        assert_obs_equal(o1, o3)


@pytest.mark.parametrize(
    "deal",
    [
        {"hands": ["333444555666777AA", "3456789TJQK2222BR"], "bottom": "KAA", "first_bidder": 0},  # 2 hands
        {"hands": ["333444555666777A", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "bottom": "KAAA", "first_bidder": 0},
        {"hands": ["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "bottom": "KKA", "first_bidder": 0},
        {"hands": ["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "bottom": "KAA", "first_bidder": 3},
        {"hands": ["33333444555666777", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "bottom": "KAA", "first_bidder": 0},
        {"hands": ["333444555666777AX", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "bottom": "KAA", "first_bidder": 0},
        {"hands": ["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "first_bidder": 0},  # no bottom
        {"bottom": "KAA", "first_bidder": 0},  # no hands
        "333444555666777AA",  # not a dict
    ],
)
def test_bad_deal_raises_value_error(deal):
    e = raw_env()
    with pytest.raises(ValueError):
        e.reset(options={"deal": deal})


def test_fixed_deal_with_bidding_off_uses_landlord_option():
    e = raw_env(rules="bidding=false")
    e.reset(options={"deal": R19_DEAL, "landlord": 2})
    assert e.game.landlord == 2 and e.game.bid == 1
    np.testing.assert_array_equal(e.game.hands[1], parse_cards(R19_DEAL["hands"][1]))


# ---------------------------------------------------------------------------- R5: secret doubling
def _to_doubling(e, seed):
    """Fixed random deal; seat (seed % 3) bids 3. Returns (landlord, first farmer, second farmer)."""
    hands, bottom = _random_deal(seed)
    lord = seed % 3
    e.reset(options={"deal": {"hands": hands, "bottom": bottom, "first_bidder": lord}})
    e.step(BID_3)
    assert e.game.phase == Phase.DOUBLE
    return lord, (lord + 1) % 3, (lord + 2) % 3


@pytest.mark.parametrize("seed", range(6))
def test_r5_first_farmers_choice_is_secret_through_env(seed):
    views = {}
    for choice in (NO_DOUBLE, DOUBLE):
        e = raw_env()
        lord, f1, f2 = _to_doubling(e, seed)
        assert e.agent_selection == AGENTS[f1]
        e.step(choice)
        assert e.agent_selection == AGENTS[f2]
        views[choice] = (obs_all(e), {k: dict(v) for k, v in e.infos.items()})
    o_no, o_yes = views[NO_DOUBLE][0], views[DOUBLE][0]
    for seat in (lord, f2):
        ag = AGENTS[seat]
        np.testing.assert_array_equal(o_no[ag]["observation"], o_yes[ag]["observation"], err_msg=ag)
        np.testing.assert_array_equal(o_no[ag]["action_mask"], o_yes[ag]["action_mask"])
        assert not o_yes[ag]["observation"][CH_DOUBLING].any()
    assert views[NO_DOUBLE][1] == views[DOUBLE][1]  # infos do not tell either
    # the first farmer itself sees its own choice at once
    ag1 = AGENTS[f1]
    assert o_no[ag1]["observation"][CH_DOUBLING, 0, 0] == 1 and o_no[ag1]["observation"][CH_DOUBLING, 0, 1] == 0
    assert o_yes[ag1]["observation"][CH_DOUBLING, 0, 1] == 1 and o_yes[ag1]["observation"][CH_DOUBLING, 0, 0] == 0


@pytest.mark.parametrize("d1,d2", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_r5_both_choices_revealed_to_all_once_made(d1, d2):
    e = raw_env()
    lord, f1, f2 = _to_doubling(e, 3)
    e.step(DOUBLE if d1 else NO_DOUBLE)
    e.step(DOUBLE if d2 else NO_DOUBLE)
    expected_phase = Phase.REDOUBLE if (d1 or d2) else Phase.PLAY
    assert e.game.phase == expected_phase
    assert e.agent_selection == AGENTS[lord]
    for seat in range(3):
        ch = e.observe(AGENTS[seat])["observation"][CH_DOUBLING]
        for farmer, d in ((f1, d1), (f2, d2)):
            r = (farmer - seat) % 3
            assert ch[r, d] == 1 and ch[r, 1 - d] == 0, (seat, farmer)
        assert not ch[(lord - seat) % 3, :2].any()  # the landlord never doubles
        assert not ch[3].any()  # no redouble choice yet
    if d1 or d2:
        e.step(REDOUBLE)
        for seat in range(3):
            ch = e.observe(AGENTS[seat])["observation"][CH_DOUBLING]
            assert ch[3, 1] == 1 and ch[3, 0] == 0


def test_r6_no_redouble_phase_unless_someone_doubled():
    e = raw_env()
    lord, f1, f2 = _to_doubling(e, 4)
    e.step(NO_DOUBLE)
    e.step(NO_DOUBLE)
    assert e.game.phase == Phase.PLAY and e.agent_selection == AGENTS[lord]
    assert not e.observe(AGENTS[lord])["action_mask"][[NO_REDOUBLE, REDOUBLE]].any()


# ---------------------------------------------------------------------------- R19 through the env
def test_r19_rulebook_example_through_env():
    """Bid 3, farmer 1 doubles, farmer 2 not, landlord redoubles, one bomb and one rocket,
    the farmers win: farmer 1 +48, farmer 2 +12, landlord -60."""
    e = raw_env()
    e.reset(options={"deal": R19_DEAL})
    script = [
        "bid 3",              # seat 0 is landlord at 3
        "double",             # seat 1 (farmer 1) doubles
        "no double",          # seat 2 (farmer 2) does not
        "redouble",           # landlord redoubles
        "3", "pass", "8",     # landlord leads 3, farmer 1 passes, farmer 2 plays 8
        "A",                  # landlord's second move (so no anti-spring)
        "2222", "pass", "pass",   # farmer 1 bombs
        "BR", "pass", "pass",     # farmer 1 leads the rocket
        "3456789TJQK",            # and goes out
    ]
    for i, x in enumerate(script):
        assert not e.terminations[e.agent_selection], i
        e.step(a(x))
    g = e.game
    assert g.is_over and g.winner == 1 and g.landlord == 0
    assert (g.bid, g.bombs, g.rockets, g.spring, g.anti_spring, g.redoubled) == (3, 1, 1, False, False, True)
    assert g.scores.tolist() == [-60, 48, 12]
    assert [e.rewards[ag] for ag in AGENTS] == [-60.0, 48.0, 12.0]
    assert all(e.terminations.values())
    seen = {}
    while e.agents:
        ag = e.agent_selection
        seen[ag] = e.last()[1]
        e.step(None)
    assert seen == {"player_0": -60.0, "player_1": 48.0, "player_2": 12.0}


def test_r19_example_win_mode_and_scale():
    e = raw_env(reward="win", reward_scale=2.0)
    e.reset(options={"deal": R19_DEAL})
    for x in ["bid 3", "double", "no double", "redouble", "3", "pass", "8", "A", "2222", "pass", "pass",
              "BR", "pass", "pass", "3456789TJQK"]:
        e.step(a(x))
    assert [e.rewards[ag] for ag in AGENTS] == [-2.0, 2.0, 2.0]


def test_r18_anti_spring_through_env():
    # as the example, but the landlord makes only its opening move: anti-spring doubles everything
    e = raw_env()
    e.reset(options={"deal": R19_DEAL})
    for x in ["bid 3", "double", "no double", "redouble", "3", "2222", "pass", "pass",
              "BR", "pass", "pass", "3456789TJQK"]:
        e.step(a(x))
    g = e.game
    assert g.anti_spring and not g.spring
    assert [e.rewards[ag] for ag in AGENTS] == [-120.0, 96.0, 24.0]


def test_r19_rewards_equal_hand_scores_and_sum_to_zero():
    rng = np.random.default_rng(8)
    e = raw_env(reward_scale=1.0)
    multipliers = set()
    for seed in range(80):
        e.reset(seed=seed)
        play_out(e, rng)
        g = e.game
        if g.void:
            continue
        farmers = [s for s in range(3) if s != g.landlord]
        sgn = 1 if g.winner != g.landlord else -1
        exp = np.zeros(3, dtype=np.int64)
        for f in farmers:
            d = int(g.double_choice[f] == 1)
            n = g.bombs + g.rockets + int(g.spring) + int(g.anti_spring) + d + d * int(g.redoubled)
            exp[f] = g.bid * sgn * 2 ** n
            multipliers.add(n)
        exp[g.landlord] = -exp[farmers].sum()
        assert [e.rewards[ag] for ag in AGENTS] == [float(x) for x in exp]
        assert sum(e.rewards.values()) == 0
    assert len(multipliers) >= 3


# ---------------------------------------------------------------------------- R21: no leak of hidden cards
def _alternative_world(g: Game, seat: int, rng) -> Game | None:
    """Another deal that differs from ``g``'s only in cards ``seat`` cannot see, with the same
    public history replayed. None if the redistribution happens to equal the original or a replay
    move becomes illegal (R13's kicker rule depends on the hand)."""
    others = [s for s in range(3) if s != seat]
    lord = g.landlord
    pool = g.hands[others].sum(axis=0).astype(np.int64)
    sizes = [int(g.hands[s].sum()) for s in others]
    fixed = {s: np.zeros(15, dtype=np.int64) for s in others}
    if not g.bottom_revealed:
        pool = pool + g.bottom
        sizes.append(3)
    elif lord in others:
        # the landlord must still hold the bottom cards it is known to hold
        fixed[lord] = np.maximum(g.bottom - g.played[lord], 0).astype(np.int64)
        pool = pool - fixed[lord]
    cards = rng.permutation(np.repeat(np.arange(15), pool))
    new = []
    pos = 0
    for k, s in enumerate(others):
        n = sizes[k] - int(fixed[s].sum())
        new.append(np.bincount(cards[pos:pos + n], minlength=15) + fixed[s])
        pos += n
    if not g.bottom_revealed:
        new_bottom = np.bincount(cards[pos:], minlength=15)
    else:
        new_bottom = g.bottom.astype(np.int64)
    hands_now = g.hands.astype(np.int64).copy()
    for k, s in enumerate(others):
        hands_now[s] = new[k]
    if (hands_now == g.hands).all() and (new_bottom == g.bottom).all():
        return None
    initial = hands_now + g.played
    if g.bottom_revealed:
        initial[lord] -= g.bottom
    assert (initial >= 0).all()
    kwargs = {"rules": g.rules}
    if not g.rules.bidding:  # a fixed landlord
        kwargs["landlord"] = g.landlord
    alt = Game(list(initial), new_bottom, g.first_bidder, **kwargs)
    try:
        for s, x in g.history:
            alt.step(x, seat=s)
    except IllegalActionError:
        return None
    return alt


@pytest.mark.parametrize("opts", [{}, {"rules": "bidding=false"}])
def test_r21_observation_does_not_depend_on_hidden_cards(opts):
    rng = np.random.default_rng(9)
    e = raw_env(**opts)
    compared = {ph: 0 for ph in Phase}
    for seed in range(60):
        e.reset(seed=seed)
        g = e.game
        stop = int(rng.choice([0, 1, 2, 3, 4, 5, 200])) if seed % 3 == 0 else int(rng.integers(0, 60))
        n = 0
        while not g.is_over and n < stop:
            e.step(random_legal(e, rng))
            n += 1
        for seat in range(3):
            for _ in range(2):
                alt = _alternative_world(g, seat, rng)
                if alt is None:
                    continue
                assert alt.phase == g.phase and alt.current_player == g.current_player
                np.testing.assert_array_equal(alt.hands[seat], g.hands[seat])
                np.testing.assert_array_equal(observe_game(alt, seat), observe_game(g, seat),
                                              err_msg=f"seed {seed} seat {seat} phase {g.phase.name}")
                compared[g.phase] += 1
    phases = (Phase.DOUBLE, Phase.PLAY, Phase.OVER) + (() if opts else (Phase.BID, Phase.REDOUBLE))
    assert all(compared[ph] > 0 for ph in phases), compared
    assert compared[Phase.PLAY] > 50


def test_r21_alternative_worlds_differ_for_the_others():
    # guard against a vacuous R21 test: the hidden cards really change, and the others' views do too
    rng = np.random.default_rng(10)
    g = Game.deal(0)
    g.step(BID_3)
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    differs = 0
    for _ in range(10):
        alt = _alternative_world(g, 0, rng)
        if alt is None:
            continue
        assert not (alt.hands == g.hands).all()
        differs += int(any((observe_game(alt, s) != observe_game(g, s)).any() for s in (1, 2)))
    assert differs > 0


def test_r21_swap_between_the_other_hands_mid_play():
    """The direct form: swap single cards between the two other players (and the bottom
    before it is revealed) in a copy of the live game; the observer's planes are bit-identical."""
    rng = np.random.default_rng(11)
    e = raw_env()
    n_checked = 0
    for seed in range(40):
        e.reset(seed=seed)
        stop = int(rng.integers(0, 50))
        for _ in range(stop):
            if e.game.is_over:
                break
            e.step(random_legal(e, rng))
        g = e.game
        for seat in range(3):
            other = [s for s in range(3) if s != seat]
            containers = [("hand", s) for s in other] + ([("bottom", None)] if not g.bottom_revealed else [])
            c = g.copy()

            def arr(kind, s, c=c):
                return c.hands[s] if kind == "hand" else c.bottom

            for _ in range(5):
                i, j = rng.choice(len(containers), size=2, replace=False)
                A, B = arr(*containers[i]), arr(*containers[j])
                ra, rb = np.flatnonzero(A), np.flatnonzero(B)
                if ra.size == 0 or rb.size == 0:
                    continue
                x, y = int(rng.choice(ra)), int(rng.choice(rb))
                if g.bottom_revealed and g.landlord in other:
                    # keep the landlord's known bottom cards in its hand
                    lord_arr = c.hands[g.landlord]
                    known = np.maximum(g.bottom - g.played[g.landlord], 0)
                    give = x if A is lord_arr else (y if B is lord_arr else None)
                    if give is not None and lord_arr[give] - 1 < known[give]:
                        continue
                A[x] -= 1
                B[x] += 1
                B[y] -= 1
                A[y] += 1
            np.testing.assert_array_equal(observe_game(c, seat), observe_game(g, seat))
            n_checked += 1
    assert n_checked == 120


def test_env_observation_is_observe_game():
    rng = np.random.default_rng(12)
    e = raw_env()

    def check(env):
        for i, ag in enumerate(AGENTS):
            np.testing.assert_array_equal(env.observe(ag)["observation"], observe_game(env.game, i))

    for seed in range(10):
        e.reset(seed=seed)
        play_out(e, rng, on_step=check)
        check(e)
