"""Dependencies as extras (issue 14): the core install is numpy, gymnasium and pettingzoo; the env,
the rules core, the random and rule agents and the evaluation run without torch, PyYAML, tqdm or
matplotlib (checked in a subprocess where importing them fails), and what needs them says which
extra brings them."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from common import ROOT
BLOCKED = ("torch", "yaml", "matplotlib", "tqdm", "tensorboard")

# inserted first in sys.meta_path: importing a blocked package (or any submodule) raises ImportError
BLOCKER = textwrap.dedent(f"""
    import sys

    class _NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {BLOCKED!r}:
                raise ImportError(f"No module named {{name!r}} (blocked by the test)")
            return None

    sys.meta_path.insert(0, _NotInstalled())
    sys.path.insert(0, {str(ROOT)!r})
""")


def run_blocked(code: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER + textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_the_blocker_blocks():
    p = run_blocked("import torch")
    assert p.returncode != 0 and "blocked by the test" in p.stderr


def test_env_plays_a_random_hand_without_torch_yaml_matplotlib():
    p = run_blocked("""
        import numpy as np
        import ddz_env

        env = ddz_env.env()
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        scores = {}
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            scores[agent] = scores.get(agent, 0) + reward
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"].view(bool)))))
        assert len(scores) == 3 and sum(scores.values()) == 0, scores
        vec = ddz_env.VectorDouDizhu(8, seed=0)
        for _ in range(50):
            vec.step(vec.random_actions(rng))
        print("scores", scores)
        print("loaded", sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))
    """.replace("BLOCKED", repr(BLOCKED)))
    assert p.returncode == 0, p.stderr
    assert "scores {" in p.stdout and "loaded []" in p.stdout


def test_baseline_agents_and_evaluation_without_torch(tmp_path):
    fake = tmp_path / "model.pt"
    fake.write_bytes(b"not read: torch is missing")
    p = run_blocked(f"""
        import gymnasium
        import agents
        import ddz_env
        from agents import RandomAgent, RuleAgent, evaluate, load

        assert isinstance(load("rule"), RuleAgent) and isinstance(load("random"), RandomAgent)
        res = evaluate("rule", "random", deals=2, seed=0, progress=True)   # progress: no tqdm, no bar
        print("score", res["A"]["mean_score"])
        env = gymnasium.make("ddz/DouDizhuSeat-v0", opponents="rule")
        env.reset(seed=0)
        try:
            load({str(fake)!r})
        except ImportError as e:
            print("checkpoint:", e)
    """)
    assert p.returncode == 0, p.stderr
    assert "score " in p.stdout
    assert "checkpoint: checkpoints and learned agents need torch, part of the 'train' extra" in p.stdout


def test_the_programs_say_which_extra_they_need():
    p = run_blocked("""
        from agents.cli.train import main
        code = main(["--config", "smoke"])
        print("exit", code)
    """)
    assert p.returncode == 0, p.stderr
    assert "exit 2" in p.stdout and "training needs the 'train' extra" in p.stderr and "Traceback" not in p.stderr
    p = run_blocked("""
        from agents.cli.train import main
        main(["--help"])
    """)
    assert p.returncode == 0 and "log_every_frames" in p.stdout, p.stderr  # the keys and their help, no yaml
    p = run_blocked("""
        import sys
        from agents.cli.evaluate import main
        sys.exit(main(["--a", "rule", "--b", "random", "--deals", "1", "--no-progress"]))
    """)
    assert p.returncode == 0 and "rule (A) vs random (B): 1 deals" in p.stdout, p.stderr


def test_pyproject_core_and_extras():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert names == {"numpy", "scipy", "gymnasium", "pettingzoo"}
    extras = project["optional-dependencies"]
    assert {"train", "tensorboard", "marl", "rllib", "bench", "dev"} <= set(extras)
    train = " ".join(extras["train"])
    for dep in ("torch", "pyyaml", "tqdm", "matplotlib"):
        assert dep in train
    assert "tensorboard" in " ".join(extras["tensorboard"])


def _run_without(packages: tuple[str, ...], code: str) -> subprocess.CompletedProcess:
    """``code`` where importing any of ``packages`` fails as a missing package does (ModuleNotFoundError)."""
    blocker = textwrap.dedent(f"""
        import sys

        class _Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {packages!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name.split(".")[0])
                return None

        sys.meta_path.insert(0, _Missing())
        sys.path.insert(0, {str(ROOT)!r})
    """)
    return subprocess.run([sys.executable, "-c", blocker + textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=180)


def test_rules_core_imports_and_plays_without_pettingzoo_or_gymnasium():
    """Issue 13: Game, the rules and the batched env need numpy only; the AEC env says what it needs."""
    p = _run_without(("pettingzoo", "gymnasium"), """
        import sys
        import numpy as np
        import ddz_env
        from ddz_env import Game, Rules, VectorDouDizhu
        from ddz_env.record import record_of, replay

        g = Game.deal(3, rules="douzero")
        rng = np.random.default_rng(0)
        while not g.is_over:
            g.step(int(rng.choice(g.legal_actions())))
        assert replay(record_of(g)).scores.tolist() == g.scores.tolist()
        vec = VectorDouDizhu(4, seed=0, rules=Rules(doubling=False))
        assert vec.rules == Rules.of("doubling=false")
        assert "pettingzoo" not in sys.modules and "gymnasium" not in sys.modules
        try:
            ddz_env.raw_env()
        except ImportError as e:
            print("IMPORT-ERROR:", e)
    """)
    assert p.returncode == 0, p.stderr
    assert "IMPORT-ERROR: ddz_env.raw_env" in p.stdout and "not installed" in p.stdout, p.stdout


def test_a_broken_env_module_is_not_taken_for_a_missing_pettingzoo():
    """Only a missing PettingZoo / Gymnasium is tolerated: any other ImportError still surfaces."""
    p = _run_without(("gymnasium_not_this",), """
        import builtins
        real = builtins.__import__

        def fake(name, *args, **kwargs):
            if name == "pettingzoo.utils.env_logger":
                raise ImportError("cannot import name 'EnvLogger' (a broken install)", name="pettingzoo_broken_x")
            return real(name, *args, **kwargs)

        builtins.__import__ = fake
        import ddz_env
    """)
    assert p.returncode != 0 and "broken install" in p.stderr, p.stderr


# every console script, with the extra it needs missing: one ``error:`` line naming the extra and the pip command that
# works in a clone (ddz-env is not on PyPI: ``pip install 'ddz-env[train]'`` would fail)
SCRIPT_EXTRAS = {
    "ddz-train": (("torch", "yaml", "tqdm", "matplotlib"), ["--config", "smoke"], "train"),
    "ddz-evaluate": (("torch",), ["--a", "pretrained", "--b", "rule", "--deals", "1", "--no-progress"], "train"),
    "ddz-compare": (("matplotlib",), ["RUN1", "RUN2", "--out", "OUT/c.png"], "train"),
    "ddz-play": (("torch",), ["--vs", "pretrained", "--save-dir", "OUT/hands"], "train"),
    "ddz-web": (("fastapi", "uvicorn"), ["--port", "0"], "web"),
}


@pytest.mark.parametrize("script", sorted(SCRIPT_EXTRAS))
def test_each_console_script_names_its_missing_extra(script, tmp_path):
    tomllib = pytest.importorskip("tomllib")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == set(SCRIPT_EXTRAS), "a console script without a test of its missing extra"
    missing, argv, extra = SCRIPT_EXTRAS[script]
    argv = [a.replace("OUT", str(tmp_path)) for a in argv]
    module, _, attr = scripts[script].partition(":")
    p = _run_without(missing, f"""
        import importlib
        main = getattr(importlib.import_module({module!r}), {attr!r})
        print("exit", main({argv!r}))
    """)
    out = p.stdout + p.stderr
    errors = [line for line in out.splitlines() if "error:" in line]
    assert p.returncode == 0 and "exit 2" in p.stdout, out
    assert "Traceback" not in out and len(errors) == 1, out
    assert f"'{extra}' extra" in errors[0] and f'pip install -e ".[{extra}]"' in errors[0], errors[0]
    assert "ddz-env[" not in out, out
    assert not (tmp_path / "hands").exists() and not (tmp_path / "c.png").exists()


def test_the_agent_tests_skip_by_name_without_torch():
    """Tests of checkpoints and learned agents skip (naming the extra) where torch is not installed; the
    rest pass. (tests/baselines here, in a fresh interpreter where importing torch fails as a missing
    package does; importorskip and common.needs_torch do the skipping.)"""
    p = _run_without(("torch",), f"""
        import sys
        if __name__ == "__main__":
            import pytest
            sys.exit(pytest.main([{str(ROOT / "tests" / "baselines")!r}, "-p", "no:cacheprovider", "-rs"]))
    """)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    skipped = [ln for ln in out.splitlines() if ln.startswith("SKIPPED")]
    assert len(skipped) >= 4 and all("train" in ln for ln in skipped), skipped
