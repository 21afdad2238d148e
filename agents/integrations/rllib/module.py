"""RLlib (ray 2.x, new API stack): the move-scoring policy as an ``RLModule``, and PPO in self-play.

======================================  =====================================================================
:class:`RLlibObs`                       PettingZoo wrapper: each observation as ``{"observations" float32
                                        (1740,), "legal" int32 (LEGAL_WIDTH,)}``: the legal ids, then -1
:func:`make_env`                        RLlib's multi-agent env: ``PettingZooEnv(RLlibObs(AEC env))``
:class:`LegalMovesCategorical`          RLlib's categorical over each row's legal moves (log-probabilities and
                                        ids in one fixed-width input): no 24,648-wide tensor
:class:`MoveScoringRLModule`            ``TorchRLModule`` + ``ValueFunctionAPI``: the distribution inputs are
                                        :class:`~agents.integrations.move_policy.MoveScoringPolicy`'s scores
                                        of the legal moves (each from its own features), the values its value
                                        head; ``model_config`` takes ``state_layers``, ``head_layers``,
                                        ``init`` (``"pretrained"``), ``bid_epsilon``
:func:`build_config`                    ``PPOConfig``: one module, ``"shared"``, plays all three seats
                                        (self-play, RLlib's multi-agent idiom: ``policy_mapping_fn``)
:func:`train`                           PPO to a time budget, checkpointed and resumable; the policy exported
                                        as ``policy.pt`` (``train.py --config rllib``; the benchmark's
                                        contract)
======================================  =====================================================================

Ray pins an older Gymnasium than the other libraries: this module runs in the RLlib venv
(``make setup-rllib``). What it writes is read anywhere, without ray: ``policy.pt`` by ``agents.load``,
a run folder or an RLlib checkpoint by ``agents.load("rllib:DIR")``
(:mod:`agents.integrations.rllib.files`).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from ddz_env.observation import OBS_SHAPE
from ddz_env.rules import Phase

from ...dmc.model import BIDDING_NET
from ..move_policy import LEGAL_WIDTH, CandidateCategorical, MoveScoringPolicy, entropy_weights, explore_bids, net_of_planes, \
    save_policy  # noqa: F401 (LEGAL_WIDTH: re-exported)
from .files import MODULE_ID, POLICY_FILE
from .tables import DECISIONS, OBS_SPACE, HandsEnvRunner, TablesEnvRunner, split_targets


# ---------------------------------------------------------------------------------------------- env


class RLlibObs(BaseWrapper):
    """AEC wrapper: observation -> ``{"observations": float32 (1740,), "legal": int32 (LEGAL_WIDTH,)}``, the
    legal action ids first and ``-1`` after them (the compact legal set: 4 KB a step, not RLlib's masked dict's
    24,648 float32 mask, 96 KB)."""

    _space = OBS_SPACE

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        o = self.env.observe(agent)
        ids = np.flatnonzero(o["action_mask"])
        if ids.size > LEGAL_WIDTH:
            raise ValueError(f"{agent} has {ids.size} legal moves, more than RLlib's fixed width "
                             f"{LEGAL_WIDTH} (rllib.module.LEGAL_WIDTH)")
        legal = np.full(LEGAL_WIDTH, -1, np.int32)
        legal[:ids.size] = ids
        return {"observations": o["observation"].reshape(-1).astype(np.float32), "legal": legal}


def make_env(config: dict | None = None):
    """RLlib's multi-agent env: ``PettingZooEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", **config)))``;
    with ``reward="sign_play"`` a :class:`SplitTargetsEnv` (its ``score_scale`` from ``config``)."""
    import pettingzoo
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    config = dict(config or {})
    if config.get("reward") == "sign_play":
        scale, score_scale = float(config.pop("reward_scale", 1.0)), float(config.pop("score_scale", 8.0))
        config.pop("reward")
        return SplitTargetsEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", **config)), scale, score_scale)
    config.pop("score_scale", None)
    return PettingZooEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", **config)))


class SplitTargetsEnv(MultiAgentEnv):
    """RLlib's env for ``reward="sign_play"`` (TorchRL's ``target``, DMC's ``sign_play``): each seat is two
    agents, ``bidder_i`` for its bids, doubles and redoubles and ``player_i`` for its play, so RLlib's GAE
    runs over the two apart, each with its own end: ``player_i`` gets sign(score) (+1 / -1: a win is what
    play is for) and ``bidder_i`` the score / ``score_scale`` (stakes matter to those choices only), both
    times ``reward_scale``. Under a win/loss reward for every decision a bid's level changes nothing and
    RLlib bid 3 in every turn; under the score for every decision too (both measured). ``env`` is an
    :class:`RLlibObs` over the AEC env with ``reward="score"`` (its scores are read, not its rewards'
    kind). A void hand (R4) ends with 0 for the bidders; an agent that never acted gets nothing."""

    def __init__(self, env: Any, reward_scale: float = 1.0, score_scale: float = 8.0):
        super().__init__()
        if getattr(env.unwrapped, "reward_kind", "score") != "score" or env.unwrapped.reward_scale != 1.0:
            raise ValueError("SplitTargetsEnv reads the hand's scores: its env needs reward='score', "
                             "reward_scale=1.0")
        self.env, self.reward_scale, self.score_scale = env, float(reward_scale), float(score_scale)
        seats = list(env.unwrapped.possible_agents)
        self._ids = {a: (f"bidder_{a.rsplit('_', 1)[-1]}", a) for a in seats}
        self.possible_agents = [b for b, _ in self._ids.values()] + seats
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: env.observation_space(seats[0]) for a in self.possible_agents}
        self.action_spaces = {a: env.action_space(seats[0]) for a in self.possible_agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self._acted: set[str] = set()

    def _current(self) -> tuple[str, str]:
        """(the AEC agent to act, its RLlib agent id)."""
        seat = self.env.agent_selection
        return seat, self._ids[seat][int(self.env.unwrapped.phase == Phase.PLAY)]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.env.reset(seed=seed, options=options)
        self._acted = set()
        seat, aid = self._current()
        return {aid: self.env.observe(seat)}, {}

    def step(self, action_dict: dict):
        seat, aid = self._current()
        if aid not in action_dict:
            raise ValueError(f"SplitTargetsEnv: {aid} ({seat}) is to act; got actions for {sorted(action_dict)}")
        self.env.step(action_dict[aid])
        self._acted.add(aid)
        raw = self.env.unwrapped
        if not all(raw.terminations.values()):
            seat, nxt = self._current()
            # (a reward with every observation, 0 until the end: RLlib refuses an agent that acted, is observed
            # again and gets no reward)
            return {nxt: self.env.observe(seat)}, {nxt: 0.0}, {"__all__": False}, {"__all__": False}, {}
        obs, rew = {}, {}
        for s, (bidder, player) in self._ids.items():
            score = float(raw.rewards[s])
            targets = dict(zip((bidder, player), split_targets(score, self.score_scale, self.reward_scale)))
            for a, target in targets.items():
                if a in self._acted:
                    obs[a], rew[a] = self.env.observe(s), target
        done = {a: True for a in obs}
        return obs, rew, {**done, "__all__": True}, {**{a: False for a in obs}, "__all__": False}, {}


# ---------------------------------------------------------------------------------------------- module
class LegalMovesCategorical(TorchCategorical):
    """RLlib's categorical over each row's legal moves only. Its inputs (the module's
    ``ACTION_DIST_INPUTS``, ``(B, 2 * LEGAL_WIDTH + 2)``) are the policy's log-probabilities of the candidates,
    then their action ids as floats (exact below 2**24; ``-1`` in unused slots, whose logits are
    ``FLOAT_MIN``), then the row's entropy weight (RLlib's one ``entropy_coeff`` times it is the row's
    coefficient: bids can be explored more than play, `move_policy.entropy_weights`), then the row's bid
    exploration ``epsilon`` (0 in play). Samples, ``logp`` and ``kl`` are the behaviour mixture's, which
    draws uniformly with probability ``epsilon`` (`move_policy.explore_bids`, so PPO's ratio stays an
    importance weight); the entropy is the policy's own, and the greedy action its highest logit. All are in
    action ids / over the same slots (:class:`~agents.integrations.move_policy.CandidateCategorical`): no
    24,648-wide tensor anywhere."""

    def __init__(self, logits: torch.Tensor = None, probs: torch.Tensor = None, ids: torch.Tensor = None,
                 entropy_weight: torch.Tensor = None, policy_logp: torch.Tensor = None):
        if ids is None:
            raise ValueError("LegalMovesCategorical needs the candidates' action ids (from_logits splits them off)")
        self.ids, self.entropy_weight, self.policy_logp = ids, entropy_weight, policy_logp
        super().__init__(logits=logits)

    @classmethod
    def from_logits(cls, logits: torch.Tensor, **kwargs: Any) -> "LegalMovesCategorical":
        width = LEGAL_WIDTH
        if logits.shape[-1] != 2 * width + 2:
            raise ValueError(f"LegalMovesCategorical takes (B, {2 * width + 2}) inputs (log-probabilities, ids, "
                             f"entropy weight, bid epsilon); got {tuple(logits.shape)}")
        own, ids = logits[..., :width], logits[..., width:2 * width].round().long()
        epsilon = logits[..., 2 * width + 1]
        # (the ids are packed to the left: the batch's widest set is the last slot that counts, about a tenth of
        # LEGAL_WIDTH in a batch of 2,048; every op below, and its backward pass, works on that width only)
        k = _widest(ids)
        own, ids = own[..., :k], ids[..., :k]
        mixed = explore_bids(own, ids >= 0, epsilon > 0, epsilon).clamp(min=FLOAT_MIN)
        return cls(logits=mixed, ids=ids, entropy_weight=logits[..., 2 * width], policy_logp=own)

    def _get_torch_distribution(self, logits=None, probs=None):
        # (TorchDistribution's abstract hook; the distribution is kept as our own ``candidates`` too: RLlib's
        # attribute for it is private)
        self.candidates = CandidateCategorical(logits, self.ids.clamp(min=0), self.ids >= 0, self.entropy_weight,
                                               self.policy_logp)
        return self.candidates

    @staticmethod
    def required_input_dim(space: Any, **kwargs: Any) -> int:
        return 2 * LEGAL_WIDTH + 2

    def kl(self, other: "LegalMovesCategorical") -> torch.Tensor:
        """KL(self || other) row by row, over slots (the same rows' candidates are in the same slots). The two
        can have different widths: PPO's learner adds a time step to each episode chunk (masked out of its
        loss) whose stored inputs are not those its forward pass gives, so the widest rows differ; the
        narrower is padded. As ``torch``'s categorical KL: 0 where ``self`` has probability 0."""
        a, b = self.candidates.logits, other.candidates.logits
        k = max(a.shape[-1], b.shape[-1])
        a = torch.nn.functional.pad(a, (0, k - a.shape[-1]), value=-torch.inf)
        b = torch.nn.functional.pad(b, (0, k - b.shape[-1]), value=-torch.inf)
        p = a.exp()
        return torch.where(p > 0, p * (a - b), torch.zeros_like(p)).sum(-1)

    def to_deterministic(self):
        from ray.rllib.core.distribution.torch.torch_distribution import TorchDeterministic

        return TorchDeterministic(loc=self.candidates.mode)


