"""Tests of the PettingZoo AEC environment (``ddz_env.env``): API conformance, the
registry, spaces, the action mask, whole random hands (conservation, rewards, dead
steps), void hands (R4), infos, illegal actions, fixed deals, doubling secrecy (R5),
the R19 worked example, no leak of hidden cards (R21) and rendering.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gymnasium import spaces

import ddz_env
import pettingzoo
from ddz_env import Game, Phase, Rules, raw_env
from ddz_env.actions import (
    BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, REDOUBLE, action_from_string,
)
from ddz_env.cards import MAX_COUNTS, parse_cards, to_string
from ddz_env.game import IllegalActionError
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES
from ddz_env.observation import CH_DOUBLING, observe_game
from ddz_env.scoring import hand_scores
from pettingzoo.test import api_test, seed_test

AGENTS = ["player_0", "player_1", "player_2"]

# The R19 worked example as a fixed deal (see test_r19_rulebook_example_through_env).
# Seat 0 bids 3 and is landlord; seat 1 (farmer 1) holds the bomb 2222, the rocket and a
# straight 3..K; seat 2 (farmer 2) holds the rest.
R19_DEAL = {
    "hands": ["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"],
    "bottom": "KAA",
    "first_bidder": 0,
}


@pytest.fixture(autouse=True)
def _quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---------------------------------------------------------------------------- helpers
def a(text: str) -> int:
    return action_from_string(text)


def random_legal(e, rng) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return int(rng.choice(np.flatnonzero(mask)))


def play_out(e, rng, on_step=None) -> list[int]:
    """Random legal actions until the hand ends (all agents terminated); returns the actions."""
    actions = []
    while not e.terminations[e.agent_selection]:
        if on_step is not None:
            on_step(e)
        x = random_legal(e, rng)
        actions.append(x)
        e.step(x)
    return actions


def finish_dead_steps(e) -> int:
    n = 0
    while e.agents:
        assert n < 3
        agent = e.agent_selection
        assert e.terminations[agent] or e.truncations[agent]
        e.step(None)
        n += 1
    return n


def obs_all(e) -> dict:
    return {ag: {k: v.copy() for k, v in e.observe(ag).items()} for ag in e.agents}


def assert_obs_equal(o1: dict, o2: dict) -> None:
    assert o1.keys() == o2.keys()
    for ag in o1:
        for k in ("observation", "action_mask"):
            np.testing.assert_array_equal(o1[ag][k], o2[ag][k], err_msg=f"{ag} {k}")


def conserved(g: Game) -> bool:
    total = g.hands.sum(axis=0) + g.played.sum(axis=0) + (0 if g.bottom_revealed else g.bottom)
    return bool((total == MAX_COUNTS).all())


# ---------------------------------------------------------------------------- PettingZoo API
def test_api_test_wrapped_env():
    api_test(ddz_env.env(), num_cycles=1000)


def test_api_test_raw_env():
    api_test(raw_env(), num_cycles=1000)


def test_api_test_without_bidding_and_doubling():
    api_test(raw_env(rules="douzero"), num_cycles=1000)
    api_test(ddz_env.env(rules="douzero"), num_cycles=1000)


def test_api_test_over_many_hands():
    # api_test plays one hand; run it after seeding into different deals too
    for seed in range(5):
        e = ddz_env.env()
        e.reset(seed=seed)
        api_test(e, num_cycles=1000)


def test_seed_test():
    seed_test(ddz_env.env, num_cycles=500)
    seed_test(lambda: raw_env(rules="bidding=false"), num_cycles=500)


def test_seeded_reset_is_reproducible_regardless_of_history():
    e1, e2 = raw_env(), raw_env()
    e1.reset(seed=7)
    e2.reset(seed=123)
    play_out(e2, np.random.default_rng(0))
    e2.reset(seed=7)
    assert_obs_equal(obs_all(e1), obs_all(e2))
    assert e1.agent_selection == e2.agent_selection
    np.testing.assert_array_equal(e1.unwrapped.game.hands, e2.unwrapped.game.hands)
    np.testing.assert_array_equal(e1.unwrapped.game.bottom, e2.unwrapped.game.bottom)


def test_different_seeds_deal_differently():
    deals = set()
    for seed in range(10):
        e = raw_env()
        e.reset(seed=seed)
        deals.add(e.game.hands.tobytes() + e.game.bottom.tobytes())
    assert len(deals) == 10


# ---------------------------------------------------------------------------- registry, metadata, spaces
@pytest.mark.parametrize("env_id", ["ddz/dou_dizhu-v0", "ddz/dou_dizhu_v0"])
def test_pettingzoo_make(env_id):
    e = pettingzoo.make("aec", env_id)
    assert isinstance(e.unwrapped, raw_env)
    assert e.metadata["name"] == "dou_dizhu_v0"
    e.reset(seed=0)
    assert e.agent_selection in AGENTS
    play_out(e, np.random.default_rng(0))
    finish_dead_steps(e)
    assert e.agents == []


def test_env_id_constant():
    assert ddz_env.ENV_ID == "ddz/dou_dizhu-v0"


def test_metadata():
    for e in (raw_env(), ddz_env.env()):
        md = e.metadata
        assert md["name"] == "dou_dizhu_v0"
        assert md["is_parallelizable"] is False
        assert set(md["render_modes"]) == {"ansi", "human"}


def test_agents():
    for e in (raw_env(), ddz_env.env()):
        assert e.possible_agents == AGENTS
        e.reset(seed=0)
        assert e.agents == AGENTS
        assert e.num_agents == 3 and e.max_num_agents == 3


@pytest.mark.parametrize("factory", [raw_env, ddz_env.env])
def test_spaces(factory):
    e = factory()
    e.reset(seed=0)
    first = e.observation_space("player_0")
    for ag in AGENTS:
        for _ in range(2):
            assert e.observation_space(ag) is first
            assert e.action_space(ag) is e.action_space("player_0")
    assert isinstance(first, spaces.Dict)
    assert set(first.spaces) == {"observation", "action_mask"}
    ob, am = first["observation"], first["action_mask"]
    assert isinstance(ob, spaces.Box) and ob.shape == (29, 4, 15) and ob.dtype == np.int8
    assert isinstance(am, spaces.Box) and am.shape == (24648,) and am.dtype == np.int8
    assert ob.low.min() == 0 and ob.high.max() == 1
    act = e.action_space("player_1")
    assert isinstance(act, spaces.Discrete) and act.n == 24648 == NUM_ACTIONS
    for ag in AGENTS:
        o = e.observe(ag)
        assert first.contains(o), ag


def test_action_id_layout():
    assert NUM_MOVES == 24640
    assert (BID_PASS, BID_1, BID_2, BID_3) == (24640, 24641, 24642, 24643)
    assert (NO_DOUBLE, DOUBLE, NO_REDOUBLE, REDOUBLE) == (24644, 24645, 24646, 24647)
    assert a("pass") == 0


def test_the_doc_page_and_readme_tables_come_from_the_one_source():
    """Issue 23: the action-id table is actions.ACTION_TABLE (contiguous, every id once, the phase
    tuples in it) and the planes' is observation.LAYOUT; the env's doc page, actions' doc and
    README hold the tables they generate, not hand-written copies."""
    import importlib
    from pathlib import Path

    from ddz_env import actions, observation

    env_module = importlib.import_module("ddz_env.env")  # (the package's attribute `env` is the function)

    rows = actions.ACTION_TABLE
    assert rows[0][0] == 0 and rows[-1][1] == NUM_ACTIONS - 1
    assert all(b[0] == a[1] + 1 for a, b in zip(rows, rows[1:]))
    assert [(r[0], r[1]) for r in rows[2:]] == [(x[0], x[-1]) for x in
                                                (actions.BID_ACTIONS, actions.DOUBLE_ACTIONS, actions.REDOUBLE_ACTIONS)]
    assert actions.BID_ACTIONS + actions.DOUBLE_ACTIONS + actions.REDOUBLE_ACTIONS == tuple(
        range(actions.FIRST_CHOICE, actions.FIRST_CHOICE + actions.NUM_CHOICES))
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    doc = env_module.__doc__
    assert actions.action_table("markdown") in doc and actions.action_table("markdown") in readme, (
        "a copy of the action table differs from actions.ACTION_TABLE: paste action_table()")
    assert actions.action_table("rst") in actions.__doc__
    assert observation.layout_table("markdown") in doc
    assert "{" not in doc.split("## Options")[0], "a table placeholder of the doc page was not filled"
    assert doc.count("| 24640 .. 24643 |") == 1 and doc.count("| 23, 24, 25 |") == 1  # one table each, no old copy


# ---------------------------------------------------------------------------- the action mask
def _check_masks(e) -> None:
    g = e.unwrapped.game
    current = e.agent_selection
    for ag in e.agents:
        mask = e.observe(ag)["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
        if ag == current and not e.terminations[ag]:
            assert mask.any(), "the agent to act has an all-zero mask"
            np.testing.assert_array_equal(mask.astype(bool), g.legal_action_mask())
            np.testing.assert_array_equal(np.flatnonzero(mask), e.unwrapped.legal_actions())
        else:
            assert not mask.any(), f"{ag} is not on turn but has legal actions"
            assert e.unwrapped.legal_actions(ag).size == 0


@pytest.mark.parametrize("opts", [{}, {"rules": "bidding=false"}, {"rules": "doubling=false"}, {"rules": "douzero"}])
def test_mask_matches_rules_core_every_step(opts):
    rng = np.random.default_rng(1)
    e = raw_env(**opts)
    for seed in range(40):
        e.reset(seed=seed)
        play_out(e, rng, on_step=_check_masks)
        assert all(e.terminations.values())
        for ag in AGENTS:
            assert not e.observe(ag)["action_mask"].any(), "mask not all zeros after the hand ended"
        _check_masks(e)


def test_agent_selection_follows_game():
    rng = np.random.default_rng(2)
    e = raw_env()

    def check(env):
        assert env.agent_selection == AGENTS[env.game.current_player]

    for seed in range(20):
        e.reset(seed=seed)
        play_out(e, rng, on_step=check)


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
        raw_env(render_mode="rgb_array")


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


# ---------------------------------------------------------------------------- infos
def _check_infos(e) -> None:
    g = e.unwrapped.game
    for _i, ag in enumerate(e.agents):
        info = e.infos[ag]
        assert set(info) == {"phase", "landlord", "role", "void", "seat"}
        for k, v in info.items():
            assert type(v) in (int, float), f"info {k} of {ag} is {type(v).__name__}"
        seat = AGENTS.index(ag)
        assert info["seat"] == seat
        assert info["phase"] == int(g.phase)
        assert info["landlord"] == g.landlord
        assert info["role"] == (-1 if g.landlord < 0 else (seat - g.landlord) % 3)
        assert info["void"] == int(g.void)


def test_infos_numbers_only_every_step():
    rng = np.random.default_rng(6)
    e = raw_env()
    for seed in range(30):
        e.reset(seed=seed)
        _check_infos(e)
        play_out(e, rng, on_step=_check_infos)
        _check_infos(e)
        _, _, _, _, info = e.last()
        assert info is e.infos[e.agent_selection]


# ---------------------------------------------------------------------------- illegal actions
def _snapshot(e):
    g = e.game
    return (obs_all(e), e.agent_selection, {k: dict(v) for k, v in e.infos.items()}, dict(e.rewards),
            dict(e.terminations), len(g.history), g.hands.copy(), g.phase)


def _assert_same_snapshot(s1, s2):
    assert_obs_equal(s1[0], s2[0])
    assert s1[1:6] == s2[1:6]
    np.testing.assert_array_equal(s1[6], s2[6])
    assert s1[7] == s2[7]


def _illegal_message_ok(msg: str, action: int, phase: str, n_legal: int) -> None:
    assert re.search(rf"\b{action}\b", msg), msg
    assert phase in msg, msg
    assert re.search(rf"\b{n_legal}\b legal", msg), msg


def test_raw_env_illegal_action_raises_and_keeps_state():
    rng = np.random.default_rng(7)
    e = raw_env()
    checked = {ph: 0 for ph in ("BID", "DOUBLE", "REDOUBLE", "PLAY")}

    def try_illegal(env):
        g = env.game
        legal = set(g.legal_actions().tolist())
        candidates = [0, 1, 24638, 24639, BID_PASS, BID_3, DOUBLE, REDOUBLE, 5000]
        for x in candidates:
            if x in legal:
                continue
            snap = _snapshot(env)
            with pytest.raises(ValueError) as info:
                env.step(x)
            _illegal_message_ok(str(info.value), x, g.phase.name, len(legal))
            _assert_same_snapshot(snap, _snapshot(env))
            checked[g.phase.name] += 1
            break

    for seed in range(12):
        e.reset(seed=seed)
        play_out(e, rng, on_step=try_illegal)
    assert all(n > 0 for n in checked.values()), checked


def test_raw_env_illegal_bid_message():
    e = raw_env()
    e.reset(seed=0, options={"first_bidder": 0})
    e.step(BID_2)
    snap = _snapshot(e)
    with pytest.raises(ValueError, match=r"24641.*BID.*\b2 legal"):
        e.step(BID_1)  # not higher than 2: legal are pass and bid 3
    _assert_same_snapshot(snap, _snapshot(e))


def test_raw_env_pass_on_lead_is_illegal():
    e = raw_env()
    e.reset(options={"deal": R19_DEAL})
    for x in ("bid 3", "double", "no double", "redouble"):
        e.step(a(x))
    n = len(e.legal_actions())
    snap = _snapshot(e)
    with pytest.raises(ValueError) as info:
        e.step(0)
    _illegal_message_ok(str(info.value), 0, "PLAY", n)
    _assert_same_snapshot(snap, _snapshot(e))
    with pytest.raises(ValueError):
        e.step(a("BR"))  # the landlord has no rocket
    _assert_same_snapshot(snap, _snapshot(e))
    e.step(a("3"))  # still playable afterwards


def test_raw_env_out_of_range_and_non_integer_actions():
    e = raw_env()
    e.reset(seed=0)
    snap = _snapshot(e)
    for x in (NUM_ACTIONS, -1, 10**9, "bid 1", None):
        with pytest.raises(ValueError):
            e.step(x)
        _assert_same_snapshot(snap, _snapshot(e))


@pytest.mark.parametrize("phase_steps", [0, 1, 5])
def test_wrapped_env_illegal_action_terminates_offender_with_minus_one(phase_steps):
    e = ddz_env.env()
    e.reset(options={"deal": R19_DEAL})
    script = ["bid 3", "double", "no double", "redouble", "3"]
    for x in script[:phase_steps]:
        e.step(a(x))
    offender = e.agent_selection
    mask = e.observe(offender)["action_mask"]
    illegal = next(x for x in (BID_1, 0, 24639, DOUBLE) if not mask[x])
    e.step(illegal)
    assert all(e.terminations.values())
    for ag in AGENTS:
        assert e._cumulative_rewards[ag] == (-1.0 if ag == offender else 0.0)
    # everyone reads its reward through last() while stepping out
    seen = {}
    while e.agents:
        ag = e.agent_selection
        _, rew, term, trunc, _ = e.last()
        assert term or trunc
        seen[ag] = rew
        e.step(None)
    assert seen == {ag: (-1.0 if ag == offender else 0.0) for ag in AGENTS}


def test_wrapped_env_out_of_space_action_asserts():
    e = ddz_env.env()
    e.reset(seed=0)
    with pytest.raises(AssertionError):
        e.step(NUM_ACTIONS)


def test_wrapped_env_requires_reset():
    e = ddz_env.env()
    with pytest.raises(Exception):  # noqa: B017 (whichever error PettingZoo's wrappers raise first)
        e.step(BID_PASS)


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


# ---------------------------------------------------------------------------- render
def test_render_ansi_hides_hands():
    e = raw_env(render_mode="ansi")
    e.reset(options={"deal": R19_DEAL})
    text = e.render()
    assert isinstance(text, str)
    for s in range(3):
        assert f"seat {s}" in text
    for h in R19_DEAL["hands"]:
        assert to_string(parse_cards(h)) not in text
    assert "KAA" not in text and "bottom" not in text  # the bottom is hidden before R7
    e.step(a("bid 3"))
    e.step(a("double"))
    assert "doubled" not in e.render()  # R5: not before both chose
    e.step(a("no double"))
    assert "doubled" in e.render()
    e.step(a("redouble"))
    text = e.render()
    assert "KAA" in text  # revealed bottom
    assert to_string(e.game.hands[0]) not in text


def test_render_ansi_spectator_shows_hands():
    e = raw_env(render_mode="ansi", spectator=True)
    e.reset(options={"deal": R19_DEAL})
    text = e.render()
    for s in range(3):
        assert f"seat {s}" in text
        assert to_string(e.game.hands[s]) in text
    assert "KAA" in text


def test_render_human_prints(capsys):
    e = raw_env(render_mode="human")
    e.reset(options={"deal": R19_DEAL})
    capsys.readouterr()
    assert e.render() is None
    out = capsys.readouterr().out
    assert all(f"seat {s}" in out for s in range(3))
    e.step(a("bid 3"))  # human mode renders on every step
    out = capsys.readouterr().out
    assert "seat 0" in out and "landlord" in out


def test_render_wrapped_and_without_mode():
    e = ddz_env.env(render_mode="ansi")
    e.reset(seed=0)
    assert isinstance(e.render(), str)
    e = raw_env()
    e.reset(seed=0)
    assert e.render() is None


def test_render_after_game_over_shows_scores():
    e = raw_env(render_mode="ansi")
    e.reset(options={"deal": R19_DEAL})
    for x in ["bid 3", "double", "no double", "redouble", "3", "pass", "8", "A", "2222", "pass", "pass",
              "BR", "pass", "pass", "3456789TJQK"]:
        e.step(a(x))
    text = e.render()
    assert "-60" in text and "48" in text


# ---------------------------------------------------------------------------- helpers for agents
def test_default_action_is_legal_and_r20():
    rng = np.random.default_rng(13)
    e = raw_env()

    def check(env):
        d = env.default_action()
        g = env.game
        assert g.is_legal(d)
        if g.phase == Phase.BID:
            assert d == BID_PASS
        elif g.phase == Phase.DOUBLE:
            assert d == NO_DOUBLE
        elif g.phase == Phase.REDOUBLE:
            assert d == NO_REDOUBLE
        elif g.last_move:
            assert d == 0
        else:
            lowest = int(np.flatnonzero(g.hands[g.current_player])[0])
            np.testing.assert_array_equal(MOVE_COUNTS[d], np.eye(15, dtype=np.int8)[lowest])

    for seed in range(10):
        e.reset(seed=seed)
        play_out(e, rng, on_step=check)


def test_action_string():
    assert raw_env.action_string(0) == "pass"
    assert raw_env.action_string(BID_2) == "bid 2"
    assert raw_env.action_string(DOUBLE) == "double"
    assert raw_env.action_string(a("BR")) == "BR"


def test_first_bidder_option_does_not_change_the_seeded_deal():
    e1, e2 = raw_env(), raw_env()
    e1.reset(seed=21)
    for fb in range(3):
        e2.reset(seed=21, options={"first_bidder": fb})
        np.testing.assert_array_equal(e1.game.hands, e2.game.hands)
        np.testing.assert_array_equal(e1.game.bottom, e2.game.bottom)
        assert e2.game.first_bidder == fb and e2.agent_selection == AGENTS[fb]


def test_pickle_keeps_options():
    import pickle

    e = pickle.loads(pickle.dumps(raw_env(reward="win", reward_scale=2.0, rules="douzero")))
    assert (e.reward_kind, e.reward_scale, e.rules) == ("win", 2.0, Rules(bidding=False, doubling=False))
    e.reset(seed=0)
    assert e.game.phase == Phase.PLAY


# ---------------------------------------------------------------------------- input validation (issue 12)
GOOD_DEAL = {"hands": list(R19_DEAL["hands"]), "bottom": R19_DEAL["bottom"], "first_bidder": 0}


def _reset_state(e) -> dict:
    return {"rng": e._rng.bit_generator.state, "game": e.game, "next_fb": e._next_first_bidder,
            "agents": list(e.agents), "selection": e.agent_selection}


@pytest.mark.parametrize("seed", [None, 99])
@pytest.mark.parametrize("options,error,named", [
    ({"first_bidder": 7}, ValueError, "7"),
    ({"first_bidder": 1.5}, ValueError, "1.5"),
    ({"first_bidder": "0"}, ValueError, "'0'"),
    ({"deal": {"hands": ["333"], "bottom": "QKA"}}, ValueError, "3 hands"),
    ({"deal": {**GOOD_DEAL, "first_bidder": 7}}, ValueError, "7"),
    ({"deal": {**GOOD_DEAL, "bottom": "KAX"}}, ValueError, "X"),
    ({"deal": "QKA"}, ValueError, "QKA"),
    ("deal", TypeError, "'deal'"),
], ids=["fb7", "fb-float", "fb-str", "deal-1-hand", "deal-fb7", "deal-bad-card", "deal-not-dict", "options-str"])
def test_rejected_reset_leaves_the_rng_unchanged(seed, options, error, named):
    """Validate first, then change: a refused reset neither draws a deal nor reseeds."""
    e = raw_env()
    e.reset(seed=1)
    before = _reset_state(e)
    with pytest.raises(error) as err:
        e.reset(seed=seed, options=options)
    assert named in str(err.value)
    assert _reset_state(e) == before
    e.reset()  # the stream goes on as if the refused calls never happened
    ref = raw_env()
    ref.reset(seed=1)
    ref.reset()
    np.testing.assert_array_equal(e.game.hands, ref.game.hands)
    assert e.game.first_bidder == ref.game.first_bidder


def test_rejected_reset_keeps_the_void_hand_carry_over():
    e = raw_env()
    e.reset(seed=0)
    while not e.game.is_over:
        e.step(BID_PASS)  # all pass: void (R4), the next hand's first bidder is the next seat
    carried = e._next_first_bidder
    assert carried is not None
    with pytest.raises(ValueError):
        e.reset(options={"first_bidder": 3})
    assert e._next_first_bidder == carried
    e.reset()
    assert e.game.first_bidder == carried


def test_rejected_reset_with_bidding_off_names_the_landlord():
    e = raw_env(rules="bidding=false")
    e.reset(seed=1)
    before = _reset_state(e)
    for bad in (3, -1, 0.5):
        with pytest.raises(ValueError, match=re.escape(f"options['landlord'] must be 0, 1 or 2, got {bad!r}")):
            e.reset(seed=5, options={"landlord": bad})
    assert _reset_state(e) == before


def test_deal_with_hands_none_raises_a_type_error_naming_it():
    e = raw_env()
    with pytest.raises(TypeError, match=r"options\['deal'\].*hands must be a sequence of 3 hands.*None"):
        e.reset(options={"deal": {"hands": None, "bottom": "QKA"}})
    with pytest.raises(TypeError, match=r"hands must be a sequence.*got int 5"):
        e.reset(options={"deal": {"hands": 5, "bottom": "QKA"}})
    assert e.game is None  # nothing was dealt


def test_observe_and_step_before_reset_raise_clear_errors():
    e = raw_env()
    with pytest.raises(RuntimeError, match=r"observe\(\) before reset\(\)"):
        e.observe("player_0")
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        e.step(BID_PASS)
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        e.legal_actions("player_0")
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        e.default_action()
    e.reset(seed=0)  # and the env still works
    e.step(BID_PASS)


def test_step_after_every_agent_is_removed_raises_a_clear_error():
    e = raw_env()
    e.reset(seed=0)
    play_out(e, np.random.default_rng(0))
    finish_dead_steps(e)
    assert e.agents == []
    with pytest.raises(RuntimeError, match=r"every agent has been removed.*reset\(\)"):
        e.step(None)
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        e.step(0)
    e.reset(seed=1)
    assert e.agents == AGENTS


def test_raw_env_last_before_reset_and_after_every_agent_left_raises_clear_errors():
    """Issue 22 (13): was a bare AttributeError before reset and KeyError: 'player_1' after the hand."""
    e = raw_env()
    with pytest.raises(AttributeError, match=r"agent_selection cannot be accessed before reset.*reset\(\) before last"):
        e.last()
    e.reset(seed=0)
    assert e.last()[1:] == (0.0, False, False, e.infos[e.agent_selection])
    play_out(e, np.random.default_rng(0))
    _, reward, terminated, _, _ = e.last()  # the dead agents still report their rewards
    assert terminated and reward == e._cumulative_rewards[e.agent_selection]
    finish_dead_steps(e)
    for observe in (True, False):
        with pytest.raises(RuntimeError, match=r"last\(\) after the hand ended and every agent has been removed.*reset\(\)"):
            e.last(observe)
    e.reset(seed=1)
    assert e.last(observe=False)[0] is None


def test_observe_and_legal_actions_name_an_unknown_agent():
    e = raw_env()
    e.reset(seed=0)
    for bad in ("player_3", 0, None):
        with pytest.raises(ValueError, match=re.escape(f"unknown agent {bad!r}")):
            e.observe(bad)
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        e.legal_actions("player_9")


def test_size_one_integer_array_actions_are_accepted_and_floats_refused():
    """raw_env.step reads ids through the one shared function (actions.as_action_id)."""
    e = raw_env()
    e.reset(seed=0)
    g = e.game
    assert g.is_legal(BID_PASS)
    for bad in (BID_PASS + 0.5, float(BID_PASS), np.float64(BID_PASS), [BID_PASS], np.array([BID_PASS, 5])):
        with pytest.raises(ValueError, match="integer"):
            e.step(bad)
        assert g.history == []
    e.step(np.array([BID_PASS]))
    assert g.history == [(g.first_bidder, BID_PASS)] and type(g.history[0][1]) is int


# ---------------------------------------------------------------------------- ClassicWrapper == PettingZoo's 3 wrappers
# env() is raw_env in one ClassicWrapper (issue 14: ~2x faster); stock_env() is raw_env in PettingZoo's
# TerminateIllegalWrapper(-1) + AssertOutOfBoundsWrapper + OrderEnforcingWrapper. The same calls must
# give the same results, errors (type and text), warnings (text) and states.
from pettingzoo.utils import wrappers as pz_wrappers  # noqa: E402
from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402

from ddz_env.classic import ClassicWrapper  # noqa: E402
from ddz_env.env import stock_env  # noqa: E402

# actions that are no legal move, in and out of the action space, of odd types
ODD_ACTIONS = [NUM_ACTIONS, -1, 10**30, None, 2.5, float(BID_PASS), "0", [BID_PASS], np.array([BID_PASS]),
               np.uint64(BID_PASS), np.bool_(True), True, False, np.int32(BID_1), np.int8(0), np.array(BID_PASS),
               np.array(0, dtype=np.int16)]


def _outcome(fn):
    """What a call did: ("ok", value) or (exception type, message), and the EnvLogger warnings."""
    EnvLogger.flush()
    try:
        out = ("ok", _plain(fn()))
    except Exception as ex:  # noqa: BLE001  (comparing whatever was raised)
        out = (type(ex).__name__, str(ex))
    return out, list(EnvLogger.mqueue)


def _plain(x):
    """A comparable copy: arrays as (dtype, shape, bytes), containers element-wise."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, (int, float, str, bool, type(None), np.generic)):
        return (type(x).__name__, x.item() if isinstance(x, np.generic) else x)
    return type(x).__name__


