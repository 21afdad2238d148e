"""RLlib's vector env over the batched game (agents/integrations/rllib/tables.py, in the RLlib venv: make test): its
tables step as PettingZoo envs (make_env) dealt the same hands, fed the same actions, for every reward; a bad
action is refused with nothing changed; a run through its env runner counts each decision once."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
from agents.integrations.rllib.module import MODULE_ID, decisions_sampled, make_env, train  # noqa: E402
from agents.integrations.rllib.tables import DECISIONS, RLlibTables, runner_seed  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.rllib]


@pytest.mark.parametrize("reward", ["score", "win", "sign_play"])
def test_the_tables_step_as_pettingzoo_envs_dealt_the_same_hands(reward):
    B = 4
    tables = RLlibTables(B, reward=reward, reward_scale=0.5, score_scale=4.0)
    obs, infos = tables.reset(seed=7)
    assert len(obs) == len(infos) == B
    config = {"reward": reward, "reward_scale": 0.5, "score_scale": 4.0}
    envs = [make_env(config) for _ in range(B)]
    # (slot b of the batched env deals as an AEC env seeded with its slot seed: the same hands)
    expected = [envs[b].reset(seed=int(tables.game.slot_seed(b)))[0] for b in range(B)]
    rng = np.random.default_rng(0)
    ended, hands, rewarded = [False] * B, 0, 0
    for _ in range(300):
        actions = []
        for b in range(B):
            if ended[b]:
                actions.append({})  # (the reset step: no agent acts)
                continue
            (agent, o), = obs[b].items()
            (want_agent, want), = expected[b].items()
            assert agent == want_agent
            assert o["observations"].dtype == np.float32 and o["legal"].dtype == np.int32
            np.testing.assert_array_equal(o["observations"], want["observations"])
            np.testing.assert_array_equal(o["legal"], want["legal"])
            legal = o["legal"][o["legal"] >= 0]
            actions.append({agent: int(rng.choice(legal))})
        obs, rew, term, trunc, _ = tables.step(actions)
        for b in range(B):
            if ended[b]:
                expected[b] = envs[b].reset()[0]
                assert rew[b] == {a: 0.0 for a in tables.envs[b].possible_agents} and not term[b]["__all__"]
                ended[b] = False
                continue
            want_obs, want_rew, want_term, want_trunc, _ = envs[b].step(actions[b])
            assert sorted(obs[b]) == sorted(want_obs)
            assert (rew[b], term[b], trunc[b]) == (want_rew, want_term, want_trunc)
            if term[b]["__all__"]:
                ended[b], hands = True, hands + 1
                rewarded += any(r != 0 for r in rew[b].values())
                for o in obs[b].values():  # (the finished position is gone: a blank observation, no legal move)
                    assert not o["observations"].any() and (o["legal"] == -1).all()
            else:
                expected[b] = want_obs
    assert hands >= 8 and rewarded >= 4


def test_a_missing_or_illegal_action_is_refused_and_nothing_changes():
    tables = RLlibTables(3, reward="win")
    obs, _ = tables.reset(seed=1)
    before = tables.game.state_dict()["arrays"]
    good = [{a: int(o["legal"][0])} for d in obs for a, o in d.items()]
    with pytest.raises(ValueError, match="table 1: player_"):
        tables.step([good[0], {}, good[2]])
    with pytest.raises(ValueError, match="3 action dicts"):
        tables.step(good[:2])
    (agent, o), = obs[2].items()
    bad = int(np.setdiff1d(np.arange(24648), o["legal"])[0])
    with pytest.raises(ValueError, match="illegal action"):
        tables.step([good[0], good[1], {agent: bad}])
    after = tables.game.state_dict()["arrays"]
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    obs2, *_ = tables.step(good)  # (and the tables still step)
    assert len(obs2) == 3
    with pytest.raises(ValueError, match="reward"):
        RLlibTables(2, reward="wins")


def test_a_run_on_the_tables_counts_each_decision_once(tmp_path):
    """The runner's own count of the shared module's actions: at most one an env step (one seat acts at a table
    step), fewer than RLlib's count of observations (2 a hand more), and what train() adds up."""
    import json

    import ray
    import torch
    from ray.tune.registry import register_env

    from agents.integrations.rllib.module import build_config

    torch.set_num_threads(1)
    register_env("ddz_rllib", make_env)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR")
    algo = build_config(num_envs=8, batch=256, minibatch=128, epochs=1, state_layers=(32,), head_layers=(16,),
                        reward="win", vector_env=True).build_algo()
    try:
        got = [algo.train()["env_runners"] for _ in range(3)]
    finally:
        algo.stop()
    decisions = sum(r[DECISIONS][MODULE_ID] for r in got)
    env_steps = sum(r["num_env_steps_sampled"] for r in got)
    hands = sum(r.get("num_episodes", 0) for r in got)
    # (a table's last actions of an iteration are counted when their seats are observed again: at most 2 a table)
    assert env_steps - 2 * 8 <= decisions <= env_steps and hands >= 1
    assert sum(r["num_module_steps_sampled"][MODULE_ID] for r in got) >= decisions + 2 * hands
    assert [decisions_sampled({"env_runners": r}) for r in got] == [r[DECISIONS][MODULE_ID] for r in got]

    opts = dict(num_envs=8, decisions_per_batch=256, minibatch=128, epochs=1, state_layers=(32,), head_layers=(16,),
                progress_seconds=1e9, reward="win")
    out = train(float("inf"), tmp_path / "v", decisions=256, seed=2, progress=False, vector_env=True, **opts)
    assert 0 < out["steps"] == json.loads((tmp_path / "v" / "state.json").read_text())["steps"]
    assert train(float("inf"), tmp_path / "p", decisions=256, seed=2, progress=False, vector_env=False,
                 **opts)["steps"] > 0


