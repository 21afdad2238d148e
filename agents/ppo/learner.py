"""``train.py --config ppo``: the project's own PPO, self-play over compact legal sets (no RL library).

Read top to bottom, one update: a :class:`~agents.ppo.selfplay.Collector` plays ``num_envs`` tables of the
batched env with one forward pass a step (the policy at every seat, or, in ``opponent_share`` of the hands, at
the seats that ``opponents`` do not hold: ``"self"`` is a frozen copy, any other an ``agents.load`` spec) and
releases ``decisions_per_batch`` decisions whose hands ended, with GAE advantages from the learned critic
(``gae_lambda``; with ``central_critic`` a critic that sees all hands, for training only) towards win/loss in
play and the score / ``score_scale`` in the bids (``target`` ``"sign_play"``; ``"scale"``: the score
everywhere); then ``epochs`` passes of :func:`~agents.ppo.selfplay.ppo_loss` in minibatches, each decision's
distribution a categorical over its legal moves only. Bids are explored more than play (``bid_epsilon``,
``bid_entropy_coeff``). With ``collectors`` N > 0 the tables play in N processes of their own while the
learner updates (:class:`~agents.ppo.processes.ProcessCollectors`; not repeatable bit for bit).

Every progress period ``diagnostics.csv`` gets a row of the last update's policy and value losses, entropy
(bids and play apart), approximate KL, clip fraction and explained variance (docs/marl.md says how to read
them). The run folder gets ``ppo_state.pt`` (weights, optimizer), ``state.json`` and ``policy.pt`` (the export
format ``agents.load`` seats) every ``checkpoint_seconds``, on a stop and at the end.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..integrations.move_policy import MoveScoringPolicy, save_policy
from .selfplay import segment_dist

#: train()'s options and their defaults (``train.py --config ppo --set options.KEY=VALUE``)
DEFAULTS: dict[str, Any] = {
    "num_envs": 256, "decisions_per_batch": 4096, "epochs": 2, "minibatch": 512, "learning_rate": 3e-4,
    "clip_epsilon": 0.2, "vf_coef": 0.5, "entropy_coeff": 0.01, "bid_entropy_coeff": 0.05, "bid_epsilon": 0.1,
    "gae_lambda": 0.95, "target": "sign_play", "score_scale": 8.0, "opponents": ["self", "rule"],
    "opponent_share": 0.5, "snapshot_every": 50, "central_critic": False, "critic_layers": (256,),
    "state_layers": (256,), "head_layers": (128,), "init": None,
    "checkpoint_seconds": 120.0, "progress_seconds": 30.0, "threads": 1, "collectors": 0,
}
STATE_FILE = "ppo_state.pt"


def check_options(options: dict, library: str = "ppo") -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``)."""
    from ..integrations.options import check_options as check

    return check(library, options, DEFAULTS)


def train(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None, seed: int = 0,
          resume: bool = False, progress: bool = True, **options: Any) -> dict:
    """PPO (see the module doc) for ``seconds`` of wall time or ``decisions`` learned from in all (across
    resumes; the first reached). ``init="pretrained"`` starts from the shipped DMC agent. Returns
    ``{"steps", "cpu_seconds", "wall_seconds", "policy"}`` (steps: decisions learned from)."""
    return run(seconds, run_dir, decisions=decisions, cadence=cadence, seed=seed, resume=resume, progress=progress, **options)


