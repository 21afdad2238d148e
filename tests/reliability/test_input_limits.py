"""Issue 38, cases 1 and 3: a few hundred bytes must not hang the programs, and values that cannot work are
refused when they are read, not mid-run. The hang cases run in a subprocess with a time limit: before the
fix each of them never answered (killed after 20-60 s)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from common import ROOT, SMOKE, needs

pytestmark = needs("yaml", "train")

#: nine levels of nine aliases: 9^9 (387 million) strings when expanded, 400 bytes on disk
LAUGHS = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n" + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def run(args: list[str], timeout: float = 90) -> subprocess.CompletedProcess:
    """A program of the clone in a fresh interpreter, within ``timeout`` seconds (a hang fails the test)."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def one_line_error(p: subprocess.CompletedProcess, *words: str) -> str:
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-800:]
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines
    return lines[0]


def test_load_yaml_measures_aliases_before_building_the_document():
    from agents.runs.config import MAX_CONFIG_VALUES, load_yaml

    with pytest.raises(ValueError, match=f"more than {MAX_CONFIG_VALUES:,} values"):
        load_yaml(LAUGHS, "config 'x'")
    with pytest.raises(ValueError, match="nests deeper than"):
        load_yaml("a: " + "[" * 40 + "]" * 40)
    with pytest.raises(ValueError, match="more than a config may be"):
        load_yaml("a: " + "x" * (1 << 21))
    # aliases that stay small are fine (a real config may share a list)
    assert load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


def test_check_plain_refuses_shared_references_that_expand_and_a_dict_that_holds_itself():
    from agents.loader import check_plain

    x: list = ["lol"] * 10
    for _ in range(8):
        x = [x] * 10
    with pytest.raises(ValueError, match="expands to more than"):
        check_plain({"bid_at": x}, "checkpoint 'config'")
    d: dict = {}
    d["self"] = d
    with pytest.raises(ValueError, match="contains itself"):
        check_plain(d)
    assert check_plain({"a": [[1, 2]] * 3}) == {"a": [[1, 2]] * 3}


def test_a_config_file_of_aliases_is_refused_at_once(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(LAUGHS)
    one_line_error(run(["train.py", "--config", str(bomb), "--run-dir", str(tmp_path / "r")]),
                   "bomb.yaml", "expands to more than")
    assert not (tmp_path / "r").exists()


def test_a_set_value_of_aliases_is_refused_at_once(tmp_path):
    value = LAUGHS.replace("\n", ", ").rstrip(", ")
    one_line_error(run(["train.py", "--config", str(SMOKE), "--set", "opponents={" + value + "}",
                        "--run-dir", str(tmp_path / "r")]), "config key 'opponents'", "expands to more than")


@needs("torch", "train")
def test_a_rule_checkpoint_whose_config_expands_is_refused_by_load_and_evaluate(tmp_path):
    import torch

    import agents

    x: list = [0.5] * 10
    for _ in range(8):
        x = [x] * 10
    path = tmp_path / "laughs.pt"
    torch.save({"agent": "rule", "config": {"bid_at": x}}, path)
    assert path.stat().st_size < 4000
    with pytest.raises(ValueError, match="expands to more than") as e:
        agents.load(str(path))
    assert str(path) in str(e.value)
    one_line_error(run(["evaluate.py", "--a", str(path), "--b", "random", "--deals", "2", "--no-progress"]),
                   "laughs.pt", "expands to more than")


@needs("torch", "train")
def test_a_dmc_checkpoint_whose_stored_config_expands_is_refused_by_resume(tmp_path):
    import torch

    run_dir = tmp_path / "run"
    p = run(["train.py", "--config", str(SMOKE), "--set", "total_frames=256", "--set", "batch_size=128",
             "--set", "num_envs=8", "--set", "eval_every=0", "--set", "state_layers=[16]", "--set",
             "head_layers=[16]", "--run-dir", str(run_dir), "--no-progress"], timeout=300)
    assert p.returncode == 0, p.stderr[-800:]
    ck = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    x: list = ["rule"] * 10
    for _ in range(8):
        x = [x] * 10
    ck["config"]["opponents"] = x
    torch.save(ck, run_dir / "checkpoint.pt")
    one_line_error(run(["train.py", "--resume", str(run_dir), "--no-progress"]), "expands to more than")


@pytest.mark.parametrize("config, words", [
    ({"bid_at": "abc"}, "bid_at: three win chances"),
    ({"bid_at": [0.3, 0.4]}, "bid_at: three win chances"),
    ({"double_at": float("nan")}, "double_at: a win-chance threshold (a finite number), got nan"),
    ({"redouble_at": True}, "redouble_at: a win-chance threshold"),
    ({"bid_at": [0.3, 0.4, float("inf")]}, "bid_at[2]: a win-chance threshold"),
])
@needs("torch", "train")
def test_rule_checkpoint_thresholds_are_checked_at_load(tmp_path, config, words):
    """Issue 38, case 3: such checkpoints loaded, then failed mid-evaluation with a TypeError."""
    import torch

    import agents

    path = tmp_path / "rule.pt"
    torch.save({"agent": "rule", "config": config}, path)
    with pytest.raises(ValueError) as e:
        agents.load(str(path))
    assert words in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("sets, words", [
    (["opponents=[rul]"], ["config key 'opponents'", "did you mean 'rule'"]),
    (["eval_opponents=[rul]", "eval_every=1024"], ["config key 'eval_opponents'", "did you mean 'rule'"]),
    (["num_actors=100000"], ["config key 'num_actors'", "at most 512"]),
    (["batch_size=1e8"], ["config key 'batch_size'", "at most 65,536"]),
    (["num_envs=1e7"], ["config key 'num_envs'", "at most 16,384"]),
    (['name="run\\nname"'], ["config key 'name'", "printable"]),
    (['name="run\\x00"'], ["config key 'name'", "printable"]),
])
def test_a_config_that_cannot_run_is_refused_before_the_run_folder_exists(tmp_path, sets, words):
    """Issue 38, case 3: ``opponents=[rul]`` started the run and its actor died three times;
    ``eval_opponents=[rul]`` warned at every evaluation and finished "done" with none; resource values that
    cannot be met failed only later; a run name with a newline or NUL was accepted."""
    run_dir = tmp_path / "r"
    args = ["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress"]
    for s in sets:
        args += ["--set", s]
    p = run(["train.py", *args])
    one_line_error(p, *words)
    assert not run_dir.exists()
