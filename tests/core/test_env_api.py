"""The AEC env (``ddz_env.env``) as PettingZoo sees it: API conformance, the registry, metadata and
spaces, the action mask, infos, rendering, the helpers it offers agents."""
from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

import ddz_env
import pettingzoo
from ddz_env import Phase, Rules, raw_env
from ddz_env.actions import (
    BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, REDOUBLE,
)
from ddz_env.cards import parse_cards, to_string
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES
from pettingzoo.test import api_test, seed_test

from aec import AGENTS, R19_DEAL, a, assert_obs_equal, finish_dead_steps, obs_all, play_out  # tests/helpers/aec.py



pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


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
        assert set(md["render_modes"]) == {"ansi", "human", "rgb_array"}


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

    from ddz_env import actions, observation

    env_module = importlib.import_module("ddz_env.env")  # (the package's attribute `env` is the function)

    rows = actions.ACTION_TABLE
    assert rows[0][0] == 0 and rows[-1][1] == NUM_ACTIONS - 1
    assert all(b[0] == a[1] + 1 for a, b in zip(rows, rows[1:]))
    assert [(r[0], r[1]) for r in rows[2:]] == [(x[0], x[-1]) for x in
                                                (actions.BID_ACTIONS, actions.DOUBLE_ACTIONS, actions.REDOUBLE_ACTIONS)]
    assert actions.BID_ACTIONS + actions.DOUBLE_ACTIONS + actions.REDOUBLE_ACTIONS == tuple(
        range(actions.FIRST_CHOICE, actions.FIRST_CHOICE + actions.NUM_CHOICES))
    from common import docs_text

    readme = docs_text()
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