def run(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None, seed: int = 0,
        resume: bool = False, progress: bool = True, library: str = "ppo", state_file: str = STATE_FILE,
        dist_fn: Callable = segment_dist, **options: Any) -> dict:
    """:func:`train` under another ``library``'s name, state file and legal-move distribution (``dist_fn``
    of :func:`~agents.ppo.selfplay.ppo_loss`)."""
    from ddz_env.files import replacing

    from ..runs.session import Session
    from .selfplay import CentralCritic, PPOSettings, ppo_loss
    from .selfplay import Collector as SelfPlayCollector

    o = check_options(options, library)
    torch.set_num_threads(int(o["threads"]))
    ses = Session(library, run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=progress,
                  state_files=(state_file,), counters={"batches": 0}, checkpoint_seconds=o["checkpoint_seconds"],
                  progress_seconds=o["progress_seconds"])
    if o["init"] is not None:
        policy = MoveScoringPolicy.from_dmc(o["init"])
    else:
        policy = MoveScoringPolicy(state_layers=o["state_layers"], head_layers=o["head_layers"], hand_after=True)
    critic = CentralCritic(o["critic_layers"]) if o["central_critic"] else None
    params = list(policy.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optim = torch.optim.Adam(params, lr=o["learning_rate"])
    if ses.resuming:
        ck = torch.load(ses.path(state_file), map_location="cpu", weights_only=True)  # (tensors, plain containers)
        policy.load_state_dict(ck["model"])
        if critic is not None:
            critic.load_state_dict(ck["critic"])
        optim.load_state_dict(ck["optimizer"])
    batches = int(ses.done["batches"])  # (a resumed run is seeded with seed + its batches: it deals new hands)
    torch.manual_seed(seed + batches)
    play = dict(lam=o["gae_lambda"], target=o["target"], score_scale=o["score_scale"], bid_epsilon=o["bid_epsilon"],
                opponents=o["opponents"], opponent_share=o["opponent_share"], snapshot_every=o["snapshot_every"])
    if o["collectors"]:
        from .processes import ProcessCollectors

        collector = ProcessCollectors(policy, critic, o["collectors"], o["num_envs"], seed=seed * 1000 + batches,
                                      decisions=int(o["decisions_per_batch"]), threads=o["threads"], **play)
    else:
        collector = SelfPlayCollector(policy, o["num_envs"], seed=seed * 1000 + batches, critic=critic, **play)
    settings = PPOSettings(clip=o["clip_epsilon"], vf_coef=o["vf_coef"], entropy_coeff=o["entropy_coeff"],
                           bid_entropy_coeff=o["bid_entropy_coeff"])
    info = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}, "seed": seed}
    gen = np.random.default_rng(seed + batches)
    diagnostics: dict[str, float] = {}

    def save() -> None:
        with replacing(ses.path(state_file)) as tmp:
            torch.save({"model": policy.state_dict(), "optimizer": optim.state_dict(),
                        **({"critic": critic.state_dict()} if critic is not None else {})}, tmp)
        save_policy(policy, ses.policy_path, library=library, steps=int(ses.done["steps"]), **info)

    def line() -> str:
        recent = collector.scores[-2000:]
        return (f"learner's mean score {np.mean(recent) if recent else 0:+.2f} a seat-hand, entropy "
                f"{diagnostics.get('entropy', float('nan')):.2f}, KL {diagnostics.get('approx_kl', float('nan')):.4f}")

    try:
        with ses.keeping(save):
            while ses.running():
                batch = collector.collect(int(o["decisions_per_batch"]))
                n = len(batch)
                sums: dict[str, float] = {}
                steps = 0
                for _ in range(int(o["epochs"])):
                    for idx in np.array_split(gen.permutation(n), max(1, n // int(o["minibatch"]))):
                        total, parts = ppo_loss(policy, batch.minibatch(idx), settings, dist_fn=dist_fn,
                                                critic=critic)
                        optim.zero_grad()
                        total.backward()
                        nn.utils.clip_grad_norm_(params, 1.0)
                        optim.step()
                        for k, v in parts.items():
                            sums[k] = sums.get(k, 0.0) + v
                        steps += 1
                diagnostics.update({k: v / steps for k, v in sums.items()})  # (the update's minibatch means)
                collector.refresh()
                if o["collectors"]:
                    ses.done["cpu_seconds"] += collector.take_cpu()  # (the collector processes' own)
                ses.done["steps"] += n
                ses.done["batches"] += 1
                ses.tick(save, line, diagnostics.copy)
    finally:
        if o["collectors"]:
            collector.close()
    return ses.finish(save)


__all__ = ["train", "run", "check_options", "DEFAULTS", "STATE_FILE"]
