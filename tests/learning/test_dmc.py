"""DMC agent and trainer: config validation, Monte-Carlo targets, smoke training, loading, resume."""
from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

import ddz_env
from agents.dmc import DMCAgent
from agents.dmc.config import TrainConfig, config_from_dict, load_config
from agents.dmc.learner.experience import Pending, transform_target
from agents.dmc.model import BIDDING_NET, DMCModel, OBS_CELLS, net_ids
from agents.dmc.learner.trainer import load_checkpoint, train
from ddz_env.actions import BID_3, DOUBLE
from ddz_env.game import Phase

from common import ROOT, SMOKE
TINY = {"num_envs": 16, "batch_size": 128, "total_frames": 1024, "state_layers": [32], "head_layers": [32, 16],
        "log_every_frames": 128, "eval_every": 0}


def tiny(**kw) -> TrainConfig:
    return load_config(SMOKE, {**TINY, **kw})


# ---------------------------------------------------------------------------------------------- config
def test_shipped_configs_are_valid():
    for name in ("smoke", "demo", "default", "douzero", "gpu"):
        cfg = load_config(name)
        assert cfg.name == name


def test_the_gpu_config_follows_the_defaults_choices():
    """configs/gpu.yaml is the default scaled up: what the ablations chose (target, opponents, the
    pool, action features, exploration, batch, no history LSTM) is the same; only size, precision and
    schedule differ."""
    default, gpu = load_config("default"), load_config("gpu")
    for key in ("rules", "target", "score_scale", "opponents", "opponent_share", "pool_every", "pool_size",
                "pool_share", "learn_from_opponents", "action_features", "epsilon", "bid_epsilon",
                "value_head", "hand_prediction", "optimizer", "lr", "batch_size", "history_lstm"):
        assert getattr(gpu, key) == getattr(default, key), key
    assert default.pool_every > 0  # the opponent pool won at equal frames (agents/dmc/README.md, Ablations)


def test_config_unknown_key_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'batchsize'"):
        config_from_dict({"batchsize": 3})
    with pytest.raises(ValueError, match="'nope'"):
        config_from_dict({}, ["nope=1"])


@pytest.mark.parametrize("override, key", [
    ("batch_size=abc", "batch_size"), ("batch_size=0", "batch_size"), ("epsilon=1.5", "epsilon"),
    ("target=log", "target"), ("rules=maybe", "rules"), ("head_layers=[a]", "head_layers"),
    ("device=tpu", "device"), ("optimizer=sgd", "optimizer"),
])
def test_config_bad_value_is_an_error_naming_the_key(override, key):
    with pytest.raises(ValueError, match=f"'{key}'"):
        config_from_dict({}, [override])


def test_config_set_coerces_types():
    cfg = config_from_dict({}, ["batch_size=64", "lr=1e-3", "rules=douzero", "head_layers=[8, 4]", "total_frames=1e6"])
    assert (cfg.batch_size, cfg.lr, cfg.rules, cfg.head_layers, cfg.total_frames) == (64, 1e-3, "douzero", [8, 4], 10**6)


# ---------------------------------------------------------------------------------------------- targets
def test_targets_each_seat_gets_its_own_final_score_and_void_hands_zero():
    p = Pending(num_envs=2, max_len=8)
    seats = [np.array([0, 1]), np.array([1, 2]), np.array([2, 0]), np.array([0, 1])]
    for k, s in enumerate(seats):
        obs = np.full((2, OBS_CELLS), k, np.int8)
        p.add(obs, np.array([100 + k, 200 + k]), np.array([BIDDING_NET, 0]), s)
    final = np.array([[-12, 6, 6], [0, 0, 0]])
    void = np.array([False, True])
    obs, action, net, target = p.flush(np.array([0, 1]), final, void, "none", 1.0)
    # slot 0's four decisions first (seats 0, 1, 2, 0), then slot 1's (void)
    assert action.tolist() == [100, 101, 102, 103, 200, 201, 202, 203]
    assert target.tolist() == [-12, 6, 6, -12, 0, 0, 0, 0]
    assert obs[:, 0].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert net.tolist() == [BIDDING_NET] * 4 + [0] * 4
    assert p.length.tolist() == [0, 0]
    # flushing one slot leaves the other's decisions alone
    p.add(np.zeros((2, OBS_CELLS), np.int8), np.array([1, 2]), np.array([1, 2]), np.array([2, 1]))
    _, a, _, t = p.flush(np.array([1]), np.array([[0, 0, 0], [4, -8, 4]]), np.array([False, False]), "scale", 4.0)
    assert a.tolist() == [2] and t.tolist() == [-2.0] and p.length.tolist() == [1, 0]


def test_target_transforms():
    s = np.array([-48, -2, 0, 3, 60])
    assert transform_target(s, "none", 1).tolist() == [-48, -2, 0, 3, 60]
    assert transform_target(s, "scale", 8).tolist() == [-6, -0.25, 0, 0.375, 7.5]
    assert transform_target(s, "sign", 8).tolist() == [-1, -1, 0, 1, 1]
    net = np.array([0, 3, 1, 3, 2])  # sign_play: the bidding network (3) keeps the stake, play nets the sign
    assert transform_target(s, "sign_play", 8, net).tolist() == [-1, -0.25, 0, 0.375, 1]
    with pytest.raises(ValueError, match="which decisions are bids"):
        transform_target(s, "sign_play", 8)