def _widest(ids: torch.Tensor) -> int:
    """The number of slots that hold a move in the widest row of ``ids`` (B, W) (legal ids packed to the left,
    then -1): at least 1."""
    return max(int((ids >= 0).sum(-1).max()), 1) if ids.numel() else 1


class _LegalMovesDists:
    """Exploration, training and inference all sample :class:`LegalMovesCategorical`."""

    def get_exploration_action_dist_cls(self):
        return LegalMovesCategorical

    def get_train_action_dist_cls(self):
        return LegalMovesCategorical

    def get_inference_action_dist_cls(self):
        return LegalMovesCategorical


class MoveScoringRLModule(_LegalMovesDists, TorchRLModule, ValueFunctionAPI):
    """The move-scoring policy as an RLlib ``RLModule``: ``Columns.ACTION_DIST_INPUTS`` are the log-probabilities
    of each row's legal moves (scored by :class:`~agents.integrations.move_policy.MoveScoringPolicy`, at most
    ``LEGAL_WIDTH`` a row) with their ids (:class:`LegalMovesCategorical`), ``compute_values`` its value head.
    The observation is :class:`RLlibObs`'s dict. ``model_config``: ``state_layers``, ``head_layers``, ``init``
    (``"pretrained"``), ``bid_epsilon`` (bids, doubles and redoubles drawn uniformly with this probability:
    :func:`~agents.integrations.move_policy.explore_bids`)."""

    def setup(self):
        c = dict(self.model_config or {})
        if c.get("init"):
            self.policy = MoveScoringPolicy.from_dmc(c["init"])
        else:
            self.policy = MoveScoringPolicy(state_layers=c.get("state_layers", (256,)),
                                            head_layers=c.get("head_layers", (128,)), hand_after=True)
        self.bid_epsilon = float(c.get("bid_epsilon", 0.0))
        self.play_weight, self.bid_weight = (float(w) for w in c.get("entropy_weights", (1.0, 1.0)))

    def _inputs(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        planes = obs["observations"].reshape((-1,) + OBS_SHAPE)
        legal = obs["legal"].reshape(planes.shape[0], -1).long()
        empty = legal[:, 0] < 0
        if bool(empty.any()):  # (a finished seat's last observation: no legal id; only its value is read)
            legal = legal.clone()
            legal[empty, 0] = 0
        return planes, legal

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        return self._outputs(batch)[0]

    def _forward_train(self, batch: dict, **kwargs: Any) -> dict:
        # (the values come from the same pass, as RLlib's embeddings: PPO's loss hands them to compute_values,
        # which then does not encode every state a second time)
        out, values = self._outputs(batch)
        return {**out, Columns.EMBEDDINGS: values}

    def _outputs(self, batch: dict) -> tuple[dict, torch.Tensor]:
        planes, legal = self._inputs(batch)
        k = _widest(legal)  # (computed over the batch's widest set, padded back to LEGAL_WIDTH at the end)
        valid = legal[:, :k] >= 0
        rows, slot = valid.nonzero(as_tuple=True)
        scores, values = self.policy.score_legal(planes, rows, legal[rows, slot])
        logits = torch.zeros(valid.shape, dtype=scores.dtype).index_put((rows, slot), scores)
        bidding = net_of_planes(planes.reshape(planes.shape[0], -1).float()) == BIDDING_NET
        logp = torch.log_softmax(logits.masked_fill(~valid, -torch.inf), dim=-1).clamp(min=FLOAT_MIN)
        logp = torch.nn.functional.pad(logp, (0, legal.shape[1] - k), value=FLOAT_MIN)
        weight = torch.where(bidding, self.bid_weight, self.play_weight).to(logp.dtype).unsqueeze(1)
        epsilon = (bidding.to(logp.dtype) * self.bid_epsilon).unsqueeze(1)
        return {Columns.ACTION_DIST_INPUTS: torch.cat([logp, legal.to(logp.dtype), weight, epsilon], dim=1)}, values

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        """The value head's values of ``batch``; ``embeddings``, when given, are those values already
        (``_forward_train``'s)."""
        if embeddings is not None:
            return embeddings
        planes, _ = self._inputs(batch)
        return self.policy.value(planes).reshape(-1)


class FixedAgentRLModule(_LegalMovesDists, TorchRLModule):
    """A seat held by a fixed agent (``model_config["agent"]``: an ``agents.load`` spec of an agent that reads
    only the seat's planes and legal moves, e.g. ``rule``), not trained: its ``ACTION_DIST_INPUTS`` are in
    :class:`LegalMovesCategorical`'s form with log-probability 0 at the agent's choice and ``FLOAT_MIN`` at
    the other legal moves, so RLlib's sampling takes the agent's move. It has no value function, so PPO's
    learner gives it no optimizer and no advantages; :func:`build_config` leaves it out of
    ``policies_to_train``."""

    def setup(self):
        from ...loader import load

        self.spec = str((self.model_config or {})["agent"])
        self.agent = load(self.spec)
        # (never read, never updated: RLlib's torch learner gives every torch module an Adam, which refuses an
        # empty parameter list; policies_to_train keeps this module out of every update)
        self.placeholder = torch.nn.Parameter(torch.zeros(()))

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        from ...base import Decisions, public_facts

        obs = batch[Columns.OBS]
        planes = torch.as_tensor(obs["observations"]).reshape((-1,) + OBS_SHAPE).to(torch.int8).numpy()
        legal = torch.as_tensor(obs["legal"]).reshape(planes.shape[0], -1).long()
        valid = legal >= 0
        counts = valid.sum(1).numpy()
        starts = np.zeros(counts.size + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        n = planes.shape[0]
        pick = np.zeros(n, np.int64)  # (the slot of each row's choice; a row with no legal move keeps slot 0)
        rows = np.flatnonzero(counts > 0)
        if rows.size:
            ids = legal.numpy()[valid.numpy()]  # (row-major: each row's ids in its slot order)
            phase, role = public_facts(planes)
            d = Decisions(planes, ids, starts, phase, role, np.full(n, -1, np.int64), np.arange(n, dtype=np.int64))
            d = d.take(rows) if rows.size < n else d
            actions = np.asarray(self.agent.act_batch(d), np.int64)
            pick[rows] = (legal.numpy()[rows] == actions[:, None]).argmax(1)
        logp = torch.full(legal.shape, FLOAT_MIN, dtype=torch.float32)
        logp[torch.arange(n), torch.from_numpy(pick)] = 0.0
        legal = legal.clone()
        legal[~valid.any(1), 0] = 0
        return {Columns.ACTION_DIST_INPUTS: torch.cat([logp, legal.float(), torch.zeros(n, 2)], dim=1)}


class SeatsToModules:
    """RLlib's ``policy_mapping_fn``: ``"shared"`` at every seat, except in ``share`` of the hands, where one or
    two seats (drawn with the hand) go to one opponent module (``opponent_ids``, drawn with the hand). The draw
    is a function of the episode's id and ``seed``, so each seat keeps its module for the whole hand, in every
    chunk RLlib cuts the episode into (TorchRL's ``opponent_share``, ``selfplay.Collector``)."""

    def __init__(self, opponent_ids: list[str], share: float, seed: int = 0):
        self.opponent_ids, self.share, self.seed = list(opponent_ids), float(share), int(seed)

    def seats(self, episode_id: str) -> tuple[str | None, tuple[int, ...]]:
        """The opponent module of the hand ``episode_id`` and the seats it holds (``(None, ())``: none)."""
        import zlib

        rng = np.random.default_rng([self.seed, zlib.crc32(str(episode_id).encode())])
        if not self.opponent_ids or rng.random() >= self.share:
            return None, ()
        k = int(rng.integers(len(self.opponent_ids)))
        held = rng.permutation(3)[:int(rng.integers(1, 3))]
        return self.opponent_ids[k], tuple(sorted(int(x) for x in held))

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        module, held = self.seats(getattr(episode, "id_", episode))
        return module if module is not None and int(str(agent_id).rsplit("_", 1)[-1]) in held else MODULE_ID


def _check_sizes(num_envs: int, batch: int, minibatch: int) -> None:
    """Refuse batch sizes RLlib would train on no row with (it fails later, inside its learner, with an
    ``UnboundLocalError``). Measured: 128 tables and batches of 256 (two steps a table) fail; 384 train."""
    if batch < 4 * num_envs:
        raise ValueError(f"rllib: decisions_per_batch {batch} is under 4 steps for each of num_envs {num_envs} "
                         f"tables; raise decisions_per_batch to {4 * num_envs} or more, or lower num_envs")
    if minibatch > batch:
        raise ValueError(f"rllib: minibatch {minibatch} is larger than decisions_per_batch {batch}")


def _fixed_opponents(opponents: Any) -> list[str]:
    """``opponents`` as a list of agent specs; ``"self"`` refused (RLlib's other seats are the shared module)."""
    opponents = [opponents] if isinstance(opponents, str) else list(opponents or ())
    if "self" in opponents:
        raise ValueError("rllib: opponents 'self' is not taken (every seat no opponent holds is the shared module, "
                         "which trains); name fixed agents, e.g. ['rule']")
    return opponents


def build_config(*, num_envs: int = 1, batch: int = 1024, minibatch: int = 256, epochs: int = 2,
                 learning_rate: float = 1e-3, state_layers=(256,), head_layers=(128,), init: str | None = None,
                 reward_scale: float = 0.05, reward: str = "score", score_scale: float = 8.0, entropy_coeff: float = 0.0,
                 bid_entropy_coeff: float | None = None,
                 bid_epsilon: float = 0.0, opponents=(), opponent_share: float = 0.0, seed: int = 0,
                 vector_env: bool = False, whole_hands: bool = False, env_name: str = "ddz_rllib"):
    """PPO (new API stack) with :class:`MoveScoringRLModule` as the one module ``"shared"`` of all three
    seats: every seat's decisions train it (self-play), ``num_envs`` tables stepped together by one env
    runner (one forward pass for all). Rewards are rulebook scores times ``reward_scale`` (``reward``
    ``"win"``: +1 / -1 for the hand's winners / losers, times ``reward_scale``: the env's option; ``"sign_play"``:
    win/loss for play and the score / ``score_scale`` for bids, doubles and redoubles, :class:`SplitTargetsEnv`); gamma 1 (the
    hand's score is the return). The entropy bonus is ``entropy_coeff`` in play and ``bid_entropy_coeff``
    (``None``: the same) in bids, doubles and redoubles: RLlib's one coefficient and per-row weights.
    ``opponents`` (agent specs, e.g. ``["rule"]``): in ``opponent_share`` of the hands one or two seats go to
    one of them, a :class:`FixedAgentRLModule` each (``opponent0``, ``opponent1``...), which is not trained
    (:class:`SeatsToModules`); ``"self"`` is refused: the other seats are the shared module already.
    ``vector_env``: the ``num_envs`` tables are one batched env (:class:`~.tables.RLlibTables`, through
    :class:`~.tables.TablesEnvRunner`) instead of ``num_envs`` PettingZoo envs (:func:`make_env`);
    ``whole_hands`` (with ``vector_env``): :class:`~.tables.HandsEnvRunner`, which steps them in its own loop
    and gives the learner whole hands."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    _check_sizes(num_envs, batch, minibatch)
    if whole_hands and not vector_env:
        raise ValueError("rllib: whole_hands needs vector_env (its loop steps the batched env)")
    opponents = _fixed_opponents(opponents)
    coeff, play, bid = entropy_weights(entropy_coeff, bid_entropy_coeff)
    model_config = {"state_layers": list(state_layers), "head_layers": list(head_layers), "init": init,
                    "bid_epsilon": bid_epsilon, "entropy_weights": [play, bid]}
    fixed = {f"opponent{k}": spec for k, spec in enumerate(opponents)} if opponent_share > 0 else {}
    return (
        PPOConfig()
        .environment(env_name, env_config={"reward_scale": reward_scale, "reward": reward, "score_scale": score_scale},
                     disable_env_checking=True)  # (the pre-check steps with an unmasked action: rightly refused)
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs,
                     **({"env_runner_cls": HandsEnvRunner if whole_hands else TablesEnvRunner} if vector_env else {}))
        .learners(num_learners=0)
        .multi_agent(policies={MODULE_ID, *fixed}, policies_to_train=[MODULE_ID],
                     policy_mapping_fn=SeatsToModules(list(fixed), opponent_share if fixed else 0.0, seed))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: RLModuleSpec(module_class=MoveScoringRLModule, model_config=model_config),
            **{mid: RLModuleSpec(module_class=FixedAgentRLModule, model_config={"agent": spec})
               for mid, spec in fixed.items()}}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs,
                  lr=learning_rate, gamma=1.0, lambda_=0.95, entropy_coeff=coeff, grad_clip=1.0)
        .debugging(seed=seed)
    )


# ---------------------------------------------------------------------------------------------- training
def export_policy(module: MoveScoringRLModule, path: str | os.PathLike, **info: Any) -> None:
    """The module's policy in the one export format (``agents.load(path)`` seats it), marked as RLlib's."""
    save_policy(module.policy, path, library="rllib", **info)


#: train()'s options and their defaults (``train.py --config rllib --set options.KEY=VALUE``)
DEFAULTS: dict[str, Any] = {
    "num_envs": 128, "decisions_per_batch": 8192, "minibatch": 2048, "epochs": 1, "learning_rate": 1e-3, "reward_scale": 1.0,
    "target": "sign_play", "score_scale": 8.0,
    "entropy_coeff": 0.01, "bid_entropy_coeff": 0.2, "bid_epsilon": 0.1, "opponents": ["rule"],
    "opponent_share": 0.0, "state_layers": (256,), "head_layers": (128,), "init": None, "checkpoint_seconds": 120.0,
    "progress_seconds": 30.0, "threads": 1, "vector_env": True, "whole_hands": True,
}
CHECKPOINT_DIR = "rllib_checkpoint"


def train(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None, seed: int = 0,
          resume: bool = False, progress: bool = True,
          **options: Any) -> dict:
    """RLlib PPO in self-play (:func:`build_config`) for ``seconds`` of wall time or ``decisions`` learned from in all (across resumes; the first reached):
    ``algo.train()`` iterations of ``decisions_per_batch`` env steps (all seats' decisions).

    ``run_dir`` gets ``rllib_checkpoint/`` (``algo.save_to_path``: RLlib's whole state, its own format, read
    back by ``resume=True`` with ``restore_from_path``: this run's own files), ``state.json`` (steps, wall
    and CPU seconds so far) and ``policy.pt`` (the export format) every ``checkpoint_seconds`` and at the
    end. Returns ``{"steps", "cpu_seconds", "wall_seconds", "policy"}`` (steps: decisions learned from)."""
    import ray
    from ray.tune.registry import register_env

    from ...runs.session import Session

    o = check_options(options)
    _check_sizes(o["num_envs"], o["decisions_per_batch"], o["minibatch"])  # (before the run folder is touched)
    _fixed_opponents(o["opponents"])
    torch.set_num_threads(int(o["threads"]))
    ses = Session("rllib", run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=progress, state_files=(CHECKPOINT_DIR,),
                  counters={"iterations": 0}, checkpoint_seconds=o["checkpoint_seconds"],
                  progress_seconds=o["progress_seconds"])
    ck_dir = ses.path(CHECKPOINT_DIR)
    register_env("ddz_rllib", make_env)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False,
             logging_level="ERROR")
    config = build_config(num_envs=o["num_envs"], batch=o["decisions_per_batch"], minibatch=o["minibatch"], epochs=o["epochs"],
                          learning_rate=o["learning_rate"], state_layers=o["state_layers"],
                          head_layers=o["head_layers"], init=o["init"], **env_reward(o),
                          entropy_coeff=o["entropy_coeff"], bid_entropy_coeff=o["bid_entropy_coeff"],
                          bid_epsilon=o["bid_epsilon"], opponents=o["opponents"],
                          opponent_share=o["opponent_share"], vector_env=o["vector_env"],
                          whole_hands=o["whole_hands"] and o["vector_env"], seed=seed + int(ses.done["iterations"]))  # (a resumed run deals new hands)
    info = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}, "seed": seed}
    algo = config.build_algo()
    last: dict = {}

    def save() -> None:
        algo.save_to_path(ck_dir)
        export_policy(algo.get_module(MODULE_ID), ses.policy_path, steps=int(ses.done["steps"]), **info)

    def line() -> str:
        ret = last.get("env_runners", {}).get("agent_episode_returns_mean") or {}
        what = {"none": "score", "sign": "win/loss"}.get(o["target"], "target")
        scale = env_reward(o)["reward_scale"]
        return f"mean {what} by seat { {a: round(float(v) / scale, 2) for a, v in sorted(ret.items())} }"

    try:
        if ses.resuming:
            algo.restore_from_path(ck_dir)
        ses.restart_clock()  # (Ray's start and the build, ~10 s, are not training time)
        with ses.keeping(save):
            while ses.running():
                last = algo.train()
                ses.done["steps"] += decisions_sampled(last)
                ses.done["iterations"] += 1
                ses.tick(save, line)
        return ses.finish(save)
    finally:
        algo.stop()
        ray.shutdown()


def env_reward(o: dict) -> dict:
    """The learner's ``target`` (:mod:`agents.integrations.targets`) and ``reward_scale`` as the env's reward
    (:func:`build_config`'s ``reward``, ``reward_scale``, ``score_scale``): "none" is the rulebook score,
    "sign" the env's win/loss, "scale" the score times ``reward_scale / score_scale``."""
    env = {"none": "score", "sign": "win", "sign_play": "sign_play", "scale": "score"}[o["target"]]
    scale = o["reward_scale"] / o["score_scale"] if o["target"] == "scale" else o["reward_scale"]
    return {"reward": env, "reward_scale": scale, "score_scale": o["score_scale"]}


def decisions_sampled(result: dict) -> int:
    """The trained module's decisions in one ``algo.train()`` result: those its env runner sampled in the
    iteration, each once (over a run, what the run learned from; with ``whole_hands`` a hand is learned from when
    it ends, so an iteration's count includes the open hands' decisions and not the earlier steps of those that
    ended, and a run's last open hands are counted but not learned from). (Not the learner's
    ``num_module_steps_trained``: that counts a row once per minibatch pass, ``epochs`` times and more, with RLlib's extra time step per episode chunk: 2.3x the decisions at the
    defaults. The runs before this count overstated RLlib's decisions so.) With ``vector_env`` the runner's own
    count of the module's actions (:data:`~.tables.DECISIONS`); without, RLlib's
    ``num_module_steps_sampled``, which counts 2 observations a hand that close no action (a seat's first,
    when it comes with another seat's step, and each seat's last): 3% to 6% more than the actions."""
    runners = result.get("env_runners") or {}
    for key in (DECISIONS, "num_module_steps_sampled"):
        if MODULE_ID in (runners.get(key) or {}):
            return int(runners[key][MODULE_ID])
    raise KeyError(f"rllib: the result of algo.train() has neither env_runners.{DECISIONS}.{MODULE_ID} nor "
                   f"env_runners.num_module_steps_sampled.{MODULE_ID}")


def check_options(options: dict) -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``)."""
    from ..options import check_options as check

    return check("rllib", options, DEFAULTS)


__all__ = ["check_options", "RLlibObs", "make_env", "MoveScoringRLModule", "FixedAgentRLModule", "SeatsToModules", "decisions_sampled",
           "build_config", "export_policy", "train", "DEFAULTS",
           "CHECKPOINT_DIR", "POLICY_FILE", "MODULE_ID"]
