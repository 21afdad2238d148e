"""Self-play collection in processes of its own: the learner updates while the tables play.

:class:`selfplay.Collector <agents.ppo.selfplay.Collector>` plays in the learner's process, so
playing and learning take turns on one core. :class:`ProcessCollectors` runs ``n`` such collectors in
processes of their own (the ``collectors`` option of ``ppo``): each plays its own ``num_envs`` tables and sends
whole batches of released decisions through a pipe, while the learner updates on the batch before.

=========================  ================================================================================
weights                    after each update the learner copies its weights into a shared-memory copy
                           under a sequence lock (:mod:`agents.runs.weights`, as DMC's
                           actors); a collector takes them before each batch. A batch is played
                           by the weights of a few updates before: PPO's ratio is taken against the
                           log-probabilities stored at acting, so it stays an importance weight
snapshots                  ``"self"`` opponents are refreshed in the collector every ``snapshot_every``
                           updates of the learner (the version it read says how many)
batches                    numpy arrays through the pipe (a batch of 4,152 decisions pickled to 7.7 MB); a
                           collector blocks on sending until the learner takes the batch, so it runs at
                           most one batch ahead
CPU seconds                each batch carries the CPU seconds its process spent on it; the learner adds
                           them to its own (:meth:`ProcessCollectors.take_cpu`)
faults                     a collector that dies stops the run with its exit code (``LearnerStopped``: the
                           learner writes its checkpoint first, and ``--resume`` goes on from it); a
                           collector whose learner is gone exits (its pipe closes, or its parent changes)
=========================  ================================================================================

With one collector and the same seed, the first batch is the one the in-process collector releases
(tested): only the timing of the weights differs. A run with collectors is not repeatable bit for bit
(which weights a batch gets depends on timing), and its tables are not part of the checkpoint: a resumed
run deals new hands, as the in-process collector does.
"""
from __future__ import annotations

import copy
import dataclasses
import os
import time
from typing import Any

import numpy as np
import torch
from torch import multiprocessing as mp

from ..runs.weights import read_weights, write_weights
from .selfplay import Batch, CentralCritic, Collector
from ..runs.session import LearnerStopped

#: a collector's seed is ``seed + SEED_STRIDE * rank`` (rank 0: the in-process collector's seed)
SEED_STRIDE = 104_729


def _batch_arrays(batch: Batch) -> dict[str, np.ndarray]:
    return {f.name: (v.numpy() if isinstance(v, torch.Tensor) else v)
            for f in dataclasses.fields(Batch) for v in [getattr(batch, f.name)]}


def _batch_of(arrays: dict[str, np.ndarray]) -> Batch:
    plain = {"ids", "starts"}  # (numpy in a Batch; the rest are tensors)
    return Batch(**{k: (v if k in plain else torch.from_numpy(v)) for k, v in arrays.items()})


def _models(policy: torch.nn.Module, critic: CentralCritic | None) -> torch.nn.ModuleDict:
    return torch.nn.ModuleDict({"policy": policy, **({"critic": critic} if critic is not None else {})})


