"""A learned agent as an ONNX graph, to play without torch (docs/export.md).

| module | job |
|---|---|
| `export` | a move-scoring or DMC agent's network as an ONNX graph (``python -m agents.export AGENT OUT.onnx``) |
| `agent` | ``onnx:FILE``: the agent that plays such a graph with onnxruntime |
| `check` | what an ``onnx:`` file may be: its inputs, operators and sizes, checked before onnxruntime reads it |
"""
