"""``train.py --config torchrl``: TorchRL's own PPO, self-play over the batched tables.

Read top to bottom, one update: TorchRL's ``Collector`` (``torchrl.collectors``) steps a
:class:`~agents.integrations.torchrl.modules.SelfPlayEnv` (an ``EnvBase`` over ``num_envs`` tables of
``VectorDouDizhu``; at each step the seat on turn at every table decides) with the policy as a
``ProbabilisticActor`` (``make_actor``: ``MaskedCategorical`` over the legal moves, sampled), and gives
``decisions_per_batch`` decisions as a ``[num_envs, T]`` TensorDict (the env's ``"action_mask"`` is TorchRL's
24,648-wide one; the actor's ``MaskedCategorical`` is over each state's legal moves only,
``make_legal_actor``). :func:`regroup` then cuts it by seat:
a table's step ``t + 1`` is another seat's decision, so TorchRL's ``GAE`` run along the table's time axis would
take the value of the *next seat's* state as this decision's next value, and the hand's final reward would
reach only the seat that played last (what TorchRL's users of turn-based envs report going wrong). Each seat's
decisions of one hand, its bids and its play apart, are one trajectory of their own, in time order, laid end
to end in one flat TensorDict: ``("next", "done")`` and ``("next", "terminated")`` at each trajectory's last
decision, whose ``("next", "reward")`` is that seat's result (``target`` ``"sign_play"``: win/loss for play
and the score / ``score_scale`` for bids; ``"scale"``: the score / ``score_scale`` everywhere), 0 elsewhere;
``("next", "state_value")`` is the critic's value of the same seat's next decision. ``torchrl.objectives.
value.GAE`` (gamma 1, ``gae_lambda``) computes the advantages along that axis, its dones cutting it into the
seats' trajectories. Decisions of hands that have not ended when the batch does are carried to the next batch
(none is dropped, none learned from before its hand's result is known; a resumed run starts new hands).
Then ``epochs`` passes of TorchRL's ``ClipPPOLoss`` (advantages normalized per minibatch, the critic's
squared error weighted ``vf_coef``, the entropy bonus ``entropy_coeff``) in minibatches, Adam.

Not here, and in ``ppo`` (``train.py --config ppo``): opponents other than the policy itself, the bids'
own exploration (``bid_epsilon``) and entropy weight (``ClipPPOLoss`` takes one weight for one
distribution), a central critic and collector processes; a config that sets them gets a one-line warning and
the option is ignored (this release only). Every progress period ``diagnostics.csv`` gets the last update's
``ClipPPOLoss`` outputs (``loss_objective``, ``loss_critic``, ``loss_entropy``, ``entropy``, ``kl_approx``,
``clip_fraction``, ``explained_variance``). The run folder gets ``torchrl_state.pt`` (weights, optimizer),
``state.json`` and ``policy.pt`` (the export format ``agents.load`` seats).
"""
from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict
from torch import nn

from ...dmc.model import BIDDING_NET
from ..move_policy import MoveScoringPolicy, net_of_planes, save_policy
from ..targets import hand_target

#: train()'s options and their defaults (``train.py --config torchrl --set options.KEY=VALUE``)
DEFAULTS: dict[str, Any] = {
    "num_envs": 256, "decisions_per_batch": 4096, "epochs": 2, "minibatch": 512, "learning_rate": 3e-4,
    "clip_epsilon": 0.2, "vf_coef": 0.5, "entropy_coeff": 0.01, "gae_lambda": 0.95, "target": "sign_play",
    "score_scale": 8.0, "state_layers": (256,), "head_layers": (128,), "init": None,
    "checkpoint_seconds": 120.0, "progress_seconds": 30.0, "threads": 1,
}
#: options of the torchrl learner before it was TorchRL's own (``ppo``'s): warned about and ignored, this release
DEPRECATED = ("bid_entropy_coeff", "bid_epsilon", "opponents", "opponent_share", "snapshot_every", "central_critic",
              "critic_layers", "collectors")
STATE_FILE = "torchrl_state.pt"
#: the keys of a decision kept from the collector's rollout
KEEP = ("observation", "action_mask", "seat", "action", "action_log_prob")


