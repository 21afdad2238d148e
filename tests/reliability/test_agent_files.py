"""Issue 38, cases 1 and 8: the files an agent spec names are regular files of bounded size, checked before
they are opened, and a checkpoint's stated sizes are checked against its weights before a network is built.
Each case ran into a hang or gigabytes before (a FIFO blocked forever; 43 s and 9.4 GB for a 17 MB file)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from common import ROOT, needs_torch

pytestmark = needs_torch


def load_in_subprocess(spec: str, env: dict | None = None, timeout: float = 60) -> str:
    """``agents.load(spec)`` in a fresh interpreter within ``timeout`` s (a hang fails the test): its one-line error."""
    code = ("import agents, sys\ntry:\n    agents.load(sys.argv[1])\nexcept (ValueError, FileNotFoundError) as e:\n"
            "    print(type(e).__name__ + ': ' + str(e)); sys.exit(3)\n")
    p = subprocess.run([sys.executable, "-c", code, spec], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr[-500:])
    return p.stdout.strip()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_named_as_a_checkpoint_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "agent.pt")
    out = load_in_subprocess(str(tmp_path / "agent.pt"))
    assert out == f"ValueError: checkpoint {str(tmp_path / 'agent.pt')!r} is a FIFO, not a regular file: refused"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_douzero_folder_with_a_fifo_is_refused_not_read(tmp_path):
    """The case of the issue: ``douzero:DIR`` whose ``landlord_up.ckpt`` is a FIFO blocked the loader forever."""
    import torch

    from agents.douzero.model import DouZeroNet

    for position, kind in (("landlord", "landlord"), ("landlord_down", "farmer")):
        torch.save(DouZeroNet(kind).state_dict(), tmp_path / f"{position}.ckpt")
    os.mkfifo(tmp_path / "landlord_up.ckpt")
    out = load_in_subprocess(f"douzero:{tmp_path}")
    assert "landlord_up.ckpt" in out and "is a FIFO, not a regular file" in out


def test_stated_sizes_are_checked_against_the_weights_before_a_network_is_built(tmp_path):
    import torch

    ck = torch.load(ROOT / "agents" / "pretrained" / "dmc.pt", weights_only=True)
    ck["model_kwargs"]["state_layers"] = [300000]
    torch.save(ck, tmp_path / "big.pt")
    # a 300,000-wide first layer would be 2 GB per network: refused from the shapes, in a tight memory limit
    code = ("import resource, agents, sys\nresource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
            "try:\n    agents.load(sys.argv[1])\nexcept ValueError as e:\n    print(e); sys.exit(3)\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.pt")], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 3, p.stderr[-500:]
    assert "do not fit the stated model_kwargs" in p.stdout and "big.pt" in p.stdout


def test_a_file_over_the_load_bound_is_refused_with_the_figure(tmp_path):
    import torch

    path = tmp_path / "rule.pt"
    torch.save({"agent": "rule", "config": {}, "extra": torch.zeros(4096)}, path)
    size = path.stat().st_size
    out = load_in_subprocess(str(path), env={"DDZ_MAX_LOAD_BYTES": "10000"})
    assert out == (f"ValueError: checkpoint {str(path)!r} is {size:,} bytes, more than the 10,000 an agent file may "
                   f"be (set DDZ_MAX_LOAD_BYTES to allow more)")
    import agents

    assert agents.load(str(path)).name == "rule"  # within the default bound (256 MiB)


def test_a_douzero_network_with_an_extra_tensor_over_the_bound_is_refused(tmp_path):
    """The issue's case 8: a ``landlord.ckpt`` with a 512 MiB extra tensor loaded (780 MB resident)."""
    import torch

    from agents.douzero.model import DouZeroNet

    for position, kind in (("landlord", "landlord"), ("landlord_up", "farmer"), ("landlord_down", "farmer")):
        sd = DouZeroNet(kind).state_dict()
        if position == "landlord":
            sd["padding"] = torch.zeros(1 << 18)  # 1 MiB: the bound below is set under it
        torch.save(sd, tmp_path / f"{position}.ckpt")
    out = load_in_subprocess(f"douzero:{tmp_path}", env={"DDZ_MAX_LOAD_BYTES": str(1 << 20)})
    assert "landlord.ckpt" in out and "more than the 1,048,576 an agent file may be" in out


def test_an_rllib_folder_that_links_to_itself_is_not_followed(tmp_path):
    """Two links back to the folder itself: the recursive glob that looked for ``module_state.pkl`` followed them
    (2^40 paths; no answer within minutes). The walk follows no link, and finds what the real folders hold."""
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "b").symlink_to(tmp_path)
    out = load_in_subprocess(f"rllib:{tmp_path}", timeout=30)
    assert out.startswith(f"ValueError: rllib checkpoint {str(tmp_path)!r}: neither a policy.pt nor an RLlib "
                          f"module_state.pkl inside"), out
    (tmp_path / "learner" / "shared").mkdir(parents=True)
    (tmp_path / "learner" / "shared" / "module_state.pkl").write_bytes(b"")
    (tmp_path / "learner" / "shared" / "up").symlink_to(tmp_path)
    out = load_in_subprocess(f"rllib:{tmp_path}", timeout=30)
    assert "RLlib keeps its weights as a pickle" in out and "learner/shared/module_state.pkl" in out, out


