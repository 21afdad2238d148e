"""The move-scoring policy: one torch module that any RL library can put on this env.

Every library sees the env's standard interface: observation planes ``(29, 4, 15)`` and a
mask over the flat ``Discrete(24648)`` action space. An MLP with 24,648 output logits over
the planes learns next to nothing here (most ids are never legal, and the logit of an id
knows nothing of the cards it plays). `MoveScoringPolicy` scores only the legal
moves, each from its own features, as the DMC agent does (``agents/dmc/model.py``):

- **state encoder**: an MLP over the 1,740 plane cells, run once per decision (one network per role
  in play and one for bidding, chosen by the status plane, as DMC's four networks: `NET_NAMES`)
- **move features**: from the fixed move table: the move's 60-cell card plane, its type, the bid /
  double / redouble choice; with `hand_after` also what the move leaves in hand (thermometer plane
  and card count)
- **score**: an MLP over (state part + move part) per legal move, divided by `temperature`: the
  move's logit
- **logits**: the scores scattered into `(B, 24648)`; illegal ids get `fill` (`-inf` by default, or
  a library's own masking value)
- **value**: a linear head on the state encoding (actor-critic learners)

Rows with different numbers of legal moves batch together: the legal set is read from the
mask once (``nonzero``), every candidate of every row is scored in one pass per network.

The trunk has DMC's layout, so `MoveScoringPolicy.from_dmc` starts it from a DMC
checkpoint (``"pretrained"``, a run folder, a ``.pt``): its logits are the DMC agent's
Q-values over ``temperature``, and a library can fine-tune our agent.

Trained policies are saved with `save_policy` into the one export format every adapter
writes (a ``torch.save`` dict of tensors and plain containers, agent kind ``"movescore"``),
which `agents.load` reads with ``weights_only=True`` and seats as a
`MoveScoringAgent` (greedy: the legal move with the highest logit) in ``evaluate.py``,
the league, ``ddz-play`` and the web page.
"""
from __future__ import annotations

import math
import os
import re
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import CH_STATUS, OBS_CELLS, OBS_SHAPE, PLANE_CELLS
from ddz_env.rules import Phase

from ..base import BatchAgent, Decisions, take_sets
from ..loader import check_tensor_bytes, read_checkpoint, save_checkpoint
from ..dmc.model import (ACTION_COUNTS, ACTION_DIM, ACTION_FEATURES, BIDDING_NET, NUM_NETS, QNet,
                         hand_after_features, hand_counts)

AGENT_KIND = "movescore"
FORMAT_VERSION = 1
#: the largest layer width a saved policy may ask for (a file's sizes are checked before any network is built)
MAX_WIDTH = 8192
MAX_LAYERS = 8


def net_of_planes(x: torch.Tensor) -> torch.Tensor:
    """(B,) int64 network of each row of (B, 1740) planes: the seat's role (0 landlord, 1 farmer after it,
    2 farmer before it) in the play phase, `BIDDING_NET` (3) before it. The status plane's phase
    and role cells as ``ddz_env.readers.read_status`` reads them, in torch."""
    status = x[:, CH_STATUS * PLANE_CELLS:(CH_STATUS + 1) * PLANE_CELLS].reshape(-1, 4, 15)
    phase = status[:, 0, :len(Phase)].argmax(dim=1)
    role = status[:, 1, :3].argmax(dim=1)
    return torch.where(phase == int(Phase.PLAY), role, torch.full_like(role, BIDDING_NET))


