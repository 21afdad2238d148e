"""What an ``onnx:`` graph may be, checked with the ``onnx`` package before onnxruntime builds it (issue 62).

onnxruntime runs whatever a graph says: a graph of 350 bytes (a ``ConstantOfShape`` or ``Expand`` to a
shape computed from its inputs) took 2.2 GB at its first decision and one of 16 GiB was killed out of
memory, a ``Loop`` never finished a decision, and tensor data kept in other files was read from wherever
their names pointed (the working folder, any absolute path). :func:`checked_graph` refuses all of these
from the file alone, before a session is built, each with one line (a ``ValueError``):

* the contract: exactly the inputs ``planes`` (B, 1740) int8, ``rows`` (M,) int64, ``ids`` (M,) int64 and
  the output ``scores`` (M,) float32, B and M dynamic, as :mod:`~agents.onnx.export` writes;
* operators: the standard ``ai.onnx`` domain only (no custom domain, no local function), no control flow
  (``Loop``, ``Scan``, ``If``: no node holds a subgraph), and only the operators of :data:`OPS`;
* sizes: every initializer's (and constant's) bytes from its shape, together at most the file bound
  (:func:`ddz_env.files.max_load_bytes`); every intermediate's shape inferred by ``onnx.shape_inference``
  with B <= :data:`MAX_ROWS` and M <= :data:`MAX_CANDIDATES` (:class:`OnnxAgent` never calls the graph
  with more: it scores bigger batches in parts). A dimension the inference leaves unknown is bounded only
  where its operator bounds it (``NonZero``: its input's elements; ``Slice``: the sliced dimension;
  ``Reshape`` to a constant shape: the input's elements; ``Concat``: the sum; elementwise and gathering
  operators: their inputs' dimensions). Otherwise it depends on the data without bound (``ConstantOfShape``,
  ``Expand``, ``Tile``, ``Range``, ``OneHot``... of a computed shape): refused. Each intermediate is at most
  :data:`MAX_TENSOR_BYTES`, all together at most :data:`MAX_ACTIVATION_BYTES`, and the work of a call
  (elements read and written, multiply-adds of ``MatMul``, ``Gemm`` and the recurrent layers) at most
  :data:`MAX_WORK`;
* external tensor data: only in files inside the graph file's own folder (a relative name, no ``..``, no
  link leaving the folder, a regular file), counted in the file bound, read here and put into the graph
  given to onnxruntime, which never opens a path itself.
"""
from __future__ import annotations

import math
import os
from typing import Any

from ddz_env.observation import OBS_CELLS

from .._entry import install_extra

#: the most decisions (rows of ``planes``) one call of the graph gets: the evaluation's 1,024 tables
#: (``agents.evaluation.arena.DEFAULT_TABLES``) step together, one decision each at most
MAX_ROWS = 1024
#: the most candidate moves one call gets: 32 a decision of a full batch. A step of 1,024 random hands has up to
#: 32,584 at all seats together (seeds 0 and 1, 60 steps: bids 4,096, play 2,300 to 32,584, 5,800 on average),
#: and a decision at most 519 (``move_policy.LEGAL_WIDTH``): a bigger batch goes through in parts of this size
MAX_CANDIDATES = 1 << 15
#: the most bytes one intermediate may take at B = MAX_ROWS, M = MAX_CANDIDATES: the shipped DMC agent's
#: largest is 32 MiB (a (M, 256) float32: each candidate's decision state), the TorchRL policy's 20.5 MiB; 256 MiB
#: allows networks 8 times as wide and refuses the probe's tensors of 2.2 GB and 16 GiB
MAX_TENSOR_BYTES = 256 << 20
#: the most bytes the intermediates may take together at B = MAX_ROWS, M = MAX_CANDIDATES, as if all were kept
#: at once (onnxruntime reuses buffers: a bound, not the use): the shipped DMC agent's graph counts 0.91 GiB,
#: the TorchRL move-scoring policy 0.51 GiB, a DMC layout with an LSTM over the history 0.37 GiB
MAX_ACTIVATION_BYTES = 4 << 30
#: the most work of one call (elements read and written by each operator, multiply-adds of MatMul, Gemm and the
#: recurrent layers) at B = MAX_ROWS, M = MAX_CANDIDATES: the shipped DMC agent's graph counts 1.5e10 and runs
#: such a call in 0.39 s on one thread (the TorchRL policy: 5e9, 0.2 s; a 2-core machine also running tests);
#: 1.5e11 allows networks 10 times as heavy, a few seconds a call, not a graph that runs for hours
MAX_WORK = 15 * 10 ** 10