def _algo(whole_hands: bool, num_envs: int, reward: str, **kw):
    import ray
    import torch
    from ray.tune.registry import register_env

    from agents.integrations.rllib.module import build_config

    torch.set_num_threads(1)
    register_env("ddz_rllib", make_env)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR")
    return build_config(num_envs=num_envs, batch=8 * num_envs, minibatch=4 * num_envs, epochs=1, state_layers=(32,),
                        head_layers=(16,), reward=reward, vector_env=True, whole_hands=whole_hands, seed=3,
                        **kw).build_algo()


def _replay(episodes, num_envs: int, env_config: dict, seed: int, mapping_fn):
    """The same hands through RLlib's own episode keeping: an RLlibTables of as many tables, dealt as the runner's
    (same seed), each table stepped with its recorded actions through the dict API (a table whose recorded hands
    are done plays its first legal move), each step added with MultiAgentEpisode.add_env_step."""
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

    tables = RLlibTables(num_envs, **env_config)
    obs, infos = tables.reset(seed=seed)
    queues = [[e for e in episodes if e.custom_data["table"] == b] for b in range(num_envs)]
    assert sum(map(len, queues)) == len(episodes)
    current: list = [None] * num_envs  # (the runner's episode, its replay, each agent's next step) by table
    resetting = [False] * num_envs
    refs = {}

    def start(b):
        if queues[b]:
            ep = queues[b].pop(0)
            ref = MultiAgentEpisode(ep.id_, agent_to_module_mapping_fn=mapping_fn)
            ref.add_env_reset(observations=obs[b], infos=infos[b])
            current[b] = (ep, ref, {a: 0 for a in ep.agent_episodes})

    for b in range(num_envs):
        start(b)
    while any(current) or any(queues):
        actions, extras = [], []
        for b in range(num_envs):
            if resetting[b]:
                actions.append({})
                extras.append(None)
                continue
            (agent, o), = obs[b].items()
            if current[b] is None:
                actions.append({agent: int(o["legal"][0])})
                extras.append(None)
                continue
            ep, _, cursor = current[b]
            sa, i = ep.agent_episodes[agent], cursor[agent]
            cursor[agent] += 1
            extras.append({agent: {k: sa.get_extra_model_outputs(k, i) for k in
                                   (Columns.ACTION_DIST_INPUTS, Columns.ACTION_LOGP, WEIGHTS_SEQ_NO)}})
            actions.append({agent: sa.get_actions(i)})
        obs, rew, term, trunc, infos = tables.step(actions)
        for b in range(num_envs):
            if resetting[b]:  # (the reset step: its observation is the next hand's first)
                resetting[b] = False
                start(b)
                continue
            if current[b] is not None:
                ep, ref, cursor = current[b]
                ref.add_env_step(observations=obs[b], actions=actions[b], rewards=rew[b], infos=infos[b],
                                 terminateds=term[b], truncateds=trunc[b], extra_model_outputs=extras[b])
                if term[b]["__all__"]:
                    assert cursor == {a: len(sa) for a, sa in ep.agent_episodes.items()}
                    for a, sa in list(ref.agent_episodes.items()):
                        if not len(sa):  # (as RLlib's runner prunes them)
                            del ref.agent_episodes[a]
                    refs[ep.id_] = ref.to_numpy()
                    current[b] = None
            resetting[b] = bool(term[b]["__all__"])
    return [refs[e.id_] for e in episodes]