def _state(e):
    """Every public piece of the AEC state, and every agent's observation."""
    attrs = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos",
             "num_agents")
    st = {a: _outcome(lambda a=a: getattr(e, a))[0] for a in attrs}
    st["observe"] = {ag: _outcome(lambda ag=ag: e.observe(ag))[0] for ag in AGENTS}
    st["last"] = _outcome(e.last)[0]
    st["history"] = list(e.unwrapped.game.history) if e.unwrapped.game is not None else None
    return st


class _Twin:
    """The same calls on env() and stock_env(); every result, warning and state compared."""

    def __init__(self, **kwargs):
        self.envs = [ddz_env.env(**kwargs), stock_env(**kwargs)]
        assert type(self.envs[0]) is ClassicWrapper and type(self.envs[1]) is pz_wrappers.OrderEnforcingWrapper
        self.calls = 0

    def call(self, what, fn, check_state=True):
        res = [_outcome(lambda e=e: fn(e)) for e in self.envs]
        assert res[0] == res[1], f"{what}: {res[0]} != {res[1]}"
        if check_state:
            st = [_state(e) for e in self.envs]
            assert st[0] == st[1], f"state after {what}"
        self.calls += 1
        return res[0]  # (outcome, warnings)


def _legal(twin) -> list[int]:
    e = twin.envs[0]
    return [int(x) for x in np.flatnonzero(e.observe(e.agent_selection)["action_mask"])]