#: the element types a graph's tensors may have, and their bytes (no strings, no complex or 4/8-bit floats)
ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}
#: (numbers of ``onnx.TensorProto``: FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL, FLOAT16, DOUBLE,
#: UINT32, UINT64, BFLOAT16)
_TYPE_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}

#: elementwise operators (numpy broadcasting): an unknown output dimension is at most its inputs' largest there
ELEMENTWISE = frozenset(
    "Abs Acos Add And Asin Atan BitShift Cast CastLike Ceil Clip Cos Div Dropout Elu Equal Erf Exp Floor Gelu "
    "Greater GreaterOrEqual HardSigmoid HardSwish Identity IsInf IsNaN LeakyRelu Less LessOrEqual Log Max Mean "
    "Min Mish Mod Mul Neg Not Or PRelu Pow Reciprocal Relu Round Selu Sigmoid Sign Sin Softplus Softsign Sqrt "
    "Sub Sum Tan Tanh ThresholdedRelu Where Xor".split())
#: operators whose every output dimension is one of their inputs' (or a constant): gathering, reducing,
#: transposing, matrix products, normalizing, the recurrent layers
GATHERING = frozenset(
    "ArgMax ArgMin BatchNormalization CumSum Gather GatherElements GatherND Gemm GRU InstanceNormalization "
    "LayerNormalization LogSoftmax LpNormalization LSTM MatMul ReduceL1 ReduceL2 ReduceLogSumExp ReduceMax "
    "ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare RNN ScatterElements ScatterND Softmax Split "
    "Squeeze TopK Transpose Trilu Unsqueeze".split())
#: operators whose output sizes come from their rules here: a number of elements of their first input
#: (NonZero, Reshape to a constant shape, Flatten, Compress), the sliced dimension (Slice), a sum (Concat)
SIZED = frozenset("Compress Concat Flatten NonZero Reshape Slice".split())
#: operators whose output shape comes from a value: allowed only where the inference knows every dimension
#: (a constant shape, or the shape of a bounded tensor); constants and shapes
SHAPED = frozenset("Constant ConstantOfShape Expand OneHot Pad Range Shape Size Tile".split())
#: every operator a ddz-env agent graph may use (the exported graphs use 27 to 30 of them)
OPS = ELEMENTWISE | GATHERING | SIZED | SHAPED
#: operators that run subgraphs for as long as their data says (also refused: any node with a graph attribute)
CONTROL_FLOW = frozenset(["Loop", "Scan", "If", "SequenceMap"])

#: how to get onnx and onnxruntime, in the errors of what needs them
ONNX_HINT = install_extra("onnx")
INPUT_SPEC = "planes (B, 1740) int8, rows (M,) int64, ids (M,) int64"
OUTPUT_SPEC = "scores (M,) float32"


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError(f"onnx: agents are checked with the onnx package, which is not installed: {ONNX_HINT}") \
            from None
    return onnx


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300]}" if text else type(e).__name__


def parse(data: bytes, where: str) -> Any:
    """The ``onnx.ModelProto`` of ``data`` (its external data not read); ``ValueError`` if it is none."""
    onnx = _onnx()
    try:
        model = onnx.ModelProto()
        model.ParseFromString(data)
    except Exception as e:  # (protobuf's DecodeError, or a RuntimeWarning turned error)
        raise ValueError(f"{where} is not an ONNX graph onnxruntime can run ({_first_line(e)})") from None
    if not model.ir_version or not model.HasField("graph"):
        raise ValueError(f"{where} is not an ONNX graph onnxruntime can run (no graph in it)")
    return model


def _label(node: Any) -> str:
    """``Gather node '/Gather_12'``, or ``an Expand node`` for a node without a name."""
    if node.name:
        return f"{node.op_type} node {node.name!r}"
    return f"{'an' if node.op_type[:1] in 'AEIOU' else 'a'} {node.op_type} node"