def _same(a, b, where=""):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        x, y = np.asarray(getattr(a, "numpy", lambda: a)()), np.asarray(getattr(b, "numpy", lambda: b)())
        assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype, x.shape, y.shape)
        np.testing.assert_array_equal(x, y, err_msg=where)


@pytest.mark.parametrize("reward,share", [("win", 0.0), ("sign_play", 0.0), ("sign_play", 1.0)])
def test_the_whole_hands_runner_gives_the_episodes_and_learner_batches_rllibs_loop_builds_from_the_same_steps(reward,
                                                                                                           share):
    """HandsEnvRunner's episodes against RLlib's own, on 4 tables: the same hands replayed table by table through
    RLlibTables' dict API and MultiAgentEpisode.add_env_step give the same agents, observations, actions, rewards,
    model outputs, env-step map and ends, and PPO's learner connector (GAE included) makes the same batch of both;
    each step's stored model outputs and logp are those its module gives for the stored observation; with
    ``rule`` holding one or two seats of every hand (share 1.0) too."""
    import copy

    import torch
    from ray.rllib.core.columns import Columns

    from agents.integrations.rllib.tables import HandsEnvRunner

    B = 4
    algo = _algo(True, B, reward, **({"opponents": ["rule"], "opponent_share": share} if share else {}))
    try:
        runner = algo.env_runner
        assert isinstance(runner, HandsEnvRunner)
        episodes = [e for _ in range(4) for e in runner.sample(num_timesteps=40 * B)]
        assert len(episodes) >= 6 and all(e.is_done and e.is_terminated for e in episodes)
        assert len({e.custom_data["table"] for e in episodes}) >= 2
        refs = _replay(episodes, B, dict(runner.config.env_config), runner_seed(runner.config, runner.worker_index),
                       algo.config.policy_mapping_fn)
        for ep, ref in zip(episodes, refs):
            assert list(ep.agent_episodes) == list(ref.agent_episodes) and len(ep) == len(ref)
            for a, sa in ep.agent_episodes.items():
                want = ref.agent_episodes[a]
                assert (sa.module_id, sa.is_terminated, sa.t_started, len(sa)) == (want.module_id, True, 0, len(want))
                _same(sa.get_observations(slice(None)), want.get_observations(slice(None)), f"{a} obs")
                _same(sa.get_actions(slice(None)), want.get_actions(slice(None)), f"{a} actions")
                _same(sa.get_rewards(slice(None)), want.get_rewards(slice(None)), f"{a} rewards")
                _same({k: sa.get_extra_model_outputs(k, slice(None)) for k in want.extra_model_outputs},
                      {k: want.get_extra_model_outputs(k, slice(None)) for k in want.extra_model_outputs}, f"{a} outs")
                assert list(ep.env_t_to_agent_t[a].data) == list(ref.env_t_to_agent_t[a].data)
                # (the outputs belong to the observations: the module, not trained since, gives them again)
                module = runner.module[sa.module_id]
                seen = sa.get_observations(slice(0, len(sa)))
                with torch.no_grad():
                    out = module.forward_exploration({Columns.OBS: {k: torch.from_numpy(v) for k, v in seen.items()}})
                    inputs = out[Columns.ACTION_DIST_INPUTS]
                    logp = module.get_exploration_action_dist_cls().from_logits(inputs).logp(
                        torch.from_numpy(sa.get_actions(slice(None))))
                np.testing.assert_allclose(sa.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(None)),
                                           inputs.numpy(), rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(sa.get_extra_model_outputs(Columns.ACTION_LOGP, slice(None)), logp.numpy(),
                                           rtol=1e-4, atol=1e-4)
            assert ep.get_return() == ref.get_return()
        learner = algo.learner_group._learner
        module = learner.module
        batches = [learner._learner_connector(rl_module=module, batch={}, episodes=copy.deepcopy(e), shared_data={},
                                              metrics=None) for e in (episodes, refs)]
        _same(batches[0], batches[1], "batch")
        assert len(batches[0][MODULE_ID]["advantages"]) > len(episodes)
        held = {sa.module_id for e in episodes for sa in e.agent_episodes.values()}
        assert held == ({MODULE_ID, "opponent0"} if share else {MODULE_ID})
    finally:
        algo.stop()


