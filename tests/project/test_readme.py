"""Every ```python block of README.md and of the docs pages (docs/*.md) runs alone, as pasted, in a
fresh interpreter, and prints what the text says. Blocks that import a MARL library are ``integration`` tests: they
skip, naming the library, where it is not installed; the RLlib block is marked ``rllib``
(it runs in RLlib's own venv: ``make test``). README's inline Python (``pettingzoo.make(...)`` in its text) runs as
written too, after the imports README shows beside it (:func:`inline_python`)."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from common import DOC_FILES, ROOT

#: top-level import name -> the library's name in ids and skip reasons
LIBRARIES = {"sb3_contrib": "sb3", "stable_baselines3": "sb3", "tianshou": "tianshou", "torchrl": "torchrl",
             "ray": "rllib"}

#: what README says a block prints: (a line that identifies the block, patterns its stdout must match;
#: a pattern is a literal, with "..." for any text)
EXPECTED = [
    ("scores[agent] = scores.get(agent, 0) + reward", ["{'player_0': -12.0, 'player_1': 6.0, 'player_2': 6.0}"]),
    ("g = Game.from_deal(", ["MoveInfo(id=514, type=<MoveType.AIRPLANE_SINGLES: 9>, length=2, rank=0, "
                             "cards='33344456')", "['pass', '5555', 'BR']", "0 [ 24 -12 -12]"]),
    ("deals = env.unwrapped.sample_deals(seat, 1000", ["1000 1 True"]),
    ("vec = VectorDouDizhu(1024, seed=0)", ["(1024, 29, 4, 15) True"]),
    ("class MostCards(BatchAgent):", ["most-cards vs random: +3.35 per hand [+2.65, +4.05]"]),
    ("record.save(rec, \"hand.json\")", ["True"]),
    ("model = MaskablePPO(MoveScoringSB3Policy", ["MoveScoringAgent(movescore:sb3) MoveScoringAgent(movescore:sb3)",
                                                     "vs rule ... -> ... per hand"]),
    ("ppo = make_ppo(policy, envs.action_space[0]", ["2 updates; vs rule ... -> ... per hand"]),
    ("env = SelfPlayEnv(16, seed=0", ["self-play, ... decisions in the last batch; vs rule ... -> ... per hand"]),
    ("algo = config.build_algo()", ["hands played: ...; vs rule ... -> ... per hand"]),
]


def blocks() -> list[tuple[str, str]]:
    """(where: file:line, code) of every ```python block of README.md and the docs pages."""
    out = []
    for path in DOC_FILES:
        text = path.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            out.append((f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 2}", m.group(1)))
    return out


def libraries(code: str) -> list[str]:
    """The MARL libraries a block imports (top-level import names)."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n in LIBRARIES)


def params():
    out = []
    for line, code in blocks():
        libs = libraries(code)
        tag = "-".join(sorted({LIBRARIES[n] for n in libs})) or "core"
        marks = [pytest.mark.integration] if libs else []
        if "ray" in libs:
            marks.append(pytest.mark.rllib)
        name = line.replace("/", "-").replace(".md:", "-line")
        out.append(pytest.param(line, code, libs, id=f"{name}-{tag}", marks=marks))
    return out


def expected(code: str) -> list[str]:
    return [p for key, pats in EXPECTED if key in code for p in pats]


def test_readme_has_blocks_and_every_expectation_finds_its_block():
    found = blocks()
    assert len(found) >= 8
    for key, _ in EXPECTED:
        assert sum(key in code for _, code in found) == 1, f"no single README block contains {key!r}"


@pytest.mark.parametrize("line, code, libs", params())
def test_readme_block_runs_as_pasted(line, code, libs, tmp_path):
    for name in libs:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"block at {line} needs {LIBRARIES[name]} ({name} is not installed)")
    path = tmp_path / "block.py"
    path.write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    try:
        p = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600 if libs else 180)
    except subprocess.TimeoutExpired:
        pytest.fail(f"block at {line} did not finish in time")
    assert p.returncode == 0, f"block at {line} failed:\n{p.stderr[-3000:]}"
    for pattern in expected(code):
        rx = ".*?".join(re.escape(part) for part in pattern.split("..."))
        assert re.search(rx, p.stdout), f"block at {line}: expected {pattern!r} in its output:\n{p.stdout}"


README = ROOT / "README.md"


def inline_python() -> list[tuple[str, str, list[str]]]:
    """(README line, code, imports) of every inline code span of README.md that is Python to run: a span that parses
    as Python and calls something (``pettingzoo.make(...)``, ``agents.load(...)``). Its imports are the ``import``
    spans README shows before it in the same paragraph or list item (``import ddz_env``, then the call), and the
    module each dotted name of the span starts from (``pettingzoo`` for ``pettingzoo.make``): nothing else is
    imported, as for a reader who pastes what README shows."""
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), README.read_text(), flags=re.S | re.M)
    out = []
    start = 0
    for para in re.split(r"(\n\s*\n|\n(?=\* ))", text):
        shown: list[str] = []
        for m in re.finditer(r"`([^`]+)`", para):
            code = m.group(1).replace("\n", " ")
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            nodes = list(ast.walk(tree))
            if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes):
                shown.append(code)
            elif any(isinstance(n, ast.Call) for n in nodes):
                roots = []
                for n in nodes:
                    if isinstance(n, ast.Attribute):
                        while isinstance(n, ast.Attribute):
                            n = n.value
                        if isinstance(n, ast.Name) and importlib.util.find_spec(n.id) is not None:
                            roots.append(f"import {n.id}")
                line = text.count("\n", 0, start + m.start()) + 1
                out.append((f"README.md:{line}", code, shown + sorted(set(roots))))
        start += len(para)
    return out


def test_readme_shows_inline_python_and_the_rule_finds_it():
    found = [code for _, code, _ in inline_python()]
    assert any(code.startswith("pettingzoo.make(") for code in found), found


@pytest.mark.parametrize("line, code, imports", [pytest.param(*p, id=p[0]) for p in inline_python()])
def test_readme_inline_python_runs_as_written(line, code, imports, tmp_path):
    """README's API line ``pettingzoo.make("aec", "ddz/dou_dizhu-v0")`` raised ``NamespaceNotFound: Namespace 'ddz'
    not found in registry``: the id is registered by ``import ddz_env`` (PettingZoo has no entry points to register
    it without the import), which README did not show."""
    program = "\n".join(imports + [code])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    p = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=180)
    assert p.returncode == 0, f"{line}: {code!r} (after {imports}) failed:\n{p.stderr[-3000:]}"