def _dims(t: Any) -> list[int | str] | None:
    """A TypeProto's tensor dimensions (ints, or their names; "" for an unnamed one), None without a shape."""
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in tt.shape.dim]


def _describe(v: Any) -> str:
    """``name (dims) type`` of a ValueInfoProto, as the refusals print it."""
    if v.type.WhichOneof("value") != "tensor_type":
        return f"{v.name} (a {v.type.WhichOneof('value') or 'typeless value'}, not a tensor)"
    dims = _dims(v.type)
    shape = "unknown shape" if dims is None else "(" + ", ".join(str(d) if d != "" else "?" for d in dims) + \
        ("," if len(dims) == 1 else "") + ")"
    return f"{v.name} {shape} {_TYPE_NAMES.get(v.type.tensor_type.elem_type, f'type {v.type.tensor_type.elem_type}')}"


def _contract(graph: Any, where: str) -> None:
    """(a) exactly our inputs and output: names, element types, ranks, 1740 static and B, M dynamic."""
    want_in = [("planes", 3, [None, OBS_CELLS]), ("rows", 7, [None]), ("ids", 7, [None])]
    want_out = [("scores", 1, [None])]
    for what, got, want in (("inputs", graph.input, want_in), ("outputs", graph.output, want_out)):
        ok = len(got) == len(want)
        for v, (name, elem, dims) in zip(got, want):
            d = _dims(v.type) if v.type.WhichOneof("value") == "tensor_type" else None
            ok = ok and v.name == name and v.type.tensor_type.elem_type == elem and d is not None and \
                len(d) == len(dims) and all((isinstance(g, str)) if w is None else g == w for g, w in zip(d, dims))
        if not ok:
            raise ValueError(f"{where}: {what} {', '.join(_describe(v) for v in got) or 'none'}; a ddz-env agent "
                             f"graph takes {INPUT_SPEC} and returns {OUTPUT_SPEC} (B and M dynamic)")


def _operators(model: Any, where: str) -> None:
    """(b) standard operators only, no control flow, no local functions; and no sparse tensors (onnxruntime
    makes them dense: a few bytes for any size) nor training graphs (python -m agents.export writes neither)."""
    if len(model.functions):
        raise ValueError(f"{where} defines its own operators (local function {model.functions[0].name!r}): refused; "
                         f"an agent graph uses only standard ai.onnx operators")
    if len(model.training_info) or len(model.graph.sparse_initializer):
        raise ValueError(f"{where} holds {'training graphs' if len(model.training_info) else 'sparse initializers'}, "
                         f"which an agent graph does not: refused")
    for node in model.graph.node:
        label = _label(node)
        if node.domain not in ("", "ai.onnx"):
            raise ValueError(f"{where}: {label} is of the operator domain {node.domain!r}: refused; an agent graph "
                             f"uses only standard ai.onnx operators")
        if node.op_type in CONTROL_FLOW or any(a.type in (5, 10) for a in node.attribute):  # GRAPH, GRAPHS
            raise ValueError(f"{where}: {label} runs a subgraph (control flow: it runs as long as its data says): "
                             f"refused")
        if any(a.type in (11, 12) for a in node.attribute):  # SPARSE_TENSOR, SPARSE_TENSORS
            raise ValueError(f"{where}: {label} holds a sparse tensor, which an agent graph does not: refused")
        if node.op_type not in OPS:
            raise ValueError(f"{where}: {label} is not among the operators an agent graph may use: refused")


def _tensors(model: Any) -> list[tuple[Any, str]]:
    """Every TensorProto of the graph with a label: initializers, then node attributes' tensors."""
    out = [(t, f"initializer {t.name!r}") for t in model.graph.initializer]
    for node in model.graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                out.append((a.t, f"the {a.name} of {node.op_type} node {node.name!r}"))
            out.extend((t, f"a tensor of {node.op_type} node {node.name!r}") for t in a.tensors)
    return out