def test_classic_wrapper_is_the_stock_stack_before_reset():
    t = _Twin()
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos", "num_agents",
                 "_cumulative_rewards", "_rng", "possible_agents", "max_num_agents", "metadata", "game"):
        t.call(f"getattr {name}", lambda e, n=name: getattr(e, n), check_state=False)
        t.call(f"hasattr {name}", lambda e, n=name: hasattr(e, n), check_state=False)
    for what, fn in [("step", lambda e: e.step(BID_PASS)), ("step None", lambda e: e.step(None)),
                     ("observe", lambda e: e.observe("player_0")), ("last", lambda e: e.last()),
                     ("render", lambda e: e.render()), ("state", lambda e: e.state()),
                     ("agent_iter", lambda e: e.agent_iter()), ("str", str),
                     ("spaces", lambda e: (e.action_space("player_1"), e.observation_space("player_2")))]:
        out = t.call(what, fn, check_state=False)
        if what in ("step", "observe", "render", "state", "agent_iter"):
            assert out[0][0] == "AssertionError" and "reset() needs to be called before" in out[0][1]
    assert t.call("last", lambda e: e.last(), check_state=False)[0][0] == "AttributeError"
    # a refused first reset still counts as a reset for the order checks (in both)
    t.call("bad reset", lambda e: e.reset(options={"first_bidder": 7}), check_state=False)
    t.call("agents", lambda e: e.agents, check_state=False)
    t.call("observe", lambda e: e.observe("player_0"), check_state=False)
    t.call("reset", lambda e: e.reset(seed=3))
    assert all(e.unwrapped is not e for e in t.envs) and str(t.envs[0]) == str(t.envs[1]) == "dou_dizhu_v0"