def test_net_ids_by_phase_and_role():
    phase = np.array([Phase.BID, Phase.DOUBLE, Phase.REDOUBLE, Phase.PLAY, Phase.PLAY, Phase.PLAY])
    seat = np.array([0, 1, 2, 2, 0, 1])
    lord = np.array([0, 0, 2, 2, 2, 2])
    assert net_ids(phase, seat, lord).tolist() == [3, 3, 3, 0, 1, 2]


def test_choose_is_greedy_over_the_candidates():
    torch.manual_seed(0)
    model = DMCModel([16], [16, 8])
    env = ddz_env.VectorDouDizhu(8, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(30):  # into the play phase
        env.step(env.random_actions(rng))
    obs = env.observe().reshape(8, OBS_CELLS)
    _, ids, starts = env.legal_sets()
    nets = net_ids(env.phase, env.current_player, env.landlord)
    got = model.choose(obs, nets, starts, ids)
    for b in range(8):
        legal = ids[starts[b]:starts[b + 1]]
        with torch.no_grad():
            q = model.q_pairs(int(nets[b]), torch.from_numpy(np.repeat(obs[b:b + 1], legal.size, 0)),
                              torch.from_numpy(legal.copy()))
        assert got[b] == legal[int(torch.argmax(q))]


# ---------------------------------------------------------------------------------------------- smoke training
def play_steered_hands(agent, hands: int = 3) -> set[int]:
    """Full AEC hands: the agent chooses every decision (checked legal); bids and doubles are then
    steered (bid 3, double) so that every phase, redouble included, comes up."""
    env = ddz_env.env()
    phases = set()
    for h in range(hands):
        env.reset(seed=h)
        for _name in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            raw = env.unwrapped
            legal = raw.legal_actions()
            a = agent.act(obs)
            assert a in set(legal.tolist()), (a, raw.phase)
            phase = int(raw.phase)
            phases.add(phase)
            if phase == Phase.BID and BID_3 in legal:
                a = BID_3
            elif phase == Phase.DOUBLE:
                a = DOUBLE
            env.step(a)
    return phases


def test_smoke_training_writes_a_run_that_plays(tmp_path):
    cfg = tiny()
    ck_path = train(cfg, tmp_path / "run", progress=False)
    run = tmp_path / "run"
    for f in ("config.yaml", "log.csv", "checkpoint.pt", "learning_curve.png"):
        assert (run / f).is_file(), f
    assert load_config(run / "config.yaml") == cfg
    rows = list(csv.DictReader(open(run / "log.csv")))
    assert rows and int(rows[-1]["frames"]) >= cfg.total_frames
    ck = torch.load(ck_path, weights_only=True)
    assert ck["agent"] == "dmc" and ck["format_version"] == 1 and ck["frames"] >= cfg.total_frames
    assert "optimizer" in ck and ck["config"]["name"] == "smoke"
    agent = DMCAgent.from_checkpoint(ck_path)
    assert play_steered_hands(agent) == {int(Phase.BID), int(Phase.DOUBLE), int(Phase.REDOUBLE), int(Phase.PLAY)}
    # through the agents loader (the kind "dmc", registered there lazily)
    import agents

    loaded = agents.load(str(ck_path))
    assert isinstance(loaded, DMCAgent)
    env = ddz_env.env()
    env.reset(seed=5)
    obs, *_ = env.last()
    assert loaded.act(obs) == agent.act(obs)


def test_actor_processes_train(tmp_path):
    cfg = tiny(num_actors=1, num_buffers=4, total_frames=512)
    ck_path = train(cfg, tmp_path / "run", progress=False)
    ck = load_checkpoint(ck_path)
    assert ck["frames"] >= 512 and ck["updates"] >= 4
    # rows at fixed frames whatever the actor's timing (one per 128 frames here), and no duplicate final row
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    assert [int(r["frames"]) for r in rows] == [128, 256, 384, 512]


def test_from_checkpoint_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        DMCAgent.from_checkpoint(tmp_path / "missing.pt")
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError):
        DMCAgent.from_checkpoint(bad)
    other = tmp_path / "other.pt"
    torch.save({"agent": "rule", "config": {}}, other)
    with pytest.raises(ValueError):
        DMCAgent.from_checkpoint(other)


# ---------------------------------------------------------------------------------------------- resume
def test_resume_continues_exactly(tmp_path):
    k = 512
    straight = train(tiny(total_frames=2 * k), tmp_path / "a", progress=False)
    first = train(tiny(total_frames=k), tmp_path / "b", progress=False)
    ck = load_checkpoint(first)
    assert ck["frames"] == k
    resumed = train(config_from_dict(ck["config"], {"total_frames": 2 * k}), tmp_path / "b", resume=ck,
                    progress=False)
    a, b = load_checkpoint(straight), load_checkpoint(resumed)
    assert a["frames"] == b["frames"] == 2 * k
    for key in a["model"]:
        torch.testing.assert_close(a["model"][key], b["model"][key], rtol=1e-6, atol=1e-7)
    rows = list(csv.DictReader(open(tmp_path / "b" / "log.csv")))
    assert int(rows[-1]["frames"]) == 2 * k


