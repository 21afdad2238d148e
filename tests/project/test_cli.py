"""Entry points (issue 14): configs shipped in the package and found by name, ``train.py`` without
a config is an error listing them, ``--help`` lists every key from the dataclass, console
scripts and ``python -m`` modules, ``agents.load`` of a run folder."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common import ROOT
sys.path.insert(0, str(ROOT))
pytest.importorskip("yaml", reason="configs need the train extra (pip install 'ddz-env[train]')")

from agents.dmc.config import (CONFIG_DIR, TrainConfig, available_configs, config_help,  # noqa: E402
                               config_path, load_config)

SHIPPED = ("default", "demo", "douzero", "gpu", "smoke")


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------------------------- configs
def test_configs_are_the_top_level_folder_of_a_clone_and_are_found_by_name():
    """(from an installed wheel: tests/project/test_packaging.py)"""
    assert CONFIG_DIR == ROOT / "configs" and set(SHIPPED) <= set(available_configs())
    for name in SHIPPED:
        assert config_path(name) == CONFIG_DIR / f"{name}.yaml"
        assert load_config(name) == load_config(CONFIG_DIR / f"{name}.yaml") == load_config(str(config_path(name)))
        assert load_config(name).name == name


def test_config_by_path_still_works_and_bad_names_list_the_shipped_ones(tmp_path, monkeypatch):
    own = tmp_path / "mine.yaml"
    own.write_text("name: mine\nbatch_size: 64\n")
    assert load_config(own).batch_size == 64 and load_config(str(own)).name == "mine"
    monkeypatch.chdir(tmp_path)
    assert load_config("mine.yaml").name == "mine"  # a relative path
    with pytest.raises(ValueError, match=r"unknown config 'defualt'.*default, demo, douzero, gpu, ppo, ppo-1h, ppo-finetune, rllib, sb3, smoke, tianshou, torchrl"):
        load_config("defualt")
    with pytest.raises(FileNotFoundError, match=r"'configs/default.yaml' not found.*default, demo, douzero"):
        load_config("configs/default.yaml")


def test_pyproject_ships_the_configs_as_package_data():
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setup = meta["tool"]["setuptools"]
    assert setup["package-dir"]["agents.configs"] == "configs" and "agents.configs" in setup["packages"]
    assert "*.yaml" in setup["package-data"]["agents.configs"]


# ---------------------------------------------------------------------------------------------- train CLI
@pytest.mark.parametrize("cmd", [["train.py"], ["-m", "agents.cli.train"]])
def test_train_without_a_config_is_an_error_listing_the_configs(cmd):
    p = run(*cmd)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "error: give --config" in p.stderr
    for name in SHIPPED:
        assert name in p.stderr
    assert not p.stdout


def test_train_help_lists_every_key_with_its_default_and_meaning():
    from agents.runs.algos import LIBRARY_SCHEMA, LibraryConfig

    p = run("train.py", "--help")
    assert p.returncode == 0, p.stderr
    dmc_part, library_part = p.stdout.split("A library learner's config")
    for cls, text in ((TrainConfig, dmc_part), (LibraryConfig, library_part)):
        check_keys_shown(cls, text.splitlines())
    assert config_help() in p.stdout and LIBRARY_SCHEMA.help().split("\n", 1)[1] in p.stdout


def check_keys_shown(cls, lines):
    defaults = cls().to_dict()
    for f in dataclasses.fields(cls):
        meaning = f.metadata.get("help", "")
        assert meaning and "\n" not in meaning, f"config key {f.name!r} has no one-line meaning"
        row = [ln for ln in lines if ln.split()[:1] == [f.name]]
        assert len(row) == 1, (f.name, row)
        shown = {True: "true", False: "false"}.get(defaults[f.name], None) if isinstance(defaults[f.name], bool) \
            else (f"[{', '.join(map(str, defaults[f.name]))}]" if isinstance(defaults[f.name], list)
                  else str(defaults[f.name]))
        assert f" {shown} " in row[0] and row[0].rstrip().endswith(meaning), row[0]


def test_the_shipped_configs_name_only_known_keys():
    import yaml

    from agents.runs.algos import LIBRARY_SCHEMA, LibraryConfig, algo_of

    keys = {f.name for f in dataclasses.fields(TrainConfig)}
    library_keys = {f.name for f in dataclasses.fields(LibraryConfig)}
    libraries = [n for n in available_configs() if algo_of(config_path(n)) != "dmc"]
    assert "sb3" in libraries
    for name in available_configs():
        data = yaml.safe_load(config_path(name).read_text())
        assert set(data) <= (keys if name not in libraries else library_keys), name
    for name in libraries:  # a library config loads, names its learner, and its options are its learner's
        cfg = LIBRARY_SCHEMA.load(name)
        assert name.split("-")[0] == cfg.algo and cfg.options
        from agents.runs.library import check_options, learner_module

        try:
            module = learner_module(cfg.algo)
        except ImportError:  # (RLlib lives in its own venv: test_rllib_module.py runs its shipped config there)
            continue
        check_options(cfg, module)  # every option's value passes the learner's checks


# ---------------------------------------------------------------------------------------------- entry points
def test_console_scripts_point_at_the_cli_mains():
    tomllib = pytest.importorskip("tomllib")
    import importlib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) >= {"ddz-train", "ddz-evaluate"}
    for target in scripts.values():
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), target


def test_installed_console_scripts_run_when_installed():
    from importlib.metadata import entry_points

    eps = {e.name: e for e in entry_points(group="console_scripts")}
    if "ddz-evaluate" not in eps:
        pytest.skip("ddz-env is not installed with its console scripts (pip install -e .)")
    exe = Path(sys.executable).parent / "ddz-evaluate"
    if not exe.exists():
        pytest.skip(f"no {exe}")
    p = subprocess.run([str(exe), "--a", "rule", "--b", "random", "--deals", "2", "--no-progress"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "rule (A) vs random (B): 2 deals" in p.stdout
    p = subprocess.run([str(exe.with_name("ddz-train"))], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "ddz-train: error: give --config" in p.stderr


@pytest.mark.parametrize("cmd", [["evaluate.py"], ["-m", "agents.cli.evaluate"]])
def test_evaluate_module_and_wrapper_are_the_same_program(cmd):
    p = run(*cmd, "--a", "rule", "--b", "random", "--deals", "2", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "rule (A) vs random (B): 2 deals, 12 hands" in p.stdout


def test_evaluate_records_a_command_that_reproduces_it(tmp_path):
    import json

    import evaluate as cli

    out = tmp_path / "r.json"
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--out", str(out), "--no-progress"]) == 0
    assert json.loads(out.read_text())["command"].startswith("ddz-evaluate --a rule --b random --deals 2")


def test_every_program_that_seats_agents_lists_the_same_kinds_of_agent_spec(capsys):
    """ddz-web's ``--agent`` help did not name ``onnx:`` (nor ``rllib:``), evaluate.py's ``--a`` and ddz-play's
    ``--vs`` named neither, each program with its own list: now each help lists ``agents.loader.SPEC_KINDS``,
    the one list, which names every scheme ``agents.load`` reads."""
    from agents import loader
    from agents.cli.evaluate import main as evaluate
    from agents.play.terminal import main as play

    def squeezed(text: str) -> str:  # (argparse wraps the help at any space, and after a hyphen)
        return "".join(text.split())

    for scheme in loader._SCHEMES:
        assert f"{scheme}:" in loader.SPEC_KINDS and f"{scheme}:" in loader.SCHEME_FORMS, scheme
    helps = {}
    for name, program in (("evaluate.py", evaluate), ("ddz-play", play)):
        with pytest.raises(SystemExit):
            program(["--help"])
        helps[name] = capsys.readouterr().out
    pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
    from agents.play.web.server import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--help"])
    helps["ddz-web"] = capsys.readouterr().out
    for name, text in helps.items():
        assert squeezed(loader.SPEC_KINDS) in squeezed(text), (name, text)
        assert "onnx:FILE.onnx" in text and "rllib:RUN" in text, (name, text)


# ---------------------------------------------------------------------------------------------- run folders
def _run_folder(tmp_path: Path) -> Path:
    torch = pytest.importorskip("torch")
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = load_config("smoke", {"state_layers": [16], "head_layers": [16, 8]})
    torch.manual_seed(0)
    model = make_model(cfg)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None), run_dir / "checkpoint.pt")
    return run_dir


def test_load_accepts_a_run_folder_as_resume_does(tmp_path):
    import numpy as np

    import agents
    import ddz_env
    from agents.dmc import DMCAgent

    run_dir = _run_folder(tmp_path)
    by_folder, by_file = agents.load(run_dir), agents.load(str(run_dir / "checkpoint.pt"))
    assert isinstance(by_folder, DMCAgent) and isinstance(agents.load(str(run_dir) + os.sep), DMCAgent)
    env = ddz_env.env()
    env.reset(seed=3)
    obs, *_ = env.last()
    assert by_folder.act(obs) == by_file.act(obs)
    for p in by_folder.model.state_dict():
        assert np.array_equal(by_folder.model.state_dict()[p].numpy(), by_file.model.state_dict()[p].numpy())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="directory without checkpoint.pt"):
        agents.load(empty)


def test_evaluate_cli_takes_a_run_folder(tmp_path):
    run_dir = _run_folder(tmp_path)
    p = run("evaluate.py", "--a", str(run_dir), "--b", "random", "--deals", "1", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "1 deals, 6 hands" in p.stdout
