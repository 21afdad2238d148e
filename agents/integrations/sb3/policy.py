"""Stable-Baselines3 / sb3-contrib: the move-scoring policy as a ``MaskablePPO`` policy class.

    from sb3_contrib import MaskablePPO
    from agents.integrations.sb3.policy import MoveScoringSB3Policy, export_policy
    from agents.integrations.seat_env import DouDizhuSeatEnv

    model = MaskablePPO(MoveScoringSB3Policy, DouDizhuSeatEnv(opponents="rule", reward_scale=0.05),
                        policy_kwargs={"state_layers": [256], "head_layers": [128]})   # or {"init": "pretrained"}
    model.learn(20_000)
    export_policy(model, "sb3.pt")          # agents.load("sb3.pt"), evaluate.py --a sb3.pt --b rule

:class:`MoveScoringSB3Policy` is a ``MaskableActorCriticPolicy`` whose actor logits and critic value
both come from one :class:`~agents.integrations.move_policy.MoveScoringPolicy` (no features
extractor, no MLP extractor, no ``action_net``: a linear layer onto 24,648 ids is what the move
scorer replaces). MaskablePPO hands it what it hands any masked policy: observations as tensors
(int8 from the env, float32 from the rollout buffer; the scorer takes either) and ``action_masks``
(a bool array from the envs, float32 tensors from the buffer, one row per observation). It cannot
act without them: the legal set is what it scores.

Its distribution (:class:`LegalMovesDistribution`) holds the logits of the legal moves alone, not
sb3-contrib's dense ``MaskableCategorical`` over 24,648 ids: the same probabilities, log-probabilities
and entropies, a hundredth of the cost (measured in the class's docstring).

``sb3:PATH`` (:func:`from_spec`, registered in ``agents.loader``) seats the policy of a zip that
``model.save`` wrote, reading nothing but its ``policy.pth`` member with ``torch.load(weights_only=True)``
(the zip's ``data`` is a pickle: never opened). The arguments of the scorer are not in ``policy.pth``;
the layer widths are read off the weight shapes (``nets.0.state.K.weight`` rows are the state layers,
``head_state`` and ``head.1.K`` rows the head layers, ``head_action``'s width says ``hand_after``), and
the one argument no weight shows, the temperature, is kept in the policy's ``move_temperature`` buffer
so that it travels in ``policy.pth``. The shapes are then checked against a scorer of those
arguments (:func:`~agents.integrations.move_policy.policy_from_checkpoint`), so any layout the
scorer would not build is a one-line ``ValueError``.

:func:`train` is the training contract of the MARL benchmark: one learning seat (a seat drawn per
hand) against agents, resumable from ``run_dir``.
"""
from __future__ import annotations

import io
import inspect
import os
import zipfile
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS, OBS_SHAPE

from ...loader import SchemeSpec, parse_spec
from ...dmc.model import BIDDING_NET
from ..targets import hand_target
from ..move_policy import AGENT_KIND, LEGAL_WIDTH, MoveScoringAgent, MoveScoringPolicy, entropy_weights, explore_bids_compact, legal_pairs, \
    net_of_planes, padded_pairs, policy_from_weights, save_policy

try:
    from sb3_contrib.common.maskable.distributions import MaskableDistribution
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
except ImportError as _missing:  # sb3:PATH needs torch alone; only building the policy needs sb3-contrib
    _WHY = str(_missing)
    MaskableDistribution = object  # type: ignore[assignment,misc]

    class MaskableActorCriticPolicy:  # type: ignore[no-redef]
        def __init__(self, *args: Any, **kwargs: Any):
            raise ImportError(f"MoveScoringSB3Policy needs sb3-contrib: pip install sb3-contrib ({_WHY})")

#: the key prefix of the scorer's weights in the SB3 policy's state dict (``policy.pth``)
PREFIX = "move_policy."
TEMPERATURE_KEY = "move_temperature"
DEFAULT_STATE_LAYERS = (512, 256)
DEFAULT_HEAD_LAYERS = (256, 128)


