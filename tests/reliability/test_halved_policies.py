"""Issue 62, N44: ``halve_policy_file`` (how the benchmark keeps its move-scoring policies in git, in float16)
wrote files that did not load, and let weights through that its checks did not see: a float32 weight above
float16's 65,504 became inf in the halved file, which ``agents.load`` then refused; a float64 weight of 1e300
passed the non-finite check (finite in float64) and was inf once in the float32 parameters; a complex weight
passed it too (``is_floating_point`` is False for complex, so it was never looked at). Now the dtypes are
checked (real floating point; float64 converted), the values as the parameters and the halved file hold
them, and the file is read back and loaded before it replaces anything: a failure leaves the target as it was."""
from __future__ import annotations

import pytest

from common import needs_torch

pytestmark = needs_torch


@pytest.fixture
def small(tmp_path, tmp_path_factory):
    """A small move-scoring policy's checkpoint dict, and a writer of it with its weights changed."""
    import torch

    from agents.integrations.move_policy import MoveScoringPolicy, save_policy
    from agents.loader import read_checkpoint, save_checkpoint

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("base") / "policy.pt"
    save_policy(MoveScoringPolicy([16], [8]), path, library="torchrl", steps=5)
    ck = read_checkpoint(path)

    def write(name: str, change=lambda k, v: v) -> object:
        out = tmp_path / name
        model = {k: change(k, v) for k, v in ck["model"].items()}
        save_checkpoint(out, ck["agent"], **{**{k: v for k, v in ck.items() if k != "agent"}, "model": model})
        return out

    return write


FIRST = "nets.0.state.0.weight"  # (a weight of every move-scoring policy)


def halve(src, dst):
    from agents.integrations.move_policy import halve_policy_file

    halve_policy_file(src, dst)


def files_in(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_halved_policy_round_trips_through_agents_load_and_in_place(small, tmp_path):
    import torch

    import agents
    from agents.loader import read_checkpoint

    src = small("full.pt")
    halve(src, tmp_path / "half.pt")
    ck = read_checkpoint(tmp_path / "half.pt")
    assert {v.dtype for v in ck["model"].values()} == {torch.float16} and ck["library"] == "torchrl"
    assert agents.load(str(tmp_path / "half.pt")).name == "movescore:torchrl"
    before = files_in(tmp_path)
    halve(src, src)  # in place: the original is replaced by a file that was read back first
    assert {v.dtype for v in read_checkpoint(src)["model"].values()} == {torch.float16}
    assert files_in(tmp_path) == before  # (no temporary file left beside it)


def test_float64_weights_are_converted_to_float16_and_the_file_loads(small, tmp_path):
    import torch

    import agents
    from agents.loader import read_checkpoint

    src = small("double.pt", lambda k, v: v.double())
    halve(src, tmp_path / "half.pt")
    assert {v.dtype for v in read_checkpoint(tmp_path / "half.pt")["model"].values()} == {torch.float16}
    agents.load(str(tmp_path / "half.pt"))


def test_a_float64_weight_beyond_float32s_range_is_refused_not_loaded_as_inf(small, tmp_path):
    """1e300 is finite in float64 and passed the non-finite check; the float32 parameters hold it as inf."""
    from agents.integrations.move_policy import load_policy

    src = small("huge.pt", lambda k, v: v.double().fill_(1e300) if k == FIRST else v.double())
    with pytest.raises(ValueError, match=f"non-finite weights .*beyond float32's range.* in {FIRST}"):
        halve(src, tmp_path / "half.pt")
    with pytest.raises(ValueError, match="non-finite"):
        load_policy(src)
    assert not (tmp_path / "half.pt").exists()


def test_a_complex_weight_is_refused(small, tmp_path):
    import torch

    src = small("complex.pt", lambda k, v: v.to(torch.complex64) if k == FIRST else v)
    with pytest.raises(ValueError, match=f"weight {FIRST} is torch.complex64: .*real floating point"):
        halve(src, tmp_path / "half.pt")
    assert not (tmp_path / "half.pt").exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_nan_or_inf_weights_are_refused(small, tmp_path, value):
    src = small("bad.pt", lambda k, v: v.clone().fill_(value) if k == FIRST else v)
    with pytest.raises(ValueError, match=f"non-finite weights .* in {FIRST}"):
        halve(src, tmp_path / "half.pt")
    assert not (tmp_path / "half.pt").exists()


def test_a_weight_beyond_float16s_range_is_refused_and_the_original_is_left_as_it_was(small, tmp_path):
    """A float32 weight of 1e5 was inf once halved: the file written did not load. Halving in place, the
    original was lost to it."""
    src = small("wide.pt", lambda k, v: v.clone().fill_(1e5) if k == FIRST else v)
    before = src.read_bytes()
    with pytest.raises(ValueError, match=f"weight {FIRST} holds values up to 100000 .*beyond float16's 65,504"):
        halve(src, src)
    assert src.read_bytes() == before and files_in(tmp_path) == ["wide.pt"]


def test_a_written_file_that_does_not_load_never_replaces_the_target(small, tmp_path, monkeypatch):
    """The file is read back and loaded before it replaces anything: a write that went wrong (here, one that
    writes garbage) fails and leaves the target whole, with no temporary file beside it."""
    import agents.integrations.move_policy as mp

    src = small("full.pt")
    target = tmp_path / "kept.pt"
    target.write_bytes(b"the policy kept before")

    def garbage(path, agent, **content):
        with open(path, "wb") as f:
            f.write(b"not a checkpoint")

    monkeypatch.setattr(mp, "save_checkpoint", garbage)
    with pytest.raises(ValueError, match="does not load .*was left as it was"):
        mp.halve_policy_file(src, target)
    assert target.read_bytes() == b"the policy kept before"
    assert files_in(tmp_path) == ["full.pt", "kept.pt"]
