"""RLlib's vector env over the batched game: N tables of one :class:`~ddz_env.vector.VectorDouDizhu` stepped in
one call, instead of N PettingZoo envs stepped one by one (``train.py --config rllib``'s ``vector_env`` option).

==================================  ====================================================================
:class:`RLlibTables`                RLlib's ``VectorMultiAgentEnv``: ``step`` takes one action dict per
                                    table and returns one obs / reward / done dict per table, as RLlib's
                                    ``SyncVectorMultiAgentEnv`` over :func:`~.module.make_env` does
                                    (same agents, spaces, rewards and ends); the observations are built
                                    for all tables at once from the batched env's planes and compact
                                    legal sets (no 24,648-wide mask, no copy of every table's dict)
:class:`TablesEnvRunner`            RLlib's ``MultiAgentEnvRunner`` whose env is :class:`RLlibTables`
                                    (``config.env_runners(env_runner_cls=...)``), its decisions logged from
                                    the episodes it returns (:func:`log_decisions`)
:class:`HandsEnvRunner`             the same env runner with its own sampling loop: one forward pass per
                                    module a step over all tables, and whole hands to the learner
                                    (``whole_hands``)
:func:`hand_episode`                a finished hand as the ``MultiAgentEpisode`` RLlib's loop would build
==================================  ====================================================================

Both runners use RLlib's public API only (issue 63, item 2): they override public methods of RLlib's
``MultiAgentEnvRunner`` (itself a ``PublicAPI`` ``EnvRunner``: ``make_env``, ``sample``, ``set_state``,
``get_metrics``) and read, call or override no underscore name of a Ray object
(``tests/integrations/test_public_apis.py`` scans this package for any).

What differs from the PettingZoo route, on purpose:

* the deals: table ``b`` deals from ``VectorDouDizhu``'s slot generator (``slot_seed(b)``), not from a
  PettingZoo env seeded ``seed + b``;
* a hand's last observation (the one that comes with its final rewards) is all zeros with no legal move:
  the batched env deals the next hand in the same step, so the finished position is gone. RLlib reads
  that observation only for its value, which GAE multiplies by 0 at a terminal step.

Why: stepping 128 PettingZoo envs one by one was 7.5 s of a profiled 24.3 s of sampling (each env builds a
24,648 mask that ``RLlibObs`` turned back into ids, and the sync vector env deep-copies every observation).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN as _FLOAT_MIN  # (the padding of a row's logits, as the module's)

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu

from ..move_policy import LEGAL_WIDTH
from ..targets import hand_target

_SEATS = 3

#: one seat's observation (:class:`RLlibTables` and :class:`~.module.RLlibObs`): the planes, then the legal
#: ids and -1 after them (the compact legal set: 4 KB a step, not RLlib's masked dict's 24,648 float32 mask, 96 KB)
OBS_SPACE = spaces.Dict({
    "observations": spaces.Box(0.0, 1.0, (OBS_CELLS,), np.float32),
    "legal": spaces.Box(-1, NUM_ACTIONS - 1, (LEGAL_WIDTH,), np.int32),
})


def split_targets(score, score_scale: float, reward_scale: float):
    """``reward="sign_play"``'s two ends of a seat's hand, ``(bidder_i's, player_i's)``: the score / ``score_scale``
    for its bids, doubles and redoubles, the sign of the score for its play, both times ``reward_scale`` (the one
    place :class:`RLlibTables` and :class:`~.module.SplitTargetsEnv` take them from). A scalar score gives
    two floats, an array two arrays."""
    s = np.asarray(score, np.float64)
    bid, play = (np.asarray(hand_target(s, b, "sign_play", score_scale), np.float64) * reward_scale for b in (True, False))
    return (float(bid), float(play)) if s.ndim == 0 else (bid, play)


class _Table(MultiAgentEnv):
    """What RLlib's runner reads of one sub-env: its agents and their spaces. It holds no state (the tables'
    state is :class:`RLlibTables`'s), so one instance stands for every table."""

    def __init__(self, agents: list[str], obs_space: spaces.Space):
        super().__init__()
        self.possible_agents = list(agents)
        self.agents = list(agents)
        self.observation_spaces = {a: obs_space for a in agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)