class LegalMovesDistribution(MaskableDistribution):
    """A categorical distribution over each row's legal ids, held compactly: the logits of the legal
    ``(row, id)`` pairs alone, as :meth:`MoveScoringPolicy.score_legal` gives them.

    sb3-contrib's ``MaskableCategorical`` works on dense ``(B, 24648)`` logits; its constructor, the
    masking (a second construction), the entropy and their backward cost 388 ms per minibatch of 128
    on this CPU, against 3.4 ms for the same loss over the legal moves alone (20 a row; one thread;
    ``scatter_reduce`` / ``index_add`` per row). A MaskablePPO run went from 53 to 271 steps/s. The numbers are the same: a masked id has probability 0
    in both (``MaskableCategorical``: ``exp(-1e8)``), the entropy counts legal ids only in both.
    """

    def __init__(self, bid_epsilon: float = 0.0, entropy_weights: Sequence[float] = (1.0, 1.0)) -> None:
        super().__init__()
        self.batch = 0
        self.bid_epsilon = bid_epsilon
        self.play_weight, self.bid_weight = (float(w) for w in entropy_weights)
        self.entropy_weight: torch.Tensor | None = None

    def proba_distribution_net(self, *args: Any, **kwargs: Any) -> nn.Module:
        raise NotImplementedError("the logits of LegalMovesDistribution come from a MoveScoringPolicy, not a layer")

    def proba_distribution(self, logits: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor,
                           batch: int, bidding: torch.Tensor | None = None) -> "LegalMovesDistribution":
        """Set the distribution: ``logits`` (M,) of the legal ``ids`` (M,) of rows ``rows`` (M,) of ``batch``;
        the rows of ``bidding`` (B,) bool draw uniformly with probability ``bid_epsilon`` (the categorical is
        that mixture: :func:`~agents.integrations.move_policy.explore_bids_compact`; the entropy is the policy's
        own) and their entropy is weighted by the bid weight of ``entropy_weights`` (play's elsewhere)."""
        self.rows, self.ids, self.batch, self.logits = rows, ids, int(batch), logits
        self.entropy_weight = None if bidding is None or self.play_weight == self.bid_weight == 1.0 else \
            torch.where(bidding, self.bid_weight, self.play_weight).to(logits.dtype)
        top = torch.full((batch,), -torch.inf, device=logits.device).scatter_reduce(0, rows, logits.detach(), "amax")
        total = logits.new_zeros(batch).index_add(0, rows, (logits - top.index_select(0, rows)).exp())
        self.log_p = logits - (top + total.log()).index_select(0, rows)  # (M,) log-probabilities
        self.log_pi = self.log_p  # the policy's own: the entropy bonus's (CandidateCategorical's policy_logp)
        if bidding is not None and self.bid_epsilon > 0:
            self.log_p = explore_bids_compact(self.log_p, rows, bidding, self.bid_epsilon)
        return self

    def apply_masking(self, masks: Any) -> None:
        raise NotImplementedError("the legal set is fixed when the logits are scored: "
                                  "MoveScoringSB3Policy.get_distribution(obs, action_masks)")

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """(B,) log-probability of each row's action; ``ValueError`` for an action outside its row's legal set."""
        actions = actions.reshape(-1).long().to(self.ids.device)
        hit = (self.ids == actions.index_select(0, self.rows)).nonzero().squeeze(1)
        if actions.numel() != self.batch or hit.numel() != self.batch:
            raise ValueError(f"{self.batch - hit.numel()} of {self.batch} actions are not legal in their rows")
        return self.log_p.new_zeros(self.batch).index_add(0, self.rows.index_select(0, hit),
                                                          self.log_p.index_select(0, hit))

    def entropy(self) -> torch.Tensor:
        """(B,) the policy's entropy over each row's legal ids (times the row's entropy weight, when bids and
        play differ): the policy's, not the bid-exploring mixture's, whose ``epsilon / n`` floor saturates it."""
        h = -self.log_pi.new_zeros(self.batch).index_add(0, self.rows, self.log_pi.exp() * self.log_pi)
        return h if self.entropy_weight is None else h * self.entropy_weight

    def _row_argmax(self, keys: torch.Tensor) -> torch.Tensor:
        """(B,) the id with the largest key of each row (the first of ties, as MoveScoringAgent)."""
        best = torch.full((self.batch,), -torch.inf, device=keys.device).scatter_reduce(0, self.rows, keys, "amax")
        pos = torch.arange(keys.numel(), device=keys.device)
        pos = torch.where(keys >= best.index_select(0, self.rows), pos, torch.full_like(pos, keys.numel()))
        first = torch.full((self.batch,), keys.numel(), device=keys.device).scatter_reduce(0, self.rows, pos, "amin")
        return self.ids.index_select(0, first)

    def sample(self) -> torch.Tensor:
        """(B,) ids drawn from the distribution (Gumbel-max: the largest log p - log E, E ~ Exp(1))."""
        noise = torch.empty_like(self.log_p).exponential_().log()
        return self._row_argmax(self.log_p.detach() - noise)

    def mode(self) -> torch.Tensor:
        """(B,) the most probable legal id of each row (from the logits: the exported agent's choice)."""
        return self._row_argmax(self.logits.detach())

    def actions_from_params(self, logits: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor, batch: int,
                            deterministic: bool = False) -> torch.Tensor:
        return self.proba_distribution(logits, rows, ids, batch).get_actions(deterministic=deterministic)

    def log_prob_from_params(self, logits: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor,
                             batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        actions = self.actions_from_params(logits, rows, ids, batch)
        return actions, self.log_prob(actions)


class MoveScoringSB3Policy(MaskableActorCriticPolicy):
    """A ``MaskableActorCriticPolicy`` made of one :class:`MoveScoringPolicy` (``self.move_policy``).

    ``policy_kwargs`` (all optional):

    * ``state_layers``, ``head_layers``, ``hand_after``, ``temperature``: the scorer's arguments
      (defaults ``[512, 256]``, ``[256, 128]``, ``True``; temperature 1.0 from scratch);
    * ``init``: ``"pretrained"`` or a DMC checkpoint / run folder to start from
      (:meth:`MoveScoringPolicy.from_dmc`; the layers are the checkpoint's, a differing
      ``state_layers`` / ``head_layers`` / ``hand_after`` is a ``ValueError``; temperature 0.05 unless given);
    * ``bid_epsilon``: bids, doubles and redoubles drawn uniformly with this probability in training (the
      distribution is the mixture, so PPO's ratio is still its own; the greedy move is unchanged);
    * ``entropy_weights``: ``(play, bid)`` multipliers of the entropy of play and bidding rows (MaskablePPO's
      one ``ent_coef`` times each is that row's coefficient: `move_policy.entropy_weights`);
    * ``optimizer_class``, ``optimizer_kwargs``: as for any SB3 policy (Adam, eps 1e-5).
    """

    def __init__(self, observation_space: Any, action_space: Any, lr_schedule: Any,
                 state_layers: Sequence[int] | None = None, head_layers: Sequence[int] | None = None,
                 hand_after: bool | None = None, temperature: float | None = None, init: Any = None,
                 bid_epsilon: float = 0.0, entropy_weights: Sequence[float] = (1.0, 1.0),
                 optimizer_class: type[torch.optim.Optimizer] = torch.optim.Adam,
                 optimizer_kwargs: dict[str, Any] | None = None):
        shape = tuple(getattr(observation_space, "shape", None) or ())
        if int(np.prod(shape)) != OBS_CELLS or getattr(action_space, "n", None) != NUM_ACTIONS:
            raise ValueError(f"MoveScoringSB3Policy plays Dou Dizhu: observations {OBS_SHAPE} (or {OBS_CELLS} cells) "
                             f"and Discrete({NUM_ACTIONS}) actions; got {shape} and {action_space}")
        # read by _build, which the base __init__ calls (plain attributes may precede nn.Module's __init__)
        self._move_args = {"state_layers": state_layers, "head_layers": head_layers, "hand_after": hand_after,
                           "temperature": temperature, "init": init}
        self.bid_epsilon = float(bid_epsilon)
        self.entropy_weights = tuple(float(w) for w in entropy_weights)
        if len(self.entropy_weights) != 2 or min(self.entropy_weights) < 0:
            raise ValueError(f"entropy_weights must be two numbers >= 0 (play, bid); got {entropy_weights!r}")
        super().__init__(observation_space, action_space, lr_schedule, optimizer_class=optimizer_class,
                         optimizer_kwargs=optimizer_kwargs)

    # ------------------------------------------------------------------ construction
    def _make_move_policy(self) -> MoveScoringPolicy:
        a = self._move_args
        if a["init"] is None:
            return MoveScoringPolicy(DEFAULT_STATE_LAYERS if a["state_layers"] is None else a["state_layers"],
                                     DEFAULT_HEAD_LAYERS if a["head_layers"] is None else a["head_layers"],
                                     True if a["hand_after"] is None else a["hand_after"],
                                     1.0 if a["temperature"] is None else a["temperature"])
        policy = MoveScoringPolicy.from_dmc(a["init"], **({} if a["temperature"] is None
                                                          else {"temperature": a["temperature"]}))
        for key in ("state_layers", "head_layers", "hand_after"):
            given = a[key]
            if given is not None and (list(given) if key != "hand_after" else bool(given)) != policy.kwargs[key]:
                raise ValueError(f"init={a['init']!r} has {key}={policy.kwargs[key]!r}; policy_kwargs say {given!r} "
                                 f"(leave it out to take the checkpoint's)")
        return policy

    def _build(self, lr_schedule: Any) -> None:
        """The scorer and the optimizer (in place of the base class's extractor, action and value nets)."""
        self.move_policy = self._make_move_policy()
        self.action_dist = LegalMovesDistribution(self.bid_epsilon, self.entropy_weights)
        # the one argument no weight shape shows: saved with the weights (policy.pth) for sb3:PATH
        self.register_buffer(TEMPERATURE_KEY, torch.tensor(self.move_policy.temperature, dtype=torch.float64))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        """What ``policy.save`` / ``load`` rebuild it with: the scorer's resolved arguments (from scratch:
        the weights that follow replace any DMC start)."""
        kw = self.move_policy.kwargs
        return {"observation_space": self.observation_space, "action_space": self.action_space,
                "lr_schedule": self._dummy_schedule, "state_layers": kw["state_layers"],
                "head_layers": kw["head_layers"], "hand_after": kw["hand_after"], "temperature": kw["temperature"],
                "bid_epsilon": self.bid_epsilon, "entropy_weights": self.entropy_weights,
                "optimizer_class": self.optimizer_class, "optimizer_kwargs": self.optimizer_kwargs}

    # ------------------------------------------------------------------ what MaskablePPO calls
    def _scored(self, obs: torch.Tensor, action_masks: Any) -> tuple[LegalMovesDistribution, torch.Tensor]:
        """The distribution over each row's legal ids and the values ``(B, 1)``, from one scorer pass."""
        if action_masks is None:
            raise ValueError("MoveScoringSB3Policy scores the legal moves only: it needs action_masks "
                             "(MaskablePPO passes the env's action_masks(); give them to predict() too)")
        batch = obs.shape[0]
        # the envs' bool (n_envs, 24648), the buffer's float32 rows, predict()'s one (24648,), or the legal ids
        # padded with -1 (B, LEGAL_WIDTH) of LegalSetsRolloutBuffer: rows of ids
        m = torch.as_tensor(action_masks)
        if m.numel() == batch * LEGAL_WIDTH:
            rows, ids = padded_pairs(m.reshape(batch, LEGAL_WIDTH).long())
        else:
            rows, ids = legal_pairs(m.reshape(batch, NUM_ACTIONS), batch)
        rows, ids = rows.to(obs.device), ids.to(obs.device)
        logits, value = self.move_policy.score_legal(obs, rows, ids)
        bidding = net_of_planes(obs.reshape(batch, -1).float()) == BIDDING_NET \
            if self.bid_epsilon > 0 or self.entropy_weights != (1.0, 1.0) else None
        return self.action_dist.proba_distribution(logits, rows, ids, batch, bidding), value.unsqueeze(1)

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: Any = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values ``(B, 1)`` and their log-probabilities (the rollout step)."""
        distribution, values = self._scored(obs, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        log_prob = distribution.log_prob(actions)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: Any = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values ``(B, 1)``, log-probabilities of ``actions`` and entropies (the update step)."""
        distribution, values = self._scored(obs, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def get_distribution(self, obs: torch.Tensor, action_masks: Any = None) -> Any:
        return self._scored(obs, action_masks)[0]

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """Values ``(B, 1)``: the value head alone (no move is scored, no mask needed)."""
        return self.move_policy.value(obs).unsqueeze(1)

    def _predict(self, observation: torch.Tensor, deterministic: bool = False,
                 action_masks: Any = None) -> torch.Tensor:
        return self.get_distribution(observation, action_masks).get_actions(deterministic=deterministic)


def export_policy(model: Any, path: str | os.PathLike, **info: Any) -> None:
    """Save a MaskablePPO model's scorer in the one export format (``agents.load(path)`` seats it)."""
    policy = getattr(model, "policy", None)
    if not isinstance(policy, MoveScoringSB3Policy):
        raise TypeError(f"export_policy takes a model whose policy is MoveScoringSB3Policy, got "
                        f"{type(policy).__name__}")
    save_policy(policy.move_policy, path, library="sb3", steps=int(model.num_timesteps), **info)


# ---------------------------------------------------------------------- sb3:PATH
def policy_from_zip(path: str | os.PathLike) -> MoveScoringPolicy:
    """The :class:`MoveScoringPolicy` inside a zip that ``model.save`` wrote for a MaskablePPO with
    :class:`MoveScoringSB3Policy`, from its ``policy.pth`` alone (weights only). ``FileNotFoundError``
    for no file, ``ValueError`` naming the file for anything else."""
    from ddz_env.files import input_file, max_load_bytes

    from ...loader import check_tensor_bytes

    where = repr(os.fspath(path))
    if not os.path.lexists(path):
        raise FileNotFoundError(f"sb3 model {where} not found (sb3:PATH takes a zip written by model.save)")
    input_file(path, "sb3 model")  # a regular file of bounded size: no FIFO, device or 10 GB file
    limit = max_load_bytes()
    too_big = (f"sb3 model {where}: its policy.pth inflates to {{:,}} bytes, more than the {limit:,} an agent file "
               f"may be (set DDZ_MAX_LOAD_BYTES to allow more)")
    try:
        with zipfile.ZipFile(path) as zf:
            if "policy.pth" not in zf.namelist():
                raise ValueError(f"sb3 model {where}: a zip without policy.pth (not a Stable-Baselines3 model.save "
                                 f"file)")
            # the size the zip states, before anything is inflated: a 1 MB zip inflates to 1 GiB of zeros;
            # then a bounded read (zipfile stops at the stated size, the bound is kept all the same)
            info = zf.getinfo("policy.pth")
            if info.file_size > limit:
                raise ValueError(too_big.format(info.file_size))
            with zf.open(info) as member:
                raw = member.read(limit + 1)
            if len(raw) > limit:
                raise ValueError(too_big.format(len(raw)))
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
        raise ValueError(f"sb3 model {where}: not a readable zip ({e})") from None
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (UnpicklingError, RuntimeError, EOFError...)
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"sb3 model {where}: policy.pth is corrupt ({type(e).__name__}: {first})") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and torch.is_tensor(v) for k, v in state.items()):
        raise ValueError(f"sb3 model {where}: policy.pth is not a state dict of tensors")
    check_tensor_bytes(state, f"sb3 model {where}: policy.pth")  # (stride-0 views: a few KB, any shape)
    weights = {k[len(PREFIX):]: v for k, v in state.items() if k.startswith(PREFIX)}
    if not weights or TEMPERATURE_KEY not in state:
        raise ValueError(f"sb3 model {where}: not a MoveScoringSB3Policy (its policy.pth holds "
                         f"{', '.join(sorted(state)[:3]) or 'nothing'}...: another policy class, such as MlpPolicy)")
    return policy_from_weights(weights, f"sb3 model {where}", temperature=float(state[TEMPERATURE_KEY]))