def check_options(options: dict) -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``); a
    :data:`DEPRECATED` one is dropped with a one-line warning."""
    from ..options import check_options as check

    old = sorted(k for k in options if k in DEPRECATED)
    if old:
        warnings.warn(f"torchrl: option(s) {', '.join(old)} belong to the project's own PPO (train.py --config ppo) "
                      f"and are ignored by TorchRL's learner; they will be refused in the next release",
                      FutureWarning, stacklevel=3)
    return check("torchrl", {k: v for k, v in options.items() if k not in DEPRECATED}, DEFAULTS)


# ---------------------------------------------------------------------------------------------- per-seat regrouping
def regroup(data: TensorDict, carry: TensorDict | None = None, *, target: str = "sign_play",
            score_scale: float = 8.0) -> tuple[TensorDict | None, TensorDict | None]:
    """The decisions of a :class:`SelfPlayEnv` rollout ``data`` (batch ``[B, T]``; with ``carry``, the rows
    left over from the last call, which come first at their table) whose hand ended, regrouped into per-seat
    trajectories, and the rows of hands still running (the next call's ``carry``; ``None`` if none).

    The result is flat (batch ``[N]``): the trajectories laid end to end, each one seat's decisions of one hand
    (its bids and its play apart) in time order; ``("next", "done")`` / ``("next", "terminated")`` true at a
    trajectory's last decision, whose ``("next", "reward")`` (shape ``[N, 1]``) is the seat's result (see the
    module doc), 0 elsewhere; ``"next_row"``: the index of the same trajectory's next decision (its own at the
    last). ``None`` when no hand ended."""
    B, T = data.batch_size
    rows = data.select(*KEEP).clone()
    rows.set("table", torch.arange(B).unsqueeze(1).expand(B, T).clone())
    rows.set("final", data["next", "reward"].clone())  # (B, T, 3) the seats' scores where the hand ended
    rows.set("ends", data["next", "done"].reshape(B, T).clone())
    rows = rows.reshape(-1)
    flat = rows if carry is None else torch.cat([carry, rows], 0)  # (carry first: earlier at every table)
    n = flat.batch_size[0]
    table = flat["table"].numpy()
    order = np.lexsort((np.arange(n), table))  # by table, then time (a table's rows are in time order)
    flat = flat[torch.from_numpy(order)]
    table = table[order]
    ends = flat["ends"].numpy()
    done_at = np.flatnonzero(ends)
    k = np.searchsorted(done_at, np.arange(n))  # the first hand end at or after each row
    end = done_at[np.minimum(k, max(done_at.size - 1, 0))] if done_at.size else np.zeros(n, np.int64)
    finished = (k < done_at.size) & (table[end] == table) if done_at.size else np.zeros(n, bool)
    rest = flat[torch.from_numpy(np.flatnonzero(~finished))]
    rest = rest if rest.batch_size[0] else None
    idx = np.flatnonzero(finished)
    if idx.size == 0:
        return None, rest
    done_rows = flat[torch.from_numpy(idx)]
    end = end[idx]
    seat = done_rows["seat"].numpy().astype(np.int64)
    obs = done_rows["observation"]
    bidding = (net_of_planes(obs.reshape(obs.shape[0], -1).float()) == BIDDING_NET).numpy()
    # one trajectory per (hand, seat, bids or play), in time order (rows are in time order within a hand)
    order = np.lexsort((np.arange(idx.size), bidding, seat, end))
    out = done_rows[torch.from_numpy(order)]
    key = np.stack([end[order], seat[order], bidding[order]], 1)
    last = np.ones(idx.size, bool)
    last[:-1] = (key[1:] != key[:-1]).any(1)
    final = flat["final"].numpy()[end[order], seat[order]].astype(np.float32)  # the seat's score at its hand's end
    result = hand_target(final, bidding[order], target, score_scale)
    reward = np.where(last, result, 0.0).astype(np.float32)
    nxt = np.arange(idx.size)
    nxt[~last] += 1
    d = torch.from_numpy(last).unsqueeze(-1)
    out = out.exclude("final", "ends", "table")
    out.set("next_row", torch.from_numpy(nxt))
    out.set(("next", "reward"), torch.from_numpy(reward).unsqueeze(-1))
    out.set(("next", "done"), d)
    out.set(("next", "terminated"), d.clone())
    return out, rest


def with_advantages(traj: TensorDict, critic: Any, gae: Any, chunk: int = 4096) -> TensorDict:
    """``traj`` (from :func:`regroup`) with the critic's ``"state_value"`` of every decision, the value of the
    seat's own next decision as ``("next", "state_value")``, and ``GAE``'s ``"advantage"`` and
    ``"value_target"`` along the seats' trajectories (``gae``: a ``torchrl.objectives.value.GAE`` without a
    value network of its own)."""
    with torch.no_grad():
        values = torch.cat([critic(traj[i:i + chunk].select("observation").clone())["state_value"]
                            for i in range(0, traj.batch_size[0], chunk)])
        traj.set("state_value", values)
        traj.set(("next", "state_value"), values.index_select(0, traj["next_row"]))
        gae(traj)
    return traj


# ---------------------------------------------------------------------------------------------- training
def train(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None,
          seed: int = 0, resume: bool = False, progress: bool = True, **options: Any) -> dict:
    """TorchRL's PPO (see the module doc) for ``seconds`` of wall time or ``decisions`` learned from in all
    (across resumes; the first reached). ``init="pretrained"`` starts from the shipped DMC agent. Returns
    ``{"steps", "cpu_seconds", "wall_seconds", "policy"}`` (steps: decisions learned from)."""
    from torchrl.collectors import Collector
    from torchrl.envs.utils import ExplorationType
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    from ddz_env.files import replacing

    from ...runs.session import Session
    from .modules import SelfPlayEnv, make_critic, make_legal_actor

    o = check_options(options)
    torch.set_num_threads(int(o["threads"]))
    ses = Session("torchrl", run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=progress,
                  state_files=(STATE_FILE,), counters={"batches": 0}, checkpoint_seconds=o["checkpoint_seconds"],
                  progress_seconds=o["progress_seconds"])
    if o["init"] is not None:
        policy = MoveScoringPolicy.from_dmc(o["init"])
    else:
        policy = MoveScoringPolicy(state_layers=o["state_layers"], head_layers=o["head_layers"], hand_after=True)
    optim = torch.optim.Adam(policy.parameters(), lr=o["learning_rate"])
    if ses.resuming:
        ck = torch.load(ses.path(STATE_FILE), map_location="cpu", weights_only=True)  # (tensors, plain containers)
        policy.load_state_dict(ck["model"])
        optim.load_state_dict(ck["optimizer"])
    batches = int(ses.done["batches"])  # (a resumed run is seeded with seed + its batches: it deals new hands)
    torch.manual_seed(seed + batches)
    actor, critic = make_legal_actor(policy), make_critic(policy)
    B = int(o["num_envs"])
    frames = max(B, int(o["decisions_per_batch"]) // B * B)  # (the collector's batch: T steps of all B tables)
    env = SelfPlayEnv(B, seed=seed * 1000 + batches, reward_scale=1.0)  # (raw scores: the targets scale them)

    def act(td: TensorDict) -> TensorDict:  # the actor, its logits (as wide as each step's legal sets) not stored
        return actor(td).exclude("logits", "legal", inplace=True)

    collector = Collector(env, act, frames_per_batch=frames, total_frames=-1, exploration_type=ExplorationType.RANDOM)
    gae = GAE(gamma=1.0, lmbda=float(o["gae_lambda"]), value_network=None, time_dim=0)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=float(o["clip_epsilon"]), entropy_coeff=float(o["entropy_coeff"]),
                       critic_coeff=float(o["vf_coef"]), loss_critic_type="l2", normalize_advantage=True)
    info = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}, "seed": seed}
    gen = np.random.default_rng(seed + batches)
    diagnostics: dict[str, float] = {}
    scores: list[float] = []
    carry: TensorDict | None = None
    ready: list[TensorDict] = []

    def save() -> None:
        with replacing(ses.path(STATE_FILE)) as tmp:
            torch.save({"model": policy.state_dict(), "optimizer": optim.state_dict()}, tmp)
        save_policy(policy, ses.policy_path, library="torchrl", steps=int(ses.done["steps"]), **info)

    def line() -> str:
        recent = scores[-2000:]
        return (f"mean |score| {np.mean(recent) if recent else 0:.2f} a seat-hand, entropy "
                f"{diagnostics.get('entropy', float('nan')):.2f}, KL {diagnostics.get('kl_approx', float('nan')):.4f}")

    names = ("loss_objective", "loss_critic", "loss_entropy", "entropy", "kl_approx", "clip_fraction",
             "explained_variance")
    it = iter(collector)
    try:
        with ses.keeping(save):
            while ses.running():
                got = sum(t.batch_size[0] for t in ready)
                while got < frames:  # (step until a batch's worth of decisions have their hands' results)
                    data = next(it)
                    ended = data["next", "done"].reshape(-1)
                    scores.extend(data["next", "reward"].reshape(-1, 3)[ended].abs().reshape(-1).tolist())
                    del scores[:-2000]
                    traj, carry = regroup(data, carry, target=o["target"], score_scale=float(o["score_scale"]))
                    if traj is not None:
                        ready.append(with_advantages(traj, critic, gae))
                        got += traj.batch_size[0]
                batch = torch.cat(ready, 0).exclude("next_row", "next", "seat")
                ready = []
                n = batch.batch_size[0]
                sums: dict[str, float] = {}
                steps = 0
                for _ in range(int(o["epochs"])):
                    for idx in np.array_split(gen.permutation(n), max(1, n // int(o["minibatch"]))):
                        out = loss(batch[torch.from_numpy(idx)])
                        total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                        optim.zero_grad()
                        total.backward()
                        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                        optim.step()
                        for k in names:
                            if k in out.keys():
                                sums[k] = sums.get(k, 0.0) + float(out[k].detach())
                        steps += 1
                diagnostics.update({k: v / steps for k, v in sums.items()})  # (the update's minibatch means)
                ses.done["steps"] += n
                ses.done["batches"] += 1
                ses.tick(save, line, diagnostics.copy)
    finally:
        collector.shutdown()
    return ses.finish(save)


__all__ = ["train", "regroup", "with_advantages", "check_options", "DEFAULTS", "DEPRECATED", "STATE_FILE"]
