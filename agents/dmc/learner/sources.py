"""Experience sources: where the learner's batches come from. ``train()`` sees only this seam.

Each source hands the learner fixed-size batches ``(obs, action, net, target)`` plus the
:class:`~agents.dmc.learner.experience.Stats` of the hands finished while collecting them
(:meth:`get`), and takes the learner's new weights after every update (:meth:`publish`).

==================  =========================================================================
``InlineSource``    ``num_actors: 0``: acting in the learner process; deterministic, and its
                    tables are part of the checkpoint, so ``--resume`` continues bit for bit
``SharedMemory``    ``num_actors: N`` (``backend: local``): N actor processes on this machine
                    write batches into shared-memory buffers (free / full index queues, as
                    DouZero) and read weights from a shared model copy
``RaySource``       ``backend: ray``: N Ray actors on any node of a cluster (``ray_address``);
                    each steps its own tables and returns batches as task results; the weights
                    go out through Ray's object store; a dead actor is replaced
==================  =========================================================================
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import multiprocessing as mp

from ddz_env.files import write_text

from ..config import TrainConfig, config_from_dict
from .experience import Collector, Stats
from ..model import DMCModel, make_model, sample_cells
from ...runs.weights import read_weights, write_weights

log = logging.getLogger("dmc")
BATCH_KEYS = ("obs", "action", "net", "target")


def _model(cfg: TrainConfig) -> DMCModel:
    return make_model(cfg)


def actor_seed(cfg: TrainConfig, rank: int, seed_offset: int) -> int:
    """The collector seed of actor ``rank``: ``seed_offset`` (frames done so far, plus restarts) gives
    a resumed run or a replaced actor fresh deals."""
    return cfg.seed * 1000 + rank + 1 + 7919 * seed_offset


def _next_batch(collector: Collector, model: DMCModel, batch_size: int) -> tuple[tuple, np.ndarray]:
    while True:
        batch = collector.pop_batch(batch_size)
        if batch is not None:
            stats = collector.stats.as_array()
            collector.stats.clear()
            return batch, stats
        collector.step(model)


class InlineSource:
    """Acting in the learner process (``num_actors: 0``)."""

    def __init__(self, cfg: TrainConfig, model: DMCModel, collector: Collector | None = None):
        self.cfg, self.model = cfg, model
        self.collector = collector if collector is not None else Collector(cfg, seed=cfg.seed * 1000)

    def get(self) -> tuple[tuple, np.ndarray]:
        return _next_batch(self.collector, self.model, self.cfg.batch_size)

    def publish(self, model: DMCModel) -> None:  # the collector acts with the learner's own model
        pass

    def close(self) -> None:
        pass


# ---------------------------------------------------------------------------------------------- shared memory
def actor_loop(rank: int, cfg_dict: dict, shared_model: DMCModel, version, buffers: dict[str, torch.Tensor],
               slots: list[int], conn, seed_offset: int = 0, learner_pid: int | None = None) -> None:
    """An actor process: act on ``num_envs`` tables, send batches through its shared buffers ``slots``.

    ``conn``, its end of a pipe to the learner: the actor sends the index of a buffer it filled, the
    learner sends back the index of a buffer it has read, or None to stop. The actor exits on None, when
    the pipe closes, or when its learner ``learner_pid`` is gone (killed, out of memory: the actor is
    then reparented and ``os.getppid()`` changes)."""

    def orphaned() -> bool:
        return learner_pid is not None and os.getppid() != learner_pid

    cfg = config_from_dict(cfg_dict)
    torch.set_num_threads(cfg.torch_threads)
    device = torch.device(cfg.device)
    model = _model(cfg).to(device)
    model.eval()
    seen = -1
    collector = Collector(cfg, seed=actor_seed(cfg, rank, seed_offset))
    free = list(slots)
    sent = 0
    try:
        while not orphaned():
            if sent % cfg.sync_every == 0 and version.value != seen:
                got = read_weights(shared_model, version, model)
                seen = got if got is not None else seen
            collector.step(model)
            while collector.ring.size >= cfg.batch_size:
                while not free:  # wait for the learner to hand a buffer back
                    if conn.poll(0.5):
                        idx = conn.recv()
                        if idx is None:
                            return
                        free.append(idx)
                    elif orphaned():
                        return
                while conn.poll():  # buffers handed back meanwhile, or the order to stop
                    idx = conn.recv()
                    if idx is None:
                        return
                    free.append(idx)
                idx = free.pop()
                collector.pop_batch(cfg.batch_size, out=tuple(buffers[k][idx].numpy() for k in BATCH_KEYS))
                buffers["stats"][idx].copy_(torch.from_numpy(collector.stats.as_array()))
                collector.stats.clear()
                conn.send(idx)
                sent += 1
    except (KeyboardInterrupt, EOFError, BrokenPipeError, ConnectionResetError):
        pass  # stopped, or the learner is gone


class ActorsFailed(RuntimeError):
    """The actors give the learner no batches, and waiting would not change that: one dies before its first
    batch again and again, none sends any for ``STALL_SECONDS``, or one does not start. The run stops;
    ``train.py`` says so in one line, with what is left to resume from (a ``RuntimeError``, as before)."""


class SharedMemorySource:
    """``num_actors`` actor processes on this machine (``backend: local``).

    Each actor owns ``num_buffers // num_actors`` (at least 2) shared-memory batch buffers and a pipe
    to the learner; the weights go through a shared model copy guarded by a sequence lock
    (:mod:`agents.runs.weights`). Nothing is shared between actors, so one that dies (killed, out of
    memory, a crash) harms no other: the learner notices at once (it waits on the actors' pipes
    and process sentinels together), logs a warning and starts a replacement with fresh deals,
    as the Ray source does. An actor that dies before sending its first batch
    ``MAX_EARLY_DEATHS`` times in a row is an error (it would only die again), and so is no batch
    from any actor for ``STALL_SECONDS``."""

    MAX_EARLY_DEATHS = 3
    STALL_SECONDS = 600.0

    def __init__(self, cfg: TrainConfig, model: DMCModel, frames: int):
        self.cfg, self.frames0 = cfg, frames
        self.ctx = mp.get_context("spawn")
        self.shared = _model(cfg)
        self.shared.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
        self.shared.share_memory()
        self.version = self.ctx.RawValue("q", 0)  # even: weights readable; odd: being written
        per = max(2, cfg.num_buffers // cfg.num_actors)
        n, b = per * cfg.num_actors, cfg.batch_size
        self.buffers = {
            "obs": torch.zeros((n, b, sample_cells(cfg.hand_prediction > 0)), dtype=torch.int8).share_memory_(),
            "action": torch.zeros((n, b), dtype=torch.int32).share_memory_(),
            "net": torch.zeros((n, b), dtype=torch.int8).share_memory_(),
            "target": torch.zeros((n, b), dtype=torch.float32).share_memory_(),
            "stats": torch.zeros((n, Stats.SIZE), dtype=torch.float64).share_memory_(),
        }
        self.slots = {rank: list(range(rank * per, (rank + 1) * per)) for rank in range(cfg.num_actors)}
        self.procs: dict[int, Any] = {}
        self.conns: dict[int, Any] = {}
        self.sent: dict[int, int] = {}
        self.restarts = 0
        self.early_deaths = 0
        self.shared_params = list(self.shared.state_dict().values())
        self.collector = None
        for rank in range(cfg.num_actors):
            self._start(rank)

    def _start(self, rank: int) -> None:
        mine, theirs = self.ctx.Pipe(duplex=True)
        offset = self.frames0 + 1_000_003 * self.restarts  # a replacement gets fresh deals
        p = self.ctx.Process(target=actor_loop, args=(rank, self.cfg.to_dict(), self.shared, self.version,
                                                      self.buffers, self.slots[rank], theirs, offset, os.getpid()),
                             daemon=True)
        p.start()
        theirs.close()
        self.procs[rank], self.conns[rank], self.sent[rank] = p, mine, 0

    def _replace(self, rank: int) -> None:
        p = self.procs[rank]
        p.join(timeout=5)
        code = p.exitcode
        self.conns[rank].close()
        self.early_deaths = self.early_deaths + 1 if self.sent[rank] == 0 else 0
        if self.early_deaths >= self.MAX_EARLY_DEATHS:
            killed = " (killed by SIGKILL: out of memory? fewer num_actors or num_envs need less)" if code == -9 else ""
            raise ActorsFailed(f"actor process {rank} exited with code {code} before sending a batch, "
                               f"{self.early_deaths} times in a row{killed}")
        self.restarts += 1
        log.warning("actor process %d died (exit code %s) after %d batches; starting a replacement with fresh deals",
                    rank, code, self.sent[rank])
        self._start(rank)

    def get(self) -> tuple[tuple, np.ndarray]:
        from multiprocessing.connection import wait

        last = time.monotonic()
        while True:
            by_handle = {self.conns[r]: r for r in self.conns}
            by_handle.update({self.procs[r].sentinel: r for r in self.procs})
            ready = wait(list(by_handle), timeout=5.0)
            for h in ready:  # pipes first: a batch sent just before dying is still good
                if h in self.conns.values():
                    rank = by_handle[h]
                    try:
                        idx = h.recv()
                    except (EOFError, OSError, pickle.UnpicklingError):
                        continue  # it died (mid-message): its sentinel says so
                    batch = tuple(self.buffers[k][idx].numpy().copy() for k in BATCH_KEYS)
                    stats = self.buffers["stats"][idx].numpy().copy()
                    self.sent[rank] += 1
                    try:
                        h.send(idx)
                    except (BrokenPipeError, OSError):
                        pass
                    return batch, stats
            for h in ready:
                if h not in self.conns.values():
                    rank = by_handle[h]
                    if not self.procs[rank].is_alive() and self.procs[rank].sentinel == h:
                        self._replace(rank)
            if ready:
                last = time.monotonic()
            elif time.monotonic() - last > self.STALL_SECONDS:
                raise ActorsFailed(f"no batch from any of the {len(self.procs)} actor processes for "
                                   f"{self.STALL_SECONDS:.0f} s (alive: "
                                   f"{[r for r, p in self.procs.items() if p.is_alive()]})")

    def publish(self, model: DMCModel) -> None:
        write_weights(self.shared_params, self.version, model.state_dict().values())

    def close(self) -> None:
        for c in self.conns.values():
            try:
                c.send(None)
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs.values():
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        for c in self.conns.values():
            c.close()


# ---------------------------------------------------------------------------------------------- Ray
class _RayActorImpl:
    """The body of a Ray actor: its own tables; :meth:`next_batch` acts until a batch is full."""

    def __init__(self, cfg_dict: dict, rank: int, seed: int):
        self.cfg = cfg = config_from_dict(cfg_dict)
        torch.set_num_threads(cfg.torch_threads)
        self.model = _model(cfg)
        self.model.eval()
        self.collector = Collector(cfg, seed=seed)
        self.version = -1
        self.rank = rank
        import ray

        self.node = ray.get_runtime_context().get_node_id()

    def next_batch(self, weights: dict[str, np.ndarray], version: int) -> dict[str, Any]:
        if version != self.version:
            self.model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})
            self.version = version
        batch, stats = _next_batch(self.collector, self.model, self.cfg.batch_size)
        return {"batch": batch, "stats": stats, "node": self.node, "rank": self.rank, "version": self.version}

    def where(self) -> str:
        return self.node


class RaySource:
    """``num_actors`` Ray actors spread over the cluster's nodes (``backend: ray``).

    Two requests are kept in flight per actor, so an actor starts its next batch while the
    learner trains on the last one. The weights are put in the object store every
    ``sync_every`` updates and passed by reference (each node fetches them once). An actor that
    dies (node lost, killed) is replaced by a new one with fresh deals; its lost batches are
    simply not counted. ``actors.json`` in the run folder records, per actor, its node, the
    batches it sent and the last weights version it acted with.
    """

    IN_FLIGHT = 2
    START_TIMEOUT = 600.0  # seconds for an actor to be scheduled and built

    def __init__(self, cfg: TrainConfig, model: DMCModel, frames: int, run_dir: Path | None = None):
        try:
            import ray
        except ImportError as e:
            from ..._entry import install_extra

            raise ImportError(f"backend 'ray' needs Ray ({install_extra('ray')}): {e}") from None
        self.ray = ray
        self.cfg, self.frames0, self.run_dir = cfg, frames, run_dir
        self.started_ray = False
        if not ray.is_initialized():
            ray.init(address=cfg.ray_address or None, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            self.started_ray = True
        self.remote_cls = ray.remote(num_cpus=1)(_RayActorImpl)
        self.version = 0
        self.updates = 0
        self.weights = ray.put(_numpy_state(model))
        self.actors: dict[int, Any] = {}
        self.inflight: dict[Any, tuple[int, int]] = {}  # request -> (rank, generation of that rank's actor)
        self.gen: dict[int, int] = {}
        self.info: dict[int, dict[str, Any]] = {}
        self.restarts = 0
        for rank in range(cfg.num_actors):
            self._start(rank, ask=False)
        # Wait until every actor is built (its tables dealt, its model made) before asking for
        # batches: an actor that cannot start fails here, by name, and the first actor up does not
        # run ahead while the others still import torch (on a loaded 2-core machine that took long
        # enough for one actor to send every batch of a short run).
        for rank, actor in self.actors.items():
            try:
                self.info[rank]["node"] = ray.get(actor.where.remote(), timeout=self.START_TIMEOUT)
            except Exception as e:  # noqa: BLE001 - re-raised with the actor's rank
                raise ActorsFailed(f"ray actor {rank} did not start: {type(e).__name__}: {e}") from e
        for rank in self.actors:
            for _ in range(self.IN_FLIGHT):
                self._ask(rank)
        self.collector = None

    def _start(self, rank: int, ask: bool = True) -> None:
        seed = actor_seed(self.cfg, rank, self.frames0 + 1_000_003 * self.restarts)
        actor = self.remote_cls.options(scheduling_strategy="SPREAD").remote(self.cfg.to_dict(), rank, seed)
        self.actors[rank] = actor
        self.gen[rank] = self.gen.get(rank, -1) + 1
        self.info.setdefault(rank, {"rank": rank, "node": None, "batches": 0, "version": -1, "restarts": 0})
        self.info[rank]["batches_current"] = 0  # of the current actor of this rank (since its last restart)
        if ask:  # a replacement is not waited for: the learner goes on with the other actors' batches
            for _ in range(self.IN_FLIGHT):
                self._ask(rank)

    def _ask(self, rank: int) -> None:
        self.inflight[self.actors[rank].next_batch.remote(self.weights, self.version)] = (rank, self.gen[rank])

    def get(self) -> tuple[tuple, np.ndarray]:
        ray = self.ray
        died = tuple(getattr(ray.exceptions, n) for n in ("RayActorError", "WorkerCrashedError",
                                                           "ActorUnavailableError") if hasattr(ray.exceptions, n))
        while True:
            ready, _ = ray.wait(list(self.inflight), num_returns=1)
            ref = ready[0]
            rank, gen = self.inflight.pop(ref)
            try:
                out = ray.get(ref)
            except died as e:
                if gen == self.gen[rank]:  # the current actor of this rank died: drop its requests, replace it
                    for other in [x for x, rg in self.inflight.items() if rg == (rank, gen)]:
                        self.inflight.pop(other)
                    try:
                        ray.kill(self.actors[rank], no_restart=True)
                    except Exception:  # noqa: BLE001 - already gone
                        pass
                    self.restarts += 1
                    self.info[rank]["restarts"] += 1
                    log.warning("ray actor %d died (%s); starting a replacement", rank, type(e).__name__)
                    self._start(rank)
                continue
            if gen != self.gen[rank]:
                continue  # a late answer of a replaced actor
            self._ask(rank)
            inf = self.info[rank]
            inf["node"], inf["version"] = out["node"], out["version"]
            inf["batches"] += 1
            inf["batches_current"] += 1
            # (arrays from the object store are read-only views: the learner gets its own copies)
            return tuple(np.array(x) for x in out["batch"]), np.array(out["stats"])

    def publish(self, model: DMCModel) -> None:
        self.updates += 1
        if self.updates % self.cfg.sync_every == 0:
            self.version += 1
            self.weights = self.ray.put(_numpy_state(model))

    def write_info(self) -> None:
        if self.run_dir is not None:
            data = {"version": self.version, "restarts": self.restarts,
                    "actors": [self.info[r] for r in sorted(self.info)]}
            write_text(self.run_dir / "actors.json", json.dumps(data, indent=1) + "\n")  # (whole: ddz_env.files)

    def close(self) -> None:
        self.write_info()
        for a in self.actors.values():
            try:
                self.ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        if self.started_ray:
            self.ray.shutdown()


def _numpy_state(model: DMCModel) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def make_source(cfg: TrainConfig, model: DMCModel, frames: int, collector: Collector | None = None,
                run_dir: Path | None = None):
    """The experience source the config asks for (``collector``: the inline source's tables, when
    the caller built them, e.g. from a checkpoint)."""
    if cfg.backend == "ray":
        return RaySource(cfg, model, frames, run_dir)
    if cfg.num_actors == 0:
        return InlineSource(cfg, model, collector)
    return SharedMemorySource(cfg, model, frames)


__all__ = ["ActorsFailed", "InlineSource", "SharedMemorySource", "RaySource", "make_source", "actor_loop", "actor_seed", "BATCH_KEYS"]