def from_spec(spec: str | SchemeSpec, **kwargs: Any) -> MoveScoringAgent:
    """The loader's entry point for ``sb3:PATH`` (no options: all after ``sb3:`` is the path): a greedy
    :class:`MoveScoringAgent` (``kwargs``: its ``name``, ``threads``)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    agent = MoveScoringAgent(policy_from_zip(spec.target), **{"name": f"{AGENT_KIND}:sb3", **kwargs})
    return agent


# ---------------------------------------------------------------------- training (the benchmark's contract)
MODEL_ZIP = "model.zip"


def split_targets(values: np.ndarray, rewards: np.ndarray, episode_starts: np.ndarray, last_values: np.ndarray,
                  dones: np.ndarray, bidding: np.ndarray, last_bidding: np.ndarray, lam: float, gamma: float = 1.0
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``target="sign_play"``'s advantages and returns over SB3's rollout arrays (``(T, E)``: time, table; a
    reward only where the learner's hand ends, as :class:`~agents.integrations.seat_vector.VectorSeatEnv` pays).
    Each hand's bids (``bidding``: the bidding network's rows: bids, doubles, redoubles) and its play are two
    trajectories, GAE over each apart (TorchRL's ``selfplay.hand_targets``): the play ends in sign(reward), a
    win or a loss, the bids in the reward itself (the score times ``reward_scale``: stakes matter to those
    choices only). A hand still open at the rollout's end bootstraps the trajectory of its next row
    (``last_bidding``) from ``last_values``; when that row is play, the hand's bids, whose end is not known yet,
    get advantage 0 and their own value as the return (no update)."""
    T, E = values.shape
    adv = np.zeros((T, E), np.float32)
    ret = values.astype(np.float32).copy()
    for e in range(E):
        # per trajectory (0 play, 1 bids): the next value in it (None: its hand's end, `final`), the running sum
        nxt: list[float | None] = [None, None]
        final = [0.0, 0.0]
        run = [0.0, 0.0]
        known = [True, True]
        for t in range(T - 1, -1, -1):
            ends = bool(dones[e]) if t == T - 1 else bool(episode_starts[t + 1, e])
            if ends:  # this row is the learner's last of its hand: both trajectories end in its reward
                r = float(rewards[t, e])
                final, nxt, run, known = [hand_target(r, b, "sign_play", 1.0) for b in (False, True)], [None, None], \
                    [0.0, 0.0], [True, True]
            elif t == T - 1:  # the hand goes on: the next row's trajectory bootstraps from its value
                if last_bidding[e]:
                    nxt, known = [None, float(last_values[e])], [True, True]
                else:  # (its bids' end is not known yet)
                    nxt, known = [float(last_values[e]), None], [True, False]
                run = [0.0, 0.0]
            k = int(bool(bidding[t, e]))
            if not known[k]:
                continue
            v = float(values[t, e])
            delta = (final[k] if nxt[k] is None else gamma * nxt[k]) - v
            run[k] = delta + (0.0 if nxt[k] is None else gamma * lam * run[k])
            adv[t, e], ret[t, e] = run[k], run[k] + v
            nxt[k] = v
    return adv, ret


