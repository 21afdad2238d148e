"""ONNX export (python -m agents.export, agents/onnx/export.py) and the onnx:FILE agent
(agents/onnx/agent.py): the exported graph, run by onnxruntime with the greedy choice in numpy,
chooses exactly the torch agent's move in thousands of seeded decisions of every phase, for the shipped DMC
agent and a committed move-scoring policy; it is seated by agents.load and the evaluation, plays without
torch, and a bad file or a missing onnxruntime is one line."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from common import ROOT, needs_torch

pytestmark = [needs_torch, pytest.mark.usefixtures("quiet_warnings")]

TORCHRL = ROOT / "benchmarks" / "results" / "marl" / "torchrl.pt"
SPECS = {"pretrained": "pretrained", "torchrl": str(TORCHRL)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{name: (torch agent, path of its .onnx)} of SPECS (written without the export's own check: the tests check)."""
    pytest.importorskip("onnx", reason="the onnx extra (pip install -e '.[onnx]'; make test installs it)")
    pytest.importorskip("onnxruntime", reason="the onnx extra (pip install -e '.[onnx]'; make test installs it)")
    import torch

    from agents import load
    from agents.onnx.export import export_onnx

    threads = torch.get_num_threads()
    folder = tmp_path_factory.mktemp("onnx")
    out = {}
    for name, spec in SPECS.items():
        path = folder / f"{name}.onnx"
        r = export_onnx(spec, path, check=0)
        assert r["kind"] == ("dmc" if name == "pretrained" else "movescore") and path.stat().st_size == r["bytes"]
        out[name] = (load(spec), path)
    yield out
    torch.set_num_threads(threads)


@pytest.mark.parametrize("name", list(SPECS))
def test_the_onnx_agent_chooses_the_torch_agents_move_in_every_phase(exported, name):
    import torch

    from agents import load
    from agents.dmc.model import net_of
    from agents.onnx.agent import OnnxAgent
    from agents.onnx.export import decisions, scoring_module

    agent, path = exported[name]
    onnx_agent = load(f"onnx:{path}")
    assert isinstance(onnx_agent, OnnxAgent) and onnx_agent.name == f"onnx:{path.name}"
    module = scoring_module(agent)
    seen, phases, checked, scored, sizes = set(), set(), 0, 0, set()
    for d in decisions(3000, seed=7):
        want, got = agent.act_batch(d), onnx_agent.act_batch(d)
        assert np.array_equal(want, got), (name, np.flatnonzero(want != got)[:5])
        checked += len(d)
        counts = np.diff(d.legal_starts)
        scored += int((counts > 1).sum())
        seen.update(net_of(d.phase, d.role)[counts > 1].tolist())
        phases.update(d.phase[counts > 1].tolist())
        # the graph's scores are the torch module's (a choice could agree by luck; the scores cannot)
        planes, rows, ids = OnnxAgent.inputs(d)
        sizes.add((planes.shape[0], ids.size))
        with torch.no_grad():
            ref = module(torch.from_numpy(planes), torch.from_numpy(rows), torch.from_numpy(ids)).numpy()
        np.testing.assert_allclose(onnx_agent.scores(planes, rows, ids), ref, rtol=1e-4, atol=1e-4)
    # every network (the three roles in play, bidding) and every phase (bid, double, redouble, play) was scored
    assert checked >= 3000 and scored >= 2000 and seen == {0, 1, 2, 3} and phases == {0, 1, 2, 3}, \
        (checked, scored, seen, phases)
    assert len(sizes) > 20  # (the graph's batch and move count are dynamic: many shapes went through it)


def test_greedy_takes_the_first_of_the_highest_scores():
    from agents.onnx.agent import greedy

    scores = np.array([1.0, 3.0, 3.0, 0.5, -2.0, -2.0, 7.0], np.float32)
    starts = np.array([0, 3, 4, 6, 7])
    assert greedy(scores, starts).tolist() == [1, 3, 4, 6]


def test_onnx_specs_are_seated_by_load_and_the_evaluation_and_play_without_torch(exported):
    from agents import evaluate, load
    from agents.onnx.agent import OnnxAgent

    torch_agent, path = exported["pretrained"]
    assert isinstance(load(str(path)), OnnxAgent)  # (a path ending .onnx is read as onnx:PATH)
    res = evaluate(f"onnx:{path}", "pretrained", deals=4, seed=3)
    assert all(x == 0.0 for x in res["per_deal_score_a"])  # the same moves: every deal ties exactly
    code = ("import sys; sys.modules['torch'] = None\n"  # (an import of torch fails)
            "import numpy as np; from agents import load; from ddz_env import VectorDouDizhu\n"
            "from agents.base import Decisions\n"
            f"a = load('onnx:{path}'); env = VectorDouDizhu(4, seed=0)\n"
            "d = Decisions.of_env(env)\n"
            "print(a, a.act_batch(d).tolist())")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("OnnxAgent(onnx:pretrained.onnx) ["), p.stderr[-2000:]