@pytest.mark.parametrize("seed", range(4))
def test_classic_wrapper_is_the_stock_stack_on_random_play_with_illegal_and_odd_actions(seed):
    """Hands of random play in which, now and then, the acting seat sends an illegal move, an action
    outside the space or of an odd type, a dead seat sends an action, or a step comes after every agent
    left: results, errors, warnings and states agree call by call."""
    rng = np.random.default_rng(seed)
    t = _Twin(**({} if seed % 2 == 0 else {"reward": "win", "reward_scale": 2.0}))
    t.call("reset", lambda e: e.reset(seed=seed))
    illegal_ends = outcomes = 0
    for _hand in range(6):
        steps = 0
        while t.envs[0].agents:
            steps += 1
            assert steps < 500
            e0 = t.envs[0]
            agent = e0.agent_selection
            dead = e0.terminations[agent] or e0.truncations[agent]
            u = rng.random()
            if dead:
                if u < 0.2:
                    t.call("dead step with an action", lambda e: e.step(BID_PASS))
                t.call("dead step", lambda e: e.step(None))
                continue
            legal = _legal(t)
            if u < 0.03:
                bad = int(rng.choice(np.flatnonzero(e0.observe(agent)["action_mask"] == 0)))
                out = t.call(f"illegal {bad}", lambda e, b=bad: e.step(b))
                assert out[0] == ("ok", ("NoneType", None)) and out[1] and "Illegal move" in out[1][0]
                assert all(t.envs[0].terminations.values()) and all(t.envs[0].truncations.values())
                assert t.envs[0]._cumulative_rewards[agent] == -1.0
                illegal_ends += 1
            elif u < 0.09:
                odd = ODD_ACTIONS[int(rng.integers(len(ODD_ACTIONS)))]
                out = t.call(f"odd action {odd!r}", lambda e, x=odd: e.step(x))
                outcomes += out[0][0] != "ok"
            elif u < 0.11:
                t.call("agent_iter", lambda e: [next(iter(e.agent_iter())), next(iter(e.agent_iter()))])
            else:
                x = legal[int(rng.integers(len(legal)))]
                t.call(f"step {x}", lambda e, x=x, u=u: e.step(np.int64(x) if u > 0.95 else x))
        t.call("step after the end", lambda e: e.step(None))
        t.call("step after the end", lambda e: e.step(0))
        t.call("reset", lambda e: e.reset())
    assert illegal_ends >= 1 and outcomes >= 1 and t.calls > 100