def test_resume_applies_the_new_learning_rate(tmp_path):
    """--set lr=... on --resume takes effect: the optimizer's saved lr does not override the config."""
    k = 512
    first = train(tiny(total_frames=k, lr=1e-3), tmp_path / "r", progress=False)
    ck = load_checkpoint(first)
    assert ck["optimizer"]["param_groups"][0]["lr"] == 1e-3
    resumed = train(config_from_dict(ck["config"], {"total_frames": 2 * k, "lr": 2e-4}), tmp_path / "r", resume=ck,
                    progress=False)
    assert load_checkpoint(resumed)["optimizer"]["param_groups"][0]["lr"] == 2e-4


def test_max_seconds_counts_the_runs_sessions_together(tmp_path, caplog):
    """A resumed timed run ends at its time, not after another max_seconds (configs/default.yaml: one hour)."""
    k = 512
    ck = load_checkpoint(train(tiny(total_frames=k), tmp_path / "r", progress=False))
    ck["elapsed"] = 3600.0  # as if its earlier sessions had trained an hour
    cfg = config_from_dict(ck["config"], {"total_frames": 4 * k, "max_seconds": 3600})
    with caplog.at_level("WARNING", logger="dmc"):
        done = load_checkpoint(train(cfg, tmp_path / "r", resume=ck, progress=False))
    assert done["frames"] == k  # nothing trained: the hour was used
    assert "max_seconds 3600 (3600 s trained)" in caplog.text
    more = config_from_dict(ck["config"], {"total_frames": 2 * k, "max_seconds": 7200})
    assert load_checkpoint(train(more, tmp_path / "r", resume=ck, progress=False))["frames"] == 2 * k


def test_train_cli_runs_and_resumes(tmp_path, capsys):
    import sys

    sys.path.insert(0, str(ROOT))
    import train as train_cli

    run = tmp_path / "cli"
    sets = [x for k, v in TINY.items() for x in ("--set", f"{k}={v}")]
    assert train_cli.main(["--config", str(SMOKE), *sets, "--set", "total_frames=256", "--run-dir", str(run),
                           "--no-progress"]) == 0
    assert load_checkpoint(run)["frames"] == 256
    assert train_cli.main(["--resume", str(run), "--set", "total_frames=512", "--no-progress"]) == 0
    assert load_checkpoint(run / "checkpoint.pt")["frames"] == 512
    assert load_config(run / "config.yaml").total_frames == 512
    assert train_cli.main(["--config", str(SMOKE), "--set", "bogus=1"]) == 2
    assert "'bogus'" in capsys.readouterr().err


def _untrained_checkpoint(path: Path, **kw) -> Path:
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = tiny(**kw)
    torch.manual_seed(0)
    model = make_model(cfg)
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None), path)
    return path


def test_an_unknown_checkpoint_format_is_refused_by_load_as_by_resume(tmp_path, capsys):
    """Issue 22 (12): agents.load read a DMC checkpoint of format_version 99; --resume refused it."""
    import agents
    from agents.cli import train as train_cli

    path = _untrained_checkpoint(tmp_path / "c.pt")
    ck = torch.load(path, weights_only=True)
    for version in (99, None, "1"):
        ck["format_version"] = version
        torch.save(ck, path)
        for load in (agents.load, DMCAgent.from_checkpoint, load_checkpoint):
            with pytest.raises(ValueError, match=rf"c\.pt.*unsupported DMC checkpoint format {version!r}.*reads format 1"):
                load(str(path))
        with pytest.raises(ValueError, match="unsupported DMC checkpoint format"):
            DMCAgent.from_checkpoint(dict(ck))
    assert train_cli.main(["--resume", str(path)]) == 2
    assert "unsupported DMC checkpoint format '1'" in capsys.readouterr().err


def test_act_needs_no_env_object(tmp_path):
    """act(observation) alone (no env): the AEC observation dict is all a DMC agent needs."""
    agent = DMCAgent.from_checkpoint(_untrained_checkpoint(tmp_path / "c.pt", action_features="hand_after"))
    env = ddz_env.env()
    env.reset(seed=2)
    n = 0
    for _name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agent.act(obs)
        assert obs["action_mask"][a] == 1
        env.step(a)
        n += 1
    assert n > 10


def test_seat_env_seats_a_dmc_checkpoint_as_opponents(tmp_path):
    from agents.integrations.seat_env import DouDizhuSeatEnv

    path = _untrained_checkpoint(tmp_path / "opp.pt")
    env = DouDizhuSeatEnv(seat=0, opponents=str(path))
    assert all(isinstance(o, DMCAgent) for o in env.opponents)
    rng = np.random.default_rng(0)
    for ep in range(3):
        env.reset(seed=ep)
        done, ret = False, 0.0
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, r, done, _, info = env.step(int(rng.choice(legal)))
            ret += r
        assert ret == info["score"]