def legal_sets_buffer_class(target: str = "scale") -> type:
    """``LegalSetsRolloutBuffer``: sb3-contrib's ``MaskableRolloutBuffer`` keeping each step's legal ids (int16,
    ``LEGAL_WIDTH`` a row, ``-1`` after them) instead of a float32 mask of 24,648 (2 KB a decision, not 96 KB);
    its samples hand those padded ids to the policy as ``action_masks`` (``MaskablePPO(rollout_buffer_class=...)``).
    Measured at 128 tables (``n_steps`` 32, minibatches of 1,024), sb3-contrib's buffer spent about 40% of the
    run allocating, flattening and scanning the float masks. ``target``: ``"scale"``, SB3's GAE over the
    rewards (the score times ``reward_scale``); ``"sign_play"``, :func:`split_targets` (the buffer's ``next_obs``, a callable, gives the
    observations after the rollout: ``model._last_obs``)."""
    if target not in ("scale", "sign_play"):
        raise ValueError(f"sb3: target must be 'scale' or 'sign_play', got {target!r}")
    from stable_baselines3.common.buffers import RolloutBuffer
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    class LegalSetsRolloutBuffer(MaskableRolloutBuffer):
        def reset(self) -> None:
            self.mask_dims = LEGAL_WIDTH
            self.action_masks = np.full((self.buffer_size, self.n_envs, LEGAL_WIDTH), -1, np.int16)
            RolloutBuffer.reset(self)

        def add(self, *args: Any, action_masks: np.ndarray | None = None, **kwargs: Any) -> None:
            if action_masks is not None:
                m = np.asarray(action_masks).reshape(self.n_envs, -1)
                if m.shape[1] == NUM_ACTIONS:  # the envs' dense masks: their legal ids, padded
                    flat = np.flatnonzero(m.view(np.uint8) if m.dtype == np.bool_ else m)
                    rows, ids = flat // NUM_ACTIONS, flat % NUM_ACTIONS
                    starts = np.searchsorted(rows, np.arange(self.n_envs))
                    row = self.action_masks[self.pos]
                    row.fill(-1)
                    row[rows, np.arange(rows.size) - starts[rows]] = ids
                else:
                    self.action_masks[self.pos] = m
            RolloutBuffer.add(self, *args, **kwargs)

        def compute_returns_and_advantage(self, last_values: torch.Tensor, dones: np.ndarray) -> None:
            if target == "scale":
                return RolloutBuffer.compute_returns_and_advantage(self, last_values, dones)
            T, E = self.buffer_size, self.n_envs

            def bidding(planes: Any) -> np.ndarray:
                x = torch.as_tensor(np.asarray(planes).reshape(-1, OBS_CELLS), dtype=torch.float32)
                return (net_of_planes(x) == BIDDING_NET).numpy()

            self.advantages[:], self.returns[:] = split_targets(
                self.values, self.rewards, self.episode_starts, last_values.detach().cpu().numpy().reshape(E),
                np.asarray(dones).reshape(E), bidding(self.observations).reshape(T, E), bidding(self.next_obs()),
                self.gae_lambda, self.gamma)

    return LegalSetsRolloutBuffer


