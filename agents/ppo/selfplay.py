"""Self-play over compact legal sets: what every policy-gradient learner shares.

The policy scores only each decision's legal moves (:meth:`MoveScoringPolicy.score_legal`), never a
24,648-wide row. Read top to bottom:

====================  ========================================================================
segment functions     a categorical over ragged legal sets: ``(scores (M,), seg (M,), n)`` ->
                      log-probabilities, entropy, Gumbel-max draws, per decision (``seg``: the
                      decision of each candidate)
:class:`Collector`    ``num_envs`` tables of ``VectorDouDizhu`` stepped together, one forward
                      pass for all of them per step; each of the learner's decisions is kept
                      with its legal set and released, with its advantage and return, when its
                      hand ends (DMC's actors do the same: no decision is cut at a batch edge)
:func:`hand_targets`  GAE over one seat's decisions of one hand, bids and play apart, from a
                      learned critic; the target of the hand's end: win/loss for play and the
                      score / ``score_scale`` for bids, doubles and redoubles (DMC's
                      ``sign_play``: stakes matter to those choices only)
:class:`Batch`        the released decisions as tensors, cut into minibatches
:func:`ppo_loss`      the clipped surrogate, the critic's squared error and the entropy bonus,
                      with its own coefficient for the bidding network's decisions
====================  ========================================================================

Opponents: with ``opponent_share`` > 0 a hand gives one or two of its three seats (drawn at the
deal) to an opponent drawn from ``opponents`` (agent specs, e.g. ``rule``, and ``"self"`` for a
frozen copy of the policy, refreshed every ``snapshot_every`` updates); only the learner's own
seats are samples. Bids are explored more than play: with ``bid_epsilon`` a bid, double or redouble
is drawn uniformly from its legal choices, and the stored log-probability is the behaviour
policy's (the mixture), so PPO's ratio stays an importance weight.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ddz_env.vector import VectorDouDizhu
from ddz_env.observation import OBS_CELLS

from ..base import Decisions
from ..dmc.model import BIDDING_NET, HIDDEN_CELLS, NUM_NETS, hidden_hands
from ..integrations.move_policy import MoveScoringAgent, MoveScoringPolicy, net_of_planes
from ..integrations.targets import hand_target


# ---------------------------------------------------------------------------------------------- segment functions
def segment_log_softmax(scores: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """(M,) log-probabilities of candidates ``scores`` within their decision ``seg`` (M,) of ``n``."""
    top = torch.full((n,), -torch.inf, dtype=scores.dtype, device=scores.device)
    top = top.scatter_reduce(0, seg, scores.detach(), "amax")
    z = scores - top.index_select(0, seg)
    total = torch.zeros(n, dtype=scores.dtype, device=scores.device).index_add(0, seg, z.exp())
    return z - total.log().index_select(0, seg)


def segment_entropy(logp: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """(n,) entropy of each decision's distribution from its candidates' log-probabilities."""
    return -torch.zeros(n, dtype=logp.dtype, device=logp.device).index_add(0, seg, logp.exp() * logp)


def segment_sample(scores: torch.Tensor, seg: torch.Tensor, n: int, generator: torch.Generator | None = None
                   ) -> torch.Tensor:
    """(n,) the drawn candidate (an index into ``scores``) of each decision: Gumbel-max, the categorical of the
    scores' softmax within each decision."""
    u = torch.rand(scores.shape, generator=generator, dtype=scores.dtype).clamp_(min=torch.finfo(scores.dtype).tiny)
    noisy = scores - (-u.log()).log()
    return segment_argmax(noisy, seg, n)


