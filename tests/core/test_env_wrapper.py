"""``ddz_env.env()``'s one-layer ``ClassicWrapper`` against PettingZoo's three stock wrappers: the same
results, errors, warnings and states, call by call."""
from __future__ import annotations

import numpy as np
import pytest

import ddz_env
from ddz_env import raw_env
from ddz_env.actions import (
    BID_1, BID_PASS, DOUBLE, NUM_ACTIONS, REDOUBLE,
)
from pettingzoo.test import api_test, seed_test

from aec import AGENTS, R19_DEAL, a  # tests/helpers/aec.py



pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


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