def tensor_bytes(t: Any, what: str, where: str) -> int:
    """The bytes a TensorProto takes in memory, from its shape and element type."""
    if t.data_type not in ITEMSIZE:
        raise ValueError(f"{where}: {what} has element type {t.data_type}, which an agent graph does not use: refused")
    if any(d < 0 for d in t.dims):
        raise ValueError(f"{where}: {what} has a negative dimension {list(t.dims)}: refused")
    return math.prod(t.dims) * ITEMSIZE[t.data_type]


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # (another drive)
        return False


def external_data(model: Any, where: str, folder: str | None, budget: int) -> int:
    """(d) Read every tensor's external data into the graph, from files inside ``folder`` (the graph file's own)
    only, ``budget`` bytes at most in all; the bytes read. Nothing is read before every name is checked."""
    from ddz_env.files import input_file

    plan = []
    for t, what in _tensors(model):
        if t.data_location != 1:  # (onnx.TensorProto.EXTERNAL)
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = info.get("location", "")
        if folder is None:
            raise ValueError(f"{where}: {what} is kept in another file ({loc!r}); a graph given as bytes has no "
                             f"folder to read it from: refused")
        parts = loc.replace("\\", "/").split("/")
        if not loc or "\0" in loc or os.path.isabs(loc) or loc.startswith(("/", "\\")) or ":" in parts[0] \
                or ".." in parts:
            raise ValueError(f"{where}: {what} is kept in {loc!r}, not a file inside the graph's own folder: refused "
                             f"(external data is read only from a relative name without '..')")
        real_folder = os.path.realpath(folder)
        path = os.path.realpath(os.path.join(real_folder, *[p for p in parts if p not in ("", ".")]))
        if not _inside(path, real_folder):
            raise ValueError(f"{where}: {what} is kept in {loc!r}, a link leading out of the graph's own folder: "
                             f"refused")
        size = tensor_bytes(t, what, where)
        try:
            offset, length = int(info.get("offset", 0)), int(info.get("length", size))
        except ValueError:
            raise ValueError(f"{where}: {what} has an external offset or length that is no number: refused") from None
        if offset < 0 or length != size:
            raise ValueError(f"{where}: {what} is {size:,} bytes by its shape, its external data says offset "
                             f"{offset:,} and length {length:,}: refused")
        p = input_file(path, f"{where}: the external data of {what}")
        if offset + size > os.path.getsize(p):
            raise ValueError(f"{where}: {what} needs bytes {offset:,}..{offset + size:,} of {loc!r}, which has "
                             f"{os.path.getsize(p):,}: refused")
        plan.append((t, p, offset, size))
    total = sum(size for *_, size in plan)
    if total > budget:
        raise ValueError(f"{where}: its external data is {total:,} bytes, more than the {max(budget, 0):,} left of the "
                         f"bound on an agent file (set DDZ_MAX_LOAD_BYTES to allow more)")
    for t, p, offset, size in plan:
        with open(p, "rb") as f:
            f.seek(offset)
            t.raw_data = f.read(size)
        if len(t.raw_data) != size:
            raise ValueError(f"{where}: the external data file {p!r} changed while it was read: refused")
        del t.external_data[:]
        t.data_location = 0
    return total


def _product(dims: list[int]) -> int:
    return math.prod(dims) if dims else 1


def _fresh(node: Any, pos: int, out_dims: list, ins: list[list[int] | None], constants: set[str]) -> int | None:
    """The bound of output dimension ``pos`` that the inference left unknown, by ``node``'s operator; None if
    it depends on the data without bound."""
    op, known = node.op_type, [d for d in ins if d is not None]
    if op in ("NonZero", "Compress", "Flatten"):
        return _product(ins[0]) if ins and ins[0] is not None else None
    if op == "Reshape":  # (only a constant shape: a computed one may pair a 0 with any other dimension)
        if len(node.input) < 2 or node.input[1] not in constants or ins[0] is None:
            return None
        rest = [d for i, d in enumerate(out_dims) if i != pos]
        whole = _product(ins[0])
        return -(-whole // _product(rest)) if all(isinstance(d, int) and d > 0 for d in rest) else whole
    if op == "Slice":
        return ins[0][pos] if ins and ins[0] is not None and len(ins[0]) == len(out_dims) else None
    if op == "Concat":
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0) % max(len(out_dims), 1)
        if not known or any(len(d) != len(out_dims) for d in known):
            return None
        return sum(d[pos] for d in known) if pos == axis else max(d[pos] for d in known)
    if op in ELEMENTWISE:
        lined = [d[len(d) - len(out_dims) + pos] for d in known if len(d) - len(out_dims) + pos >= 0]
        return max(lined, default=1)
    if op in GATHERING:
        return max((x for d in known for x in d), default=1)
    return None  # SHAPED: a computed shape, a count or a depth