def seat_tables(num_envs: int, opponents: Any = "random", *, seed: int = 0, reward_scale: float = 0.05) -> Any:
    """``agents.integrations.seat_vector.VectorSeatEnv`` as an SB3 ``VecEnv``: ``num_envs`` tables of one
    batched env, the opponents of all of them acting in one ``act_batch`` per step (not a ``DummyVecEnv`` of seat
    envs stepped one by one). Observations are the learning seats' planes; ``env_method("action_masks")`` (what
    ``MaskablePPO`` asks) gives each table's dense mask, built from the compact legal sets on demand. A finished
    table holds its next hand at once (SB3's auto-reset); its info has ``"episode"`` (``r``, ``l``: what
    ``Monitor`` reports) and ``"score"`` (the learning seat's raw R19 score)."""
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnv

    from ..seat_vector import VectorSeatEnv

    class SeatTablesVecEnv(VecEnv):
        render_mode = None

        def __init__(self) -> None:
            self.tables = VectorSeatEnv(num_envs, opponents, seed=seed, reward_scale=reward_scale)
            n = self.tables.num_envs
            self._length = np.zeros(n, np.int64)
            self._actions: np.ndarray | None = None
            super().__init__(n, spaces.Box(0, 1, OBS_SHAPE, dtype=np.int8), spaces.Discrete(NUM_ACTIONS))

        def reset(self) -> np.ndarray:
            seeds = [x for x in self._seeds if x is not None]
            self._seeds = [None] * self.num_envs
            self._length[:] = 0
            return self.tables.reset(seed=seeds[0]) if seeds else self.tables.reset(tables=np.arange(self.num_envs))

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions).reshape(-1).astype(np.int64)

        def step_wait(self) -> Any:
            obs, reward, terminal, info = self.tables.step(self._actions)
            self._length += 1
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(terminal).tolist():
                infos[i] = {"episode": {"r": float(reward[i]), "l": int(self._length[i]), "t": 0.0},
                            "score": int(info["scores"][i, info["seat"][i]])}
            self._length[terminal] = 0
            return obs, reward, terminal, infos

        def close(self) -> None:
            pass

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            return [int(indices)] if np.isscalar(indices) else [int(i) for i in indices]

        def has_attr(self, attr_name: str) -> bool:
            return attr_name in ("action_masks", "render_mode")

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            if attr_name == "render_mode":
                return [None] * len(self._indices(indices))
            raise AttributeError(f"the seat tables have no per-env attribute {attr_name!r}")

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            raise AttributeError(f"the seat tables have no per-env attribute {attr_name!r} to set")

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list:
            if method_name != "action_masks":
                raise AttributeError(f"the seat tables have action_masks() only, not {method_name}()")
            masks = self.tables.action_masks()
            return [masks[i] for i in self._indices(indices)]

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

    return SeatTablesVecEnv()


