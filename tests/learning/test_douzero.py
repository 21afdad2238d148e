"""``douzero:DIR`` agents (issue 21): DouZero's encoding, network and checkpoints, written here.

The tests that compare with DouZero itself need the ``douzero`` package (DouZero's engine,
``get_obs`` and model classes); they skip, naming it, where it is not installed
(``pip install 'ddz-env[douzero]'``, which ``make test`` installs). The others need torch only.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import RandomAgent, RuleAgent, evaluate, load  # noqa: E402
from agents.evaluation.arena import Job, make_deal, play_hands  # noqa: E402
from agents.base import Decisions, illegal_choices, public_facts  # noqa: E402
from agents.douzero.agent import DouZeroAgent, check_spec, find_files  # noqa: E402
from agents.douzero.encoding import (  # noqa: E402
    MOVE54, STATE_DIM, candidate_rows, encode_states, from_douzero, from_douzero_string, to_douzero,
)
from agents.douzero.model import DouZeroNet  # noqa: E402
from ddz_env.cards import MAX_COUNTS, parse_cards  # noqa: E402
from ddz_env.game import Game  # noqa: E402
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES, move_id  # noqa: E402
from ddz_env.observation import observe_game  # noqa: E402

POSITIONS = ("landlord", "landlord_down", "landlord_up")  # DouZero's name of role 0, 1, 2


# ------------------------------------------------------------------------------------------ helpers
def douzero_models():
    """DouZero's ``douzero/dmc/models.py``, its model classes. Imported from its file: the package
    ``douzero.dmc`` also imports DouZero's trainer, which needs GitPython; the models need torch only."""
    pytest.importorskip("douzero", reason="the douzero package is not installed (pip install 'ddz-env[douzero]')")
    import douzero

    path = Path(douzero.__file__).parent / "dmc" / "models.py"
    spec = importlib.util.spec_from_file_location("douzero_dmc_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mixed_hands(n: int, seed: int):
    """``n`` deals played by random and rule agents, mixed per seat, fixed landlord (rules douzero):
    ``[(deal, [(seat, action), ...]), ...]``."""
    rng = np.random.default_rng(seed)
    jobs = [Job(i, 0, make_deal(seed, i), tuple(int(x) for x in rng.integers(0, 2, 3))) for i in range(n)]
    actions: dict[int, list] = {}
    play_hands([RandomAgent(seed), RuleAgent()], jobs, seed, rules="douzero",
               on_history=lambda job, acts, row: actions.__setitem__(job.index, list(acts)))
    return [(j.deal, actions[j.index]) for j in jobs]


def replay(deal, actions, visit):
    """Replay a hand on this project's ``Game`` and on DouZero's own engine side by side; at each decision
    call ``visit(planes, legal ids, role, DouZero's infoset)``, then play the action in both."""
    from douzero.env.env import DummyAgent
    from douzero.env.game import GameEnv

    L = deal.first_bidder
    game = Game(deal.hands, deal.bottom, deal.first_bidder, rules="douzero")
    players = {p: DummyAgent(p) for p in POSITIONS}
    env = GameEnv(players)
    env.card_play_init({"landlord": to_douzero(deal.hands[L] + deal.bottom),
                        "landlord_down": to_douzero(deal.hands[(L + 1) % 3]),
                        "landlord_up": to_douzero(deal.hands[(L + 2) % 3]),
                        "three_landlord_cards": to_douzero(deal.bottom)})
    for seat, action in actions:
        role = (seat - L) % 3
        assert env.acting_player_position == POSITIONS[role]
        visit(observe_game(game, seat), game.legal_actions(), role, env.game_infoset)
        players[POSITIONS[role]].set_action(list(dz_move(action)))  # DouZero asserts it is legal
        env.step()
        game.step(action, seat=seat)
    assert game.is_over and env.game_over
    winner = env.get_winner()
    assert (winner == "landlord") == (game.winner == L)


def decisions_of(planes: list, legals: list) -> Decisions:
    """A batch of decisions (as the arena gives an agent) from planes and legal id lists."""
    planes = np.stack(planes).astype(np.int8)
    starts = np.zeros(len(legals) + 1, np.int64)
    starts[1:] = np.cumsum([len(x) for x in legals])
    phase, role = public_facts(planes)
    n = len(legals)
    return Decisions(planes, np.concatenate(legals).astype(np.int64), starts, phase, role, np.full(n, -1, np.int64),
                     np.arange(n, dtype=np.int64))


def douzero_index(legal_actions) -> dict:
    """DouZero's legal moves (sorted card lists, as its engine gives them) -> their row in its ``x_batch``."""
    return {tuple(m): k for k, m in enumerate(legal_actions)}


_DZ_MOVE: dict[int, tuple] = {}


def dz_move(m: int) -> tuple:
    """DouZero's card tuple of move id ``m`` (cached: the replays ask for the same moves often)."""
    t = _DZ_MOVE.get(m)
    if t is None:
        t = _DZ_MOVE[m] = tuple(to_douzero(MOVE_COUNTS[m]))
    return t


def write_folder(folder: Path, models: dict) -> Path:
    """DouZero's three files from modules ``{position: module}``, saved as DouZero's trainer saves them."""
    folder.mkdir(parents=True, exist_ok=True)
    for p, m in models.items():
        torch.save(m.state_dict(), folder / f"{p}.ckpt")
    return folder


@pytest.fixture(scope="module")
def random_douzero_folder(tmp_path_factory):
    """A checkpoint folder written by DouZero's own model classes, seeded random weights."""
    mod = douzero_models()
    torch.manual_seed(21)
    model = mod.Model(device="cpu")
    folder = write_folder(tmp_path_factory.mktemp("dz") / "seeded", {p: model.get_model(p) for p in POSITIONS})
    return folder, model


def own_folder(tmp_path: Path) -> Path:
    """A folder of this project's :class:`DouZeroNet` with seeded random weights (no douzero package needed)."""
    torch.manual_seed(5)
    return write_folder(tmp_path / "own", {"landlord": DouZeroNet("landlord"), "landlord_up": DouZeroNet("farmer"),
                                           "landlord_down": DouZeroNet("farmer")})


# ------------------------------------------------------------------------------------------ cards
def test_cards_convert_both_ways():
    assert to_douzero("3TJQKA2BR") == [3, 10, 11, 12, 13, 14, 17, 20, 30]
    assert to_douzero("TTJB") == [10, 10, 11, 20]
    assert to_douzero(parse_cards("2233")) == [3, 3, 17, 17]
    assert from_douzero_string([30, 20, 17, 14, 10, 3, 3]) == "33TA2BR"
    for m in range(1, NUM_MOVES, 97):  # every kind of move survives the round trip
        assert (from_douzero(to_douzero(MOVE_COUNTS[m])) == MOVE_COUNTS[m]).all()
    assert (from_douzero(to_douzero(MAX_COUNTS)) == MAX_COUNTS).all()
    with pytest.raises(ValueError, match="bad DouZero card 15"):
        from_douzero([3, 15])
    with pytest.raises(ValueError, match="2 cards of rank 'R'"):
        from_douzero([30, 30])


def test_move_cells_are_douzero_card_vectors():
    """54 cells: rank-major thermometer of 3..2 (four rows each), then the black and the red joker."""
    row = MOVE54[move_id("333")]
    assert row[:3].tolist() == [1, 1, 1] and row[3:].sum() == 0
    row = MOVE54[move_id("2BR"[1:])]  # the rocket
    assert row[52] == 1 and row[53] == 1 and row[:52].sum() == 0
    assert MOVE54[0].sum() == 0  # the pass
    assert (MOVE54.sum(axis=1) == MOVE_COUNTS.sum(axis=1)).all()


# ------------------------------------------------------------------------------------------ encoding
def test_encoding_equals_douzero_get_obs_on_500_mixed_hands():
    """Every decision of 500 hands (random and rule agents mixed), replayed on DouZero's own engine: the state
    features, the history z and every candidate row equal DouZero's ``get_obs`` exactly, and each of this
    project's legal moves is one of DouZero's."""
    pytest.importorskip("douzero", reason="the douzero package is not installed (pip install 'ddz-env[douzero]')")
    from douzero.env.env import get_obs

    planes, legals, roles, obs = [], [], [], []

    def visit(p, legal, role, infoset):
        planes.append(p)
        legals.append(legal)
        roles.append(role)
        o = get_obs(infoset)
        obs.append((o["x_batch"], o["z"], douzero_index(o["legal_actions"])))

    hands = mixed_hands(500, seed=21)
    for deal, actions in hands:
        replay(deal, actions, visit)
    d = decisions_of(planes, legals)
    assert (d.role == np.array(roles)).all()  # the role the agent reads from the planes is the seat's
    n_rows = n_superset = 0
    for kind, sel in (("landlord", d.role == 0), ("farmer", d.role != 0)):
        idx = np.flatnonzero(sel)
        state, z = encode_states(d.observation[idx], d.role[idx])  # one batched call per kind, as the agent does
        assert state.shape == (idx.size, STATE_DIM[kind])
        for k, i in enumerate(idx.tolist()):
            x_batch, z_dz, index = obs[i]
            assert (z[k] == z_dz).all(), f"decision {i}: z differs"
            legal = d.legal(i)
            rows = [index[dz_move(m)] for m in legal]  # KeyError: not a DouZero move
            assert (candidate_rows(state[k], legal) == x_batch[rows]).all(), f"decision {i}: x rows differ"
            n_rows += len(rows)
            n_superset += len(index) > len(legal)
    assert len(planes) > 15_000 and n_rows > 100_000  # (500 hands: about 20,000 decisions, 140,000 rows)
    assert 0 < n_superset < len(planes)  # DouZero's set is sometimes larger (R11-R13 are stricter), never smaller


# ------------------------------------------------------------------------------------------ the agent
def test_seeded_douzero_checkpoint_loads_and_the_agent_chooses_what_douzero_chooses(random_douzero_folder):
    """DouZero's own model classes, seeded random weights, saved as DouZero saves them: the agent's values
    equal DouZero's forward on DouZero's own get_obs rows, and its choice (one batched call over all the
    decisions) is DouZero's best among this project's legal moves, at every decision."""
    from douzero.env.env import get_obs

    folder, model = random_douzero_folder
    agent = load(f"douzero:{folder}")
    assert isinstance(agent, DouZeroAgent)
    planes, legals, want, want_values, gaps = [], [], [], [], []

    def visit(p, legal, role, infoset):
        if len(legal) < 2:
            return
        o = get_obs(infoset)
        with torch.no_grad():
            v = model.forward(POSITIONS[role], torch.from_numpy(o["z_batch"]), torch.from_numpy(o["x_batch"]),
                              training=True)["values"][:, 0].numpy()
        index = douzero_index(o["legal_actions"])
        v = v[[index[dz_move(m)] for m in legal]]
        planes.append(p)
        legals.append(legal)
        want.append(legal[int(np.argmax(v))])
        want_values.append(v)
        top = np.sort(v)
        gaps.append(top[-1] - top[-2])

    for deal, actions in mixed_hands(40, seed=5):
        replay(deal, actions, visit)
    d = decisions_of(planes, legals)
    got = agent.act_batch(d)
    values = agent.values(d)
    for i in range(len(d)):
        np.testing.assert_allclose(values[i], want_values[i], rtol=0, atol=1e-6)
    assert len(d) > 1000
    agree = got == np.array(want)
    # the two compute the same sums in another order (float32): only a near-tie could flip, and none does here
    assert agree.all(), f"{(~agree).sum()} of {len(d)} differ (top-2 gaps there: {np.array(gaps)[~agree]})"
    # one decision at a time gives the same choices as the batch
    one = np.array([agent.act_batch(d.take(np.array([i])))[0] for i in range(0, len(d), 37)])
    assert (one == got[::37]).all()


def _linear_folder(tmp_path: Path, weights54: np.ndarray) -> Path:
    """Networks whose value is a monotone function of ``weights54 . candidate cards`` (every position)."""
    nets = {"landlord": DouZeroNet("landlord"), "landlord_up": DouZeroNet("farmer"),
            "landlord_down": DouZeroNet("farmer")}
    with torch.no_grad():
        for net in nets.values():
            for prm in net.parameters():
                prm.zero_()
            net.dense1.weight[0, -54:] = torch.from_numpy(weights54.astype(np.float32))
            net.dense1.bias[0] = 100.0
            for layer in (net.dense2, net.dense3, net.dense4, net.dense5, net.dense6):
                layer.weight[0, 0] = 1.0
    return write_folder(tmp_path / "linear", nets)


def test_the_agent_never_returns_a_move_only_douzero_allows(tmp_path):
    """The landlord holds 3333 and 5555; the networks prefer 3s and 5s above all. DouZero's rules allow
    333355 (four with two singles taken from the bomb 5555); R13 does not. The agent plays 33355 (trio + pair),
    the best of the legal moves."""
    w = -np.ones(54)
    w[0:4] = 1  # the four 3s
    w[8:10] = 1  # two 5s
    agent = DouZeroAgent.from_dir(_linear_folder(tmp_path, w))
    landlord = parse_cards("3333555547689JQKA22B")  # its 17 cards and the bottom 468
    rest = np.repeat(np.arange(15), MAX_COUNTS - landlord)
    hands = [parse_cards("3333555579JQKA22B"), np.bincount(rest[:17], minlength=15),
             np.bincount(rest[17:], minlength=15)]
    game = Game(hands, parse_cards("468"), 0, rules="douzero")  # seat 0 landlord, to lead
    assert (game.hands[0] == landlord).all()
    legal = game.legal_actions()
    assert move_id("33355") in legal
    assert move_id("333355") not in legal  # four with two singles, the kickers split from the bomb 5555 (R13)
    d = decisions_of([observe_game(game, 0)], [legal])
    assert int(agent.act_batch(d)[0]) == move_id("33355")
    try:
        import douzero.env.move_generator as mg
    except ImportError:
        return
    douzero_moves = [sorted(m) for m in mg.MovesGener(to_douzero(landlord)).gen_moves()]
    assert [3, 3, 3, 3, 5, 5] in douzero_moves  # the move DouZero's rules would score highest


def test_an_illegal_id_is_never_returned_in_any_phase(tmp_path):
    """Rulebook hands (bidding and doubling: the bidder's decisions) and fixed-landlord hands: every action the
    agent returns is legal (the arena checks each one and raises otherwise)."""
    folder = own_folder(tmp_path)
    for mode, bidder in (("duplicate", "random"), ("fixed-landlord", "rule")):
        res = evaluate(f"douzero:{folder}?bidder={bidder}", "rule", deals=12, seed=3, mode=mode)
        assert res["hands"] == 12 * (6 if mode == "duplicate" else 2)
    agent = load(f"douzero:{folder}")
    planes, legals = [], []
    for i in range(30):
        g = Game.deal(i)
        while not g.is_over:
            planes.append(observe_game(g, g.current_player))
            legals.append(g.legal_actions())
            g.step(int(np.random.default_rng(i + len(planes)).choice(g.legal_actions())))
    d = decisions_of(planes, legals)
    assert set(d.phase.tolist()) >= {0, 1, 3}
    assert illegal_choices(d, agent.act_batch(d)).size == 0


def test_the_bidder_makes_the_bid_and_double_decisions(tmp_path):
    folder = own_folder(tmp_path)
    planes, legals = [], []
    for i in range(40):
        g = Game.deal(100 + i)
        while g.phase.name in ("BID", "DOUBLE", "REDOUBLE"):
            planes.append(observe_game(g, g.current_player))
            legals.append(g.legal_actions())
            g.step(int(legals[-1][-1]))
    d = decisions_of(planes, legals)
    rule = load(f"douzero:{folder}")  # default bidder: rule
    assert (rule.act_batch(d) == RuleAgent().act_batch(d)).all()
    rnd = load(f"douzero:{folder}?bidder=random")
    assert repr(rnd) == f"DouZeroAgent('douzero:{folder}?bidder=random', bidder='random')"
    ref = RandomAgent(0)
    streams, seeds = np.arange(len(d)), np.arange(len(d), dtype=np.uint64) + 7
    rnd.begin_hands(streams, seeds)  # forwarded to the bidder
    ref.begin_hands(streams, seeds)
    assert (rnd.act_batch(d) == ref.act_batch(d)).all()


# ------------------------------------------------------------------------------------------ specs and files
def test_spec_syntax():
    assert check_spec("douzero:baselines/douzero_ADP") == ("baselines/douzero_ADP", {})
    assert check_spec("douzero:b/x?bidder=runs/r1") == ("b/x", {"bidder": "runs/r1"})
    for bad, msg in (("douzero:", "no folder"), ("douzero:x?bider=rule", "the one option is '\\?bidder=SPEC'"),
                     ("douzero:x?bidder=", "the one option")):
        with pytest.raises(ValueError, match=msg):
            check_spec(bad)


def test_bad_bidders_are_refused(tmp_path):
    folder = own_folder(tmp_path)
    with pytest.raises(ValueError, match="a DouZero agent does not bid"):
        load(f"douzero:{folder}?bidder=douzero:{folder}")
    with pytest.raises(ValueError, match="unknown agent 'rul'"):
        load(f"douzero:{folder}?bidder=rul")


def test_folder_errors_name_the_file_and_the_problem(tmp_path):
    folder = own_folder(tmp_path)
    assert load(f"douzero:{folder}").files["landlord_up"] == str(folder / "landlord_up.ckpt")
    with pytest.raises(FileNotFoundError, match="no such folder"):
        load(f"douzero:{tmp_path / 'nowhere'}")
    # missing
    (folder / "landlord_down.ckpt").rename(tmp_path / "kept.ckpt")
    with pytest.raises(FileNotFoundError, match="lacks landlord_down.ckpt"):
        load(f"douzero:{folder}")
    (tmp_path / "kept.ckpt").rename(folder / "landlord_down.ckpt")
    # truncated
    data = (folder / "landlord.ckpt").read_bytes()
    (folder / "landlord.ckpt").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="landlord.ckpt' is corrupt or not a DouZero checkpoint: torch.load failed"):
        load(f"douzero:{folder}")
    # foreign: text, a ddz-env checkpoint, a landlord network where a farmer's belongs, another network
    (folder / "landlord.ckpt").write_text("not a checkpoint")
    with pytest.raises(ValueError, match="landlord.ckpt' is corrupt"):
        load(f"douzero:{folder}")
    torch.save({"agent": "dmc", "model": {}}, folder / "landlord.ckpt")
    with pytest.raises(ValueError, match="is a ddz-env checkpoint"):
        load(f"douzero:{folder}")
    torch.save(DouZeroNet("landlord").state_dict(), folder / "landlord.ckpt")
    torch.save(DouZeroNet("landlord").state_dict(), folder / "landlord_up.ckpt")
    with pytest.raises(ValueError, match=r"landlord_up.ckpt': dense1.weight has shape \(512, 501\).*landlord network"):
        load(f"douzero:{folder}")
    torch.save(torch.nn.Linear(3, 2).state_dict(), folder / "landlord_up.ckpt")
    with pytest.raises(ValueError, match="landlord_up.ckpt' is not a DouZero farmer network: it lacks lstm"):
        load(f"douzero:{folder}")
    torch.save([1, 2], folder / "landlord_up.ckpt")
    with pytest.raises(ValueError, match="is not a DouZero state dict"):
        load(f"douzero:{folder}")
    bad = DouZeroNet("farmer").state_dict()
    bad["dense3.bias"][0] = float("nan")
    torch.save(bad, folder / "landlord_up.ckpt")
    with pytest.raises(ValueError, match="dense3.bias holds non-finite"):
        load(f"douzero:{folder}")


