"""Issue 62, item 5 (N36, N42, N43): an ``onnx:`` graph is checked with the onnx package before onnxruntime
builds it (agents/onnx/check.py). A graph of a few hundred bytes took 2.2 GB at its first decision,
one asking 16 GiB was killed, a Loop never finished, external tensor data was read from the working folder or
any absolute path, and a graph's inputs and outputs were not checked until its first decision. Each graph here
is tiny and built with onnx.helper; each is refused at load, in one line, before anything is allocated (the
graph that would take gigabytes is loaded in a process whose address space is capped)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from common import ROOT

onnx = pytest.importorskip("onnx", reason="the onnx extra (pip install -e '.[onnx]'; make test installs it)")
pytest.importorskip("onnxruntime", reason="the onnx extra (pip install -e '.[onnx]'; make test installs it)")

from onnx import TensorProto, helper  # noqa: E402

BOUNDED = "an agent graph's every intermediate has a bounded size"


def agent_model(nodes=(), feed: str | None = None, initializers=(), inputs=None, outputs=None, opsets=(),
                functions=()):
    """A graph with the agent's contract and metadata: ``scores = float(ids)``, plus ``0 * sum(feed)`` when
    ``feed`` names the output of ``nodes`` (so that onnxruntime would compute it)."""
    body = [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT), *nodes]
    if feed:
        body += [helper.make_node("Cast", [feed], ["feed_f"], to=TensorProto.FLOAT),
                 helper.make_node("ReduceSum", ["feed_f"], ["feed_s"], keepdims=0),
                 helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
                 helper.make_node("Mul", ["feed_s", "zero"], ["feed_z"]),
                 helper.make_node("Add", ["f", "feed_z"], ["scores"])]
    else:
        body.append(helper.make_node("Identity", ["f"], ["scores"]))
    inputs = inputs or [helper.make_tensor_value_info("planes", TensorProto.INT8, ["B", 1740]),
                        helper.make_tensor_value_info("rows", TensorProto.INT64, ["M"]),
                        helper.make_tensor_value_info("ids", TensorProto.INT64, ["M"])]
    outputs = outputs or [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["M"])]
    graph = helper.make_graph(body, "agent", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), *opsets], functions=list(functions))
    model.ir_version = 8  # (the exported graphs' IR version: onnxruntime 1.16 and later read it)
    for k, v in {"ddz_env.format": "1", "ddz_env.kind": "dmc", "ddz_env.obs_cells": "1740",
                 "ddz_env.num_actions": "24648"}.items():
        model.metadata_props.add(key=k, value=v)
    return model


def const(name: str, values, dtype=TensorProto.INT64):
    values = np.asarray(values)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, list(values.shape),
                                                                             values.ravel().tolist()))


def refusal(path) -> str:
    """The one line ``agents.load`` refuses ``onnx:path`` with (a ValueError)."""
    from agents import load

    with pytest.raises(ValueError) as e:
        load(f"onnx:{path}")
    assert "\n" not in str(e.value), str(e.value)
    return str(e.value)


def inputs_of(n: int = 3, k: int = 4):
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    return np.zeros((n, 1740), np.int8), rows, (np.arange(rows.size, dtype=np.int64) * 7) % 24648


def test_a_tiny_graph_with_the_agent_contract_loads_and_scores_each_candidate(tmp_path):
    """The graphs below are this one and a harmful part: what refuses them is that part. An Expand to the shape
    of an input is bounded (by M), and accepted."""
    from agents import load

    nodes = [const("one", [1.0], TensorProto.FLOAT), helper.make_node("Shape", ["ids"], ["m"]),
             helper.make_node("Expand", ["one", "m"], ["g"])]
    onnx.save(agent_model(nodes, feed="g"), tmp_path / "fine.onnx")
    agent = load(f"onnx:{tmp_path / 'fine.onnx'}")
    planes, rows, ids = inputs_of()
    np.testing.assert_array_equal(agent.scores(planes, rows, ids), ids.astype(np.float32))


@pytest.mark.parametrize("op", ["ConstantOfShape", "Expand", "Tile"])
def test_a_tensor_whose_shape_is_computed_from_the_inputs_is_refused_at_load(tmp_path, op):
    """N36: the shape is the largest candidate id times a million: 2.2 GB or more at the first decision."""
    nodes = [helper.make_node("ReduceMax", ["ids"], ["top"], keepdims=1), const("million", [1_000_000]),
             helper.make_node("Mul", ["top", "million"], ["shape"])]
    if op == "ConstantOfShape":
        nodes.append(helper.make_node(op, ["shape"], ["big"]))
    else:
        nodes += [const("one", [1.0], TensorProto.FLOAT), helper.make_node(op, ["one", "shape"], ["big"])]
    onnx.save(agent_model(nodes, feed="big"), tmp_path / "blow.onnx")
    line = refusal(tmp_path / "blow.onnx")
    article = "an" if op == "Expand" else "a"
    assert f"the size of 'big' ({article} {op} node) depends on the graph's data without a bound: refused" in line, line
    assert BOUNDED in line and "blow.onnx" in line


def test_an_intermediate_of_m_by_m_candidates_is_refused_by_its_size_at_the_largest_call(tmp_path):
    """Its shape is known, (M, M): at 32,768 candidates a call, 4 GiB, more than one intermediate may take."""
    nodes = [helper.make_node("Shape", ["ids"], ["m"]), helper.make_node("Concat", ["m", "m"], ["mm"], axis=0),
             helper.make_node("ConstantOfShape", ["mm"], ["square"])]
    onnx.save(agent_model(nodes, feed="square"), tmp_path / "square.onnx")
    line = refusal(tmp_path / "square.onnx")
    assert "'square' (a ConstantOfShape node) would take up to 4,294,967,296 bytes (shape up to (32768, 32768))" \
        in line and "more than the 268,435,456 one intermediate of an agent graph may: refused" in line, line


def test_a_constant_shape_or_a_sparse_initializer_of_16_gib_is_refused_at_load_without_allocating_it(tmp_path):
    """N36's graph killed out of memory, and a sparse initializer (one value, made dense by onnxruntime): both
    refused in a process whose address space could not hold them."""
    nodes = [const("shape", [1 << 17, 1 << 15]), helper.make_node("ConstantOfShape", ["shape"], ["big"])]
    onnx.save(agent_model(nodes, feed="big"), tmp_path / "big.onnx")
    sparse = agent_model(feed="sp")
    sparse.graph.sparse_initializer.append(helper.make_sparse_tensor(
        helper.make_tensor("sp", TensorProto.FLOAT, [1], [1.0]), helper.make_tensor("sp_i", TensorProto.INT64, [1], [0]),
        [1 << 17, 1 << 15]))
    onnx.save(sparse, tmp_path / "sparse.onnx")
    assert max((tmp_path / name).stat().st_size for name in ("big.onnx", "sparse.onnx")) < 1000
    code = ("import resource, sys, agents, onnx, onnxruntime\n"
            "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
            "for path in sys.argv[1:]:\n"
            "    try:\n        agents.load('onnx:' + path)\n    except ValueError as e:\n        print(e)\n"
            "    else:\n        sys.exit(1)\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.onnx"), str(tmp_path / "sparse.onnx")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-1000:])
    big, sparse = p.stdout.splitlines()
    assert "'big' (a ConstantOfShape node) would take up to 17,179,869,184 bytes" in big, p.stdout
    assert sparse.endswith("sparse.onnx' holds sparse initializers, which an agent graph does not: refused"), p.stdout


def test_a_loop_is_refused_at_load(tmp_path):
    """N36: a Loop whose condition stays true never finished a decision."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Identity", ["v"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])])
    nodes = [const("yes", True, TensorProto.BOOL), const("v0", [0.0], TensorProto.FLOAT),
             helper.make_node("Loop", ["", "yes", "v0"], ["forever"], body=body)]
    onnx.save(agent_model(nodes, feed="forever"), tmp_path / "loop.onnx")
    line = refusal(tmp_path / "loop.onnx")
    assert "a Loop node runs a subgraph (control flow: it runs as long as its data says): refused" in line, line


