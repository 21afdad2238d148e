"""The shell lines of README.md and the docs pages (```bash blocks) that run offline in seconds run as pasted and
exit 0 (issue 47: docs/training.md's export line wrote half its output, then stopped on a file nothing had
written). ``test_readme.py`` does the same for the ```python blocks.

Which lines run: every line ending in ``--help``, and the lines of :data:`CHEAP` (an explicit list: training for an
hour, a server, an install are never run). Each runs in a fresh folder holding links to the clone's files (so
``benchmarks/...`` and ``evaluate.py`` are found and what a line writes stays there), ``python`` /
``.venv/bin/python`` being this interpreter. A line that reads a run folder of the reader's (``runs/A/``) gets a
small one made there first (:data:`SETUP`), and the file an ``--eval`` reads must be written by an earlier line of
its block (``--out FILE``): the page says what to run first. What the lines and the ```python blocks write, run from
the clone's root, is ignored by git (:func:`outputs`)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from common import DOC_FILES, ROOT

#: the lines that run in seconds offline, as the page writes them (comment left out) -> what they need first
CHEAP = {
    "python demo.py --hands 3": None,
    "python evaluate.py --a rule --b random --deals 10 --save-replays hands/": None,
    'python evaluate.py --a "ext:python3 examples/ext_client.py" --b rule --deals 10': None,
    ".venv/bin/python evaluate.py --a rule --b random --deals 1000 --mode fixed-landlord": None,
    ".venv/bin/python -m agents.dmc.export runs/A/ mine.pt --eval result.json": "run-and-result",
}
PYTHONS = ("python", "python3", ".venv/bin/python")


def lines() -> list[tuple[str, int, str, list[str]]]:
    """(page, line number, command without its comment, the block's earlier commands) of every ```bash line."""
    out = []
    for path in DOC_FILES:
        text = path.read_text()
        for m in re.finditer(r"^```(?:bash|sh|shell)\n(.*?)^```", text, re.S | re.M):
            first = text.count("\n", 0, m.start()) + 2
            before: list[str] = []
            for k, raw in enumerate(m.group(1).splitlines()):
                command = re.sub(r"\s+#.*$", "", raw).strip()
                if command and not command.startswith("#"):
                    out.append((str(path.relative_to(ROOT)), first + k, command, list(before)))
                    before.append(command)
    return out


def runs(command: str) -> bool:
    return command in CHEAP or command.endswith(" --help")


def params():
    return [pytest.param(command, before, id=f"{page}:{n}") for page, n, command, before in lines() if runs(command)]


def test_every_cheap_line_is_on_a_page_and_some_run():
    found = {command for _, _, command, _ in lines()}
    assert set(CHEAP) <= found, f"no longer on any page: {sorted(set(CHEAP) - found)} (update CHEAP)"
    assert len(params()) >= len(CHEAP) + 1


def _setup(kind: str | None, cwd: Path) -> None:
    if kind is None:
        return
    assert kind == "run-and-result", kind
    torch = pytest.importorskip("torch")
    from agents.cli.evaluate import main as evaluate
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = load_config("smoke", {"state_layers": [16], "head_layers": [16, 8]})
    torch.manual_seed(0)
    model = make_model(cfg)
    (cwd / "runs" / "A").mkdir(parents=True)
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None),
                    cwd / "runs" / "A" / "checkpoint.pt")
    # what the page's evaluate line writes (--out result.json), on 2 deals instead of 1,000
    assert evaluate(["--a", str(cwd / "runs" / "A"), "--b", "rule", "--deals", "2", "--no-progress",
                     "--out", str(cwd / "result.json")]) == 0


