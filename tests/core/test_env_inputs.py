"""What the AEC env refuses: illegal actions and bad input, with errors that name them and nothing
changed."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ddz_env
from ddz_env import raw_env
from ddz_env.actions import (
    BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NUM_ACTIONS, REDOUBLE,
)

from aec import AGENTS, R19_DEAL, a, assert_obs_equal, finish_dead_steps, obs_all, play_out  # tests/helpers/aec.py



pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


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