def _work(node: Any, ins: list[list[int] | None], outs: list[list[int]]) -> int:
    """Elements read and written by ``node`` (multiply-adds for the matrix products and recurrent layers)."""
    op = node.op_type
    if op in ("Shape", "Size", "Constant"):
        return sum(_product(d) for d in outs)
    if op in ("MatMul", "Gemm") and ins and ins[0]:
        trans_a = op == "Gemm" and any(a.name == "transA" and a.i for a in node.attribute)
        inner = ins[0][0] if trans_a and len(ins[0]) == 2 else ins[0][-1]
        return _product(outs[0]) * inner + sum(_product(d) for d in ins if d is not None)
    if op in ("LSTM", "GRU", "RNN") and len(ins) >= 3 and all(d is not None for d in ins[:3]):
        steps = _product(ins[0][:-1])  # (sequence x batch, either layout)
        return steps * (_product(ins[1]) + _product(ins[2])) + sum(_product(d) for d in outs)
    return sum(_product(d) for d in ins if d is not None) + sum(_product(d) for d in outs)


def _sizes(model: Any, where: str) -> dict:
    """(c) Every intermediate's bound, from the inference at B <= MAX_ROWS, M <= MAX_CANDIDATES; ``ValueError``
    beyond the limits. Returns ``{"bytes", "work", "largest"}``."""
    onnx = _onnx()
    from onnx import shape_inference

    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    del g.value_info[:]  # (the file's own claims of intermediate shapes are not trusted)
    for v, names in zip(g.input, (["B", None], ["M"], ["M"])):
        for d, name in zip(v.type.tensor_type.shape.dim, names):
            if name:
                d.dim_param = name  # (the inputs' dynamic dimensions by our names: rows and ids have one length)
    for v in g.output:
        v.type.tensor_type.ClearField("shape")  # (inferred from the nodes, not taken from the file)
    try:
        inferred = shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    except Exception as e:
        raise ValueError(f"{where}: onnx's shape inference refused the graph ({_first_line(e)})") from None
    g = inferred.graph
    types = {v.name: v.type for v in list(g.value_info) + list(g.output)}
    dims: dict[str, list[int]] = {"planes": [MAX_ROWS, OBS_CELLS], "rows": [MAX_CANDIDATES],
                                  "ids": [MAX_CANDIDATES]}
    for t in g.initializer:
        dims[t.name] = list(t.dims)
    constants = {t.name for t in g.initializer} | {n.output[0] for n in g.node if n.op_type == "Constant"}
    symbols = {"B": MAX_ROWS, "M": MAX_CANDIDATES}
    total = work = 0
    largest = (0, "", [])
    heaviest = (0, "")
    for node in g.node:
        label = _label(node)
        ins = [dims.get(i) if i else None for i in node.input]
        if any(i and i not in dims for i in node.input):
            raise ValueError(f"{where}: {label} reads {next(i for i in node.input if i and i not in dims)!r}, "
                             f"which nothing before it makes: refused")
        outs = []
        for o in node.output:
            if not o:
                continue
            t = types.get(o)
            shape = _dims(t) if t is not None and t.WhichOneof("value") == "tensor_type" else None
            if shape is None:
                raise ValueError(f"{where}: the shape of {o!r} ({label}) cannot be inferred: refused (an agent "
                                 f"graph's every intermediate has a bounded size)")
            elem = t.tensor_type.elem_type
            if elem not in ITEMSIZE:
                raise ValueError(f"{where}: {o!r} ({label}) has element type {elem}, which an agent graph does not "
                                 f"use: refused")
            bound = []
            for pos, d in enumerate(shape):
                if isinstance(d, int):
                    bound.append(d)
                elif d and d in symbols:
                    bound.append(symbols[d])
                else:
                    b = _fresh(node, pos, shape, ins, constants)
                    if b is None:
                        raise ValueError(f"{where}: the size of {o!r} ({label}) depends on the graph's data "
                                         f"without a bound: refused (an agent graph's every intermediate has a "
                                         f"bounded size)")
                    if d:
                        symbols[d] = b
                    bound.append(b)
            size = _product(bound) * ITEMSIZE[elem]
            if size > MAX_TENSOR_BYTES:
                raise ValueError(f"{where}: {o!r} ({label}) would take up to {size:,} bytes (shape up to "
                                 f"{tuple(bound)}) at {MAX_ROWS} decisions and {MAX_CANDIDATES:,} moves, more than the "
                                 f"{MAX_TENSOR_BYTES:,} one intermediate of an agent graph may: refused")
            total += size
            if size > largest[0]:
                largest = (size, f"{o!r} ({label})", bound)
            dims[o] = bound
            outs.append(bound)
        w = _work(node, ins, outs)
        work += w
        if w > heaviest[0]:
            heaviest = (w, label)
    if total > MAX_ACTIVATION_BYTES:
        size, name, bound = largest
        raise ValueError(f"{where}: its intermediates would take up to {total:,} bytes at {MAX_ROWS} decisions and "
                         f"{MAX_CANDIDATES:,} moves, more than the {MAX_ACTIVATION_BYTES:,} an agent graph may "
                         f"({name} alone: up to {tuple(bound)}, {size:,} bytes): refused")
    if work > MAX_WORK:
        raise ValueError(f"{where}: a call would do up to {work:.3g} operations at {MAX_ROWS} decisions and "
                         f"{MAX_CANDIDATES:,} moves, more than the {MAX_WORK:.3g} an agent graph may "
                         f"({heaviest[1]} alone: {heaviest[0]:.3g}): refused")
    out = types.get("scores")
    shape = _dims(out) if out is not None else None
    if shape is None or len(shape) != 1 or isinstance(shape[0], int) or out.tensor_type.elem_type != 1:
        raise ValueError(f"{where}: its nodes make {'scores of unknown shape' if shape is None else _describe(g.output[0])}"
                         f"; a ddz-env agent graph returns {OUTPUT_SPEC}: refused")
    return {"bytes": total, "work": work, "largest": f"{largest[1]} {tuple(largest[2])}"}