def segment_argmax(scores: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """(n,) the index of the highest score of each decision (the first of ties)."""
    best = torch.full((n,), -torch.inf, dtype=scores.dtype).scatter_reduce(0, seg, scores, "amax")
    j = torch.arange(scores.numel())
    j = torch.where(scores >= best.index_select(0, seg), j, torch.full_like(j, scores.numel()))
    return torch.full((n,), scores.numel(), dtype=j.dtype).scatter_reduce(0, seg, j, "amin")


# ---------------------------------------------------------------------------------------------- the critic
class CentralCritic(torch.nn.Module):
    """A critic that sees all hands, for training only ("perfect training, imperfect execution"): an MLP per
    network over the acting seat's planes and the two other seats' true hands (``HIDDEN_CELLS`` counts, as
    DMC's hidden-hand targets). The actor, and so the exported policy, still sees only its seat (R21)."""

    def __init__(self, layers: Sequence[int] = (256,)):
        super().__init__()

        def mlp() -> torch.nn.Sequential:
            dims, parts = [OBS_CELLS + HIDDEN_CELLS, *layers], []
            for a, b in zip(dims[:-1], dims[1:]):
                parts += [torch.nn.Linear(a, b), torch.nn.ReLU()]
            return torch.nn.Sequential(*parts, torch.nn.Linear(dims[-1], 1))

        self.nets = torch.nn.ModuleList(mlp() for _ in range(NUM_NETS))

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor, net: torch.Tensor) -> torch.Tensor:
        """(N,) values of planes ``obs`` (N, 1740), hidden hands (N, 30) and each row's network (N,)."""
        x = torch.cat([obs.reshape(obs.shape[0], -1).float(), hidden.float()], dim=1)
        out = x.new_zeros(x.shape[0])
        for n in range(NUM_NETS):
            idx = (net == n).nonzero().squeeze(1)
            if idx.numel():
                out = out.index_copy(0, idx, self.nets[n](x.index_select(0, idx)).squeeze(1))
        return out


# ---------------------------------------------------------------------------------------------- targets
def gae(values: np.ndarray, final: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, returns) of one trajectory of ``values`` ending in ``final`` (gamma 1, no reward on the
    way): delta_k = v_{k+1} - v_k, the last one final - v_last; advantages summed back with ``lam``."""
    n = values.size
    nxt = np.empty(n, np.float32)
    nxt[:-1], nxt[-1] = values[1:], final
    delta = nxt - values
    adv = np.empty(n, np.float32)
    run = 0.0
    for k in range(n - 1, -1, -1):
        run = delta[k] + lam * run
        adv[k] = run
    return adv, adv + values


def hand_targets(seat: np.ndarray, bidding: np.ndarray, values: np.ndarray, scores: np.ndarray, lam: float,
                 score_scale: float, target: str) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of one hand's decisions (in time order): ``seat`` and ``bidding`` (the bidding
    network's) of each, the critic's ``values``, the seats' final ``scores`` (3,). Each seat's bids and its
    play are two trajectories; the play ends in sign(score) with ``target="sign_play"`` (score / scale with
    ``"scale"``), the bids always in score / ``score_scale``."""
    adv = np.zeros(seat.size, np.float32)
    ret = np.zeros(seat.size, np.float32)
    for s in range(3):
        for bid in (True, False):
            idx = np.flatnonzero((seat == s) & (bidding == bid))
            if idx.size == 0:
                continue
            final = hand_target(scores[s], bid, target, score_scale)
            adv[idx], ret[idx] = gae(values[idx].astype(np.float32), final, lam)
    return adv, ret