def train(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None, seed: int = 0,
          resume: bool = False, progress: bool = True,
          opponents: Any = ("random", "rule"), reward_scale: float = 0.05, init: Any = None,
          state_layers: Sequence[int] = (256,), head_layers: Sequence[int] = (128,), hand_after: bool = True,
          num_envs: int = 128, decisions_per_batch: int = 4096, minibatch: int = 1024, epochs: int = 2,
          learning_rate: float | None = None,
          gamma: float = 1.0, gae_lambda: float = 0.95, entropy_coeff: float = 0.01, bid_entropy_coeff: float = 0.01,
          bid_epsilon: float = 0.1, target: str = "scale",
          checkpoint_seconds: float = 120.0,
          progress_seconds: float = 30.0, threads: int = 1, **unknown: Any) -> dict:
    """MaskablePPO with :class:`MoveScoringSB3Policy` at one seat (drawn per hand) against ``opponents``
    for ``seconds`` of wall time or ``decisions`` learned from in all (across resumes; the first reached).

    ``run_dir`` gets ``model.zip`` (``model.save``: the weights and optimizer state that ``resume=True``
    reads back with ``set_parameters``, weights only) with ``state.json`` (steps, wall and CPU seconds
    so far) every ``checkpoint_seconds``, ``policy.pt`` (the export format) with each, and at the end.
    ``opponents``: one agent spec for all envs, or a list giving each env's (e.g. ``["random", "rule"]``,
    repeated to ``num_envs``). Rewards are rulebook scores times ``reward_scale`` (0.05: scores reach tens;
    a hand's return stays within about [-1, 1]); ``gamma`` 1: the score is the whole hand's. ``bid_epsilon``:
    bids, doubles and redoubles drawn uniformly with this probability (against fixed opponents a seat that
    never bids never plays as landlord, so nothing would show it that bidding can pay); ``entropy_coeff`` the
    entropy bonus of play, ``bid_entropy_coeff`` that of bids, doubles and redoubles. ``target``: ``"scale"``,
    every decision towards the scaled score; ``"sign_play"``, play towards win/loss and bids towards the scaled
    score, two trajectories a hand (:func:`split_targets`; TorchRL's and DMC's ``sign_play``).
    ``init``: start from a DMC checkpoint (``"pretrained"``), else from scratch with the given layers.
    ``learning_rate``: 1e-3 from scratch (the batch geometry of the other learners: 4,096 decisions a rollout,
    minibatches of 1,024, 2 epochs, as RLlib's and Tianshou's defaults), 3e-5 from a DMC start (its logits are Q / 0.05: every gradient
    20 times larger; measured over 16,384 steps against random + rule, 3e-4 took the pretrained agent
    from +1.3 to -1.7 per hand against rule, 3e-5 kept it at +1.1 and raised it from +8.0 to +9.7
    against random).
    Returns ``{"steps", "cpu_seconds", "wall_seconds", "policy"}`` (steps: the learning seat's decisions).
    """
    o = check_options({**{k: v for k, v in locals().items() if k in DEFAULTS and v != DEFAULTS[k]}, **unknown})
    # (an idea's old name, renamed by the check, arrives in unknown: the checked values are the ones to use)
    num_envs, decisions_per_batch, minibatch, epochs, entropy_coeff = (
        o["num_envs"], o["decisions_per_batch"], o["minibatch"], o["epochs"], o["entropy_coeff"])
    n_steps = max(1, decisions_per_batch // num_envs)  # (SB3's rollout: n_steps per env)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from ddz_env.files import replacing

    from ...runs.session import Session

    torch.set_num_threads(int(threads))
    ses = Session("sb3", run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=progress, state_files=(MODEL_ZIP,),
                  checkpoint_seconds=checkpoint_seconds, progress_seconds=progress_seconds)
    zip_path = ses.path(MODEL_ZIP)
    resumed = ses.resuming and ses.done["steps"] > 0
    opps = [opponents] if isinstance(opponents, (str, bytes, os.PathLike)) or hasattr(opponents, "act") \
        else list(opponents)

    env = seat_tables(num_envs, opps, seed=seed + int(ses.done["steps"]), reward_scale=reward_scale)
    if learning_rate is None:
        learning_rate = 1e-3 if init is None else 3e-5
    policy_kwargs: dict[str, Any] = {"init": init} if init is not None else {
        "state_layers": list(state_layers), "head_layers": list(head_layers), "hand_after": hand_after}
    coeff, play, bid = entropy_weights(entropy_coeff, bid_entropy_coeff)
    policy_kwargs.update(bid_epsilon=bid_epsilon, entropy_weights=(play, bid))
    model = MaskablePPO(MoveScoringSB3Policy, env, rollout_buffer_class=legal_sets_buffer_class(target), n_steps=n_steps, batch_size=minibatch, n_epochs=epochs,
                        learning_rate=learning_rate, gamma=gamma, gae_lambda=gae_lambda, ent_coef=coeff,
                        policy_kwargs=policy_kwargs, seed=seed + int(ses.done["steps"]), device="cpu", verbose=0)
    model.rollout_buffer.next_obs = lambda: model._last_obs  # (split_targets: the rows after the rollout)
    # (a resumed run is seeded with seed + its steps so far: it deals new hands, not the first run's again)
    if resumed:
        model.set_parameters(zip_path, exact_match=True, device="cpu")
        model.num_timesteps = int(ses.done["steps"])
    # plain facts only in the export (agents.load reads it weights-only): an agent object by its repr
    config = {"opponents": [os.fspath(o) if isinstance(o, (str, os.PathLike)) else repr(o) for o in opps],
              "reward_scale": reward_scale, "init": None if init is None else str(init), "num_envs": num_envs,
              "decisions_per_batch": decisions_per_batch, "minibatch": minibatch, "epochs": epochs,
              "learning_rate": learning_rate, "gamma": gamma, "gae_lambda": gae_lambda, "entropy_coeff": entropy_coeff,
              "bid_entropy_coeff": bid_entropy_coeff, "bid_epsilon": bid_epsilon, "target": target}
    info = {"config": config, "seed": seed}

    def save() -> None:
        with replacing(zip_path) as tmp:
            model.save(tmp)
        export_policy(model, ses.policy_path, **info)

    def line() -> str:
        recent = [e["r"] for e in model.ep_info_buffer]  # Monitor's returns of the last 100 hands
        return (f"mean return {np.mean(recent):+.3f} (score {np.mean(recent) / reward_scale:+.2f}) of the last "
                f"{len(recent)} hands") if recent else "no hand finished yet"

    class Clock(BaseCallback):
        """Stops at the time budget (after the first update of the call at the earliest); checkpoints and
        progress lines on their periods (the session's)."""

        def _on_training_start(self) -> None:
            self.updates0 = model._n_updates

        def _on_step(self) -> bool:
            ses.done["steps"] = int(model.num_timesteps)
            ses.tick(save, line)
            return ses.running() or model._n_updates == self.updates0

    if ses.running():
        with ses.keeping(save):
            try:
                model.learn(total_timesteps=10**12, callback=Clock(), reset_num_timesteps=not resumed)
            finally:
                ses.done["steps"] = int(model.num_timesteps)
    return ses.finish(save)


#: train()'s options and their defaults (read from its signature: one place states them)
DEFAULTS: dict[str, Any] = {k: p.default for k, p in inspect.signature(train).parameters.items()
                            if p.kind == p.KEYWORD_ONLY and k not in ("decisions", "cadence", "seed", "resume", "progress")}


def check_options(options: dict) -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``); SB3's old
    ``n_steps`` (a rollout's steps per table) is read as ``decisions_per_batch`` = ``n_steps`` x ``num_envs``."""
    from ..options import check_options as check

    options = dict(options)
    if "n_steps" in options:
        import logging

        tables = options.get("num_envs", options.get("n_envs", DEFAULTS["num_envs"]))
        if isinstance(options["n_steps"], int) and isinstance(tables, int) and "decisions_per_batch" not in options:
            logging.getLogger("ddz.train").warning("sb3: option 'n_steps' is now 'decisions_per_batch' = n_steps x "
                                                   "num_envs (the old name works this release)")
            options["decisions_per_batch"] = options.pop("n_steps") * tables
    o = check("sb3", options, DEFAULTS)
    if o["target"] not in ("scale", "sign_play"):  # (SB3's GAE over its rewards, or the hand's two trajectories)
        raise ValueError(f"sb3: option 'target' must be 'scale' or 'sign_play', got {o['target']!r}")
    return o


__all__ = ["check_options", "DEFAULTS", "split_targets", "MoveScoringSB3Policy", "LegalMovesDistribution", "export_policy", "policy_from_zip", "from_spec", "train"]