def legal_pairs(mask: Any, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows, ids)`` int64 of the legal entries of a (B, 24648) mask (a tensor or array; bool, or numbers
    where nonzero = legal), row-major; ``ValueError`` for another shape or a row without a legal id."""
    shape = tuple(mask.shape)
    if len(shape) != 2 or shape != (batch, NUM_ACTIONS):
        raise ValueError(f"the action mask must be (B, {NUM_ACTIONS}) for B = {batch} observations, got {shape}")
    if torch.is_tensor(mask) and mask.device.type != "cpu":
        rows, ids = (mask if mask.dtype == torch.bool else mask != 0).nonzero(as_tuple=True)
    else:  # numpy's flatnonzero is 6x torch's nonzero on a CPU (512 x 24648: 1.7 ms vs 10 ms)
        m = mask.numpy() if torch.is_tensor(mask) else np.asarray(mask)
        m = m.view(np.uint8) if m.dtype in (np.bool_, np.int8) else m
        flat = np.flatnonzero(m)
        rows, ids = torch.from_numpy(flat // NUM_ACTIONS), torch.from_numpy(flat % NUM_ACTIONS)
    if rows.numel() == 0 or int(torch.bincount(rows, minlength=batch).min()) == 0:
        raise ValueError("every row of the action mask needs at least one legal action (is the seat on turn?)")
    return rows, ids


#: the fixed width of a padded legal set (the libraries whose buffers keep every step's arrays at one width:
#: RLlib, Tianshou). The widest legal set found: 519 moves (a lead from 1 1 1 1 3 3 3 3 1 1 1 1 of ranks 3..A:
#: airplanes with wings), by simulated annealing over hands of up to 20 cards from 8 starts, each ending
#: there; ``tests/integrations/test_rllib_module.py`` replays that hand. A wider set is a ``ValueError``.
LEGAL_WIDTH = 1024


def padded_pairs(legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows, ids)`` int64 of padded legal sets ``legal`` (B, W): each row's ids, then ``-1``."""
    rows, slot = (legal >= 0).nonzero(as_tuple=True)
    return rows, legal[rows, slot].long()


def explore_bids(logits: torch.Tensor, valid: torch.Tensor, bidding: torch.Tensor, epsilon: float | torch.Tensor
                 ) -> torch.Tensor:
    """Padded candidate logits ``(B, K)`` (``valid`` (B, K) marks the slots that hold a move) as the
    log-probabilities of the behaviour policy that explores bids: in the rows of ``bidding`` (B,) bool (bids,
    doubles, redoubles) ``(1 - epsilon) p + epsilon / n`` over the row's ``n`` moves, elsewhere the softmax.
    ``epsilon`` is one number or one per row (B,). A library's categorical over these is that mixture, so
    the probabilities its PPO stores and updates are the ones it sampled from (the ratio stays an
    importance weight), as the self-play collector's ``bid_epsilon`` (:mod:`agents.ppo.selfplay`);
    its entropy bonus belongs to the policy, not to the mixture (:class:`CandidateCategorical`'s
    ``policy_logp``). Monotone within a row: the greedy move is the same. Invalid slots come back ``-inf``."""
    logp = torch.log_softmax(logits.masked_fill(~valid, -torch.inf), dim=-1)
    eps = torch.as_tensor(epsilon, dtype=logp.dtype, device=logp.device)
    if not bool((eps > 0).any()) or not bool(bidding.any()):
        return logp
    if eps.ndim == 1:
        eps = eps.unsqueeze(-1)
    n = valid.sum(-1, keepdim=True).clamp(min=1).to(logp.dtype)
    # (a row with epsilon 0 gets a floor of the smallest float, not log 0: logaddexp(-inf, -inf) in its padding
    # slots has a NaN gradient, which torch.where's unselected branch would still pass back)
    floor = (eps / n).clamp(min=torch.finfo(logp.dtype).tiny).log()
    mixed = torch.logaddexp(logp + torch.log1p(-eps), floor)
    mixed = mixed.masked_fill(~valid, -torch.inf)
    return torch.where(bidding.unsqueeze(-1), mixed, logp)


def explore_bids_compact(log_p: torch.Tensor, rows: torch.Tensor, bidding: torch.Tensor, epsilon: float
                         ) -> torch.Tensor:
    """:func:`explore_bids` over compact candidates: ``log_p`` (M,) log-probabilities of the candidates of rows
    ``rows`` (M,), ``bidding`` (B,) bool."""
    if epsilon <= 0 or not bool(bidding.any()):
        return log_p
    n = torch.bincount(rows, minlength=bidding.shape[0]).index_select(0, rows).to(log_p.dtype)
    mixed = torch.logaddexp(log_p + math.log1p(-epsilon), (epsilon / n).log())
    return torch.where(bidding.index_select(0, rows), mixed, log_p)


def entropy_weights(entropy_coeff: float, bid_entropy_coeff: float | None) -> tuple[float, float, float]:
    """A library's one entropy coefficient and the per-row weights that make it two: ``(coeff, play, bid)``
    with ``coeff * play == entropy_coeff`` and ``coeff * bid == bid_entropy_coeff`` (bids, doubles and
    redoubles explored more than play, as the self-play collector's ``bid_entropy_coeff``). ``None``: the
    bids take the play's coefficient (weights 1). ``ValueError`` for a negative coefficient."""
    bid = entropy_coeff if bid_entropy_coeff is None else bid_entropy_coeff
    if entropy_coeff < 0 or bid < 0:
        raise ValueError(f"entropy coefficients must be >= 0; got entropy_coeff={entropy_coeff!r}, "
                         f"bid_entropy_coeff={bid_entropy_coeff!r}")
    coeff = max(entropy_coeff, bid)
    if coeff == 0:
        return 0.0, 1.0, 1.0
    return coeff, entropy_coeff / coeff, bid / coeff