def test_operators_of_another_domain_local_functions_and_unlisted_operators_are_refused(tmp_path):
    custom = agent_model([helper.make_node("Boom", ["f"], ["g"], domain="com.example")], feed="g",
                         opsets=[helper.make_opsetid("com.example", 1)])
    onnx.save(custom, tmp_path / "custom.onnx")
    assert "a Boom node is of the operator domain 'com.example': refused; an agent graph uses only standard " \
           "ai.onnx operators" in refusal(tmp_path / "custom.onnx")
    fn = helper.make_function("com.example", "Twice", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])],
                              [helper.make_opsetid("", 17)])
    local = agent_model([helper.make_node("Twice", ["f"], ["g"], domain="com.example")], feed="g",
                        opsets=[helper.make_opsetid("com.example", 1)], functions=[fn])
    onnx.save(local, tmp_path / "local.onnx")
    assert "defines its own operators (local function 'Twice'): refused" in refusal(tmp_path / "local.onnx")
    einsum = agent_model([helper.make_node("Einsum", ["f", "f"], ["g"], equation="i,j->")], feed="g")
    onnx.save(einsum, tmp_path / "einsum.onnx")
    assert "an Einsum node is not among the operators an agent graph may use: refused" in \
        refusal(tmp_path / "einsum.onnx")