def test_a_bad_file_is_one_line(exported, tmp_path):
    import onnx
    from onnx import TensorProto, helper

    from agents import load

    (tmp_path / "noise.onnx").write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    (tmp_path / "empty.onnx").write_bytes(b"")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "other.onnx")
    cut = exported["torchrl"][1].read_bytes()
    (tmp_path / "cut.onnx").write_bytes(cut[:len(cut) // 2])
    for name, words in [("noise.onnx", "is not an ONNX graph onnxruntime can run"),
                        ("empty.onnx", "is not an ONNX graph onnxruntime can run"),
                        ("cut.onnx", "is not an ONNX graph onnxruntime can run"),
                        ("other.onnx", "is an ONNX graph but no ddz-env agent")]:
        with pytest.raises(ValueError) as e:
            load(f"onnx:{tmp_path / name}")
        assert words in str(e.value) and "\n" not in str(e.value), (name, str(e.value))
    with pytest.raises(FileNotFoundError, match="ONNX agent .* not found"):
        load(f"onnx:{tmp_path / 'missing.onnx'}")
    with pytest.raises(ValueError, match="is a directory"):
        load(f"onnx:{tmp_path}")
    with pytest.raises(ValueError, match="needs the path of a .onnx file"):
        load("onnx:")
    p = subprocess.run([sys.executable, "evaluate.py", "--a", f"onnx:{tmp_path / 'noise.onnx'}", "--b", "rule",
                        "--deals", "2"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "evaluate.py: error:" in p.stderr, p.stderr


def test_a_missing_onnxruntime_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    from agents import load

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # (its import fails)
    (tmp_path / "a.onnx").write_bytes(b"x")
    with pytest.raises(ImportError) as e:
        load(f"onnx:{tmp_path / 'a.onnx'}")
    assert "pip install -e " in str(e.value) and '[onnx]"' in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_export_takes_any_dmc_layout_and_refuses_an_agent_without_networks(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    import torch

    from agents.dmc.agent import DMCAgent
    from agents.dmc.model import DMCModel
    from agents.onnx.export import export_onnx

    torch.manual_seed(0)  # an LSTM over the history and a decomposed head (onnxruntime's LSTM takes no empty batch:
    model = DMCModel([64], [32, 16], history_lstm=16, hand_after=False, value_head="decomposed")  # the graph pads)
    r = export_onnx(DMCAgent(model, name="tiny"), tmp_path / "tiny.onnx", check=600)
    assert r["checked"] >= 600 and r["same"] == r["checked"] and r["max_diff"] < 1e-4, r
    p = subprocess.run([sys.executable, "-m", "agents.export", "rule", str(tmp_path / "rule.onnx")], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.startswith("python -m agents.export: error: ") and "no network" in p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "rule.onnx").exists(), p.stderr


def test_the_exported_graphs_are_well_within_each_bound_at_the_largest_call(exported):
    """The figures of agents/onnx/check.py's limits: each is several times what the shipped DMC
    agent's graph and the TorchRL policy's need at MAX_ROWS decisions and MAX_CANDIDATES moves a call."""
    from agents.onnx import check as c

    for name, (_, path) in exported.items():
        data = path.read_bytes()
        _, figures = c.checked_graph(c.parse(data, name), data, name, str(path.parent))
        assert figures["bytes"] < c.MAX_ACTIVATION_BYTES / 4 and figures["work"] < c.MAX_WORK / 8, (name, figures)
        assert figures["external"] == 0


def test_a_batch_beyond_the_checked_sizes_is_scored_in_parts_with_the_same_scores(exported, monkeypatch):
    from agents.onnx import agent as onnx_agent
    from agents.onnx.agent import OnnxAgent
    from agents.onnx.export import decisions

    agent = load_onnx(exported["torchrl"][1])
    d = decisions(64 * 8, seed=5)[6]  # (64 tables in play: about 10 moves a decision)
    planes, rows, ids = OnnxAgent.inputs(d)
    whole = agent.scores(planes, rows, ids)
    want = agent.act_batch(d)
    calls = []
    run = agent.session.run
    monkeypatch.setattr(agent, "session", type("Recording", (), {"run": lambda self, names, feed: calls.append(
        (feed["planes"].shape[0], feed["ids"].size)) or run(names, feed)})())
    monkeypatch.setattr(onnx_agent, "MAX_ROWS", 5)
    monkeypatch.setattr(onnx_agent, "MAX_CANDIDATES", 37)
    np.testing.assert_allclose(agent.scores(planes, rows, ids), whole, rtol=1e-5, atol=1e-5)
    assert len(calls) >= ids.size // 37 and all(b <= 5 and m <= 37 for b, m in calls), calls
    shuffled = np.random.default_rng(0).permutation(ids.size)  # (candidates out of row order: the same scores)
    np.testing.assert_allclose(agent.scores(planes, rows[shuffled], ids[shuffled]), whole[shuffled], rtol=1e-5,
                               atol=1e-5)
    assert np.array_equal(agent.act_batch(d), want)


def load_onnx(path):
    from agents import load

    return load(f"onnx:{path}")


def test_an_exported_graph_saved_with_external_data_plays_from_its_folder_alone(exported, tmp_path, monkeypatch):
    """onnx.save_model(..., save_as_external_data=True): the weights (initializers and constants) in a file beside
    the graph, read from the graph's folder (not the working folder), and the graph rebuilt in another process
    from its bytes."""
    import pickle

    import onnx

    from agents.onnx.export import decisions

    _, path = exported["torchrl"]
    folder = tmp_path / "agent"
    folder.mkdir()
    onnx.save_model(onnx.load(path), folder / "ext.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.onnx.data", size_threshold=1024, convert_attribute=True)
    assert (folder / "ext.onnx").stat().st_size < 1 << 20 < (folder / "ext.onnx.data").stat().st_size
    monkeypatch.chdir(tmp_path)
    inline, ext = load_onnx(path), load_onnx(folder / "ext.onnx")
    d = decisions(64 * 4, seed=2)[3]
    assert np.array_equal(inline.act_batch(d), ext.act_batch(d))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(ext)).scores(*ext.inputs(d)), ext.scores(*ext.inputs(d)))