def test_the_whole_hands_runner_gives_each_decision_once_and_refuses_what_it_does_not_do():
    """Every table acts at every step of HandsEnvRunner's loop: the decisions taken are the env steps, each call
    returns at least one hand, and each decision is in exactly one returned hand or in a hand still open; the counts train() reads are those; a call for
    episodes or random actions is refused (RLlib's own loop has them)."""
    algo = _algo(True, 4, "sign_play")
    try:
        runner = algo.env_runner
        returned = [runner.sample(num_timesteps=40) for _ in range(5)]
        assert all(returned)  # (each call steps on until a hand has ended)
        delivered = sum(e.agent_steps() for got in returned for e in got)
        still_open = sum(runner._t - hand.first for hand in runner._hands)
        assert runner._t * 4 >= 5 * 40 and delivered + still_open == runner._t * 4
        greedy = runner.sample(num_timesteps=400, explore=False, force_reset=True)  # (new hands, greedy moves only)
        assert greedy and runner._t >= 100
        for e in greedy:
            assert all((sa.get_extra_model_outputs("action_logp", slice(None)) == 0).all()
                       for sa in e.agent_episodes.values())
        # (the next exploring call deals new hands: none of its hands holds a greedy step, i.e. a step with a
        # choice of moves and logp 0)
        for e in runner.sample(num_timesteps=40):
            for sa in e.agent_episodes.values():
                legal = sa.get_observations(slice(0, len(sa)))["legal"]
                choice = (legal >= 0).sum(1) > 1
                assert (sa.get_extra_model_outputs("action_logp", slice(None))[choice] < 0).all()
        with pytest.raises(ValueError, match="num_episodes"):
            runner.sample(num_episodes=1)
        with pytest.raises(ValueError, match="random_actions"):
            runner.sample(num_timesteps=4, random_actions=True)
        got = [algo.train()["env_runners"] for _ in range(2)]
        # (the weights' number it stamps on each step is the one RLlib's own state reports, read through public names)
        from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

        assert runner.hands_seq == runner.get_state(components="rl_module")[WEIGHTS_SEQ_NO] > 0
    finally:
        algo.stop()
    agents = {f"{k}_{s}" for k in ("bidder", "player") for s in range(3)}
    for r in got:
        assert r[DECISIONS][MODULE_ID] == r["num_env_steps_sampled"] == r["num_module_steps_sampled"][MODULE_ID]
        assert r["num_env_steps_sampled"] % 4 == 0 and decisions_sampled({"env_runners": r}) > 0
        # (the episode metrics RLlib's runner logs, under its names: what train()'s progress line reads)
        assert r["episode_len_mean"] > 0 and r["episode_duration_sec_mean"] > 0 and r["num_episodes"] > 0
        assert set(r["agent_episode_returns_mean"]) <= agents and MODULE_ID in r["module_episode_returns_mean"]