class RLlibTables(VectorMultiAgentEnv):
    """``num_envs`` tables of one batched env as RLlib's ``VectorMultiAgentEnv`` (autoreset ``"next_step"``: the
    step after a hand's end returns the next hand's first observation for that table and ignores its action).

    Agents, observations and rewards are :func:`~.module.make_env`'s: ``player_0..2``, each observation
    ``{"observations": float32 (1740,), "legal": int32 (LEGAL_WIDTH,)}`` (the legal ids, then -1); the seat to
    act is observed with reward 0 until the hand ends, then all three seats get their reward (``reward``
    ``"score"`` or ``"win"``, times ``reward_scale``). With ``reward="sign_play"`` each seat is two agents,
    ``bidder_i`` (bids, doubles, redoubles; the score / ``score_scale``) and ``player_i`` (play; the sign of the
    score), and only those that acted in the hand get an end (as :class:`~.module.SplitTargetsEnv`)."""

    metadata = {"autoreset_mode": "next_step"}

    def __init__(self, num_envs: int, *, reward: str = "score", reward_scale: float = 1.0, score_scale: float = 8.0,
                 seed: int | None = None, rules: Any = None):
        super().__init__()
        if reward not in ("score", "win", "sign_play"):
            raise ValueError(f"RLlibTables: reward must be 'score', 'win' or 'sign_play', got {reward!r}")
        self.split = reward == "sign_play"
        self.reward_scale, self.score_scale = float(reward_scale), float(score_scale)
        self.game = VectorDouDizhu(num_envs, seed=seed, rules=rules, reward="score" if self.split else reward,
                                   reward_scale=1.0 if self.split else self.reward_scale)
        self.num_envs = B = self.game.num_envs
        players = [f"player_{s}" for s in range(_SEATS)]
        agents = [f"bidder_{s}" for s in range(_SEATS)] + players if self.split else players
        table = _Table(agents, OBS_SPACE)
        self.envs = [table] * B
        self.single_observation_spaces = dict(table.observation_spaces)
        self.single_action_spaces = dict(table.action_spaces)
        self.single_observation_space = spaces.Dict(self.single_observation_spaces)
        self.single_action_space = spaces.Dict(self.single_action_spaces)
        self._agents = agents
        self._agent_names = np.array(agents, dtype=object)
        self._ended = np.zeros(B, bool)  # hands that ended on the last step: their next step is the reset
        self._acted = np.zeros((B, 2, _SEATS), bool)  # (split) which agents acted in the hand
        self._final = {"observations": np.zeros(OBS_CELLS, np.float32), "legal": np.full(LEGAL_WIDTH, -1, np.int32)}
        self._obs = self.game.reset()

    # ------------------------------------------------------------------ observations
    def _turn(self) -> np.ndarray:
        """(B,) the name of the agent to act at each table."""
        return self._agent_names[self.turn_index()]

    def views(self) -> tuple[np.ndarray, np.ndarray]:
        """Every table's observation of the seat to act: planes (B, 1740) float32 and padded legal ids (B,
        LEGAL_WIDTH) int32, new arrays each step (RLlib's episodes keep views of them)."""
        o = self._obs
        B = self.num_envs
        planes = o["observation"].reshape(B, -1).astype(np.float32)
        rows, ids, starts = o["legal_rows"], o["legal_ids"], o["legal_starts"]
        widest = int(np.diff(starts).max())
        if widest > LEGAL_WIDTH:
            b = int(np.diff(starts).argmax())
            raise ValueError(f"table {b} has {widest} legal moves, more than RLlib's fixed width {LEGAL_WIDTH} "
                             f"(rllib.module.LEGAL_WIDTH)")
        legal = np.full((B, LEGAL_WIDTH), -1, np.int32)
        legal[rows, np.arange(ids.size) - starts[rows]] = ids
        return planes, legal

    def observed_planes(self) -> np.ndarray:
        """(B, 1740) a copy of every table's planes of the seat to act, in the env's own dtype (int8: a quarter of
        :meth:`views`' float32, what :class:`HandsEnvRunner` keeps of each step)."""
        return self._obs["observation"].reshape(self.num_envs, -1).copy()

    def _first(self) -> list[dict]:
        planes, legal = self.views()
        return [{a: {"observations": planes[b], "legal": legal[b]}} for b, a in enumerate(self._turn())]

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New hands at every table (``seed``: reseed every table's generator); ``(obs dicts, info dicts)``."""
        self._obs = self.game.reset(seed=seed)
        self._ended[:] = False
        self._acted[:] = False
        return self._first(), [{} for _ in range(self.num_envs)]

    def step(self, actions: list[dict]):
        """One action dict per table (``{agent to act: action id}``; ignored at a table whose hand ended on the
        last step). Returns per-table lists of obs, reward, terminated, truncated and info dicts. A missing
        or illegal action raises ``ValueError`` naming the table, and changes nothing."""
        B = self.num_envs
        if len(actions) != B:
            raise ValueError(f"RLlibTables.step takes {B} action dicts, one per table; got {len(actions)}")
        turn = self._turn()
        move = ~self._ended
        a = np.zeros(B, np.int64)
        for b in np.flatnonzero(move):
            act = actions[b].get(turn[b])
            if act is None:
                raise ValueError(f"RLlibTables: table {b}: {turn[b]} is to act; got actions for {sorted(actions[b])}")
            a[b] = int(act)
        in_play = (self.game.phase == int(Phase.PLAY))
        seat = self.game.current_player.copy()
        self._obs, rewards, done, info = self.game.step(a, active=None if move.all() else move)
        # (only now: an illegal action raised above and left the tables and their bookkeeping as they were)
        if self.split:
            idx = np.flatnonzero(move)
            self._acted[idx, in_play[idx].astype(np.int64), seat[idx]] = True
        planes, legal = self.views()
        turn = self._turn()
        obs, rew, term, trunc = [], [], [], []
        for b in range(B):
            if done[b]:
                o, r = self._end(b, rewards[b], info["final_scores"][b])
                obs.append(o)
                rew.append(r)
                term.append({**{k: True for k in o}, "__all__": True})
                trunc.append({**{k: False for k in o}, "__all__": False})
                continue
            a_b = turn[b]
            obs.append({a_b: {"observations": planes[b], "legal": legal[b]}})
            if self._ended[b]:  # (the reset step: as RLlib's sync vector env, every agent 0)
                rew.append({k: 0.0 for k in self._agents})
                term.append({**{k: False for k in self._agents}, "__all__": False})
                trunc.append({**{k: False for k in self._agents}, "__all__": False})
            else:  # (as PettingZooEnv and SplitTargetsEnv: the former names the agent in its dones too)
                rew.append({a_b: 0.0})
                going = {"__all__": False} if self.split else {a_b: False, "__all__": False}
                term.append(going)
                trunc.append(dict(going))
        self._ended = done & move
        return obs, rew, term, trunc, [{} for _ in range(B)]

    def turn_index(self) -> np.ndarray:
        """(B,) the index in :attr:`agents` of the agent to act at each table."""
        seat = self.game.current_player.astype(np.int64)
        if not self.split:
            return seat
        return (self.game.phase == int(Phase.PLAY)).astype(np.int64) * _SEATS + seat

    @property
    def agents(self) -> list[str]:
        """Every agent's name: ``player_0..2``, or with ``reward="sign_play"`` ``bidder_0..2`` then ``player_0..2``."""
        return list(self._agents)

    def _ends(self, done: np.ndarray, rewards: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ends of the hands that ``done`` (B,) marks: ``(targets, got)``, both (B, len(agents)): each agent's
        reward, and whether it gets one (without the split all three seats; with it the agents that acted in
        the hand). Clears those tables' record of who acted (the one place that decides who gets an end)."""
        B, A = self.num_envs, len(self._agents)
        if not self.split:
            return rewards.astype(np.float64, copy=False), np.repeat(done[:, None], A, axis=1)
        targets = np.stack(split_targets(scores, self.score_scale, self.reward_scale), axis=1)  # (B, 2, seats)
        got = self._acted & done[:, None, None]
        self._acted[done] = False
        return targets.reshape(B, A), got.reshape(B, A)

    def advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every table's agent to act plays ``actions`` (B,) at once, and a finished hand's table is dealt its
        next hand in the same step (no reset step: :class:`HandsEnvRunner`'s loop, not RLlib's). Returns
        ``(done, targets, got)``: (B,) the hands that ended, and their ends as :meth:`_ends`. Not to be mixed
        with :meth:`step` between resets."""
        if self._ended.any():
            raise ValueError("RLlibTables.advance: a table waits for step()'s reset step; reset() first")
        acting = self.turn_index()
        self._obs, rewards, done, info = self.game.step(np.asarray(actions, np.int64))
        if self.split:
            self._acted.reshape(self.num_envs, -1)[np.arange(self.num_envs), acting] = True
        return (done,) + self._ends(done, rewards, info["final_scores"])

    def _end(self, b: int, rewards: np.ndarray, score: np.ndarray) -> tuple[dict, dict]:
        """A hand's end at table ``b``: (obs, reward) dicts of the agents that get one."""
        done = np.zeros(self.num_envs, bool)
        done[b] = True
        full = np.zeros((self.num_envs,) + np.shape(rewards))
        full[b] = rewards
        scores = np.zeros((self.num_envs,) + np.shape(score))
        scores[b] = score
        targets, got = self._ends(done, full, scores)
        names = [self._agents[k] for k in np.flatnonzero(got[b])]
        return {a: self._final for a in names}, {a: float(targets[b, self._agents.index(a)]) for a in names}

    def close_extras(self, **kwargs: Any) -> None:
        pass


#: the env runner's metric of each module's decisions in a ``sample()`` call (its actions, each once), beside RLlib's
#: ``num_module_steps_sampled``
DECISIONS = "decisions_sampled"


def log_decisions(metrics: Any, episodes: list) -> None:
    """Log each module's decisions in ``episodes`` (the episodes or episode chunks one ``sample()`` call returned)
    as :data:`DECISIONS` (summed over the call) through RLlib's public ``MetricsLogger``: an agent's steps in a
    chunk are the actions whose next observation came in that chunk, each once. (RLlib's own
    ``num_module_steps_sampled`` counts every observation after an agent's first in the call: a seat's first
    observation that comes with another seat's step, and every seat's last one, count too, 2 a hand more.)"""
    counts: dict[str, int] = {}
    for episode in episodes:
        for agent_episode in episode.agent_episodes.values():
            counts[agent_episode.module_id] = counts.get(agent_episode.module_id, 0) + len(agent_episode)
    for module, n in counts.items():
        metrics.log_value((DECISIONS, module), n, reduce="sum")


def runner_seed(config: Any, worker_index: int | None) -> int | None:
    """The seed an env runner deals its first hands with: ``config.seed`` plus the runner's index, plus a million on
    an evaluation runner (what RLlib's runners use; from the public config, not from a runner's private seed)."""
    if config.seed is None:
        return None
    return int(config.seed + (worker_index or 0) + 1_000_000 * bool(config.in_evaluation))


class TablesEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner, its env an :class:`RLlibTables` of ``num_envs_per_env_runner`` tables built
    from ``env_config`` (``reward``, ``reward_scale``, ``score_scale``). It overrides public methods only:
    ``make_env`` (the tables, and a reset at the next ``sample()``, asked for with its public ``force_reset``) and
    ``sample`` (RLlib's loop, then each module's decisions logged as :data:`DECISIONS`,
    :func:`log_decisions`)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.tables_dealt = False  # (make_env made new tables: the next sample() deals at every table)
        super().__init__(*args, **kwargs)

    def make_env(self) -> None:
        if self.env is not None:
            self.env.close()
        c = dict(self.config.env_config or {})
        self.env = RLlibTables(self.config.num_envs_per_env_runner, reward=c.get("reward", "score"),
                               reward_scale=c.get("reward_scale", 1.0), score_scale=c.get("score_scale", 8.0))
        self.num_envs = self.env.num_envs
        self.tables_dealt = True

    def sample(self, **kwargs: Any):
        kwargs["force_reset"] = bool(kwargs.get("force_reset")) or self.tables_dealt
        self.tables_dealt = False
        episodes = super().sample(**kwargs)
        log_decisions(self.metrics, episodes)
        return episodes


class _Step:
    """One step of every table in :class:`HandsEnvRunner`'s loop: what each table's agent saw, did and was
    given (rows by table). The logits are kept to the step's widest legal set (the rest of a row is
    ``FLOAT_MIN``, as the module wrote it): 0.5 MB a step of 128 tables, not 2.5 MB."""

    __slots__ = ("planes", "legal", "acting", "logits", "tail", "actions", "logp", "seq")

    def __init__(self, planes, legal, acting, logits, tail, actions, logp, seq):
        self.planes, self.legal, self.acting, self.logits, self.tail = planes, legal, acting, logits, tail
        self.actions, self.logp, self.seq = actions, logp, seq


class _Hand:
    """A table's hand in progress: its episode id, the first step of it, each agent's module, its start time
    (``time.perf_counter()``: the episode duration metric's)."""

    __slots__ = ("id_", "first", "modules", "started")

    def __init__(self, id_: str, first: int, modules: list[str], started: float):
        self.id_, self.first, self.modules, self.started = id_, first, modules, started


class HandsEnvRunner(TablesEnvRunner):
    """:class:`TablesEnvRunner` with its own sampling loop (``train.py --config rllib``'s ``whole_hands``): each step
    one forward pass per module over every table whose agent to act it holds, actions drawn from the module's
    exploration distribution (as RLlib's ``GetActions``: ``from_logits``, ``sample``, ``logp``), all tables
    stepped in one :meth:`RLlibTables.advance`; and only **whole hands** go to the learner: a hand that ends
    becomes one ``MultiAgentEpisode`` of numpy arrays (one ``SingleAgentEpisode`` per agent that acted,
    terminated, its end the last reward), built once, so PPO's GAE has every hand's true return and no
    bootstrapped chunk. A hand still open when ``sample()`` returns is carried to the next call (its decisions
    count when they are taken; its episode goes out when it ends). A call steps until it has taken
    ``num_timesteps`` decisions and at least one hand has ended.

    Why: RLlib's own loop keeps its episodes step by step (``add_env_step``, ``validate``, the env-to-module and
    module-to-env connectors, per table and agent); at the defaults that was about two thirds of a run's CPU
    time, the env and the forward passes a tenth of it. The episodes are the ones RLlib's loop builds from the
    same steps (``tests/integrations/test_rllib_tables.py`` compares them and their learner batches).

    A hand that spans two calls is learned from one update after its first steps were sampled (about a third
    of the rows at the defaults): PPO's stored ``ACTION_LOGP`` makes the ratio right, but the batch is a little
    more off-policy than RLlib's loop's. The policy mapping function is called once per agent at a hand's
    start with a small object that has the hand's episode id as ``id_`` (all :class:`~.module.SeatsToModules`
    reads), not with a ``MultiAgentEpisode``. With a tiny ``batch`` (a few steps a table) the first iterations
    learn from the few hands that ended early (often all-pass hands).

    RLlib's public API only (issue 63, item 2; ``tests/integrations/test_public_apis.py``): it overrides the runner's
    public methods (``sample``, ``make_env``, ``set_state``, ``get_metrics``) and reads none of its private state:
    the weights' sequence number is taken from the state ``set_state`` is given (:attr:`hands_seq`), the first deal's
    seed from the public config (:func:`runner_seed`), the counts and the episode metrics (returns, lengths,
    durations: those RLlib's runner logs, under the same names) are logged by this class through the public
    ``MetricsLogger`` (``get_metrics`` logs the hands that ended since its last call, then returns RLlib's reduce).

    What it leaves out: the env-to-module and module-to-env connector pipelines (the module reads the env's
    observations as they are; a custom connector is not run), the ``on_episode_*`` and ``on_sample_end``
    callbacks, RLlib's inference and between-sampling timers, the env-runner state server's weight pull,
    restarting failed sub-environments, modules on a GPU (it runs on the CPU), the Ray-metrics (Prometheus)
    counter of sampled env steps (RLlib's results count them, :data:`NUM_ENV_STEPS_SAMPLED`), and an episode's
    ``get_duration_s()`` (RLlib sets it through private fields; the duration metric is this runner's own). ``sample(num_episodes=...)``
    and ``random_actions`` are refused (RLlib's loop, :class:`TablesEnvRunner`, has them; so is RLlib's own
    evaluation by episodes). A hand's steps all come from one mode: a call that explores when the open hands
    did not (or the other way) deals new hands first."""

    def __init__(self, *args: Any, **kwargs: Any):
        self._hands: list[_Hand] | None = None
        self._steps: dict[int, _Step] = {}
        self._t = 0
        self._only: str | None = None
        self._explore: bool | None = None
        self._module_ids: list[str] = []
        self._held = np.zeros((0, 0), np.int64)
        self._counts: dict = {}
        self._ended_hands: list = []  # ((episode, seconds)) of the hands that ended since get_metrics' last call
        #: the weights' sequence number (RLlib's ``WEIGHTS_SEQ_NO``) of the module now held, as ``set_state`` gave it
        self.hands_seq = 0
        super().__init__(*args, **kwargs)

    def make_env(self) -> None:
        super().make_env()
        self._hands, self._steps = None, {}

    def set_state(self, state: dict) -> None:
        """RLlib's ``set_state``, and the weights' sequence number kept (RLlib's rule: a number above 0 replaces it)."""
        from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

        super().set_state(state)
        seq = int(state.get(WEIGHTS_SEQ_NO, 0) or 0)
        if seq > 0:
            self.hands_seq = seq

    def get_metrics(self):
        """The episode metrics of the hands that ended since the last call, logged as RLlib's runner logs its own
        (same names, reductions and window), then RLlib's ``get_metrics`` (its reduced ``MetricsLogger``)."""
        import math

        from ray.rllib.utils import metrics as m

        ended, self._ended_hands = self._ended_hands, []
        window = max(1, int(math.ceil(self.config.metrics_num_episodes_for_smoothing
                                      / (self.config.num_env_runners or 1))))
        for episode, seconds in ended:
            length, ret = len(episode), episode.get_return()
            agents = {str(a): sa.get_return() for a, sa in episode.agent_episodes.items()}
            steps = {str(a): len(sa) for a, sa in episode.agent_episodes.items()}
            modules: dict = {}
            for sa in episode.agent_episodes.values():
                modules[sa.module_id] = modules.get(sa.module_id, 0.0) + sa.get_return()
            self.metrics.log_dict({m.EPISODE_LEN_MEAN: length, m.EPISODE_RETURN_MEAN: ret,
                                   m.EPISODE_DURATION_SEC_MEAN: seconds, m.EPISODE_AGENT_RETURN_MEAN: agents,
                                   m.EPISODE_AGENT_STEPS: steps, m.EPISODE_MODULE_RETURN_MEAN: modules}, window=window)
            self.metrics.log_dict({m.EPISODE_LEN_MIN: length, m.EPISODE_RETURN_MIN: ret}, reduce="min", window=window)
            self.metrics.log_dict({m.EPISODE_LEN_MAX: length, m.EPISODE_RETURN_MAX: ret}, reduce="max", window=window)
        return super().get_metrics()

    def _log_counts(self) -> None:
        """The sampled-step counters of the last ``sample()`` call (env, agent and module steps, episodes: RLlib's
        names and reductions) and :data:`DECISIONS`, each logged once."""
        from ray.rllib.utils.metrics import (NUM_AGENT_STEPS_SAMPLED, NUM_AGENT_STEPS_SAMPLED_LIFETIME,
                                             NUM_ENV_STEPS_SAMPLED, NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_EPISODES,
                                             NUM_EPISODES_LIFETIME, NUM_MODULE_STEPS_SAMPLED,
                                             NUM_MODULE_STEPS_SAMPLED_LIFETIME)

        c, self._counts = self._counts, {}
        log = self.metrics.log_value
        if "env" in c:
            log(NUM_ENV_STEPS_SAMPLED, c["env"], reduce="sum")
            log(NUM_ENV_STEPS_SAMPLED_LIFETIME, c["env"], reduce="lifetime_sum", with_throughput=True)
        if "episodes" in c:
            log(NUM_EPISODES, c["episodes"], reduce="sum")
            log(NUM_EPISODES_LIFETIME, c["episodes"], reduce="lifetime_sum")
        for key, n in c.items():
            if isinstance(key, tuple) and key[0] == "decisions":
                log((DECISIONS, key[1]), n, reduce="sum")
            elif isinstance(key, tuple):
                now, life = ((NUM_AGENT_STEPS_SAMPLED, NUM_AGENT_STEPS_SAMPLED_LIFETIME) if key[0] == "agent" else
                             (NUM_MODULE_STEPS_SAMPLED, NUM_MODULE_STEPS_SAMPLED_LIFETIME))
                log((now, key[1]), n, reduce="sum")
                log((life, key[1]), n, reduce="lifetime_sum")

    def sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, explore: bool | None = None,
               random_actions: bool = False, force_reset: bool = False):
        from ray.rllib.utils.metrics import SAMPLE_TIMER, WEIGHTS_SEQ_NO

        if num_episodes is not None or random_actions:
            raise ValueError("HandsEnvRunner samples decisions (num_timesteps) with the modules' own actions; "
                             "num_episodes and random_actions are RLlib's own loop's (TablesEnvRunner, whole_hands "
                             "false)")
        if self.env is None:
            raise ValueError(f"{self} has no env; cannot sample")
        if explore is None:
            explore = self.config.explore
        if num_timesteps is None:
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self.num_envs
        self.metrics.log_value(key=WEIGHTS_SEQ_NO, value=self.hands_seq, window=1)
        try:
            with self.metrics.log_time(SAMPLE_TIMER):
                return self._sample_hands(int(num_timesteps), bool(explore), force_reset)
        finally:
            self._log_counts()

    # ------------------------------------------------------------------ the loop
    def _new_hand(self, b: int, first: int) -> _Hand:
        """Table ``b``'s next hand, from step ``first``: its id, and each agent's module (also in ``_held[b]``)."""
        import time
        import uuid

        hand = _Hand(uuid.uuid4().hex, first, [], time.perf_counter())
        fn = self.config.policy_mapping_fn
        hand.modules = [self._only or fn(a, hand) for a in self.env.agents]
        self._held[b] = [self._module_ids.index(m) for m in hand.modules]
        return hand

    def _sample_hands(self, num_timesteps: int, explore: bool, force_reset: bool) -> list:
        import torch
        from ray.rllib.core.columns import Columns

        env, B = self.env, self.num_envs
        agents = env.agents
        module_ids = list(self.module.keys())
        self._only = module_ids[0] if len(module_ids) == 1 else None
        # (new hands when asked, when RLlib asks for a reset (after make_env, or remove_module: the open hands may
        # name a module that is gone), and when this call explores and the open hands did not, or the other way:
        # a hand's steps all come from one mode)
        if (self._hands is None or force_reset or self.tables_dealt or explore != self._explore
                or module_ids != self._module_ids):
            env.reset(seed=runner_seed(self.config, self.worker_index) if self.tables_dealt else None)
            self.tables_dealt = False
            self._steps, self._t, self._explore, self._module_ids = {}, 0, explore, module_ids
            self._held = np.zeros((B, len(agents)), np.int64)  # (each table's module index, by agent)
            self._hands = [self._new_hand(b, 0) for b in range(B)]
        done_episodes: list = []
        agent_counts = np.zeros(len(agents), np.int64)
        module_counts = np.zeros(len(module_ids), np.int64)
        taken = hands_done = 0
        # (at least one hand comes back: PPO skips an iteration that gets no episode, and its counts with it)
        while taken < num_timesteps or not done_episodes:
            planes, legal = env.views()
            acting = env.turn_index()
            held = self._held[np.arange(B), acting]
            actions = np.zeros(B, np.int64)
            logp = np.zeros(B, np.float32)
            logits_parts, tails = [], np.zeros((B, 2), np.float32)
            for m in np.unique(held):
                rows = np.flatnonzero(held == m) if len(module_ids) > 1 else slice(None)
                module = self.module[module_ids[m]]
                batch = {Columns.OBS: {"observations": torch.from_numpy(planes[rows]),
                                       "legal": torch.from_numpy(legal[rows])}}
                with torch.no_grad():
                    if explore:
                        out = module.forward_exploration(batch)
                        dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
                    else:
                        out = module.forward_inference(batch)
                        dist = module.get_inference_action_dist_cls().from_logits(
                            out[Columns.ACTION_DIST_INPUTS]).to_deterministic()
                    a = dist.sample()
                    lp = dist.logp(a)
                inputs = out[Columns.ACTION_DIST_INPUTS].numpy()
                actions[rows], logp[rows] = a.numpy(), lp.numpy()
                tails[rows] = inputs[:, 2 * LEGAL_WIDTH:]
                logits_parts.append((rows, inputs[:, :LEGAL_WIDTH]))
            k = max(int((legal >= 0).sum(1).max()), 1)
            logits = np.full((B, k), _FLOAT_MIN, np.float32)
            for rows, part in logits_parts:
                logits[rows] = part[:, :k]
            t = self._t
            self._steps[t] = _Step(env.observed_planes(), legal.astype(np.int16), acting, logits, tails, actions, logp,
                                   self.hands_seq)
            done, targets, got = env.advance(actions)
            self._t = t + 1
            taken += B
            agent_counts += np.bincount(acting, minlength=len(agents))
            module_counts += np.bincount(held, minlength=len(module_ids))
            for b in np.flatnonzero(done):
                hand = self._hands[b]
                done_episodes.append(self._episode(b, hand, t, targets[b], got[b]))
                self._ended_hands.append(done_episodes[-1])
                self._hands[b] = self._new_hand(b, t + 1)
                hands_done += 1
            first = min(h.first for h in self._hands)
            for old in [s for s in self._steps if s < first]:
                del self._steps[old]
        c = self._counts
        c["env"] = c.get("env", 0) + taken
        c["episodes"] = c.get("episodes", 0) + hands_done
        for k, n in zip(agents, agent_counts):
            if n:
                c[("agent", k)] = c.get(("agent", k), 0) + int(n)
        for m, n in zip(module_ids, module_counts):
            if n:
                c[("module", m)] = c.get(("module", m), 0) + int(n)
                c[("decisions", m)] = c.get(("decisions", m), 0) + int(n)
        return [episode for episode, _ in done_episodes]

    def _episode(self, b: int, hand: _Hand, last: int, targets: np.ndarray, got: np.ndarray):
        """The hand at table ``b`` (steps ``hand.first..last``) as ``(a done MultiAgentEpisode, its seconds)``."""
        import time

        steps = [self._steps[t] for t in range(hand.first, last + 1)]
        acting = np.array([s.acting[b] for s in steps], np.int64)
        agents = self.env.agents
        order = list(dict.fromkeys(acting.tolist()))  # (agents in the order they first acted, as RLlib adds them)
        rows = [[steps[i] for i in np.flatnonzero(acting == k)] for k in order]
        reward = {k: float(targets[k]) if got[k] else 0.0 for k in order}
        episode = hand_episode(hand.id_, [(agents[k], hand.modules[k], r, reward[k], b) for k, r in zip(order, rows)],
                               [agents[k] for k in acting], self.config.policy_mapping_fn)
        return episode, time.perf_counter() - hand.started




def hand_episode(id_: str, agents: list, acting: list[str], mapping_fn: Any = None):
    """A whole hand as a done ``MultiAgentEpisode`` of numpy data: ``agents`` is ``(agent id, module id, steps,
    end reward, table)`` per agent that acted, in the order they first acted; ``acting`` the agent id of each of
    the hand's T steps. Each agent's ``SingleAgentEpisode``: its observations then the blank last one
    (:class:`RLlibTables`'s), its actions, rewards 0 but the last (the end), ``ACTION_DIST_INPUTS``,
    ``ACTION_LOGP`` and ``WEIGHTS_SEQ_NO`` as RLlib's runner stores them, terminated. The episode's
    ``custom_data["table"]`` is the table it was played at. (Its ``get_duration_s()`` is not set: RLlib keeps the
    times in private fields; :class:`HandsEnvRunner` logs the durations itself.)"""
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
    from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

    W = LEGAL_WIDTH
    episode = MultiAgentEpisode(id_, agent_module_ids={a: m for a, m, *_ in agents},
                                agent_to_module_mapping_fn=mapping_fn)
    T = len(acting)
    for a, m, steps, reward, b in agents:
        n = len(steps)
        planes = np.zeros((n + 1, OBS_CELLS), np.float32)
        legal = np.full((n + 1, W), -1, np.int32)
        inputs = np.full((n, 2 * W + 2), _FLOAT_MIN, np.float32)
        for i, s in enumerate(steps):
            planes[i] = s.planes[b]
            legal[i] = s.legal[b]
            inputs[i, :s.logits.shape[1]] = s.logits[b]
            inputs[i, 2 * W:] = s.tail[b]
        inputs[:, W:2 * W] = legal[:n]
        rewards = np.zeros(n)
        rewards[-1] = reward
        episode.agent_episodes[a] = SingleAgentEpisode(
            observations={"observations": planes, "legal": legal}, infos=[{} for _ in range(n + 1)],
            actions=np.array([s.actions[b] for s in steps], np.int64), rewards=rewards,
            extra_model_outputs={Columns.ACTION_DIST_INPUTS: inputs,
                                 Columns.ACTION_LOGP: np.array([s.logp[b] for s in steps], np.float32),
                                 WEIGHTS_SEQ_NO: np.array([s.seq for s in steps], np.int64)},
            terminated=True, len_lookback_buffer=0, agent_id=a, module_id=m, multi_agent_episode_id=id_)
    # (the env-step to agent-step map RLlib keeps: each agent's step at every env step it was observed, else skip)
    acting = np.asarray(acting, dtype=object)
    for name in episode.agent_episodes:
        seen = np.flatnonzero(acting == name)
        row = np.full(T + 1, -1, np.int64)
        row[seen] = np.arange(seen.size)
        row[T] = seen.size
        episode.env_t_to_agent_t[name] = InfiniteLookbackBuffer(
            [int(x) if x >= 0 else episode.SKIP_ENV_TS_TAG for x in row], lookback=0)
    episode.env_t = T
    episode.is_terminated = True
    episode.custom_data["table"] = int(agents[0][4]) if agents else -1
    return episode


__all__ = ["OBS_SPACE", "RLlibTables", "TablesEnvRunner", "HandsEnvRunner", "hand_episode", "split_targets", "log_decisions",
           "runner_seed"]
