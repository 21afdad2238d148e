"""Trust is typed, never read from a file: ``rllib:DIR?trust=yes`` unpickles what DIR holds, and a run folder's
stored config (a DMC checkpoint's ``config``, a library run's ``config.yaml``) could name it, so that
``train.py --resume RUN`` of a run folder received from elsewhere ran its pickle. Before the fix both resumes
below unpickled the planted file (its marker folder was made) and only then failed on what it held."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from common import ROOT, needs

pytestmark = needs("yaml", "train")


class _Plant:
    """A pickle that makes a folder when it is loaded: the proof that a file was unpickled."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def planted_checkpoint(tmp_path) -> tuple[str, str]:
    """An RLlib-looking checkpoint folder whose ``module_state.pkl`` makes ``marker`` when unpickled."""
    folder, marker = tmp_path / "ck", tmp_path / "unpickled"
    folder.mkdir()
    (folder / "module_state.pkl").write_bytes(pickle.dumps(_Plant(str(marker))))
    return str(folder), str(marker)


def resume(run_dir, *sets: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "train.py", "--resume", str(run_dir), "--no-progress"]
    for s in sets:
        args += ["--set", s]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)


def one_line_error(p: subprocess.CompletedProcess, *words: str) -> str:
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-800:]
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines
    return lines[0]


@needs("torch", "train")
def test_a_dmc_checkpoint_whose_stored_config_grants_trust_is_refused_before_anything_loads(tmp_path):
    import torch

    folder, marker = planted_checkpoint(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    spec = f"rllib:{folder}?trust=yes"
    torch.save({"agent": "dmc", "format_version": 1, "config": {"name": "x", "opponents": [spec]}, "model": {},
                "model_kwargs": {}}, run_dir / "checkpoint.pt")
    p = resume(run_dir)
    assert not os.path.exists(marker), "the stored spec's pickle was loaded"
    line = one_line_error(p, "config key 'opponents'", spec, "trust=... is taken only from the command line",
                          "--set opponents=")
    assert str(run_dir) in line


@needs("sb3_contrib", "marl")
def test_a_library_run_whose_config_yaml_grants_trust_is_refused_before_anything_loads(tmp_path):
    import yaml

    folder, marker = planted_checkpoint(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    spec = f"rllib:{folder}?trust=yes"
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"algo": "sb3", "name": "x", "eval_opponents": ["rule", spec]}))
    p = resume(run_dir)
    assert not os.path.exists(marker), "the stored spec's pickle was loaded"
    one_line_error(p, "config.yaml", "config key 'eval_opponents'", spec, "--set eval_opponents=")


def test_trust_typed_on_the_command_line_replaces_the_stored_key():
    """A ``--set`` of the key is what the user types now: it may grant trust, and it replaces the stored spec."""
    from agents.dmc.config import resume_config

    saved = {"name": "x", "opponents": ["rllib:/a?trust=yes"], "eval_opponents": ["douzero:/d?bidder=rllib:/b?TRUST=yes"]}
    with pytest.raises(ValueError, match=r"^the checkpoint's stored config: config key 'opponents' holds") as e:
        resume_config(saved, [])
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="config key 'eval_opponents' holds 'douzero:/d\\?bidder=rllib:/b\\?TRUST=yes'"):
        resume_config(saved, ["opponents=[rule]"])  # (a spec nested in another's option counts too)
    cfg = resume_config(saved, ['opponents=["rllib:/c?trust=yes"]', "eval_opponents=[rule]"])
    assert cfg.opponents == ["rllib:/c?trust=yes"] and cfg.eval_opponents == ["rule"]
    assert resume_config({"name": "x", "opponents": ["rllib:/a"]}, []).opponents == ["rllib:/a"]


@pytest.mark.parametrize("algo", ["dmc", "sb3"])
def test_a_config_file_given_to_train_py_that_grants_trust_is_refused_before_anything_loads(tmp_path, algo):
    """N23: a YAML file given as ``--config FILE`` may come from elsewhere as a run folder may; before, its
    ``?trust=yes`` unpickled the planted file. Typed on the command line (``--set``), trust is taken."""
    import yaml

    folder, marker = planted_checkpoint(tmp_path)
    spec = f"rllib:{folder}?trust=yes"
    cfg = tmp_path / "received.yaml"
    cfg.write_text(yaml.safe_dump({"algo": algo, "name": "x", "eval_opponents": ["rule", spec]}))
    p = subprocess.run([sys.executable, "train.py", "--config", str(cfg), "--run-dir", str(tmp_path / "run"),
                        "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert not os.path.exists(marker), "the config file's spec's pickle was loaded"
    one_line_error(p, "received.yaml", "config key 'eval_opponents'", spec, "--set eval_opponents=")
    assert not (tmp_path / "run").exists()


def test_a_config_files_trust_replaced_by_what_is_typed_loads():
    from agents.dmc.config import SCHEMA

    import tempfile
    import yaml

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.yaml")
        with open(path, "w") as f:
            yaml.safe_dump({"name": "x", "opponents": ["rllib:/a?trust=yes"]}, f)
        with pytest.raises(ValueError, match="c.yaml.*config key 'opponents' holds"):
            SCHEMA.load(path)
        assert SCHEMA.load(path, ['opponents=["rllib:/c?trust=yes"]']).opponents == ["rllib:/c?trust=yes"]