def test_hand_after_features_are_the_hand_minus_the_move():
    from agents.dmc.model import HAND_AFTER_DIM, hand_after_features, hand_counts
    from ddz_env.cards import parse_cards
    from ddz_env.observation import observe_game
    from ddz_env.game import Game

    g = Game.deal(np.random.default_rng(3))
    planes = torch.from_numpy(observe_game(g, g.current_player).reshape(1, OBS_CELLS).astype(np.int8))
    hand = hand_counts(planes)
    np.testing.assert_array_equal(hand[0].numpy(), g.hands[g.current_player])
    move = torch.from_numpy(parse_cards("3").astype(np.int64))[None] * int(g.hands[g.current_player][0] > 0)
    f = hand_after_features(hand, move)
    assert f.shape == (1, HAND_AFTER_DIM)
    after = g.hands[g.current_player] - move[0].numpy()
    plane = f[0, :60].reshape(4, 15).numpy()
    np.testing.assert_array_equal(plane.sum(0), after)  # thermometer rows sum to the counts
    assert f[0, 60 + int(after.sum())] == 1 and f[0, 60:].sum() == 1


# ---------------------------------------------------------------------------------------------- fixed opponents
def test_opponents_hold_the_b_seats_of_a_duplicate_seating_and_play_their_own_choices():
    from agents import RuleAgent
    from agents.base import Decisions, take_sets
    from agents.dmc.learner.experience import SEATINGS, Collector

    cfg = tiny(opponents=["rule"], opponent_share=1.0, num_envs=12)
    col = Collector(cfg, seed=3)
    torch.manual_seed(0)
    model = DMCModel([32], [32, 16])
    rule = RuleAgent()
    patterns = {tuple(p) for p in SEATINGS}
    checked = 0
    for _ in range(150):
        assert all(tuple(row) in patterns for row in (col.owner == 0))  # every hand: one of the six seatings
        env = col.env
        seat = env.current_player.copy()
        idx = np.flatnonzero(col.owner[np.arange(12), seat] == 0)
        _, ids, starts = env.legal_sets()
        st, lid = take_sets(starts, ids, idx)
        want = rule.act_batch(Decisions(col.obs[idx], lid, st, env.phase[idx].astype(np.int64), env.roles()[idx],
                                        seat[idx], idx * 3 + seat[idx]))
        k = col.pending.length.copy()
        col.step(model)
        got = col.pending.action[idx, k[idx]] if idx.size else np.zeros(0)
        # (a table whose hand ended this step has flushed its decisions: check the others)
        alive = col.pending.length[idx] == k[idx] + 1
        np.testing.assert_array_equal(got[alive], want[alive])
        checked += int(alive.sum())
    assert checked > 100 and col.stats.vs_hands > 0 and col.stats.hands == 0  # share 1: no self-play hands


def test_learn_from_opponents_off_keeps_only_the_learners_decisions():
    from agents.dmc.learner.experience import Collector

    torch.manual_seed(0)
    model = DMCModel([32], [32, 16])
    sizes = {}
    for flag in (True, False):
        col = Collector(tiny(opponents=["rule"], opponent_share=1.0, learn_from_opponents=flag, num_envs=8), seed=1)
        for _ in range(300):
            col.step(model)
        sizes[flag] = col.ring.size
        assert col.decisions == 300 * 8
    assert 0 < sizes[False] < sizes[True]


def test_opponent_share_needs_opponents():
    with pytest.raises(ValueError, match="'opponent_share'"):
        config_from_dict({}, ["opponent_share=0.5"])
    with pytest.raises(ValueError, match="'opponents'"):
        config_from_dict({}, ["opponents=[1, 2]"])


def _children(pid: int) -> set[int]:
    import subprocess

    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return {int(x) for x in out.split()}