def _check_layers(name: str, value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_LAYERS \
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_WIDTH for v in value):
        raise ValueError(f"{name} must be a list of 1..{MAX_LAYERS} layer widths, each 1..{MAX_WIDTH}; got {value!r}")
    return [int(v) for v in value]


def gumbel_sample(logits: torch.Tensor, sample_shape: Sequence[int] = ()) -> torch.Tensor:
    """Draws from the categorical of ``logits`` (..., N) (``-inf`` at ids never drawn) by the Gumbel-max
    trick, of shape ``sample_shape + logits.shape[:-1]``: the same distribution as ``torch.multinomial``
    on the softmax, which over 24,648 ids costs five times as much (2 against 10 ms for 16 rows, one
    thread). The libraries' masked categoricals sample through it (`GumbelCategorical`)."""
    logits = logits.expand(torch.Size(sample_shape) + logits.shape)
    u = torch.rand_like(logits).clamp_(min=torch.finfo(logits.dtype).tiny)
    return (logits - (-u.log()).log()).argmax(-1)


class GumbelCategorical(torch.distributions.Categorical):
    """``torch.distributions.Categorical`` drawn by `gumbel_sample` (Tianshou's ``dist_fn``)."""

    def sample(self, sample_shape: Sequence[int] = ()) -> torch.Tensor:
        return gumbel_sample(self.logits, sample_shape)


