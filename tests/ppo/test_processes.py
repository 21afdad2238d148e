"""Self-play collector processes (agents/ppo/processes.py): a collector process releases what the
in-process collector releases from the same seed, takes the learner's published weights, stops cleanly, and
a dead one stops the run with its exit code; the ppo learner trains through them and counts their CPU."""
from __future__ import annotations

import multiprocessing
import time

import numpy as np
import pytest
import torch

from agents.ppo.processes import ProcessCollectors
from agents.integrations.move_policy import MoveScoringPolicy
from agents.ppo.selfplay import CentralCritic, Collector

PLAY = dict(bid_epsilon=0.2, opponents=["rule", "self"], opponent_share=0.5, snapshot_every=2)


def small(seed=0):
    torch.manual_seed(seed)
    return MoveScoringPolicy((32,), (16,)), CentralCritic((16,))


def test_one_collector_process_releases_the_in_process_collectors_batch_from_the_same_seed():
    policy, critic = small()
    want = Collector(policy, 8, seed=3, critic=critic, **PLAY).collect(96)
    procs = ProcessCollectors(policy, critic, 1, 8, seed=3, decisions=96, threads=torch.get_num_threads(), **PLAY)
    try:
        got = procs.collect(96)
        assert procs.take_cpu() > 0 and procs.take_cpu() == 0
        assert len(procs.scores) > 0
        with pytest.raises(ValueError, match="batches of 96 decisions"):
            procs.collect(50)
    finally:
        procs.close()
    assert not any(p.is_alive() for p in procs.procs)
    assert len(got) == len(want)
    for field in ("obs", "choice", "logp", "value", "net", "adv", "ret", "hidden"):
        assert torch.equal(getattr(got, field), getattr(want, field)), field
    assert np.array_equal(got.ids, want.ids) and np.array_equal(got.starts, want.starts)


def test_collector_processes_take_the_published_weights():
    """After refresh() the collectors' stored values are the new weights' (the critic run again on the
    batch's inputs gives them), not the weights they started with. A batch also holds decisions of hands
    begun before the refresh, and each collector may have one batch in flight: so the test takes batches
    until most of one's rows are the new weights'."""
    policy, critic = small()
    procs = ProcessCollectors(policy, critic, 2, 8, seed=1, decisions=64, **PLAY)

    def share_of_new(batch):
        with torch.no_grad():
            value = critic(batch.obs, batch.hidden, batch.net)
        return float(torch.isclose(value, batch.value, rtol=1e-4, atol=1e-4).float().mean())

    try:
        first = procs.collect(64)
        with torch.no_grad():
            for p in list(policy.parameters()) + list(critic.parameters()):
                p.add_(torch.randn_like(p) * 0.5)
        procs.refresh()
        assert procs.version.value == 2
        assert share_of_new(first) < 0.05  # (played by the old weights)
        assert any(share_of_new(procs.collect(64)) > 0.5 for _ in range(20))
    finally:
        procs.close()


def test_a_dead_collector_process_stops_the_run_with_its_exit_code():
    policy, _ = small()
    procs = ProcessCollectors(policy, None, 1, 4, seed=0, decisions=32)
    procs.procs[0].kill()
    procs.procs[0].join()
    with pytest.raises(RuntimeError, match="collector process 0 exited with code -9"):
        while True:  # (a batch sent before the kill may still come first)
            procs.collect(32)
    assert not any(p.is_alive() for p in procs.procs)


def test_the_refresh_count_snapshots_self_opponents_each_time_it_passes_a_multiple():
    policy, _ = small()
    col = Collector(policy, 4, seed=0, opponents=["self"], opponent_share=1.0, snapshot_every=3)
    frozen = col.opponents[0].policy
    with torch.no_grad():
        next(policy.parameters()).add_(1.0)
    col.refresh(2)
    assert not torch.equal(next(frozen.parameters()), next(policy.parameters()))
    col.refresh(4)  # (jumped past 3: a collector process sees the learner's count, not every update)
    assert torch.equal(next(frozen.parameters()), next(policy.parameters()))
    with torch.no_grad():
        next(policy.parameters()).add_(1.0)
    col.refresh()
    col.refresh()
    assert torch.equal(next(frozen.parameters()), next(policy.parameters()))  # 6: one step at a time


def test_the_ppo_learner_trains_through_collector_processes_and_counts_their_cpu(tmp_path):
    from agents.ppo.learner import train

    own = time.process_time()
    small = dict(num_envs=8, decisions_per_batch=128, minibatch=64, state_layers=(32,), head_layers=(16,),
                 opponents=["rule"], collectors=1, progress_seconds=1e9)
    out = train(float("inf"), tmp_path / "run", decisions=128, progress=False, **small)
    own = time.process_time() - own
    assert out["steps"] >= 128
    assert not multiprocessing.active_children()
    assert out["cpu_seconds"] > own  # this process's CPU (the learner's) and the collector's on top
    again = train(float("inf"), tmp_path / "run", decisions=out["steps"] + 128, resume=True, progress=False, **small)
    assert again["steps"] > out["steps"] and not multiprocessing.active_children()
    with pytest.raises(ValueError, match="collectors"):
        train(1, tmp_path / "bad", progress=False, collectors=-1)