def test_a_douzero_run_folder_loads_its_latest_complete_weights(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    torch.manual_seed(1)
    nets = {p: DouZeroNet("landlord" if p == "landlord" else "farmer") for p in POSITIONS}
    for frames in (3200, 6400):
        for p, net in nets.items():
            torch.save(net.state_dict(), run / f"{p}_weights_{frames}.ckpt")
    torch.save(nets["landlord"].state_dict(), run / "landlord_weights_9600.ckpt")  # incomplete: ignored
    files = find_files(run)
    assert files["landlord_down"] == str(run / "landlord_down_weights_6400.ckpt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="holds neither landlord.ckpt"):
        find_files(empty)


def test_evaluate_cli_and_help_name_the_spec(tmp_path, capsys):
    from agents.cli.evaluate import main

    folder = own_folder(tmp_path)
    assert main(["--a", f"douzero:{folder}", "--b", "random", "--deals", "3", "--mode", "fixed-landlord",
                 "--no-progress"]) == 0
    assert "WP as landlord" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "douzero:DIR" in out and "bidder" in out


def test_web_seats_douzero_only_where_the_operator_configured_it(tmp_path):
    pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
    pytest.importorskip("uvicorn", reason="the web extra (fastapi, uvicorn) is not installed")
    from webserver import Server

    from agents.play.web.server import agent_options, create_app, parse_args

    folder = own_folder(tmp_path)
    args = parse_args(["--agent", f"dz=douzero:{folder}?bidder=random"])
    assert agent_options(args.agent) == {"dz": f"douzero:{folder}?bidder=random"}
    server = Server(agents=agent_options(args.agent))
    try:
        status, r = server.call("GET", "/api/agents")
        assert status == 200 and "dz" in r["agents"]
        status, r = server.watch({"players": ["dz", "rule", "dz"], "seed": 1, "deal": 2})
        assert status == 200 and r["record"]["players"] == ["dz", "rule", "dz"]
        for spec in (f"douzero:{folder}", "douzero:x"):  # a request never names a folder
            status, r = server.call("POST", "/api/games", {"seat": 0, "vs": [spec, "rule"]})
            assert status == 400 and "unknown agent" in r["error"], r
    finally:
        server.stop()
    for bad, msg in ((["dz"], "NAME=SPEC"), (["dz=rule", "dz=random"], "given twice")):
        with pytest.raises(ValueError, match=msg):
            agent_options(bad)
    with pytest.raises(ValueError, match="a plain word"):
        create_app(agents={"a/b": "rule"})
    with pytest.raises(ValueError, match="already a registered agent"):
        create_app(agents={"rule": f"douzero:{folder}"})
    with pytest.raises(ValueError, match="--agent dz=douzero:nowhere: .*no such folder"):
        create_app(agents={"dz": "douzero:nowhere"})


def test_no_module_of_the_agent_imports_the_douzero_package():
    """The ``douzero`` package is for tests and benchmarks only; the encoding needs numpy alone."""
    from common import ROOT, imports

    for path in sorted((ROOT / "agents").rglob("*.py")):
        bad = sorted(m for m in imports(path) if m == "douzero" or m.startswith("douzero."))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
    enc = imports(ROOT / "agents" / "douzero" / "encoding.py")
    assert not any(m == "torch" or m.startswith("torch.") for m in enc)
    assert "ddz_env.observation.CH_HISTORY" in enc  # (the checker sees this file's imports)


def test_bench_vs_douzero_head_to_head_figures(tmp_path):
    """The benchmark's match: WP (per deal, both ways) agrees with evaluate's fixed-landlord WP, ADP with its
    score per hand, each with an interval around it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_vs_douzero import head_to_head, table

    folder = own_folder(tmp_path)
    h = head_to_head("random", f"douzero:{folder}", deals=12, seed=4, workers=1)
    ref = evaluate("random", f"douzero:{folder}", deals=12, seed=4, mode="fixed-landlord")
    assert h["WP"] == pytest.approx(ref["A"]["overall"]["WP"]) and h["ADP"] == pytest.approx(ref["A"]["mean_score"])
    assert h["WP_ci95"][0] < h["WP"] < h["WP_ci95"][1] and h["ADP_ci95"][0] < h["ADP"] < h["ADP_ci95"][1]
    ours = {"frames": 9000, "train_s": 60.0, "fps": 150.0, "cpu_s": 118.0, "load_before": 1.0, "load_after": 2.0}
    text = table({"minutes": 1, "deals": 12, "seed": 4, "rows": [{"label": "x", "frames": 3200, "match": h}],
                  "douzero": {"frames": 3200, "fps": 50.0, "actors": 2, "threads": 1, "objective": "wp", "cpu_s": 119.0,
                              "load_before": 0.5, "load_after": 2.5},
                  "ours_douzero": ours, "ours_default": {**ours, "frames": 20000}})
    assert f"{h['WP']:.3f} [{h['WP_ci95'][0]:.3f}, {h['WP_ci95'][1]:.3f}]" in text
    assert "119 CPU-s" in text and "ours_default: 20,000 frames in 60 s (150 frames/s, 118 CPU-s" in text