R19_SCRIPT = ["bid 3", "double", "no double", "redouble", "3", "pass", "8", "A", "2222", "pass", "pass"]


@pytest.mark.parametrize("n", range(0, len(R19_SCRIPT) + 1, 2))
def test_classic_wrapper_illegal_move_in_each_phase_matches_the_stock_stack(n):
    """After each prefix of the R19 hand (bidding, doubling, redouble, play, the hand's end): an
    illegal move, then each odd action in turn (the rest of the hand played out), as the stock stack."""
    for bad in [None, *ODD_ACTIONS]:
        t = _Twin()
        t.call("reset", lambda e: e.reset(options={"deal": R19_DEAL}))
        for x in R19_SCRIPT[:n]:
            t.call(x, lambda e, x=x: e.step(a(x)))
        if bad is None:
            mask = t.envs[0].observe(t.envs[0].agent_selection)["action_mask"]
            bad = next(x for x in (BID_1, 0, 24639, DOUBLE, REDOUBLE) if not mask[x])
        t.call(f"action {bad!r}", lambda e, bad=bad: e.step(bad))
        while t.envs[0].agents:  # the rest of the hand, every seat reading last() first
            e0 = t.envs[0]
            ag = e0.agent_selection
            nxt = None if e0.terminations[ag] or e0.truncations[ag] else _legal(t)[-1]
            t.call(f"last + step {nxt}", lambda e, nxt=nxt: (e.last()[1:], e.step(nxt)))
        t.call("after the end", lambda e: e.step(None))
        t.call("reset", lambda e: e.reset(options={"deal": R19_DEAL}))


