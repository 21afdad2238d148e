"""The move-scoring policy (agents/integrations/move_policy.py): masked logits from the legal moves only, the
same choices as the DMC agent it starts from, its export format seated by ``agents.load``, and one-line
errors for files it must not act on."""
from __future__ import annotations

import numpy as np
import pytest

import sys

from common import ROOT, needs_torch

pytestmark = needs_torch

from ddz_env.actions import NUM_ACTIONS  # noqa: E402
from ddz_env.readers import read_status  # noqa: E402
from ddz_env.vector import VectorDouDizhu  # noqa: E402


def positions(tables: int = 64, steps: int = 50, seed: int = 0):
    """Decisions of every phase: ``(Decisions, dense bool masks)`` of random hands, step by step."""
    from agents.base import Decisions

    env = VectorDouDizhu(tables, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        d = Decisions.of_env(env)
        yield d, env.action_masks().astype(bool)
        env.step(env.random_actions(rng))


@pytest.fixture(scope="module")
def torch1():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def from_pretrained(torch1):
    from agents.integrations.move_policy import MoveScoringPolicy

    return MoveScoringPolicy.from_dmc("pretrained")


def test_network_of_each_row_is_the_status_planes_phase_and_role(torch1):
    from agents.integrations.move_policy import net_of_planes

    seen = set()
    for d, _ in positions(32, 40, seed=3):
        st = read_status(d.observation)
        want = np.where(st.phase == 3, st.role, 3)
        got = net_of_planes(torch1.from_numpy(d.observation.reshape(len(d), -1))).numpy()
        assert np.array_equal(got, want)
        seen.update(want.tolist())
    assert seen == {0, 1, 2, 3}


def test_started_from_pretrained_it_chooses_what_the_dmc_agent_chooses(from_pretrained, torch1):
    """Every phase, thousands of decisions: the greedy compact path, the dense logits' argmax and the DMC
    agent agree move for move; logits are Q / temperature."""
    import agents
    from agents.integrations.move_policy import MoveScoringAgent

    dmc = agents.load("pretrained")
    agent = MoveScoringAgent(from_pretrained)
    n = 0
    for d, mask in positions(64, 50, seed=1):
        want = dmc.act_batch(d)
        assert np.array_equal(agent.act_batch(d), want)
        with torch1.no_grad():
            logits, value = from_pretrained(torch1.from_numpy(d.observation), torch1.from_numpy(mask))
        assert np.array_equal(logits.argmax(1).numpy(), want)
        assert logits.shape == (len(d), NUM_ACTIONS) and value.shape == (len(d),)
        n += len(d)
    assert n == 64 * 50


def test_logits_fill_every_illegal_id_and_a_row_does_not_depend_on_its_batch(torch1):
    from agents.integrations.move_policy import MoveScoringPolicy

    torch1.manual_seed(0)
    policy = MoveScoringPolicy([64], [32], temperature=0.5)
    d, mask = list(positions(16, 30, seed=2))[-1]
    assert len(set(np.diff(d.legal_starts).tolist())) > 2  # rows of different legal counts batch together
    obs = torch1.from_numpy(d.observation)
    with torch1.no_grad():
        logits, value = policy(obs, torch1.from_numpy(mask))
        finite, _ = policy(obs.float(), torch1.from_numpy(mask.astype(np.float32)), fill=-1e9)
        for i in (0, 7, 15):
            one, v1 = policy(obs[i:i + 1], torch1.from_numpy(mask[i:i + 1]))
            assert torch1.allclose(one[0][mask[i]], logits[i][mask[i]], atol=1e-5)
            assert torch1.allclose(v1, value[i:i + 1])
    m = torch1.from_numpy(mask)
    assert torch1.isneginf(logits[~m]).all() and torch1.isfinite(logits[m]).all()
    assert (finite[~m] == -1e9).all() and torch1.equal(finite[m], logits[m])
    # the value head starts at 0, the trunk does not
    assert torch1.count_nonzero(value) == 0 and logits[m].std() > 0


def test_gradients_reach_the_scoring_nets_and_the_value_head(torch1):
    from agents.integrations.move_policy import MoveScoringPolicy

    torch1.manual_seed(0)
    policy = MoveScoringPolicy([32], [16])
    d, mask = next(iter(positions(8, 1)))  # bidding: the bidding network only
    logits, value = policy(torch1.from_numpy(d.observation), torch1.from_numpy(mask))
    logp = torch1.log_softmax(logits, dim=1)
    (-logp[torch1.arange(len(d)), torch1.from_numpy(d.legal_ids[d.legal_starts[:-1]])].mean()
     + value.pow(2).mean() - value.mean()).backward()
    grads = {k: p.grad for k, p in policy.named_parameters()}
    assert grads["nets.3.head_action.weight"].abs().sum() > 0 and grads["values.3.bias"].abs().sum() > 0
    assert grads["nets.0.head_action.weight"] is None  # no landlord decision in the batch


def test_forward_rejects_bad_masks_and_observations(torch1):
    from agents.integrations.move_policy import MoveScoringPolicy

    policy = MoveScoringPolicy([8], [8])
    d, mask = next(iter(positions(4, 1)))
    obs = torch1.from_numpy(d.observation)
    with pytest.raises(ValueError, match="at least one legal action"):
        policy(obs, torch1.zeros(4, NUM_ACTIONS, dtype=torch1.bool))
    with pytest.raises(ValueError, match=r"\(B, 24648\) for B = 4"):
        policy(obs, torch1.from_numpy(mask[:, :100]))
    with pytest.raises(ValueError, match="1740 cells"):
        policy(obs[:, :28], torch1.from_numpy(mask))
    with pytest.raises(ValueError, match="temperature"):
        MoveScoringPolicy(temperature=0)
    with pytest.raises(ValueError, match="state_layers"):
        MoveScoringPolicy(state_layers=[0])


def test_saved_policy_is_an_agent_that_evaluation_seats(tmp_path, torch1):
    import agents
    from agents.evaluation.protocols import evaluate
    from agents.integrations.move_policy import MoveScoringPolicy, load_policy, save_policy

    torch1.manual_seed(1)
    policy = MoveScoringPolicy([32], [16], hand_after=False, temperature=2.0)
    path = tmp_path / "p.pt"
    save_policy(policy, path, library="test", steps=123, seed=7)
    agent = agents.load(str(path))
    assert agent.name == "movescore:test" and agent.steps == 123
    back = load_policy(path)
    assert back.kwargs == policy.kwargs
    for k, v in policy.state_dict().items():
        assert torch1.equal(back.state_dict()[k], v)
    out = evaluate(str(path), "random", deals=4, seed=5)
    assert out["A"]["seat_hands"] == 4 * 9  # six seatings a deal, A at nine seats of them
    # deterministic: the same figures again
    assert evaluate(str(path), "random", deals=4, seed=5)["A"]["mean_score"] == out["A"]["mean_score"]


def _saved(tmp_path, torch1, **change):
    from agents.integrations.move_policy import MoveScoringPolicy, save_policy

    path = tmp_path / "p.pt"
    save_policy(MoveScoringPolicy([16], [8]), path)
    ck = torch1.load(path, weights_only=True)
    for k, v in change.items():
        if callable(v):
            v(ck)
        else:
            ck[k] = v
    torch1.save(ck, path)
    return str(path)


@pytest.mark.parametrize("change, message", [
    ({"num_actions": 309}, "309 actions; this env has"),
    ({"obs_shape": [30, 4, 15]}, r"observations \[30, 4, 15\]"),
    ({"format_version": 9}, "move-scoring format 9"),
    ({"model_kwargs": {"state_layers": [300000], "head_layers": [8]}}, "bad model arguments: state_layers"),
    ({"model_kwargs": {"state_layers": [32], "head_layers": [8]}}, "weights do not fit the stated layers"),
    ({"model_kwargs": {"state_layers": [16], "head_layers": [8], "code": "x"}}, r"unknown model arguments \['code'\]"),
    ({"nan": lambda ck: ck["model"]["values.0.bias"].fill_(float("nan"))}, "non-finite weights"),
])
def test_a_mismatched_or_damaged_file_is_a_one_line_error_naming_it(tmp_path, torch1, change, message):
    import agents

    path = _saved(tmp_path, torch1, **change)
    with pytest.raises(ValueError, match=message) as e:
        agents.load(path)
    assert path in str(e.value) and "\n" not in str(e.value)


def test_dmc_layouts_it_cannot_take_are_refused(torch1):
    from agents.dmc.model import DMCModel
    from agents.integrations.move_policy import MoveScoringPolicy

    with pytest.raises(ValueError, match="MLP trunks and a q head"):
        MoveScoringPolicy.from_dmc(DMCModel([16], [8], history_lstm=8))
    p = MoveScoringPolicy.from_dmc(DMCModel([16], [8], hand_after=True), temperature=0.5)
    assert p.kwargs == {"state_layers": [16], "head_layers": [8], "hand_after": True, "temperature": 0.5}


def test_a_library_export_is_seated_by_the_league_the_terminal_and_the_web_page(tmp_path, torch1):
    """What every adapter writes (policy.pt) plays where our agents play: a league, ddz-play, ddz-web."""
    from agents.evaluation.league import play_league
    from agents.integrations.move_policy import MoveScoringPolicy, save_policy
    from agents.play.terminal import main as play

    path = tmp_path / "lib.pt"
    save_policy(MoveScoringPolicy([16], [8]), path, library="tianshou")
    league = play_league([str(path), "random"], deals=2, seed=3, workers=1, progress=False)
    assert league.matrix.shape == (2, 2) and np.isfinite(league.matrix[0, 1])
    # ddz-play: a person against it, typing "auto" (the default action) until the hand ends
    out: list[str] = []
    rc = play(["--vs", str(path), "--deals", "1", "--save-dir", str(tmp_path / "hands")], read=lambda _: "auto",
              write=out.append)
    assert rc == 0 and any("lib.pt" in line for line in out) and list((tmp_path / "hands").glob("*.json"))
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from webserver import Server

    s = Server(agents={"lib": str(path)})
    try:
        status, r = s.watch({"players": ["lib", "random", "lib"], "seed": 2, "deal": 1})
        assert status == 200 and r["positions"][-1]["over"]
    finally:
        s.stop()


MARL_RESULTS = ROOT / "benchmarks" / "results" / "marl"


@pytest.mark.parametrize("name", ["sb3", "torchrl", "tianshou", "rllib"])
def test_the_benchmarks_committed_policies_load_and_play_as_their_rows_say(name, torch1):
    """Each library learner's policy from bench_marl_learning.py is committed in the export format: it loads
    through agents.load as that library's, and results.json's row names its file and its training."""
    import json

    import agents
    from agents.evaluation.protocols import evaluate

    path = MARL_RESULTS / f"{name}.pt"
    agent = agents.load(str(path))
    assert agent.name == f"movescore:{name}"
    rows = {r["name"]: r for r in json.loads((MARL_RESULTS / "results.json").read_text())["rows"]}
    assert rows[name]["policy"] == f"benchmarks/results/marl/{name}.pt"
    assert agent.steps == rows[name]["steps"]
    out = evaluate(str(path), "rule", deals=2, seed=11)
    assert out["A"]["seat_hands"] == 2 * 9 and np.isfinite(out["A"]["mean_score"])


def test_gumbel_sampling_is_the_categorical_of_the_logits(torch1):
    """GumbelCategorical (what the libraries' actors draw with) never draws a -inf id and draws the others
    with softmax probabilities (chi-square on 20,000 draws, fixed seed, below 13.82: p > 0.001 at 2 degrees
    of freedom); its log-probs are Categorical's."""
    from agents.integrations.move_policy import GumbelCategorical

    torch1.manual_seed(5)
    inf = float("-inf")
    logits = torch1.tensor([[0.5, inf, 2.0, -1.0], [inf, 0.0, 0.0, inf]])
    fast, ref = GumbelCategorical(logits=logits), torch1.distributions.Categorical(logits=logits)
    draws = fast.sample((20000,))
    assert draws.shape == (20000, 2) and fast.sample().shape == (2,)
    for row in range(2):
        legal = torch1.isfinite(logits[row])
        counts = torch1.bincount(draws[:, row], minlength=4).double()
        assert (counts[~legal] == 0).all()
        expected = ref.probs[row][legal].double() * 20000
        assert float(((counts[legal] - expected) ** 2 / expected).sum()) < 13.82
    x = torch1.tensor([2, 1])
    assert torch1.allclose(fast.log_prob(x), ref.log_prob(x))


def test_the_one_hour_torchrl_policy_is_its_runs_last(torch1):
    """benchmarks/results/marl/torchrl-1h.pt is the policy of the run whose state and eval.csv lie beside it."""
    import json

    import agents

    agent = agents.load(str(MARL_RESULTS / "torchrl-1h.pt"))
    state = json.loads((MARL_RESULTS / "torchrl-1h" / "state.json").read_text())
    rows = (MARL_RESULTS / "torchrl-1h" / "eval.csv").read_text().splitlines()
    assert agent.name == "movescore:torchrl" and agent.steps == state["steps"] == int(rows[-1].split(",")[0])


def test_a_halved_policy_file_is_half_the_bytes_and_plays_as_the_original(tmp_path, from_pretrained, torch1):
    """halve_policy_file (how the benchmark keeps its policies in git): float16 weights on disk, half the
    bytes, the same facts beside them; it loads into float32 parameters and chooses the original's move in
    nearly every decision (fp16 rounding can only flip near-equal moves; measured: 3,200 of 3,200 here)."""
    from agents.integrations.move_policy import MoveScoringAgent, halve_policy_file, load_policy, save_policy
    from agents.loader import read_checkpoint

    full, half = tmp_path / "full.pt", tmp_path / "half.pt"
    save_policy(from_pretrained, full, library="torchrl", steps=123, seed=7)
    halve_policy_file(full, half)
    ck = read_checkpoint(half)
    assert ck["library"] == "torchrl" and ck["steps"] == 123 and ck["info"] == {"seed": 7}
    assert {v.dtype for v in ck["model"].values()} == {torch1.float16}
    assert half.stat().st_size < 0.55 * full.stat().st_size
    policy = load_policy(half)
    assert {p.dtype for p in policy.parameters()} == {torch1.float32}
    a, b = MoveScoringAgent(from_pretrained), MoveScoringAgent(policy)
    same = total = 0
    for d, _ in positions(64, 50, seed=2):
        same += int((a.act_batch(d) == b.act_batch(d)).sum())
        total += len(d)
    assert total == 3200 and same >= 0.98 * total
    with pytest.raises(ValueError):
        (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
        halve_policy_file(tmp_path / "bad.pt", tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_bid_exploration_is_a_normalized_mixture_in_bidding_rows_with_the_same_greedy_move():
    """explore_bids (padded candidates) and explore_bids_compact (ragged) give the same log-probabilities:
    in bidding rows log((1 - e) p + e / n), elsewhere the softmax; every row sums to 1; the argmax is kept."""
    import torch

    from agents.integrations.move_policy import explore_bids, explore_bids_compact

    torch.manual_seed(0)
    counts = torch.tensor([3, 1, 5, 2])
    valid = torch.arange(5).unsqueeze(0) < counts.unsqueeze(1)
    logits = torch.randn(4, 5) * 3
    bidding = torch.tensor([True, True, False, True])
    out = explore_bids(logits, valid, bidding, 0.2)
    p = torch.softmax(logits.masked_fill(~valid, -torch.inf), 1)
    expected = torch.where(bidding.unsqueeze(1), 0.8 * p + 0.2 / counts.unsqueeze(1), p)
    assert torch.allclose(out[valid].exp(), expected[valid], atol=1e-6)
    assert torch.isinf(out[~valid]).all()
    assert torch.allclose(out.exp().sum(1), torch.ones(4), atol=1e-6)
    assert torch.equal(out.argmax(1), logits.masked_fill(~valid, -torch.inf).argmax(1))
    rows, slot = valid.nonzero(as_tuple=True)
    compact = explore_bids_compact(torch.log(p[rows, slot]), rows, bidding, 0.2)
    assert torch.allclose(compact, out[rows, slot], atol=1e-6)
    # epsilon 0, or no bidding row: the plain log-softmax
    assert torch.allclose(explore_bids(logits, valid, bidding, 0.0)[valid], p[valid].log(), atol=1e-6)
    assert torch.equal(explore_bids(logits, valid, torch.zeros(4, dtype=torch.bool), 0.5),
                       explore_bids(logits, valid, bidding, 0.0))