def test_killing_the_learner_leaves_no_actor_or_evaluation_process(tmp_path):
    """SIGKILL the learner (as the OOM killer would): its actor and evaluation processes exit on their own."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(SMOKE), "--run-dir", str(tmp_path / "run"),
           "--no-progress", "--set", "num_actors=1", "--set", "num_buffers=4", "--set", "total_frames=100000000",
           "--set", "eval_every=2048", "--set", "eval_deals=2", "--set", "num_envs=16", "--set", "batch_size=256"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        kids: set[int] = set()
        while time.time() < deadline:  # wait for the actor and the evaluation worker
            kids = _children(p.pid)
            if len(kids) >= 3 and (tmp_path / "run" / "eval.csv").exists():
                break
            time.sleep(0.5)
        assert kids, "the learner started no child process"
        grandkids = set().union(*(_children(k) for k in kids))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        deadline = time.time() + 30
        alive = kids | grandkids
        while alive and time.time() < deadline:
            alive = {k for k in alive if os.path.exists(f"/proc/{k}") and "zombie" not in
                     open(f"/proc/{k}/status").read().lower()}
            time.sleep(0.5)
        assert not alive, f"orphans left running: {sorted(alive)}"
    finally:
        if p.poll() is None:
            p.kill()


# ---------------------------------------------------------------------------------------------- bad input (issue 12)
@pytest.mark.parametrize("override, key", [
    ("max_grad_norm=-1", "max_grad_norm"), ("max_grad_norm=0", "max_grad_norm"), ("optim_eps=-1", "optim_eps"),
    ("rmsprop_alpha=1.5", "rmsprop_alpha"), ("lr=.inf", "lr"), ("lr=.nan", "lr"), ("score_scale=.inf", "score_scale"),
    ("epsilon=.nan", "epsilon"), ("seed=-1", "seed"), (f"seed={2**32}", "seed"), ("eval_seed=-3", "eval_seed"),
])
def test_config_rejects_out_of_range_and_non_finite_values_by_name(override, key):
    with pytest.raises(ValueError, match=f"'{key}'"):
        config_from_dict({}, [override])


def test_train_cli_refuses_bad_values_before_creating_the_run_folder(tmp_path, capsys):
    import train as cli

    run = tmp_path / "run"
    for bad in (["--set", "seed=-1"], ["--set", "lr=.nan"], ["--set", "optim_eps=-1"]):
        assert cli.main(["--config", str(SMOKE), "--run-dir", str(run), *bad]) == 2
        assert "error: config key" in capsys.readouterr().err and not run.exists()


def test_train_cli_bad_config_files_are_errors_not_tracebacks(tmp_path, capsys):
    import train as cli

    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nlr: [1, 2\n")
    for path, msg in ((broken, "not valid YAML"), (tmp_path, "is a directory"), (tmp_path / "no.yaml", "not found")):
        assert cli.main(["--config", str(path), "--run-dir", str(tmp_path / "run")]) == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_resume_refuses_keys_the_saved_state_cannot_take_and_leaves_the_run_alone(tmp_path, capsys):
    import train as cli

    run = tmp_path / "run"
    train(tiny(), run, progress=False)
    before = (run / "config.yaml").read_text()
    for override, key in (("state_layers=[64]", "state_layers"), ("num_envs=8", "num_envs"),
                          ("optimizer=rmsprop", "optimizer"), ("action_features=hand_after", "action_features")):
        assert cli.main(["--resume", str(run), "--set", override, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"config key '{key}' cannot change on --resume" in err, err
        assert (run / "config.yaml").read_text() == before


def test_log_csv_never_goes_backwards_after_a_resume(tmp_path):
    """A run killed between checkpoints logged rows past its checkpoint: the resume drops them."""
    run = tmp_path / "run"
    train(tiny(total_frames=1024, checkpoint_every=512), run, progress=False)
    ck = load_checkpoint(run)
    with open(run / "log.csv", "a") as f:  # rows of frames trained after the checkpoint, then lost
        f.write(f"99.0,{ck['frames'] + 5000},99,1.0,,,,,,,,0,,\n")
    train(tiny(total_frames=2048, checkpoint_every=512), run, resume=ck, progress=False)
    frames = [int(r["frames"]) for r in csv.DictReader(open(run / "log.csv"))]
    assert frames == sorted(frames) and frames[-1] >= 2048


def test_diverged_weights_are_a_clear_error(tmp_path):
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = tiny()
    model = make_model(cfg)
    with torch.no_grad():
        model.nets[0].head_state.weight.fill_(float("nan"))
    path = tmp_path / "nan.pt"
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None), path)
    with pytest.raises(ValueError, match="non-finite weights"):
        DMCAgent.from_checkpoint(path)
    env = ddz_env.VectorDouDizhu(4, seed=0, rules="bidding=false")
    _, ids, starts = env.legal_sets()
    with pytest.raises(ValueError, match="non-finite Q-values from network 0"):
        DMCAgent(model).model.choose(env.observe().reshape(4, -1), np.zeros(4, np.int64), starts, ids)


def test_a_diverging_run_stops_with_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="training diverged: non-finite loss"):
        train(tiny(lr=1e30, score_scale=1e-30, target="scale"), tmp_path / "run", progress=False)


def test_export_keeps_what_playing_needs_and_writes_provenance(tmp_path):
    import json

    from agents.dmc.export import export

    run = tmp_path / "run"
    train(tiny(), run, progress=False)
    res = tmp_path / "r.json"
    res.write_text(json.dumps({"config": {"a": "x"}, "command": "python evaluate.py --a x", "A": {"mean_score": 1.0},
                               "deals": 2, "hands": 12}))
    prov = export(run, tmp_path / "out" / "dmc.pt", [str(res)], note="test")
    ck = torch.load(tmp_path / "out" / "dmc.pt", weights_only=True)
    assert "optimizer" not in ck and "collector" not in ck and ck["frames"] == prov["frames"] >= 1024
    saved = json.loads((tmp_path / "out" / "dmc.json").read_text())
    assert saved["evaluations"][0]["command"] == "python evaluate.py --a x" and saved["config"]["name"] == "smoke"
    assert saved["machine"] and "train_wall_seconds" in saved
    agent = DMCAgent.from_checkpoint(tmp_path / "out" / "dmc.pt")
    assert play_steered_hands(agent, hands=1) >= {int(Phase.PLAY)}


def test_export_checks_every_input_before_writing_anything(tmp_path, capsys):
    """Issue 47 (4): docs/training.md's export line wrote mine.pt, then stopped on the missing result.json
    ([Errno 2]) without the provenance file. Now a missing or broken --eval file is one line, and nothing."""
    import json

    from agents.dmc.export import main
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = tiny()
    model = make_model(cfg)
    run = tmp_path / "run"
    run.mkdir()
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None), run / "checkpoint.pt")
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    out = tmp_path / "mine.pt"
    for bad, said in (("result.json", "not found (write it first: evaluate.py"), ("broken.json", "is not an evaluate.py"),
                      ("list.json", "is not an evaluate.py")):
        good = tmp_path / "good.json"
        good.write_text(json.dumps({"config": {"a": "rule"}, "A": {"mean_score": 0.1}}))
        assert main([str(run), str(out), "--eval", str(good), "--eval", str(tmp_path / bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("python -m agents.dmc.export: error: --eval file")
        assert said in err and "nothing was written" in err, err
        assert not out.exists() and not out.with_suffix(".json").exists()
    assert main([str(run), str(out), "--eval", str(good)]) == 0
    assert out.exists() and json.loads(out.with_suffix(".json").read_text())["evaluations"][0]["file"] == "good.json"


# ---------------------------------------------------------------------------------------------- logging (issue 14)
VARYING = ("time_s", "fps")  # wall-clock columns; every other column is a function of the config and seed


def test_identical_runs_give_identical_csvs_but_for_the_wall_clock_columns(tmp_path):
    from agents.dmc.learner.runlog import CSV_FIELDS

    cfg = tiny(total_frames=1280, log_every_frames=512)
    runs = [list(csv.DictReader(open(train(cfg, tmp_path / k, progress=False).parent / "log.csv"))) for k in "ab"]
    assert [int(r["frames"]) for r in runs[0]] == [512, 1024, 1280]  # the first update at or past 512, 1024; the end
    strip = [[{k: v for k, v in r.items() if k not in VARYING} for r in rows] for rows in runs]
    assert strip[0] == strip[1]
    assert list(runs[0][0]) == list(CSV_FIELDS) and all(float(r["time_s"]) > 0 for r in runs[0])


def test_log_every_seconds_still_works_when_log_every_frames_is_0(tmp_path):
    cfg = tiny(total_frames=512, log_every_frames=0, log_every=1e-6)
    train(cfg, tmp_path / "run", progress=False)
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    assert [int(r["frames"]) for r in rows] == [128, 256, 384, 512]


def test_log_every_frames_is_validated():
    with pytest.raises(ValueError, match="'log_every_frames'"):
        config_from_dict({}, ["log_every_frames=-1"])


def test_fps_excludes_the_start_up_and_the_frames_before_a_resume(tmp_path):
    """The first row after --resume: frames of this session over the time since its first update."""
    import time

    from agents.dmc.learner.runlog import RunLog

    path = tmp_path / "log.csv"
    path.write_text("time_s,frames,updates,fps\n1.0,4096,32,4000\n")
    runlog = RunLog(path, resume_frames=4096, every_frames=1024)
    time.sleep(0.5)  # start-up: actors spawning, the checkpoint loading
    assert not runlog.due(4096 + 128)
    runlog.start(4096)  # the session's first batch is there
    runlog.add([0.1, 0.1, 0.1, 0.1], None)
    time.sleep(0.05)
    assert runlog.due(5120)
    row = runlog.write(2.0, 5120, 40)
    runlog.close()
    # 1024 frames in ~0.05 s; counting the start-up would give ~1,900 (1024 / 0.55), counting
    # the earlier session's frames ~100,000 (5120 / 0.05)
    assert 1024 / 0.4 < row["fps"] <= 1024 / 0.05, row
    rows = list(csv.DictReader(open(path)))
    assert [r["frames"] for r in rows] == ["4096", "5120"]


def test_resumed_run_logs_its_first_row_at_the_next_multiple(tmp_path):
    run = tmp_path / "run"
    train(tiny(total_frames=640, log_every_frames=256, checkpoint_every=10**6), run, progress=False)
    ck = load_checkpoint(run)
    train(tiny(total_frames=1280, log_every_frames=256), run, resume=ck, progress=False)
    rows = list(csv.DictReader(open(run / "log.csv")))
    assert [int(r["frames"]) for r in rows] == [256, 512, 640, 768, 1024, 1280]
    assert all(r["fps"] != "" and float(r["fps"]) > 0 for r in rows)


def test_log_lines_never_land_on_the_progress_bar_line(tmp_path, capsys):
    """With the bar on, every log line starts a line of its own (tqdm clears the bar, writes
    the line, draws the bar again), and the handlers are restored afterwards."""
    import logging
    import re
    import sys

    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)  # the console handler basicConfig would install
    handler.setFormatter(logging.Formatter("LOGLINE %(name)s %(message)s"))
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        train(tiny(total_frames=1024, log_every_frames=256), tmp_path / "run", progress=True)
        assert handler in root.handlers and logging.lastResort is not None
        assert type(logging.lastResort).__name__ == "_StderrHandler"
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    err = capsys.readouterr().err
    pieces = re.split(r"[\r\n]", err)
    logged = [p for p in pieces if "LOGLINE" in p]
    assert sum("LOGLINE dmc frames" in p for p in logged) == 4, err
    assert all(p.startswith("LOGLINE") for p in logged), [p for p in logged if not p.startswith("LOGLINE")]
    assert "it/s" in err or "fr/s" in err  # the bar was drawn


def test_training_evaluation_writes_eval_rows_and_keeps_a_few_hand_records(tmp_path):
    """eval_every: rows in eval.csv; eval_replays: the hands of that many evaluation deals saved as
    hand records that replay to their stored scores (issue 15)."""
    from ddz_env import record

    run = tmp_path / "run"
    train(tiny(total_frames=512, eval_every=512, eval_deals=2, eval_opponents=["random"], eval_replays=1), run,
          progress=False)
    rows = list(csv.DictReader(open(run / "eval.csv")))
    assert {(r["opponent"], r["mode"]) for r in rows} >= {("random", "fixed-landlord")}
    folders = sorted((run / "replays").iterdir())
    assert folders and all(f.name.startswith("000000000512-random-") for f in folders)
    for f in folders:
        files = sorted(f.glob("*.json"))
        assert len(files) == (6 if f.name.endswith("duplicate") else 2)  # 1 deal in every seating
        for p in files:
            rec = record.load(p)
            assert record.replay(rec).scores.tolist() == rec["result"]["scores"]
            assert rec["meta"]["deal"] == 0


def test_a_killed_evaluation_process_is_replaced(tmp_path, caplog):
    """Issue 22 (same class as 2): the evaluation worker SIGKILLed made the next submit raise
    BrokenProcessPool and end the training; now a warning, a fresh worker, and its rows."""
    import os
    import signal
    import time

    from agents.dmc.learner.periodic_eval import TrainingEvaluator
    from agents.dmc.learner.trainer import make_model

    cfg = tiny(eval_every=512, eval_deals=1, eval_opponents=["random"], eval_replays=0)
    ev = TrainingEvaluator(cfg, tmp_path, None)
    model = make_model(cfg)
    try:
        ev.submit(model, 512, 1.0)
        assert len(ev.poll(wait=True)) >= 1
        for pid in list(ev.pool._processes):
            os.kill(pid, signal.SIGKILL)
        time.sleep(1.0)
        assert ev.poll(wait=True) == []  # (nothing was in flight)
        with caplog.at_level("WARNING", logger="dmc"):
            ev.submit(model, 1024, 2.0)
            rows = ev.poll(wait=True)
        assert rows and all(r["frames"] == 1024 for r in rows)
        assert "the evaluation process died; starting a new one" in caplog.text
    finally:
        ev.close(wait=True)
    assert [r["frames"] for r in csv.DictReader(open(tmp_path / "eval.csv"))].count("1024") == len(rows)


# ---------------------------------------------------------------------------------------------- issue 22: faults
def _fills_after(real_open, writes_ok: int, name: str = "checkpoint"):
    """``open`` whose files opened for writing, with ``name`` in their name, fail as a full disk from
    the ``writes_ok + 1``-th on (part of the data written first, as a disk that fills does)."""
    import errno

    count = [0]

    def fake(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        if ("w" not in mode and "a" not in mode) or name not in os.path.basename(os.fspath(path)):
            return f
        count[0] += 1
        if count[0] <= writes_ok:
            return f
        write = f.write

        def full(data):
            write(data[:64])
            raise OSError(errno.ENOSPC, "No space left on device")
        f.write = full
        return f
    return fake


def test_a_full_disk_at_a_checkpoint_is_one_error_line_and_the_previous_checkpoint_resumes(tmp_path, capsys,
                                                                                           monkeypatch):
    """Issue 22 (4): torch's '[enforce fail at inline_container.cc] unexpected pos' traceback and a
    partial checkpoint.tmp; now one error line saying the previous checkpoint is intact and how to
    --resume, no temporary file, and the resume continues from it."""
    import builtins

    from agents.cli import train as train_cli
    from ddz_env import files

    run = tmp_path / "run"
    sets = [x for k, v in {**TINY, "total_frames": 512, "checkpoint_every": 256}.items() for x in ("--set", f"{k}={v}")]
    monkeypatch.setattr(files, "open", _fills_after(builtins.open, 1), raising=False)  # the 2nd checkpoint fails
    assert train_cli.main(["--config", str(SMOKE), *sets, "--run-dir", str(run), "--no-progress"]) == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "error:" in x]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "No space left on device" in lines[0] and f"{run / 'checkpoint.pt'} still holds the previous checkpoint, intact" in lines[0]
    assert f"--resume {run}" in lines[0]
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".") or p.suffix == ".tmp") == []
    assert load_checkpoint(run)["frames"] == 256
    monkeypatch.undo()
    assert train_cli.main(["--resume", str(run), "--no-progress"]) == 0
    assert load_checkpoint(run)["frames"] == 512


def test_a_checkpoint_that_cannot_be_written_says_so_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    import builtins

    from agents.dmc import checkpoint
    from agents.dmc.checkpoint import CheckpointWriteError
    from ddz_env import files

    path = _untrained_checkpoint(tmp_path / "checkpoint.pt")
    before = path.read_bytes()
    ck = torch.load(path, weights_only=True)
    monkeypatch.setattr(files, "open", _fills_after(builtins.open, 0, name=""), raising=False)
    with pytest.raises(CheckpointWriteError, match="No space left on device.*still holds the previous checkpoint"):
        checkpoint.save_checkpoint(ck, path)
    with pytest.raises(CheckpointWriteError, match=r"no file was left at .*other\.pt.*free space.*--resume"):
        checkpoint.save_checkpoint(ck, tmp_path / "other.pt")
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]


def test_train_cli_checks_the_run_folder_can_be_written_before_training(tmp_path, capsys, monkeypatch):
    """Issue 22 (4): a read-only --run-dir was a raw OSError traceback; now one error line, exit 2,
    before anything starts (the read-only mount is played by the write probe failing: root passes
    every permission check)."""
    import errno
    import tempfile

    from agents.cli import train as train_cli

    started = []
    monkeypatch.setattr("agents.dmc.learner.trainer.train", lambda *a, **k: started.append(1))
    (tmp_path / "afile").write_text("x")
    for run_dir, msg in ((tmp_path / "afile", "it is a file"), (tmp_path / "afile" / "run", "is a file, so no folder")):
        assert train_cli.main(["--config", "smoke", "--run-dir", str(run_dir), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("error:") == 1 and "Traceback" not in err

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    assert train_cli.main(["--config", "smoke", "--run-dir", str(tmp_path / "ro" / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Read-only file system" in err and "give a writable --run-dir" in err and err.count("error:") == 1
    assert not started and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_full_disk_while_logging_is_one_error_line(tmp_path, capsys, monkeypatch):
    """The same fault in the other writers of the run folder (a log.csv row here): one error line
    that says the last checkpoint is intact and how to resume, not a traceback."""
    import errno

    from agents.cli import train as train_cli
    from agents.dmc.learner import runlog

    run = tmp_path / "run"
    sets = [x for k, v in {**TINY, "total_frames": 768, "checkpoint_every": 256}.items() for x in ("--set", f"{k}={v}")]
    write = runlog.RunLog.write

    def fills(self, *args, **kwargs):
        if (run / "checkpoint.pt").exists():
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(self, *args, **kwargs)
    monkeypatch.setattr(runlog.RunLog, "write", fills)
    assert train_cli.main(["--config", str(SMOKE), *sets, "--run-dir", str(run), "--no-progress"]) == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "error:" in x]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "No space left on device" in lines[0] and f"the last checkpoint {run / 'checkpoint.pt'} is intact" in lines[0]
    assert f"--resume {run}" in lines[0] and load_checkpoint(run)["frames"] == 256


def test_eval_at_start_evaluates_the_untrained_weights_once_and_the_end_says_the_curve_in_words(tmp_path, caplog):
    """Issue 47, item 1: the demo's curve starts where learning starts (frames 0, the untrained weights), a
    resumed run does not evaluate frames 0 again, and the end of the run prints the evaluation panel's points."""
    from agents.dmc.learner.periodic_eval import eval_summary

    run = tmp_path / "run"
    with caplog.at_level("INFO", logger="dmc"):
        train(tiny(total_frames=512, eval_every=512, eval_at_start=True, eval_deals=1, eval_opponents=["random"]),
              run, progress=False)
    rows = list(csv.DictReader(open(run / "eval.csv")))
    assert sorted({int(r["frames"]) for r in rows}) == [0, 512]
    assert {r["time_s"] for r in rows if r["frames"] == "0"} == {"0.0"}
    lines = eval_summary(run / "eval.csv")
    assert lines and all(re.match(r"vs random \(\S+, 1 deals\): [+-]\d+\.\d\d at 0 -> [+-]\d+\.\d\d at 512(, last \[.*\])?$",
                                  line) for line in lines), lines
    assert all(f"evaluations {line}" in caplog.text for line in lines)
    # resumed to more frames: frames 0 keeps its one row set
    ck = load_checkpoint(run / "checkpoint.pt")
    train(config_from_dict(ck["config"], {"total_frames": 1024}), run, resume=ck, progress=False)
    rows = list(csv.DictReader(open(run / "eval.csv")))
    zero = [r for r in rows if r["frames"] == "0"]
    assert len(zero) == len({(r["opponent"], r["mode"]) for r in zero}) and sorted({int(r["frames"]) for r in rows}) == [0, 512, 1024]


def test_eval_summary_reads_each_opponent_in_frame_order(tmp_path):
    from agents.dmc.learner.periodic_eval import EVAL_FIELDS, eval_summary

    with open(tmp_path / "eval.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
        w.writeheader()
        for frames, score in ((200_000, -0.7), (0, -5.3), (1_500_000, 0.25)):
            w.writerow({**{k: "" for k in EVAL_FIELDS}, "frames": frames, "opponent": "rule", "mode": "duplicate",
                        "deals": 100, "score": score, "ci_lo": score - 0.5, "ci_hi": score + 0.5})
    assert eval_summary(tmp_path / "eval.csv") == [
        "vs rule (duplicate, 100 deals): -5.30 at 0 -> -0.70 at 200k -> +0.25 at 1.5M, last [-0.25, +0.75]"]
    assert eval_summary(tmp_path / "missing.csv") == []