def collector_loop(rank: int, shared: torch.nn.ModuleDict, version, conn, num_envs: int, seed: int, decisions: int,
                   threads: int, options: dict, learner_pid: int) -> None:
    """A collector process: play ``num_envs`` tables with the latest shared weights and send each batch of
    ``decisions`` released decisions (as arrays, with the finished hands' scores and the CPU seconds spent)
    through ``conn``; exit on ``None`` from the learner, a closed pipe, or a changed parent."""
    torch.set_num_threads(threads)
    models = copy.deepcopy(shared)  # (its own copy: the shared one changes under the lock)
    seen = read_weights(shared, version, models) or 0
    col = Collector(models["policy"], num_envs, seed, critic=models["critic"] if "critic" in models else None,
                    **options)
    col.refresh(seen // 2)
    cpu = time.process_time()
    try:
        while os.getppid() == learner_pid:
            if conn.poll() and conn.recv() is None:
                return
            if version.value != seen:
                got = read_weights(shared, version, models)
                if got is not None:
                    seen = got
                    col.refresh(seen // 2)  # (two version steps an update)
            batch = col.collect(decisions)
            scores, col.scores = col.scores, []
            now = time.process_time()
            conn.send((_batch_arrays(batch), scores, now - cpu))
            cpu = now
    except (KeyboardInterrupt, EOFError, BrokenPipeError, ConnectionResetError):
        pass  # stopped, or the learner is gone


class ProcessCollectors:
    """``n`` collector processes (see the module doc) behind the in-process collector's calls:
    :meth:`collect` (the next batch from any of them), :meth:`refresh` (after an update: publish the
    weights), ``scores`` (the learner's seats' scores of finished hands); and :meth:`take_cpu`,
    :meth:`close`. ``options`` are :class:`~agents.ppo.selfplay.Collector`'s keywords."""

    def __init__(self, policy: torch.nn.Module, critic: CentralCritic | None, n: int, num_envs: int, seed: int,
                 decisions: int, threads: int = 1, **options: Any):
        if n < 1:
            raise ValueError(f"ProcessCollectors needs at least one collector, got {n}")
        self.models, self.decisions = _models(policy, critic), int(decisions)
        self.ctx = mp.get_context("spawn")
        self.shared = copy.deepcopy(self.models)
        self.shared.share_memory()
        self.shared_params = list(self.shared.state_dict().values())
        self.version = self.ctx.RawValue("q", 0)  # even: readable; odd: being written
        self.scores: list[float] = []
        self.cpu = 0.0
        self.procs, self.conns = [], []
        for rank in range(n):
            mine, theirs = self.ctx.Pipe(duplex=True)
            p = self.ctx.Process(target=collector_loop, daemon=True,
                                 args=(rank, self.shared, self.version, theirs, num_envs, seed + SEED_STRIDE * rank,
                                       self.decisions, threads, options, os.getpid()))
            p.start()
            theirs.close()
            self.procs.append(p)
            self.conns.append(mine)

    def collect(self, decisions: int) -> Batch:
        """The next batch of any collector (``decisions`` must be the size they were started with)."""
        from multiprocessing.connection import wait

        if decisions != self.decisions:
            raise ValueError(f"the collector processes send batches of {self.decisions} decisions, not {decisions}")
        while True:
            ready = wait(self.conns + [p.sentinel for p in self.procs])
            for conn in self.conns:
                if conn in ready:
                    try:
                        arrays, scores, cpu = conn.recv()
                    except (EOFError, OSError):
                        continue  # it died mid-message: its sentinel says so
                    self.scores.extend(scores)
                    del self.scores[:-10_000]
                    self.cpu += cpu
                    return _batch_of(arrays)
            for rank, p in enumerate(self.procs):
                if p.sentinel in ready and not p.is_alive():
                    self.close()
                    raise LearnerStopped(f"collector process {rank} exited with code {p.exitcode}"
                                       + (" (killed: out of memory? fewer num_envs need less)" if p.exitcode == -9
                                          else ""))

    def refresh(self) -> None:
        """After an update: the learner's weights to the collectors (a sequence lock: odd while writing)."""
        write_weights(self.shared_params, self.version, self.models.state_dict().values())

    def take_cpu(self) -> float:
        """The collectors' CPU seconds reported since the last call."""
        cpu, self.cpu = self.cpu, 0.0
        return cpu

    def close(self) -> None:
        """Stop the collectors (a batch in flight is dropped)."""
        for c in self.conns:
            try:
                c.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 10.0
        for c, p in zip(self.conns, self.procs):  # (one blocked on sending a batch needs it read to see the None)
            while p.is_alive() and time.monotonic() < deadline:
                try:
                    if c.poll(0.1):
                        c.recv()
                except (EOFError, OSError):
                    break
            p.join(timeout=max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        for c in self.conns:
            c.close()


__all__ = ["ProcessCollectors", "collector_loop", "SEED_STRIDE"]
