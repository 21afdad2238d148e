"""Experience sources: where the learner's batches come from. ``train()`` sees only this seam.

Each source hands the learner fixed-size batches ``(obs, action, net, target)`` plus the
:class:`~agents.dmc.experience.Stats` of the hands finished while collecting them
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
import queue
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import multiprocessing as mp

from .config import TrainConfig, config_from_dict
from .experience import Collector, Stats
from .model import OBS_CELLS, DMCModel

log = logging.getLogger("dmc")
BATCH_KEYS = ("obs", "action", "net", "target")


def _model(cfg: TrainConfig) -> DMCModel:
    from .trainer import make_model  # (the model's construction lives with the learner)

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
def actor_loop(rank: int, cfg_dict: dict, shared_model: DMCModel, lock, version, buffers: dict[str, torch.Tensor],
               free_q, full_q, stop, seed_offset: int = 0, learner_pid: int | None = None) -> None:
    """An actor process: act on ``num_envs`` tables, send batches through the shared buffers.

    The actor exits when its learner ``learner_pid`` is gone (killed, out of memory): it is then
    reparented, and ``os.getppid()`` changes."""

    def orphaned() -> bool:
        return learner_pid is not None and os.getppid() != learner_pid

    full_q.cancel_join_thread()  # exit at once when stopped, even with batches the learner will not read
    cfg = config_from_dict(cfg_dict)
    torch.set_num_threads(cfg.torch_threads)
    device = torch.device(cfg.device)
    model = _model(cfg).to(device)
    model.eval()
    seen = -1
    collector = Collector(cfg, seed=actor_seed(cfg, rank, seed_offset))
    sent = 0
    try:
        while not stop.is_set() and not orphaned():
            if sent % cfg.sync_every == 0 and version.value != seen:
                with lock:
                    seen = version.value
                    model.load_state_dict(shared_model.state_dict())
            collector.step(model)
            while not stop.is_set():
                batch = collector.pop_batch(cfg.batch_size)
                if batch is None:
                    break
                while True:
                    try:
                        idx = free_q.get(timeout=0.5)
                        break
                    except queue.Empty:
                        if stop.is_set() or orphaned():
                            return
                if idx is None:
                    return
                for key, arr in zip(BATCH_KEYS, batch):
                    buffers[key][idx].copy_(torch.from_numpy(arr))
                buffers["stats"][idx].copy_(torch.from_numpy(collector.stats.as_array()))
                collector.stats.clear()
                full_q.put(idx)
                sent += 1
    except KeyboardInterrupt:
        pass


class SharedMemorySource:
    """``num_actors`` actor processes on this machine (``backend: local``)."""

    def __init__(self, cfg: TrainConfig, model: DMCModel, frames: int):
        self.cfg = cfg
        ctx = mp.get_context("spawn")
        self.shared = _model(cfg)
        self.shared.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
        self.shared.share_memory()
        self.lock, self.version, self.stop = ctx.Lock(), ctx.Value("l", 0), ctx.Event()
        n, b = cfg.num_buffers, cfg.batch_size
        self.buffers = {
            "obs": torch.zeros((n, b, OBS_CELLS), dtype=torch.int8).share_memory_(),
            "action": torch.zeros((n, b), dtype=torch.int32).share_memory_(),
            "net": torch.zeros((n, b), dtype=torch.int8).share_memory_(),
            "target": torch.zeros((n, b), dtype=torch.float32).share_memory_(),
            "stats": torch.zeros((n, Stats.SIZE), dtype=torch.float64).share_memory_(),
        }
        self.free_q, self.full_q = ctx.Queue(), ctx.Queue()
        for i in range(n):
            self.free_q.put(i)
        self.procs = []
        for rank in range(cfg.num_actors):
            p = ctx.Process(target=actor_loop, args=(rank, cfg.to_dict(), self.shared, self.lock, self.version,
                                                     self.buffers, self.free_q, self.full_q, self.stop, frames,
                                                     os.getpid()), daemon=True)
            p.start()
            self.procs.append(p)
        self.shared_params = list(self.shared.state_dict().values())
        self.collector = None

    def get(self) -> tuple[tuple, np.ndarray]:
        while True:
            try:
                idx = self.full_q.get(timeout=1.0)
                break
            except queue.Empty:
                dead = [p for p in self.procs if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"actor process exited with code {dead[0].exitcode}")
        batch = tuple(self.buffers[k][idx].numpy().copy() for k in BATCH_KEYS)
        stats = self.buffers["stats"][idx].numpy().copy()
        self.free_q.put(idx)
        return batch, stats

    def publish(self, model: DMCModel) -> None:
        with self.lock:
            for dst, src in zip(self.shared_params, model.state_dict().values()):
                dst.copy_(src)
            self.version.value += 1

    def close(self) -> None:
        self.stop.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


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
            raise ImportError(f"backend 'ray' needs Ray (pip install 'ddz-env[ray]'): {e}") from None
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
                raise RuntimeError(f"ray actor {rank} did not start: {type(e).__name__}: {e}") from e
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
            (self.run_dir / "actors.json").write_text(json.dumps(data, indent=1) + "\n")

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


__all__ = ["InlineSource", "SharedMemorySource", "RaySource", "make_source", "actor_loop", "actor_seed", "BATCH_KEYS"]