def _info(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


PLANES, ROWS, IDS = _info("planes", TensorProto.INT8, ["B", 1740]), _info("rows", TensorProto.INT64, ["M"]), \
    _info("ids", TensorProto.INT64, ["M"])
#: inputs and outputs other than the contract's (each graph otherwise as agent_model makes it)
WRONG = {
    "planes int32": ([_info("planes", TensorProto.INT32, ["B", 1740]), ROWS, IDS], None),
    "planes (B, 1739)": ([_info("planes", TensorProto.INT8, ["B", 1739]), ROWS, IDS], None),
    "planes (B, 1740, 1)": ([_info("planes", TensorProto.INT8, ["B", 1740, 1]), ROWS, IDS], None),
    "planes (8, 1740)": ([_info("planes", TensorProto.INT8, [8, 1740]), ROWS, IDS], None),
    "rows named row": ([PLANES, _info("row", TensorProto.INT64, ["M"]), IDS], None),
    "no rows": ([PLANES, IDS], None),
    "scores float64": (None, [_info("scores", TensorProto.DOUBLE, ["M"])]),
    "scores (M, 1)": (None, [_info("scores", TensorProto.FLOAT, ["M", 1])]),
    "two outputs": (None, [_info("scores", TensorProto.FLOAT, ["M"]), _info("f", TensorProto.FLOAT, ["M"])]),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_inputs_or_outputs_other_than_the_contract_are_refused_at_load_in_one_line(tmp_path, case):
    """N43: they failed at the first decision (shapes and ranks were not checked)."""
    inputs, outputs = WRONG[case]
    nodes = [helper.make_node("Cast", ["planes"], ["unused"], to=TensorProto.FLOAT)] if inputs else []
    model = agent_model(nodes, inputs=inputs, outputs=outputs)
    if case == "scores float64":
        model.graph.node[-1].CopyFrom(helper.make_node("Cast", ["f"], ["scores"], to=TensorProto.DOUBLE))
    onnx.save(model, tmp_path / "wrong.onnx")
    line = refusal(tmp_path / "wrong.onnx")
    assert "a ddz-env agent graph takes planes (B, 1740) int8, rows (M,) int64, ids (M,) int64 and returns scores " \
           "(M,) float32 (B and M dynamic)" in line, line


def test_scores_whose_nodes_make_another_shape_than_declared_are_refused_at_load(tmp_path):
    """The file declares scores (M,), its nodes make (M, 1): the output's shape is inferred, not taken."""
    model = agent_model()
    model.graph.node[-1].CopyFrom(helper.make_node("Unsqueeze", ["f", "axis"], ["scores"]))
    model.graph.node.insert(0, const("axis", [1]))
    onnx.save(model, tmp_path / "column.onnx")
    line = refusal(tmp_path / "column.onnx")
    assert "its nodes make scores (M, 1) float32; a ddz-env agent graph returns scores (M,) float32: refused" \
        in line, line


def test_an_initializer_over_the_file_bound_is_refused_by_its_size_in_memory(tmp_path, monkeypatch):
    """Zeros of an int64 tensor take a byte each in the file (varints), 8 in memory: the bound counts memory
    (the initializer and the 4 bytes of the graph's Constant)."""
    zeros = helper.make_tensor("w", TensorProto.INT64, [1 << 20], np.zeros(1 << 20, np.int64).tolist())
    onnx.save(agent_model(feed="w", initializers=[zeros]), tmp_path / "zeros.onnx")
    size = (tmp_path / "zeros.onnx").stat().st_size
    assert size < 1_100_000
    monkeypatch.setenv("DDZ_MAX_LOAD_BYTES", "4000000")
    line = refusal(tmp_path / "zeros.onnx")
    assert line.endswith("its weights would take 8,388,612 bytes in memory, more than the 4,000,000 an agent file may "
                         "be (initializer 'w' alone: shape (1048576,), 8,388,608 bytes; set DDZ_MAX_LOAD_BYTES to "
                         "allow more)"), line
    monkeypatch.setenv("DDZ_MAX_LOAD_BYTES", "9000000")
    from agents import load

    assert load(f"onnx:{tmp_path / 'zeros.onnx'}").scores(*inputs_of()).shape == (12,)


def external_model(location: str, offset: int = 0):
    """An agent graph whose initializer ``w`` (4 float32: 1, 2, 3, 4, 16 bytes) is kept in ``location``."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", "16")):
        w.external_data.add(key=k, value=v)
    nodes = [helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0), helper.make_node("Add", ["f", "s"], ["g"])]
    model = agent_model(nodes)
    model.graph.initializer.append(w)
    model.graph.node[-1].CopyFrom(helper.make_node("Identity", ["g"], ["scores"]))
    return model


WEIGHTS = np.array([1, 2, 3, 4], np.float32).tobytes()


def test_external_data_outside_the_graphs_folder_is_refused(tmp_path, monkeypatch):
    """N42: an absolute name, a '..' and a link leaving the folder were read (and a bare name from the working
    folder): only files inside the graph file's own folder are."""
    folder, elsewhere = tmp_path / "agent", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "w.bin").write_bytes(WEIGHTS)
    os.symlink(elsewhere / "w.bin", folder / "link.bin")
    monkeypatch.chdir(elsewhere)  # (where onnxruntime looked for the bare name)
    for name, location, words in [
            ("absolute", str(elsewhere / "w.bin"), "not a file inside the graph's own folder: refused"),
            ("parent", "../elsewhere/w.bin", "not a file inside the graph's own folder: refused"),
            ("link", "link.bin", "a link leading out of the graph's own folder: refused"),
            ("cwd", "w.bin", "not found")]:
        onnx.save(external_model(location), folder / f"{name}.onnx")
        from agents import load

        with pytest.raises((ValueError, FileNotFoundError)) as e:
            load(f"onnx:{folder / name}.onnx")
        line = str(e.value)
        assert words in line and "initializer 'w'" in line and "\n" not in line, (name, line)


def test_external_data_inside_the_folder_is_read_from_there_whatever_the_working_folder(tmp_path, monkeypatch):
    from agents import load
    from agents.onnx.agent import OnnxAgent

    folder = tmp_path / "agent"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "w.bin").write_bytes(b"\0" * 8 + WEIGHTS)
    onnx.save(external_model("data/w.bin", offset=8), folder / "agent.onnx")
    monkeypatch.chdir(tmp_path)
    agent = load(f"onnx:{folder / 'agent.onnx'}")
    planes, rows, ids = inputs_of()
    np.testing.assert_array_equal(agent.scores(planes, rows, ids), ids.astype(np.float32) + 10)
    # the graph given to onnxruntime holds the data: another process rebuilds it from its bytes alone
    again = OnnxAgent.from_bytes(agent._data)
    np.testing.assert_array_equal(again.scores(planes, rows, ids), ids.astype(np.float32) + 10)
    # counted in the file bound; past the file's end; given as bytes (no folder): refused
    monkeypatch.setenv("DDZ_MAX_LOAD_BYTES", str((folder / "agent.onnx").stat().st_size + 10))
    assert "its external data is 16 bytes, more than the 10 left of the bound on an agent file" in \
        refusal(folder / "agent.onnx")
    monkeypatch.delenv("DDZ_MAX_LOAD_BYTES")
    onnx.save(external_model("data/w.bin", offset=12), folder / "short.onnx")
    assert "needs bytes 12..28 of 'data/w.bin', which has 24: refused" in refusal(folder / "short.onnx")
    with pytest.raises(ValueError, match="a graph given as bytes has no folder to read it from: refused"):
        OnnxAgent.from_bytes((folder / "agent.onnx").read_bytes())


def test_a_missing_onnx_package_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    """The checks need the onnx package (the onnx extra holds it beside onnxruntime)."""
    from agents import load

    onnx.save(agent_model(), tmp_path / "fine.onnx")
    monkeypatch.setitem(sys.modules, "onnx", None)  # (its import fails)
    with pytest.raises(ImportError) as e:
        load(f"onnx:{tmp_path / 'fine.onnx'}")
    assert "checked with the onnx package" in str(e.value) and "pip install -e " in str(e.value) \
        and '[onnx]"' in str(e.value) and "\n" not in str(e.value), str(e.value)  # (in a clone: not on PyPI)
