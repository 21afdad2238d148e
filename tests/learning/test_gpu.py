"""The gpu config on CUDA: a few thousand frames train there and the checkpoint loads on the CPU (skipped
without a CUDA device; issue 20, 6)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the gpu config's training test needs one", allow_module_level=True)

from agents import load
from agents.dmc.config import load_config
from agents.dmc.learner.trainer import load_checkpoint, train
from ddz_env.vector import VectorDouDizhu


def test_the_gpu_config_trains_on_cuda_and_its_checkpoint_plays_on_the_cpu(tmp_path):
    cfg = load_config("gpu", {"num_actors": 1, "num_envs": 64, "batch_size": 512, "total_frames": 4096,
                              "eval_every": 0, "log_every_frames": 1024, "checkpoint_every": 4096})
    ckpt = train(cfg, tmp_path / "run", progress=False)
    ck = load_checkpoint(ckpt, map_location="cpu")
    assert ck["frames"] >= 4096 and all(v.device.type == "cpu" for v in ck["model"].values())
    agent = load(str(ckpt))
    env = VectorDouDizhu(8, seed=0)
    from agents.base import Decisions

    d = Decisions.of_env(env)
    acts = agent.act_batch(d)
    assert all(a in d.legal(i) for i, a in enumerate(acts))
