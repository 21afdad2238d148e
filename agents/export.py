"""Export a learned agent as an ONNX graph, to run it without torch (onnxruntime, in any language it serves).

    python -m agents.export AGENT OUT.onnx [--check N]

``AGENT``: the DMC agent (``pretrained``, a run folder, a checkpoint) or a move-scoring policy (a ``policy.pt``
such as ``benchmarks/results/marl/torchrl.pt``, ``sb3:MODEL.zip``, ``rllib:RUN``). The graph takes each
decision's planes and its candidate moves and returns each candidate's score, with a dynamic batch and
legal-move count (:mod:`agents.onnx.export`); ``onnx:OUT.onnx`` seats it wherever an agent spec
goes (``evaluate.py``, the league, ``agents.load``). Before the file is written, the graph plays ``--check``
seeded decisions of every phase beside the torch agent: the same move in each, or nothing is written.
Needs torch and the ``onnx`` extra (``pip install -e ".[onnx]"`` in a clone).
"""
from __future__ import annotations

import argparse
import sys

from ._entry import needs_installed

with needs_installed("python -m agents.export", "agents.export", active=__name__ == "__main__"):
    # (onnx and onnxruntime are imported by the export: --help needs neither, a missing one is one line naming
    # the extra)
    from .onnx.export import export_onnx


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.export", description=__doc__.splitlines()[0])
    p.add_argument("agent", help="pretrained, a DMC run folder or checkpoint, a policy.pt, sb3:MODEL.zip, rllib:RUN")
    p.add_argument("out", help="the .onnx file to write")
    p.add_argument("--check", type=int, default=1024, metavar="N",
                   help="seeded decisions the graph plays beside the torch agent before writing (default 1024; 0: none)")
    a = p.parse_args(argv)
    if a.check < 0:
        p.error(f"--check must be 0 or more, got {a.check}")
    try:
        r = export_onnx(a.agent, a.out, check=a.check)
    except (ValueError, FileNotFoundError, OSError, ImportError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    checked = (f"; the same move as the torch agent in {r['same']:,} of {r['checked']:,} decisions (largest score "
               f"difference {r['max_diff']:.2g})" if r["checked"] else "")
    print(f"wrote {r['path']} ({r['bytes'] / 2**20:.1f} MiB, {r['kind']} agent {r['name']}){checked}; "
          f"play it as onnx:{r['path']}")
    return 0


if __name__ == "__main__":
    with needs_installed("python -m agents.export", "agents.export"):
        sys.exit(main())