def stride0(state: dict) -> dict:
    """``state``'s shapes as stride-0 views of one zero: ``torch.save`` keeps the one-element storage, so a few KB
    holds tensors of any shape."""
    import torch

    out = {k: torch.zeros(1, dtype=v.dtype, device="cpu").expand(v.shape) for k, v in state.items()}
    assert all(v.device.type == "cpu" and v.untyped_storage().nbytes() <= 8 for v in out.values())
    return out


def stride0_file(tmp_path, kind: str):
    """A few-KB file of ``kind`` (a move-scoring policy.pt, a DMC checkpoint, an sb3 zip) whose weights, stride-0
    views, have the shapes of 8192-wide layers that it states: 5.2 GB once built."""
    import io
    import zipfile

    import torch

    from agents.dmc.checkpoint import FORMAT_VERSION as DMC_FORMAT
    from agents.dmc.model import DMCModel
    from agents.integrations import move_policy as mp

    if kind == "dmc":
        kw = {"state_layers": [8192] * 4, "head_layers": [8192] * 2}
        with torch.device("meta"):  # (the layout alone: its shapes)
            model = DMCModel(kw["state_layers"], kw["head_layers"]).state_dict()
        model = stride0(model)
        path = tmp_path / "checkpoint.pt"
        torch.save({"agent": "dmc", "format_version": DMC_FORMAT, "config": {}, "model_kwargs": kw, "model": model},
                   path)
        return path
    kw = {"state_layers": [8192] * 4, "head_layers": [8192] * 2, "hand_after": True, "temperature": 1.0}
    with torch.device("meta"):
        model = mp.MoveScoringPolicy(**kw).state_dict()
    model = stride0(model)
    if kind == "movescore":
        path = tmp_path / "policy.pt"
        torch.save({"agent": mp.AGENT_KIND, "format_version": mp.FORMAT_VERSION, "model_kwargs": kw, "model": model,
                    "obs_shape": list(mp.OBS_SHAPE), "num_actions": mp.NUM_ACTIONS}, path)
        return path
    raw = io.BytesIO()
    torch.save({**{f"move_policy.{k}": v for k, v in model.items()}, "move_temperature": torch.tensor(1.0)}, raw)
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("policy.pth", raw.getvalue())
    return path


@pytest.mark.parametrize("kind, call", [
    ("movescore", "agents.load(path)"),
    ("dmc", "agents.load(path)"),
    ("dmc", "DMCAgent.from_checkpoint(path)"),  # (load_checkpoint: what --resume and export read with)
    ("sb3", "agents.load('sb3:' + path)"),
])
def test_a_small_file_of_stride0_weights_is_refused_before_the_memory_is_taken(tmp_path, kind, call):
    """A few-KB file whose tensors are stride-0 views with the shapes it claims passed every shape check and the
    256 MiB file bound, then took 5.2 GB when the network was built (in a 3 GiB address space: an allocation
    error, not a ValueError). Now the bytes the tensors would take are bounded like the file's."""
    path = stride0_file(tmp_path, kind)
    assert path.stat().st_size < 64 << 10
    code = ("import resource, sys, time\nresource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
            "import agents\nfrom agents.dmc.agent import DMCAgent\npath = sys.argv[1]\nt = time.perf_counter()\n"
            f"try:\n    {call}\nexcept ValueError as e:\n"
            "    print(f'{time.perf_counter() - t:.3f}'); print(e); sys.exit(3)\n")
    p = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr[-500:])
    _, message = p.stdout.strip().split("\n")  # (refused inside a 3 GiB address space: nothing was built)
    assert str(path) in message and "its tensors would take" in message, message
    assert "more than the 268,435,456 an agent file may be" in message and "\n" not in message


def test_an_sb3_zip_whose_policy_inflates_to_a_gib_is_refused_before_inflating(tmp_path):
    """A 4.5 MB zip whose ``policy.pth`` inflates to 1 GiB of zeros was inflated whole (``zf.read``) before any
    bound; the size the zip states is checked first, then the member is read with a bound."""
    import time
    import tracemalloc
    import zipfile

    from agents.integrations.sb3.policy import policy_from_zip

    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("policy.pth", "w", force_zip64=True) as member:
            chunk = bytes(16 << 20)
            for _ in range(64):
                member.write(chunk)
    assert path.stat().st_size < 8 << 20
    tracemalloc.start()
    t = time.perf_counter()
    try:
        with pytest.raises(ValueError) as e:
            policy_from_zip(path)
        seconds, peak = time.perf_counter() - t, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value) == (f"sb3 model {str(path)!r}: its policy.pth inflates to 1,073,741,824 bytes, more than the "
                            f"268,435,456 an agent file may be (set DDZ_MAX_LOAD_BYTES to allow more)")
    assert peak < 16 << 20, (seconds, peak)  # (what was read, not how long: a busy machine is slower)