def checked_graph(model: Any, data: bytes, where: str, folder: str | None = None) -> tuple[bytes, dict]:
    """``(data, figures)`` for ``model``, the :func:`parse` of ``data``, once it passed every check of this
    module: the bytes to give onnxruntime (``data``, or the graph with its external data, read from ``folder``,
    put in) and ``{"bytes", "work", "largest", "external"}`` (the bounds of a call, the bytes read from other
    files). ``ValueError`` (one line naming ``where``) for any other graph; ``ImportError`` without the onnx
    package. ``folder``: the graph file's own, where its external data may be; None (a graph given as bytes):
    it may have none."""
    from ddz_env.files import max_load_bytes

    onnx = _onnx()
    _operators(model, where)
    _contract(model.graph, where)
    limit = max_load_bytes()
    external = external_data(model, where, folder, limit - len(data))
    sizes = [(tensor_bytes(t, what, where), t, what) for t, what in _tensors(model)]
    weights = sum(size for size, *_ in sizes)
    if weights > limit:
        size, t, what = max(sizes, key=lambda x: x[0])
        raise ValueError(f"{where}: its weights would take {weights:,} bytes in memory, more than the {limit:,} an "
                         f"agent file may be ({what} alone: shape {tuple(t.dims)}, {size:,} bytes; set "
                         f"DDZ_MAX_LOAD_BYTES to allow more)")
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise ValueError(f"{where}: the onnx checker refused the graph ({_first_line(e)})") from None
    figures = _sizes(model, where)
    figures["external"] = external
    return (model.SerializeToString() if external else data), figures


__all__ = ["checked_graph", "parse", "external_data", "tensor_bytes", "MAX_ROWS", "MAX_CANDIDATES",
           "MAX_TENSOR_BYTES", "MAX_ACTIVATION_BYTES", "MAX_WORK", "OPS"]