@pytest.mark.parametrize("command, before", params())
def test_a_cheap_shell_line_runs_as_pasted(command, before, tmp_path):
    words = shlex.split(command)
    assert words[0] in PYTHONS, f"{command!r}: not a python line (give it a setup or leave it out of CHEAP)"
    for i, w in enumerate(words[:-1]):  # an --eval file is written by an earlier line of the block
        if w == "--eval":
            assert any(f"--out {words[i + 1]}" in b for b in before), \
                f"{command!r}: nothing before it on the page writes {words[i + 1]} (say what to run first)"
    for entry in ROOT.iterdir():  # the clone's files, as seen from a clone's root
        if entry.name not in (".git", "runs", "hands") and not entry.name.startswith(".venv"):
            (tmp_path / entry.name).symlink_to(entry)
    _setup(CHEAP.get(command), tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    p = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"{command!r} exited {p.returncode}:\n{p.stderr[-3000:]}"


#: the options whose value a line writes: a file, or a folder of files (the ``--keep`` of bench_marl_learning.py is
#: left out: the page's line rewrites the shipped policies of benchmarks/results/marl/, as it says)
OUTPUT_FILES = ("--out",)
OUTPUT_FOLDERS = ("--save-replays", "--save-dir", "--run-dir", "--out-dir")
#: programs whose positional arguments name what they write: module -> the position of OUT among them
OUTPUT_POSITIONAL = {"agents.export": 1, "agents.dmc.export": 1}


def outputs(command: str) -> list[str]:
    """What a shell line writes in the clone, as it names it (placeholders such as ``<run>`` filled in; a folder as a
    file in it): its output options, an export's OUT and what is written beside it (a checkpoint's provenance
    ``OUT.json``, a league's heatmap ``OUT.png``), a ``>`` redirection. Paths outside the clone are left out."""
    words = shlex.split(re.sub(r"<[^<>\s]*>", "x", command.removesuffix("\\")))  # (a line that goes on: \)
    out: list[str] = []
    positional: list[str] = []
    for i, w in enumerate(words):
        option, eq, value = w.partition("=")
        if not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
        if option in OUTPUT_FILES:
            out.append(value)
            if "--league" in words:
                out.append(os.path.splitext(value)[0] + ".png")
        elif option in OUTPUT_FOLDERS:
            out.append(value.rstrip("/") + "/x.json")
        elif w == ">":
            out.append(value)
        elif not w.startswith("-") and not (i and words[i - 1].startswith("-") and words[i - 1] != "-m"):
            positional.append(w)
    if len(words) > 2 and words[1] == "-m" and words[2] in OUTPUT_POSITIONAL:
        args = positional[positional.index(words[2]) + 1:]
        k = OUTPUT_POSITIONAL[words[2]]
        if len(args) > k:
            out.append(args[k])
            if words[2] == "agents.dmc.export":
                out.append(os.path.splitext(args[k])[0] + ".json")
    return [p for p in out if p and not p.startswith(("/", "~", "..", "$"))]


def block_files() -> dict[str, str]:
    """The files the ```python blocks of the pages write in the working directory (a bare file name in a string:
    ``record.save(rec, "hand.json")``, ``model.save("sb3_model.zip")``) -> where."""
    out = {}
    for path in DOC_FILES:
        text = path.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            for name in re.findall(r"""["']([\w.-]+\.[a-z]+)["']""", m.group(1)):
                if not name.endswith(".py"):
                    out.setdefault(name, f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 2}")
    return out


def test_what_the_pages_write_in_the_clone_is_ignored_by_git():
    """README's tour exported ``dmc.onnx`` (28 MiB) into the clone's root, untracked: every file a shell line or a
    ```python block of README and docs/ writes, run from the clone's root, is one git ignores."""
    named = {}
    for page, n, command, _ in lines():
        for path in outputs(command):
            named.setdefault(os.path.normpath(path), f"{page}:{n}")
    assert {"dmc.onnx", "result.json", "mine.pt", "mine.json", "league.png", "hands/x.json"} <= set(named), named
    named.update({k: v for k, v in block_files().items() if k not in named})
    assert {"hand.json", "sb3_model.zip"} <= set(named), named
    p = subprocess.run(["git", "check-ignore", "--stdin"], input="\n".join(named) + "\n", cwd=ROOT,
                       capture_output=True, text=True)
    if p.returncode == 128:
        pytest.skip(f"not a git checkout: {p.stderr.strip()}")
    shown = {path: where for path, where in named.items() if path not in p.stdout.splitlines()}
    assert not shown, f"written into the clone where git shows it (path: the line that writes it): {shown}"
