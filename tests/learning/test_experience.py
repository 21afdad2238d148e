"""The actor's sample ring, the opponent pool of past selves, and the learner's bf16 shape buckets."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

from agents.dmc.config import config_from_dict, load_config
from agents.dmc.learner.experience import Collector, SampleRing
from agents.dmc.model import DMCModel, OBS_CELLS
from agents.dmc.learner.trainer import BF16_BUCKET, _rows, learn, make_optimizer

from common import SMOKE


def _piece(start: int, n: int) -> tuple[np.ndarray, ...]:
    k = np.arange(start, start + n)
    obs = np.repeat((k % 127).astype(np.int8)[:, None], OBS_CELLS, axis=1)
    return obs, k.astype(np.int32), (k % 4).astype(np.int8), k.astype(np.float32) / 7


def test_the_ring_hands_out_samples_in_order_across_wraps_and_growth():
    ring = SampleRing(10)
    pushed = popped = 0
    rng = np.random.default_rng(0)
    out = tuple(np.empty((6,) + a.shape[1:], a.dtype) for a in ring.arrays)
    for step in range(200):
        n = int(rng.integers(0, 9))
        ring.push(*_piece(pushed, n))
        pushed += n
        while True:
            got = ring.pop(6, out if step % 2 else None)
            if got is None:
                break
            want = _piece(popped, 6)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
            assert (got[0] is out[0]) == bool(step % 2)
            popped += 6
        assert ring.size == pushed - popped < 6
    assert ring.capacity > 10  # it grew when a push would have overflowed ...
    peek = ring.peek()  # ... and what is left reads back in order
    for g, w in zip(peek, _piece(popped, pushed - popped)):
        np.testing.assert_array_equal(g, w)


def _pool_cfg(**kw):
    base = {"num_envs": 16, "batch_size": 128, "state_layers": [16], "head_layers": [16, 8], "opponents": ["rule"],
            "opponent_share": 1.0, "pool_every": 160, "pool_size": 2, "pool_share": 0.5, "epsilon": 0.0}
    return load_config(SMOKE, {**base, **kw})


def test_the_pool_keeps_the_acting_weights_and_plays_opponent_hands():
    cfg = _pool_cfg()
    col = Collector(cfg, seed=3)
    torch.manual_seed(0)
    models = [DMCModel([16], [16, 8]) for _ in range(3)]
    owners = set()
    for i in range(600):
        m = models[min(i // 10, 2)]  # the learner's weights change at steps 10 and 20 (160 decisions each)
        col.step(m)
        owners |= set(np.unique(col.owner).tolist())
    # copies when 160, 320, ... decisions were made: the last two are of models[2], the slots alternate
    assert len(col.pool) == 2 and col.pool_next == ((col.decisions - 1) // cfg.pool_every) % 2
    for past in col.pool:
        for k, v in past.state_dict().items():
            assert torch.equal(v, models[2].state_dict()[k])
            assert v.data_ptr() != models[2].state_dict()[k].data_ptr()  # a copy, not the learner's tensor
    assert {-1, 0, 1, 2} <= owners  # learner, rule (0) and both pool slots (1, 2) held seats
    assert col.stats.vs_hands > 0 and col.stats.hands == 0  # share 1: every hand is against an opponent


def test_a_pool_only_run_needs_pool_share_1_and_a_pool_needs_opponent_hands():
    with pytest.raises(ValueError, match="'pool_share'"):
        config_from_dict({}, ["pool_every=100", "opponent_share=0.5"])
    with pytest.raises(ValueError, match="'pool_every'"):
        config_from_dict({}, ["pool_every=100"])
    cfg = config_from_dict({}, ["pool_every=100", "opponent_share=0.5", "pool_share=1"])
    col = Collector(cfg.__class__(**{**cfg.to_dict(), "num_envs": 8, "state_layers": [8], "head_layers": [8, 4]}),
                    seed=0)
    torch.manual_seed(0)  # (the weights decide how long hands last: 21 to 120 steps over torch seeds 0..7)
    model = DMCModel([8], [8, 4])
    for _ in range(400):
        col.step(model)
        if col.pool and col.stats.vs_hands > 0:
            break
    assert col.pool and col.stats.vs_hands > 0


def test_the_pool_is_part_of_an_inline_runs_tables(tmp_path):
    """state_dict / load_state_dict carry the pool: a restored collector acts exactly as the original."""
    cfg = _pool_cfg()
    torch.manual_seed(1)
    model = DMCModel([16], [16, 8])
    a = Collector(cfg, seed=5)
    for _ in range(200):
        a.step(model)
    state = a.state_dict()
    torch.save(state, tmp_path / "c.pt")
    b = Collector(cfg, seed=99)
    b.load_state_dict(torch.load(tmp_path / "c.pt", weights_only=True))
    for _ in range(100):
        a.step(model)
        b.step(model)
    np.testing.assert_array_equal(a.owner, b.owner)
    for x, y in zip(a.ring.peek(), b.ring.peek()):
        np.testing.assert_array_equal(x, y)
    assert a.pool_due == b.pool_due and len(a.pool) == len(b.pool)


def test_bf16_rows_are_padded_to_buckets_with_zero_weight():
    sel = np.array([3, 5, 9])
    rows, w = _rows(sel, BF16_BUCKET)
    assert rows.size == BF16_BUCKET and (rows[:3] == sel).all() and (rows[3:] == 3).all()
    assert w.sum() == 3 and (w[:3] == 1).all()
    assert _rows(np.arange(BF16_BUCKET), BF16_BUCKET)[1] is None
    assert _rows(sel, 1)[1] is None


def test_a_bf16_learner_takes_the_same_step_as_unpadded_rows():
    """Padding rows have weight 0: the loss (and its gradient) is the mean over the real rows."""
    cfg32 = _pool_cfg(precision="fp32")
    rng = np.random.default_rng(0)
    n = 200
    batch = (rng.integers(0, 2, size=(n, OBS_CELLS)).astype(np.int8), rng.integers(1, 200, size=n).astype(np.int32),
             rng.integers(0, 4, size=n).astype(np.int8), rng.standard_normal(n).astype(np.float32))
    torch.manual_seed(0)
    m = DMCModel([16], [16, 8])
    ref = learn(m, make_optimizer(cfg32, m), batch, cfg32, torch.device("cpu"))
    import agents.dmc.learner.trainer as tr

    torch.manual_seed(0)
    m2 = DMCModel([16], [16, 8])
    old = cfg32.precision
    try:
        cfg32.precision = "bf16"  # padded rows, computed in bf16: the losses agree to bf16 precision
        got = tr.learn(m2, make_optimizer(cfg32, m2), batch, cfg32, torch.device("cpu"))
    finally:
        cfg32.precision = old
    np.testing.assert_allclose(got, ref, rtol=0.05)