# ---------------------------------------------------------------------------------------------- the collector
class _Store:
    """Growing arrays of decisions: planes, legal sets (an id pool with offsets), the choice and its facts."""

    FIELDS = {"obs": (np.int8, OBS_CELLS), "start": (np.int64, 0), "count": (np.int64, 0), "choice": (np.int64, 0),
              "logp": (np.float32, 0), "value": (np.float32, 0), "net": (np.int64, 0), "seat": (np.int64, 0), "hidden": (np.int8, HIDDEN_CELLS), "adv": (np.float32, 0),
              "ret": (np.float32, 0)}

    def __init__(self, capacity: int = 4096):
        self.n, self.pool_n = 0, 0
        self.a = {k: np.zeros((capacity, w) if w else capacity, t) for k, (t, w) in self.FIELDS.items()}
        self.pool = np.zeros(capacity * 16, np.int64)

    def _grow(self, rows: int, ids: int) -> None:
        if self.n + rows > len(self.a["choice"]):
            cap = max(2 * len(self.a["choice"]), self.n + rows)
            for k, v in self.a.items():
                new = np.zeros((cap,) + v.shape[1:], v.dtype)
                new[:self.n] = v[:self.n]
                self.a[k] = new
        if self.pool_n + ids > self.pool.size:
            new = np.zeros(max(2 * self.pool.size, self.pool_n + ids), np.int64)
            new[:self.pool_n] = self.pool[:self.pool_n]
            self.pool = new

    def add(self, obs: np.ndarray, ids: np.ndarray, starts: np.ndarray, choice: np.ndarray, logp: np.ndarray,
            value: np.ndarray, net: np.ndarray, seat: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """Append decisions (their legal sets as ``ids``/``starts``); their row numbers."""
        k = choice.size
        self._grow(k, ids.size)
        rows = np.arange(self.n, self.n + k)
        a = self.a
        a["obs"][rows] = obs
        a["start"][rows] = self.pool_n + starts[:-1]
        a["count"][rows] = np.diff(starts)
        self.pool[self.pool_n:self.pool_n + ids.size] = ids
        a["choice"][rows], a["logp"][rows], a["value"][rows], a["net"][rows] = choice, logp, value, net
        a["seat"][rows], a["hidden"][rows] = seat, hidden
        self.n += k
        self.pool_n += ids.size
        return rows

    def keep(self, rows: np.ndarray) -> tuple["_Store", np.ndarray]:
        """A new store holding ``rows`` (in order) and each old row's new number (-1: dropped)."""
        new = _Store(max(4096, 2 * rows.size))
        counts = self.a["count"][rows]
        starts = np.zeros(rows.size + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        pos = np.repeat(self.a["start"][rows] - starts[:-1], counts) + np.arange(starts[-1])
        new._grow(rows.size, int(starts[-1]))
        for k in self.a:
            new.a[k][:rows.size] = self.a[k][rows]
        new.a["start"][:rows.size] = starts[:-1]
        new.pool[:starts[-1]] = self.pool[pos]
        new.n, new.pool_n = rows.size, int(starts[-1])
        remap = np.full(self.n, -1, np.int64)
        remap[rows] = np.arange(rows.size)
        return new, remap


@dataclass
class Batch:
    """Released decisions as tensors: planes (N, 1740) int8, legal sets (``ids`` with ``starts``), the
    chosen candidate (an index within the decision's set), the behaviour log-probability, the critic's
    value at acting, the network, advantages and returns."""

    obs: torch.Tensor
    ids: np.ndarray
    starts: np.ndarray
    choice: torch.Tensor
    logp: torch.Tensor
    value: torch.Tensor
    net: torch.Tensor
    adv: torch.Tensor
    ret: torch.Tensor
    hidden: torch.Tensor  # (N, 30) the other seats' true hands: for a central critic only

    def __len__(self) -> int:
        return int(self.choice.numel())

    def minibatch(self, idx: np.ndarray) -> "Batch":
        counts = self.starts[idx + 1] - self.starts[idx]
        starts = np.zeros(idx.size + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        pos = np.repeat(self.starts[idx] - starts[:-1], counts) + np.arange(starts[-1])
        t = torch.from_numpy(idx)
        return Batch(self.obs[t], self.ids[pos], starts, self.choice[t], self.logp[t], self.value[t], self.net[t],
                     self.adv[t], self.ret[t], self.hidden[t])

    def candidates(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(seg, ids)``: each candidate's decision and its action id, as tensors."""
        counts = np.diff(self.starts)
        return (torch.from_numpy(np.repeat(np.arange(counts.size), counts)), torch.from_numpy(self.ids))


class Collector:
    """``num_envs`` tables of the batched env played by ``policy`` (every seat, or the seats opponents do not
    hold), one forward pass a step; :meth:`collect` steps until ``decisions`` of the learner's decisions
    have been released (their hands ended) and returns them as a :class:`Batch`."""

    def __init__(self, policy: MoveScoringPolicy, num_envs: int, seed: int, *, lam: float = 0.95,
                 target: str = "sign_play", score_scale: float = 8.0, bid_epsilon: float = 0.0,
                 opponents: Sequence[str] = (), opponent_share: float = 0.0, snapshot_every: int = 50,
                 critic: CentralCritic | None = None):
        if target not in ("sign_play", "scale"):
            raise ValueError(f"target must be 'sign_play' or 'scale', got {target!r}")
        self.policy, self.lam, self.target, self.score_scale = policy, lam, target, score_scale
        self.critic = critic  # None: the policy's own value head
        self.bid_epsilon, self.opponent_share, self.snapshot_every = bid_epsilon, opponent_share, snapshot_every
        self.env = VectorDouDizhu(num_envs, seed=seed)
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.store = _Store()
        self.ready: list[np.ndarray] = []
        self.open: list[list[int]] = [[] for _ in range(num_envs)]  # the learner's rows of each table's hand
        self.specs = list(opponents)
        self.opponents: list[Any] = []
        for spec in self.specs:
            if spec == "self":
                self.opponents.append(MoveScoringAgent(copy.deepcopy(policy), threads=None))
            else:
                from ..loader import load

                self.opponents.append(load(spec))
        # who holds each seat of each table's hand: -1 the learner, k >= 0 opponents[k]
        self.holder = np.full((num_envs, 3), -1, np.int64)
        for b in range(num_envs):
            self._deal_seats(b)
        self.updates = 0
        self.hands = 0
        self.scores: list[float] = []  # the learner's seats' scores in finished hands (for progress lines)

    def _deal_seats(self, b: int) -> None:
        self.holder[b] = -1
        if self.opponents and self.rng.random() < self.opponent_share:
            k = int(self.rng.integers(len(self.opponents)))
            seats = self.rng.permutation(3)[:int(self.rng.integers(1, 3))]
            self.holder[b, seats] = k

    def refresh(self, updates: int | None = None) -> None:
        """After an update (or, with ``updates``, once the learner has made that many): the frozen copies of
        ``"self"`` take the policy's weights each time the count passes a multiple of ``snapshot_every``."""
        before = self.updates
        self.updates = before + 1 if updates is None else int(updates)
        if self.updates // self.snapshot_every > before // self.snapshot_every:
            for spec, agent in zip(self.specs, self.opponents):
                if spec == "self":
                    agent.policy.load_state_dict(self.policy.state_dict())

    def _opponents_act(self, actions: np.ndarray, obs, legal, seat) -> None:
        env = self.env
        holder = self.holder[np.arange(env.num_envs), seat]
        for k, agent in enumerate(self.opponents):
            idx = np.flatnonzero(holder == k)
            if idx.size:
                actions[idx] = agent.act_batch(Decisions.of_env(env, idx, observation=obs, legal_sets=legal))

    @torch.no_grad()
    def step(self) -> None:
        env = self.env
        obs = env.observe()
        legal = env.legal_sets()
        _, ids, starts = legal
        seat = env.current_player.astype(np.int64)
        B = env.num_envs
        actions = np.zeros(B, np.int64)
        mine = np.flatnonzero(self.holder[np.arange(B), seat] < 0)
        if mine.size < B:
            self._opponents_act(actions, obs, legal, seat)
        if mine.size:
            from ..base import take_sets

            m_starts, m_ids = take_sets(starts, ids, mine) if mine.size < B else (starts, ids)
            x = torch.from_numpy(obs[mine].reshape(mine.size, OBS_CELLS))
            counts = np.diff(m_starts)
            seg = torch.from_numpy(np.repeat(np.arange(mine.size), counts))
            scores, value = self.policy.score_legal(x, seg, torch.from_numpy(np.array(m_ids, np.int64)))  # (a copy: env views are read-only)
            logp = segment_log_softmax(scores, seg, mine.size)
            pick = segment_sample(scores, seg, mine.size, self.gen)
            net = net_of_planes(x.float()).numpy()
            hidden = hidden_hands(env.hands[mine], seat[mine])  # (for the central critic: never the actor's input)
            if self.critic is not None:
                value = self.critic(x, torch.from_numpy(hidden), torch.from_numpy(net))
            behave = logp.index_select(0, pick).numpy().copy()
            if self.bid_epsilon > 0:
                bid = net == BIDDING_NET
                explore = bid & (self.rng.random(mine.size) < self.bid_epsilon)
                if explore.any():
                    j = np.flatnonzero(explore)
                    pick = pick.clone()
                    pick[torch.from_numpy(j)] = torch.from_numpy(
                        m_starts[j] + (self.rng.random(j.size) * counts[j]).astype(np.int64))
                # behaviour probability of every bidding decision's choice: the mixture
                j = np.flatnonzero(bid)
                p = logp.index_select(0, pick[torch.from_numpy(j)]).exp().numpy()
                behave[j] = np.log((1 - self.bid_epsilon) * p + self.bid_epsilon / counts[j])
            pick_np = pick.numpy()
            actions[mine] = m_ids[pick_np]
            rows = self.store.add(obs[mine].reshape(mine.size, OBS_CELLS), m_ids, m_starts, pick_np - m_starts[:-1],
                                  behave, value.numpy(), net, seat[mine], hidden)
            for b, r in zip(mine.tolist(), rows.tolist()):
                self.open[b].append(r)
        _, _, done, info = env.step(actions, observe=False)
        for b in np.flatnonzero(done).tolist():
            self._finish(b, info["final_scores"][b].astype(np.float64))

    def _finish(self, b: int, scores: np.ndarray) -> None:
        """Hand ``b`` ended with the seats' raw ``scores``: its learner decisions get their targets (a void
        hand, all scores 0, teaches the bids that all passed that passing is worth 0)."""
        rows = np.asarray(self.open[b], np.int64)
        self.open[b] = []
        mine = np.flatnonzero(self.holder[b] < 0)
        self._deal_seats(b)
        self.hands += 1
        self.scores.extend(scores[mine].tolist())
        if rows.size == 0:
            return
        a = self.store.a
        adv, ret = hand_targets(a["seat"][rows], a["net"][rows] == BIDDING_NET, a["value"][rows], scores, self.lam,
                                self.score_scale, self.target)
        a["adv"][rows], a["ret"][rows] = adv, ret
        self.ready.append(rows)

    def collect(self, decisions: int) -> Batch:
        """Step until at least ``decisions`` of the learner's decisions are released; those as a :class:`Batch`."""
        got = sum(r.size for r in self.ready)
        while got < decisions:
            before = len(self.ready)
            self.step()
            got += sum(r.size for r in self.ready[before:])
        rows = np.concatenate(self.ready)
        self.ready = []
        a, pool = self.store.a, self.store.pool
        counts = a["count"][rows]
        starts = np.zeros(rows.size + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        pos = np.repeat(a["start"][rows] - starts[:-1], counts) + np.arange(starts[-1])
        batch = Batch(torch.from_numpy(a["obs"][rows]), pool[pos].copy(), starts, torch.from_numpy(a["choice"][rows]),
                      torch.from_numpy(a["logp"][rows]), torch.from_numpy(a["value"][rows]),
                      torch.from_numpy(a["net"][rows]), torch.from_numpy(a["adv"][rows]),
                      torch.from_numpy(a["ret"][rows]), torch.from_numpy(a["hidden"][rows]))
        # keep only the decisions of hands still open (the store would otherwise grow without end)
        pending = np.asarray(sorted(r for rs in self.open for r in rs), np.int64)
        self.store, remap = self.store.keep(pending)
        self.open = [remap[np.asarray(rs, np.int64)].tolist() if rs else [] for rs in self.open]
        return batch


# ---------------------------------------------------------------------------------------------- the loss
def segment_dist(scores: torch.Tensor, seg: torch.Tensor, n: int, choice_pos: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log-probability of each decision's choice (n,), entropy (n,))`` from the candidates' scores;
    ``choice_pos``: the chosen candidate's index into ``scores``. A library swaps in its own distribution
    (``dist_fn`` of :func:`ppo_loss`)."""
    logp = segment_log_softmax(scores, seg, n)
    return logp.index_select(0, choice_pos), segment_entropy(logp, seg, n)


@dataclass
class PPOSettings:
    """The clipped surrogate's settings: ``clip`` the ratio's range, ``vf_coef`` the critic's weight,
    ``entropy_coeff`` the play decisions' entropy bonus and ``bid_entropy_coeff`` the bidding network's."""

    clip: float = 0.2
    vf_coef: float = 0.5
    entropy_coeff: float = 0.01
    bid_entropy_coeff: float = 0.05
    normalize_advantage: bool = True


def ppo_loss(policy: MoveScoringPolicy, mb: Batch, s: PPOSettings, dist_fn=segment_dist,
             critic: CentralCritic | None = None) -> tuple[torch.Tensor, dict]:
    """PPO's loss on a minibatch (one forward pass over its legal sets) and its parts as floats; the value
    is ``critic``'s (it sees all hands) when given, else the policy's own head."""
    n = len(mb)
    seg, ids = mb.candidates()
    scores, value = policy.score_legal(mb.obs, seg, ids)
    if critic is not None:
        value = critic(mb.obs, mb.hidden, mb.net)
    choice_pos = torch.from_numpy(mb.starts[:-1]) + mb.choice
    logp, entropy = dist_fn(scores, seg, n, choice_pos)
    adv = mb.adv
    if s.normalize_advantage and n > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = (logp - mb.logp).exp()
    surrogate = torch.min(ratio * adv, ratio.clamp(1 - s.clip, 1 + s.clip) * adv)
    coef = torch.where(mb.net == BIDDING_NET, s.bid_entropy_coeff, s.entropy_coeff)
    policy_loss = -surrogate.mean()
    value_loss = ((value - mb.ret) ** 2).mean()
    entropy_loss = -(coef * entropy).mean()
    total = policy_loss + s.vf_coef * value_loss + entropy_loss
    with torch.no_grad():
        bids = mb.net == BIDDING_NET
        log_ratio = logp - mb.logp
        residual = torch.var(mb.ret - value) if n > 1 else torch.tensor(float("nan"))
        parts = {"policy": float(policy_loss), "value": float(value_loss), "entropy": float(entropy.mean()),
                 "entropy_play": float(entropy[~bids].mean()) if (~bids).any() else float("nan"),
                 "entropy_bid": float(entropy[bids].mean()) if bids.any() else float("nan"),
                 # (Schulman's low-variance estimator of KL(old || new): (r - 1) - log r, never negative)
                 "approx_kl": float(((ratio - 1) - log_ratio).mean()),
                 "clipped": float(((ratio - 1).abs() > s.clip).float().mean()),
                 "explained_variance": float(1 - residual / torch.var(mb.ret)) if n > 1 and torch.var(mb.ret) > 0
                 else float("nan")}
    return total, parts


__all__ = ["Collector", "CentralCritic", "Batch", "PPOSettings", "ppo_loss", "segment_log_softmax", "segment_entropy", "segment_sample",
           "segment_argmax", "segment_dist", "gae", "hand_targets"]