def test_classic_wrapper_agent_iter_must_step_as_the_stock_stack():
    t = _Twin()
    t.call("reset", lambda e: e.reset(seed=1))

    def twice(e):
        it = iter(e.agent_iter())
        return [next(it), next(it)]

    out = t.call("no step between turns", twice)
    assert out[0] == ("AssertionError", "need to call step() or reset() in a loop over `agent_iter`")
    t.call("max_iter", lambda e: list(e.agent_iter(max_iter=0)))


def test_classic_wrapper_runs_api_and_seed_tests_like_the_stock_stack():
    api_test(stock_env(), num_cycles=300)
    api_test(ClassicWrapper(raw_env(rules="bidding=false")), num_cycles=300)
    seed_test(stock_env, num_cycles=200)


def test_classic_wrapper_keeps_a_subclass_step_and_other_envs_on_the_mask_path():
    """The fast path (the game's own legality check) is taken only for raw_env's own step; a subclass
    that overrides step, or a wrapped env, goes through step and the mask as the stock stack does."""
    seen = []

    class Logged(raw_env):
        def step(self, action):
            seen.append(action)
            super().step(action)

    for inner in (Logged(), pz_wrappers.BaseWrapper(raw_env())):
        e = ClassicWrapper(inner)
        assert e._apply is None
        e.reset(seed=0)
        e.step(BID_PASS)
        offender = e.agent_selection
        e.step(REDOUBLE)  # illegal while bidding: the hand ends
        assert all(e.terminations.values()) and e._cumulative_rewards[offender] == -1.0
    assert seen == [BID_PASS]
    assert ClassicWrapper(raw_env())._apply is not None