class CandidateCategorical(torch.distributions.Categorical):
    """A categorical over each row's legal moves only, in the env's action ids: ``logits`` (B, K) of the
    candidates padded to the row with the most (K, not 24,648), ``ids`` (B, K) their action ids, ``valid``
    (B, K) which slots hold a move. ``sample``/``mode`` return action ids, ``log_prob`` takes them, so a
    library's PPO sees the same actions as with the dense mask at a fraction of the cost
    (`MoveScoringPolicy.candidates`). A ``Categorical`` over the K slots otherwise (its ``probs``).
    ``entropy_weight`` (B,), when given, multiplies each row's entropy: the library's one entropy
    coefficient then weighs bids more than play (`entropy_weights`).

    ``policy_logp`` (B, K), when given, are the policy's own logits (normalised here) where ``logits`` are the
    behaviour mixture that explores bids (:func:`explore_bids`): samples and ``log_prob`` follow the mixture,
    the entropy is the policy's. The mixture's entropy is floored by ``epsilon / n`` at each move, so its
    bonus saturates and barely pulls back a bid head that has collapsed onto one bid (SB3's and RLlib's
    committed policies, trained with the mixture's entropy, put probability 1.000 on bidding 3 in 2,000
    first bid turns; TorchRL's, whose bonus is the policy's, 0.40)."""

    def __init__(self, logits: torch.Tensor, ids: torch.Tensor, valid: torch.Tensor,
                 entropy_weight: torch.Tensor | None = None, policy_logp: torch.Tensor | None = None):
        super().__init__(logits=logits.masked_fill(~valid, -torch.inf), validate_args=False)
        self.ids, self.valid, self.entropy_weight = ids, valid, entropy_weight
        self.policy_logp = None if policy_logp is None else \
            torch.log_softmax(policy_logp.masked_fill(~valid, -torch.inf), dim=-1)

    def sample(self, sample_shape: Sequence[int] = ()) -> torch.Tensor:
        slot = gumbel_sample(self.logits, sample_shape)
        return self.ids.expand(torch.Size(sample_shape) + self.ids.shape).gather(-1, slot.unsqueeze(-1)).squeeze(-1)

    @property
    def mode(self) -> torch.Tensor:
        return self.ids.gather(-1, self.logits.argmax(-1, keepdim=True)).squeeze(-1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of action ids ``value`` (B,); ``-inf`` for an id that is not a candidate."""
        hit = (self.ids == value.long().unsqueeze(-1)) & self.valid
        lp = torch.where(hit, self.logits, torch.zeros_like(self.logits)).sum(-1)
        return torch.where(hit.any(-1), lp, torch.full_like(lp, -torch.inf))

    def entropy(self) -> torch.Tensor:
        # (the padding's -inf logits are zeroed before the product: 0 * -inf would be NaN, in the gradient too)
        logp = self.logits if self.policy_logp is None else self.policy_logp
        h = -(logp.exp() * logp.masked_fill(~self.valid, 0.0)).sum(-1)
        return h if self.entropy_weight is None else h * self.entropy_weight


class MoveScoringPolicy(nn.Module):
    """Masked logits over the 24,648 action ids (and a value), computed only from the legal moves.

    Args:
        state_layers: the state encoder's MLP widths (DMC's default ``[512, 256]``).
        head_layers: the per-move scoring MLP's widths (``[256, 128]``).
        hand_after: add what each move leaves in hand to its features (DMC's ``action_features:
            hand_after``, its largest measured gain).
        temperature: logits are scores / temperature (1.0 from scratch; `from_dmc` uses a small
            one so that the softmax starts close to the DMC agent's greedy choice).

    ``forward(obs, mask)`` takes planes ``(B, 29, 4, 15)`` or ``(B, 1740)`` of any dtype and a mask
    ``(B, 24648)`` (bool, or numbers where nonzero = legal); every row needs at least one legal id.
    """

    def __init__(self, state_layers: Sequence[int] = (512, 256), head_layers: Sequence[int] = (256, 128),
                 hand_after: bool = True, temperature: float = 1.0):
        super().__init__()
        state_layers = _check_layers("state_layers", list(state_layers))
        head_layers = _check_layers("head_layers", list(head_layers))
        temperature = float(temperature)
        if not math.isfinite(temperature) or temperature <= 0:
            raise ValueError(f"temperature must be a positive number, got {temperature!r}")
        self.kwargs = {"state_layers": state_layers, "head_layers": head_layers, "hand_after": bool(hand_after),
                       "temperature": temperature}
        self.hand_after = bool(hand_after)
        self.temperature = temperature
        self.nets = nn.ModuleList(QNet(state_layers, head_layers, 0, self.hand_after) for _ in range(NUM_NETS))
        self.values = nn.ModuleList(nn.Linear(state_layers[-1], 1) for _ in range(NUM_NETS))
        for v in self.values:  # a value of 0 to start: no advantage is made up by an untrained critic
            nn.init.zeros_(v.weight)
            nn.init.zeros_(v.bias)
        with torch.no_grad():  # near-equal logits to start: the untrained policy plays about as the random agent
            for net in self.nets:  # (measured in examples/torchrl_ppo.py on 200 seeded hands vs random: -0.38 per
                out = net.head[-1]  # hand untrained, the random agent's; +1.12 with the default init, and after
                # the same 8 batches of training +0.19 with it, +1.49 with this one at lr 3e-3, +2.71 at 1e-2)
                out.weight.mul_(0.01)
                out.bias.zero_()
        self.register_buffer("action_table", torch.from_numpy(ACTION_FEATURES), persistent=False)
        self.register_buffer("action_counts", torch.from_numpy(ACTION_COUNTS.astype(np.int64)), persistent=False)

    # ------------------------------------------------------------------ the scoring core
    def score_legal(self, obs: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of candidate moves and the value of each state.

        ``obs`` (B, ...) planes, ``rows`` (M,) the state of each candidate, ``ids`` (M,) its action id.
        Returns ``(logits (M,), value (B,))``, float32. Each state is encoded once, by its network.
        """
        x = obs.reshape(obs.shape[0], -1).float()
        if x.shape[1] != OBS_CELLS:
            raise ValueError(f"observations must be {OBS_SHAPE} planes ({OBS_CELLS} cells a row), got rows of "
                             f"{x.shape[1]} cells")
        nets = net_of_planes(x)
        hand = hand_counts(x) if self.hand_after else None
        cand_net = nets.index_select(0, rows)
        logits = x.new_zeros(ids.shape[0])
        value = x.new_zeros(x.shape[0])
        local = torch.zeros_like(nets)
        for n in range(NUM_NETS):
            idx = (nets == n).nonzero().squeeze(1)
            if idx.numel() == 0:
                continue
            net = self.nets[n]
            feats = net.features(x.index_select(0, idx))
            value = value.index_copy(0, idx, self.values[n](feats).squeeze(1).float())
            pos = (cand_net == n).nonzero().squeeze(1)
            if pos.numel() == 0:
                continue
            local = local.index_copy(0, idx, torch.arange(idx.numel(), device=x.device))
            r = rows.index_select(0, pos)
            a = ids.index_select(0, pos)
            af = self.action_table.index_select(0, a)
            if self.hand_after:
                af = torch.cat([af, hand_after_features(hand.index_select(0, r),
                                                        self.action_counts.index_select(0, a))], dim=1)
            s = net.score(net.head_state(feats), local.index_select(0, r), af)
            logits = logits.index_copy(0, pos, s / self.temperature)
        return logits, value

    def forward(self, obs: torch.Tensor, mask: torch.Tensor, fill: float = float("-inf")
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits (B, 24648), value (B,))``: each legal id's logit, ``fill`` at every illegal id."""
        rows, ids = legal_pairs(mask, obs.shape[0])
        rows, ids = rows.to(obs.device), ids.to(obs.device)
        scores, value = self.score_legal(obs, rows, ids)
        logits = torch.full((obs.shape[0], NUM_ACTIONS), fill, dtype=scores.dtype, device=scores.device)
        logits[rows, ids] = scores  # in place: a second (B, 24648) copy costs as much as the scoring
        return logits, value

    def candidates(self, obs: torch.Tensor, mask: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(logits (B, K), ids (B, K), valid (B, K), value (B,))``: each row's legal moves only, padded to
        the longest legal set of the batch (`CandidateCategorical`'s inputs; no 24,648-wide row). ``mask``: a
        (B, 24648) mask or the legal ``(rows, ids)`` pairs, row-major (``padded_pairs``)."""
        rows, ids = mask if isinstance(mask, tuple) else legal_pairs(mask, obs.shape[0])
        rows, ids = rows.to(obs.device), ids.to(obs.device)
        scores, value = self.score_legal(obs, rows, ids)
        counts = torch.bincount(rows, minlength=obs.shape[0])
        starts = torch.cumsum(counts, 0) - counts
        slot = torch.arange(rows.numel(), device=obs.device) - starts.index_select(0, rows)
        width = int(counts.max())
        logits = scores.new_zeros((obs.shape[0], width)).index_put((rows, slot), scores)
        cand = torch.zeros((obs.shape[0], width), dtype=torch.int64, device=obs.device).index_put((rows, slot), ids)
        valid = torch.zeros((obs.shape[0], width), dtype=torch.bool, device=obs.device).index_put(
            (rows, slot), torch.ones_like(rows, dtype=torch.bool))
        return logits, cand, valid, value

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """(B,) the value head alone (no move is scored)."""
        x = obs.reshape(obs.shape[0], -1).float()
        nets = net_of_planes(x)
        out = x.new_zeros(x.shape[0])
        for n in range(NUM_NETS):
            idx = (nets == n).nonzero().squeeze(1)
            if idx.numel():
                out = out.index_copy(0, idx, self.values[n](self.nets[n].features(x.index_select(0, idx))).squeeze(1))
        return out

    @torch.no_grad()
    def act_compact(self, obs: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """The highest-logit legal id of each decision, from compact legal sets (the batched env's
        ``legal_starts`` / ``legal_ids``), without a dense mask."""
        device = self.action_table.device
        counts = np.diff(starts)
        actions = ids[starts[:-1]].astype(np.int64)  # the only legal id of a forced decision: not scored
        keep = np.flatnonzero(counts > 1)
        if keep.size == 0:
            return actions
        if keep.size < counts.size:
            starts, ids = take_sets(starts, ids, keep)
            obs, counts = obs[keep], counts[keep]
        rows = torch.from_numpy(np.repeat(np.arange(counts.size), counts)).to(device)
        cand = torch.as_tensor(np.array(ids, dtype=np.int64), device=device)  # (copies: the legal sets given
        x = torch.as_tensor(np.array(obs), device=device)  # may be read-only views, which torch does not take)
        scores, _ = self.score_legal(x, rows, cand)
        if not bool(torch.isfinite(scores).all()):
            raise ValueError("non-finite logits from the move-scoring policy: its weights have diverged (NaN or inf)")
        best = torch.full((counts.size,), -torch.inf, device=device).scatter_reduce(0, rows, scores, "amax")
        j = torch.arange(cand.numel(), device=device)
        j = torch.where(scores >= best.index_select(0, rows), j, torch.full_like(j, cand.numel()))
        first = torch.full((counts.size,), cand.numel(), device=device, dtype=j.dtype).scatter_reduce(0, rows, j, "amin")
        actions[keep] = ids[first.cpu().numpy()]
        return actions

    # ------------------------------------------------------------------ DMC start
    @classmethod
    def from_dmc(cls, spec: Any = "pretrained", temperature: float = 0.05) -> "MoveScoringPolicy":
        """A policy whose trunk and move scores are a DMC checkpoint's (``"pretrained"``, a run folder,
        a checkpoint path, or a `agents.dmc.model.DMCModel`): logits = Q / ``temperature``.
        The value head starts at zero. ``ValueError`` for a DMC model of another layout (an LSTM,
        a decomposed head)."""
        from ..dmc.model import DMCModel

        if isinstance(spec, DMCModel):
            model = spec
        else:
            from ..dmc.agent import DMCAgent, pretrained

            agent = pretrained({}) if spec == "pretrained" else DMCAgent.from_checkpoint(spec)
            model = agent.model
        kw = model.kwargs
        if kw.get("history_lstm", 0) or kw.get("value_head", "q") != "q":
            raise ValueError(f"a move-scoring policy starts from a DMC model with MLP trunks and a q head; this one "
                             f"has {kw}")
        policy = cls(kw["state_layers"], kw["head_layers"], kw.get("hand_after", False), temperature)
        own = {k: v for k, v in model.state_dict().items() if k.startswith("nets.") and ".hands_head." not in k}
        missing, unexpected = policy.load_state_dict(own, strict=False)
        if unexpected or any(not k.startswith("values.") for k in missing):
            raise ValueError(f"DMC weights do not fit a move-scoring policy: missing {missing[:3]}, "
                             f"unexpected {unexpected[:3]}")
        return policy


# ---------------------------------------------------------------------- the export format
def save_policy(policy: MoveScoringPolicy, path: str | os.PathLike, *, library: str = "", steps: int = 0,
                **info: Any) -> None:
    """Write ``policy`` as a ``"movescore"`` checkpoint that `agents.load` seats (weights and plain
    containers only). ``library``: who trained it (``"sb3"``, ``"torchrl"``...), ``steps``: its training
    steps, ``info``: any other plain facts (a config dict, the seed). Whole or not at all."""
    if not isinstance(policy, MoveScoringPolicy):
        raise TypeError(f"save_policy saves a MoveScoringPolicy, got {type(policy).__name__}")
    save_checkpoint(path, AGENT_KIND, format_version=FORMAT_VERSION, model_kwargs=dict(policy.kwargs),
                    obs_shape=list(OBS_SHAPE), num_actions=NUM_ACTIONS, library=str(library), steps=int(steps),
                    model={k: v.detach().cpu() for k, v in policy.state_dict().items()}, info=dict(info))


#: the largest magnitude a float16 holds (a weight beyond it would be inf in a halved file, which then does not load)
FLOAT16_MAX = float(torch.finfo(torch.float16).max)


def halve_policy_file(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Write the ``"movescore"`` file ``src`` again at ``dst`` with its weights in float16: half the bytes
    of float32 weights (an 8 MB policy in 4 MB, for files kept in git), everything else as it was. It loads
    as any other (`load_policy` and ``agents.load`` copy the weights into float32 parameters); the rounding
    moves a score by about 1e-3 of itself, so a choice between two near-equal moves can differ from
    ``src``'s: evaluate the file that is kept.

    Checked before anything is written (``ValueError`` naming the file and the weight):

    * ``src`` loads (`policy_from_checkpoint`): its weights are real floating point (complex, integer or
      bool weights are refused: the parameters are float32 and a complex value would lose its imaginary
      part unsaid) and finite once in float32;
    * float64 weights are converted like the others, not refused: the policy computes in float32 whatever
      the file holds, so their extra precision is lost on loading anyway, and the halved file is a quarter
      of their bytes;
    * every weight fits float16 (at most 65,504 in magnitude): a larger one would be inf in the file,
      which then does not load; such a policy is refused (keep it in float32).

    The file is written through a temporary file beside ``dst`` that is read back, its weights compared
    and then loaded with ``agents.load``, before it replaces ``dst``; any failure (a check, a full disk,
    a file that does not load) removes the temporary file and leaves ``dst`` as it was, ``src`` too (so
    ``dst`` may be ``src``: halved in place). ``dst`` is a file: a stream (``/dev/stdout``, a FIFO) cannot
    be read back and is refused; an ``OSError`` when it cannot be written."""
    from ddz_env.files import replacing, written_in_place

    where = repr(os.fspath(src))
    ck = read_checkpoint(src)
    policy_from_checkpoint(ck, where)  # (a movescore file whose weights fit and are real and finite: checked first)
    model = {}
    for k, v in ck["model"].items():
        half = v.to(torch.float16)
        if not bool(torch.isfinite(half).all()):
            raise ValueError(f"{where}: weight {k} holds values up to {float(v.abs().max()):.6g} in magnitude, "
                             f"beyond float16's {FLOAT16_MAX:,.0f}: halved, they would be inf and the file would not "
                             f"load; keep this policy in float32")
        model[k] = half
    if written_in_place(dst):
        raise ValueError(f"{os.fspath(dst)!r} is a stream, not a file: a halved policy is written to a file and "
                         f"read back before it is kept")
    content = {**ck, "model": model}
    agent = content.pop("agent")
    with replacing(dst) as tmp:  # (any error below: the temporary file is removed, dst is left as it was)
        save_checkpoint(tmp, agent, **content)
        _check_written(tmp, model, repr(os.fspath(dst)))


def _check_written(path: str, model: dict, where: str) -> None:
    """``ValueError`` unless the file at ``path`` holds ``model``'s weights and loads with ``agents.load``."""
    from ..loader import load

    try:
        back = read_checkpoint(path)["model"]
        if set(back) != set(model) or any(back[k].dtype != v.dtype or not torch.equal(back[k], v)
                                          for k, v in model.items()):
            raise ValueError("its weights are not the ones written")
        threads = torch.get_num_threads()
        try:
            load(path)  # (as a user loads it; the agent it builds sets torch's threads: restored)
        finally:
            torch.set_num_threads(threads)
    except (ValueError, RuntimeError, TypeError, KeyError) as e:
        raise ValueError(f"the halved policy written for {where} does not load ({str(e).splitlines()[0] if str(e) else type(e).__name__}): "
                         f"{where} was left as it was") from None


def policy_from_checkpoint(ck: dict, where: str = "checkpoint") -> MoveScoringPolicy:
    """The `MoveScoringPolicy` of a ``"movescore"`` checkpoint dict; ``ValueError`` naming ``where``
    and what is wrong (another action space or observation shape, sizes out of bounds, weights that do
    not fit the stated layers, non-finite weights). The sizes are checked before any network is built."""
    if ck.get("agent") != AGENT_KIND:
        raise ValueError(f"{where}: not a move-scoring policy (agent {ck.get('agent')!r}, expected {AGENT_KIND!r})")
    if ck.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{where}: move-scoring format {ck.get('format_version')!r}, this version reads {FORMAT_VERSION}")
    if list(ck.get("obs_shape") or []) != list(OBS_SHAPE) or ck.get("num_actions") != NUM_ACTIONS:
        raise ValueError(f"{where}: made for observations {ck.get('obs_shape')} and {ck.get('num_actions')} actions; "
                         f"this env has {list(OBS_SHAPE)} and {NUM_ACTIONS}")
    kw = ck.get("model_kwargs")
    weights = ck.get("model")
    if not isinstance(kw, dict) or not isinstance(weights, dict):
        raise ValueError(f"{where}: 'model_kwargs' and 'model' must be dicts")
    unknown = set(kw) - {"state_layers", "head_layers", "hand_after", "temperature"}
    if unknown:
        raise ValueError(f"{where}: unknown model arguments {sorted(unknown)}")
    try:
        with torch.device("meta"):  # the layout alone, no memory: its shapes against the file's
            net = MoveScoringPolicy(**kw).state_dict()
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: bad model arguments: {e}") from None
    shapes = {k: tuple(v.shape) for k, v in net.items()}
    got = {k: tuple(v.shape) for k, v in weights.items() if torch.is_tensor(v)}
    if got != shapes:
        diff = sorted(set(got) ^ set(shapes)) or sorted(k for k in got if got[k] != shapes[k])
        raise ValueError(f"{where}: weights do not fit the stated layers ({kw}); first mismatch: {diff[0]}")
    # the memory of what is built, before isfinite or the network takes it: stride-0 weights of any shape fit
    # in a few KB (torch.zeros(1).expand(...)), so the file's size bounds nothing here
    check_tensor_bytes(net, f"{where}: the network of the stated layers")
    check_tensor_bytes(weights, where)
    # real floating point only: a complex weight copied into a float32 parameter loses its imaginary part (a
    # warning at most), and isfinite of an integer says nothing; finite as the float32 parameters will hold it (a
    # float64 weight of 1e300 is finite, and inf once loaded)
    odd = next(((k, v) for k, v in weights.items() if not torch.is_tensor(v) or not v.is_floating_point()), None)
    if odd is not None:
        kind = odd[1].dtype if torch.is_tensor(odd[1]) else type(odd[1]).__name__
        raise ValueError(f"{where}: weight {odd[0]} is {kind}: a move-scoring policy's weights are real floating "
                         f"point (float16, bfloat16, float32 or float64)")
    bad = [k for k, v in weights.items() if not bool(torch.isfinite(v.to(torch.float32)).all())]
    if bad:
        raise ValueError(f"{where}: non-finite weights (NaN or inf, or beyond float32's range: the parameters are "
                         f"float32) in {bad[0]}")
    policy = MoveScoringPolicy(**kw)
    policy.load_state_dict(weights)
    return policy


def _layer_rows(weights: dict, pattern: str) -> list[int]:
    """The output widths of the weights whose names match ``pattern`` (one group: the layer index), in order."""
    found = sorted((int(m.group(1)), w) for k, w in weights.items() if (m := re.fullmatch(pattern, k)))
    return [int(w.shape[0]) for _, w in found]


def policy_from_weights(weights: dict, where: str = "weights", temperature: float = 1.0) -> MoveScoringPolicy:
    """The `MoveScoringPolicy` of a bare state dict (a library's own save of it: SB3's ``policy.pth``,
    an RLlib module's ``module_state.pt``), its layers read from the weights' shapes; then checked as a
    ``"movescore"`` checkpoint is (``ValueError`` naming ``where``)."""
    try:
        kwargs = {"state_layers": _layer_rows(weights, r"nets\.0\.state\.(\d+)\.weight"),
                  "head_layers": [int(weights["nets.0.head_state.weight"].shape[0])]
                  + _layer_rows(weights, r"nets\.0\.head\.1\.(\d+)\.weight"),
                  "hand_after": int(weights["nets.0.head_action.weight"].shape[1]) != ACTION_DIM,
                  "temperature": float(temperature)}
    except (KeyError, IndexError, TypeError, RuntimeError, AttributeError) as e:
        raise ValueError(f"{where}: move-scoring weights of another layout ({type(e).__name__}: {e})") from None
    checkpoint = {"agent": AGENT_KIND, "format_version": FORMAT_VERSION, "model_kwargs": kwargs,
                  "obs_shape": list(OBS_SHAPE), "num_actions": NUM_ACTIONS, "model": weights}
    return policy_from_checkpoint(checkpoint, where)


def load_policy(path: str | os.PathLike) -> MoveScoringPolicy:
    """The `MoveScoringPolicy` saved at ``path`` (a file from `save_policy`)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"move-scoring policy {os.fspath(path)!r} not found")
    return policy_from_checkpoint(read_checkpoint(path), repr(os.fspath(path)))


class MoveScoringAgent(BatchAgent):
    """A `MoveScoringPolicy` at any seat, in every phase: the legal move with the highest logit
    (deterministic). Uses only what its seat is given (R21): the planes and the legal ids."""

    def __init__(self, policy: MoveScoringPolicy, name: str = AGENT_KIND, threads: int | None = 1):
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.policy = policy.eval()
        self.name = name

    @classmethod
    def from_checkpoint(cls, checkpoint: dict) -> "MoveScoringAgent":
        """The factory ``agents.load`` calls with a ``"movescore"`` checkpoint dict."""
        agent = cls(policy_from_checkpoint(checkpoint))
        library = checkpoint.get("library") or ""
        agent.name = f"{AGENT_KIND}:{library}" if library else AGENT_KIND
        agent.steps = int(checkpoint.get("steps", 0))
        return agent

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        if (np.diff(decisions.legal_starts) == 0).any():
            raise ValueError("MoveScoringAgent: a decision without a legal action (is this seat on turn?)")
        n = len(decisions)
        planes = np.ascontiguousarray(decisions.observation, dtype=np.int8).reshape(n, OBS_CELLS)
        return self.policy.act_compact(planes, decisions.legal_starts, decisions.legal_ids)

    def __repr__(self) -> str:
        return f"MoveScoringAgent({self.name})"


__all__ = ["LEGAL_WIDTH", "padded_pairs", "MoveScoringPolicy", "MoveScoringAgent", "gumbel_sample", "GumbelCategorical", "CandidateCategorical", "entropy_weights", "save_policy", "halve_policy_file", "load_policy", "policy_from_checkpoint",
           "policy_from_weights",
           "net_of_planes", "AGENT_KIND"]
