"""Baseline agents (``agents/``): the interface, the random agent, the rule agent's plan
and decisions, its fairness (no hidden information), and the loader's error paths.

Play positions come from fixed deals through the raw env with bidding and doubling off
(the landlord is seat 0); the moves before the decision are stepped by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
from common import needs_torch

from agents import Agent, RandomAgent, RuleAgent, load, register, register_lazy, registered, save_checkpoint
from agents.baselines.planner import move_of, plan
from agents.baselines.rule_agent import win_chance
from ddz_env.actions import (
    BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, REDOUBLE, action_from_string,
)
from ddz_env.cards import MAX_COUNTS, deal, parse_cards, to_string
from ddz_env.env import AGENTS, raw_env
from ddz_env.legal import legal_ids
from ddz_env.moves import MOVE_COUNTS, MOVE_STRINGS, MOVE_TYPE, PASS, MoveType


pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


def a(text: str) -> int:
    return action_from_string(text)


def full_deal(h0: str, h1: str, bottom: str, first_bidder: int = 0) -> dict:
    """A deal option from two hands and the bottom; seat 2 gets the rest of the deck."""
    rest = MAX_COUNTS - parse_cards(h0) - parse_cards(h1) - parse_cards(bottom)
    assert (rest >= 0).all() and rest.sum() == 17, to_string(rest)
    return {"hands": [h0, h1, to_string(rest)], "bottom": bottom, "first_bidder": first_bidder}


# Landlord seat 0 will hold 3 666777888999TTT QQ KK (20 cards). Farmer seat 1 holds the bomb 5555,
# no pair above K and no single 2 or joker; farmer seat 2 holds 4 JJJ QQ KK AAA 2222 BR.
BOMB_DEAL = full_deal("666777888999TTTQQ", "3334445555 6789TJA", "3KK")


def play_env(deal: dict, script=()) -> raw_env:
    e = raw_env(rules="douzero")
    e.reset(options={"deal": deal})
    for x in script:
        e.step(a(x))
    return e


def decide(agent, e) -> int:
    return int(agent.act(e.observe(e.agent_selection)))


def name(action: int) -> str:
    return raw_env.action_string(action)


def play_full_hand(e, players) -> list[int]:
    actions = []
    g = e.game
    while not g.is_over:
        act = decide(players[g.current_player], e)
        assert act in e.legal_actions(), (name(act), g)
        actions.append(act)
        e.step(act)
    return actions


# ---------------------------------------------------------------------------- interface
def test_agents_satisfy_the_interface():
    for agent in (RandomAgent(), RuleAgent(), load("random"), load("rule")):
        assert isinstance(agent, Agent)
        agent.reset(seed=3)  # optional per-hand reset, with a seed


@pytest.mark.parametrize("opts", [{}, {"rules": "bidding=false"}, {"rules": "douzero"}])
@pytest.mark.parametrize("factory", [RandomAgent, RuleAgent])
def test_agent_plays_legal_actions_in_every_phase(factory, opts):
    e = raw_env(**opts)
    phases = set()
    for seed in range(12):
        e.reset(seed=seed)
        players = [factory() for _ in range(3)]
        g = e.game
        while not g.is_over:
            phases.add(g.phase.name)
            act = decide(players[g.current_player], e)
            assert act in e.legal_actions()
            e.step(act)
    assert "PLAY" in phases
    if not opts:
        assert {"BID", "DOUBLE"} <= phases


def test_agents_work_from_the_mask_alone():
    e = raw_env()
    e.reset(seed=4)
    obs = e.observe(e.agent_selection)
    for agent in (RandomAgent(), RuleAgent()):
        assert agent.act(obs) in e.legal_actions()


# ---------------------------------------------------------------------------- random agent
def test_random_agent_is_uniform_and_seeded():
    e = raw_env()
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    legal = e.legal_actions()  # the first bid: pass, 1, 2, 3
    r = RandomAgent(seed=1)
    picks = np.array([r.act(obs) for _ in range(4000)])
    counts = np.array([(picks == x).sum() for x in legal])
    assert legal.size == 4 and counts.sum() == 4000 and np.abs(counts - 1000).max() < 120
    r1, r2 = RandomAgent(seed=7), RandomAgent(seed=7)
    assert [r1.act(obs) for _ in range(20)] == [r2.act(obs) for _ in range(20)]
    r1.reset(seed=11)
    r2.reset(seed=11)
    assert [r1.act(obs) for _ in range(20)] == [r2.act(obs) for _ in range(20)]


def test_random_agent_without_legal_actions_raises():
    e = raw_env()
    e.reset(seed=0)
    other = AGENTS[(AGENTS.index(e.agent_selection) + 1) % 3]
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent().act(e.observe(other))


# ---------------------------------------------------------------------------- the plan
@pytest.mark.parametrize("hand,expected", [
    ("334455667788", ["334455667788"]),
    ("33344455567", ["333", "44455567"]),
    ("3333456789TJQKA22", ["22", "3333", "456789TJQKA"]),
    ("3456789TJQK2222BR", ["2222", "3456789TJQK", "BR"]),
    ("33", ["33"]),
])
def test_plan_finds_the_fewest_moves(hand, expected):
    assert sorted(MOVE_STRINGS[m] for m in plan(parse_cards(hand)).moves) == sorted(expected)


def test_plan_keeps_bombs_and_rocket_whole_and_uses_low_kickers():
    moves = [MOVE_STRINGS[m] for m in plan(parse_cards("3334449999BR2")).moves]
    assert "9999" in moves and "BR" in moves
    moves = [MOVE_STRINGS[m] for m in plan(parse_cards("5552K")).moves]
    assert sorted(moves) == ["2", "555K"]  # a 2 is never a kicker while a lower single is loose


def test_plan_uses_every_card_once_and_only_legal_leads():
    rng = np.random.default_rng(0)
    for i in range(150):
        hands, bottom = deal(rng)
        hand = hands[0] + bottom if i % 2 else hands[1]
        p = plan(hand)
        np.testing.assert_array_equal(MOVE_COUNTS[list(p.moves)].sum(axis=0), hand)
        lead = set(legal_ids(hand).tolist())
        assert set(p.moves) <= lead
        assert p.n_moves <= p.cost < p.n_moves + 1


# ---------------------------------------------------------------------------- play decisions
def test_rule_agent_ends_the_hand_when_one_move_does():
    e = play_env(BOMB_DEAL)
    act = decide(RuleAgent(), e)  # 666777888999TTT + 3 QQ KK: an airplane with five single wings
    assert MOVE_COUNTS[act].sum() == 20


def test_rule_agent_bombs_an_opponent_about_to_go_out():
    # the landlord leads its airplane, QQ, then KK with one card left: seat 1 has no pair above K
    e = play_env(BOMB_DEAL, ["666777888999TTT", "pass", "pass", "QQ", "pass", "pass", "KK"])
    assert e.game.n_cards[0] == 1
    assert name(decide(RuleAgent(), e)) == "5555"


def test_rule_agent_keeps_its_bomb_otherwise():
    e = play_env(BOMB_DEAL, ["KK"])  # the landlord still holds 18 cards
    assert decide(RuleAgent(), e) == PASS


def test_rule_agent_does_not_break_a_bomb_for_an_ordinary_move():
    e = play_env(BOMB_DEAL, ["3"])
    act = decide(RuleAgent(), e)
    assert MOVE_TYPE[act] == MoveType.SINGLE and MOVE_COUNTS[act][parse_cards("5") > 0].sum() == 0


def test_rule_agent_does_not_overplay_its_partner():
    e = play_env(BOMB_DEAL, ["3", "6"])  # seat 1 (farmer) beats the landlord; seat 2 is its partner
    assert decide(RuleAgent(), e) == PASS


def test_rule_agent_follows_with_the_cheapest_move_that_beats():
    # seat 2 holds 4 JJJ QQ KK AAA 2222 BR: against a single 3 its lone 4 is the cheapest single
    # (a loose card: no group broken, no 2 or joker spent)
    e = play_env(BOMB_DEAL, ["3", "pass"])
    assert name(decide(RuleAgent(), e)) == "4"


def test_rule_agent_leads_its_weakest_group():
    deal = full_deal("3344556789TJQKA22", "345668899TTJQKA2R", "77B")
    e = play_env(deal)
    assert sorted(MOVE_STRINGS[m] for m in plan(e.game.hands[0]).moves) == ["22", "334455", "6777", "89TJQKA", "B"]
    assert name(decide(RuleAgent(), e)) == "334455"  # the lowest group; the pair chain before 6777


# seat 2 (a farmer) holds 33445566778899TJ2 and sheds down to its 2: it beats the landlord's T with
# its J, leads the pair chain, then its T
ONE_CARD_DEAL = full_deal("3456789TJQQKKAA22", "45678QQKKAA2JJTT3", "9BR")
TO_ONE_CARD = ["T", "pass", "J", "pass", "pass", "33445566778899", "pass", "pass", "T"]


def test_rule_agent_feeds_a_partner_with_one_card():
    # seat 1 takes the trick with an A and leads; its partner seat 2 acts next with one card
    e = play_env(ONE_CARD_DEAL, TO_ONE_CARD + ["pass", "A", "pass", "pass"])
    g = e.game
    assert g.current_player == 1 and g.last_move == PASS and g.n_cards[2] == 1
    assert name(decide(RuleAgent(), e)) == "3"  # its lowest single


def test_rule_agent_avoids_singles_when_an_opponent_holds_one_card():
    # the landlord takes the trick with an A and leads, a farmer holding one card
    e = play_env(ONE_CARD_DEAL, TO_ONE_CARD + ["A", "pass", "pass"])
    g = e.game
    assert g.current_player == 0 and g.last_move == PASS and g.n_cards[2] == 1
    act = decide(RuleAgent(), e)
    assert MOVE_TYPE[act] != MoveType.SINGLE


# ---------------------------------------------------------------------------- bidding and doubling
def bid_env(h0: str, h1: str, bottom: str, script=()) -> raw_env:
    e = raw_env()
    e.reset(options={"deal": full_deal(h0, h1, bottom)})
    for x in script:
        e.step(x)
    return e


STRONG = "BR2222AAAKKQQJJT9"
WEAK = "334466688TTQQ59KA"  # nine moves, no 2, no joker


def test_rule_agent_bids_on_hand_strength():
    assert win_chance(parse_cards(STRONG), True) > 0.9 > 0.2 > win_chance(parse_cards(WEAK), True)
    assert decide(RuleAgent(), bid_env(STRONG, WEAK, "3TK")) == BID_3
    assert decide(RuleAgent(), bid_env(WEAK, STRONG, "3TK")) == BID_PASS


def test_rule_agent_bids_only_what_is_legal():
    e = bid_env(WEAK, STRONG, "3TK", [BID_2])  # seat 0 opened 2; seat 1 has a strong hand
    assert decide(RuleAgent(), e) == BID_3
    e = bid_env(WEAK, STRONG, "3TK", [BID_1])
    assert decide(RuleAgent(bid_at=(0.0, 0.0, 1.01)), e) == BID_2  # wants 2 > 1: bids 2
    assert decide(RuleAgent(bid_at=(0.0, 1.01, 1.01)), e) == BID_PASS  # wants 1, not above the 1 bid


def test_rule_agent_doubles_and_redoubles_when_strong():
    # seat 0 (weak) bids 1 and becomes landlord; seat 1 holds the strong hand and doubles
    e = bid_env(WEAK, STRONG, "3TK", [BID_1, BID_PASS, BID_PASS])
    assert e.game.phase.name == "DOUBLE" and e.game.current_player == 1
    assert decide(RuleAgent(), e) == DOUBLE
    e.step(DOUBLE)
    assert decide(RuleAgent(double_at=1.01), e) == NO_DOUBLE
    e.step(NO_DOUBLE)
    assert e.game.phase.name == "REDOUBLE"
    assert decide(RuleAgent(), e) == NO_REDOUBLE  # the weak landlord does not redouble
    assert decide(RuleAgent(redouble_at=0.0), e) == REDOUBLE


# ---------------------------------------------------------------------------- fairness
def test_rule_agent_is_deterministic():
    e1, e2 = raw_env(), raw_env()
    for seed in range(6):
        e1.reset(seed=seed)
        e2.reset(seed=seed)
        assert play_full_hand(e1, [RuleAgent()] * 3) == play_full_hand(e2, [RuleAgent()] * 3)


def test_rule_agent_ignores_the_hidden_cards():
    """Shuffle the other two seats' cards between them (same counts): the decision is unchanged."""
    rng = np.random.default_rng(0)
    rule = RuleAgent()
    checked = 0
    for seed in range(10):
        e = raw_env()
        e.reset(seed=seed)
        g = e.game
        while not g.is_over:
            s = g.current_player
            act = decide(rule, e)
            o1, o2 = (s + 1) % 3, (s + 2) % 3
            if g.n_cards[o1] and g.n_cards[o2]:
                e2 = object.__new__(raw_env)  # a copy of the env with its own game (EzPickle
                e2.__dict__.update(e.__dict__)  # would rebuild a fresh env on deepcopy)
                e2.game = g.copy()
                pool = np.repeat(np.arange(15), (g.hands[o1] + g.hands[o2]).astype(int))
                rng.shuffle(pool)
                h1 = np.bincount(pool[:g.n_cards[o1]], minlength=15).astype(np.int8)
                h2 = np.bincount(pool[g.n_cards[o1]:], minlength=15).astype(np.int8)
                e2.game.hands[o1], e2.game.hands[o2] = h1, h2
                assert decide(rule, e2) == act
                checked += 1
            e.step(act)
    assert checked > 100


# ---------------------------------------------------------------------------- loader
def test_load_by_name_with_options():
    assert isinstance(load("rule"), RuleAgent)
    r = load("random", seed=5)
    assert isinstance(r, RandomAgent) and r.seed == 5
    assert {"random", "rule"} <= set(registered())


def test_load_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown agent 'rulez'.*random, rule"):
        load("rulez")


def test_load_missing_checkpoint(tmp_path):
    path = tmp_path / "nope" / "model.pt"
    with pytest.raises(FileNotFoundError, match="not found"):
        load(str(path))
    with pytest.raises(FileNotFoundError, match="directory"):
        load(str(tmp_path))


def test_load_corrupt_checkpoint(tmp_path):
    torch = pytest.importorskip("torch", reason="checkpoints need the train extra")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00 this is not a torch file \xff" * 10)
    with pytest.raises(ValueError, match="corrupt or not a ddz-env checkpoint"):
        load(str(bad))

    no_agent = tmp_path / "weights.pt"
    torch.save({"state_dict": {"w": torch.zeros(2)}}, no_agent)
    with pytest.raises(ValueError, match="corrupt or not a ddz-env checkpoint.*'agent'"):
        load(no_agent)
    tensor_only = tmp_path / "tensor.pt"
    torch.save(torch.zeros(3), tensor_only)
    with pytest.raises(ValueError, match="corrupt or not a ddz-env checkpoint"):
        load(tensor_only)


@needs_torch
def test_load_checkpoint_of_an_unregistered_kind(tmp_path):
    path = tmp_path / "x.pt"
    save_checkpoint(path, "no-such-kind", config={})
    with pytest.raises(ValueError, match="'no-such-kind', which is not registered"):
        load(path)


@needs_torch
def test_load_checkpoint_builds_the_registered_kind(tmp_path):
    path = tmp_path / "rule.pt"
    save_checkpoint(path, "rule", config={"double_at": 0.9})
    agent = load(path)
    assert isinstance(agent, RuleAgent) and agent.double_at == 0.9

    class Constant:
        def __init__(self, checkpoint):
            self.bias = float(checkpoint["bias"])

        def act(self, observation, env):
            return int(env.default_action())

    register("test-constant", Constant, overwrite=True)
    path = tmp_path / "constant.pt"
    save_checkpoint(path, "test-constant", bias=1.5)
    agent = load(path)
    assert isinstance(agent, Constant) and agent.bias == 1.5
    with pytest.raises(ValueError, match="already registered"):
        register("test-constant", Constant)


@needs_torch
def test_load_checkpoint_of_a_lazily_registered_kind(tmp_path):
    # the kind's module is imported only when a checkpoint names it (how the DMC agent plugs in)
    register_lazy("test-lazy", "collections:OrderedDict")
    path = tmp_path / "lazy.pt"
    save_checkpoint(path, "test-lazy", bias=2)
    assert dict(load(path)) == {"agent": "test-lazy", "bias": 2}
    register_lazy("test-broken", "no_such_module_xyz:Agent")
    save_checkpoint(path, "test-broken")
    with pytest.raises(ValueError, match="'test-broken', whose code .* cannot be loaded"):
        load(path)


def test_load_rejects_a_non_spec():
    with pytest.raises(TypeError, match="name or a checkpoint path"):
        load(42)


def test_move_of_is_the_table_lookup():
    assert MOVE_STRINGS[move_of(parse_cards("333444"))] == "333444"
    with pytest.raises(KeyError):
        move_of(parse_cards("34"))


# ---------------------------------------------------------------------------- the batch interface
def test_decisions_from_an_observation_read_phase_role_and_legal_ids():
    from agents import Decisions

    e = raw_env()
    e.reset(seed=3)
    seen = set()
    rng = np.random.default_rng(0)
    while not e.game.is_over:
        g = e.game
        s = g.current_player
        d = Decisions.from_observation(e.observe(AGENTS[s]))
        assert len(d) == 1 and d.phase[0] == int(g.phase)
        assert d.role[0] == (int(g.role(s)) if g.landlord >= 0 else -1)
        np.testing.assert_array_equal(d.legal(0), e.legal_actions())
        seen.add((int(d.phase[0]), int(d.role[0])))
        e.step(int(d.legal(0)[rng.integers(d.legal(0).size)]) if int(g.phase) != 0 else BID_3)
    assert {(0, -1), (3, 0)} <= seen and ({(3, 1), (3, 2)} & seen)


def test_decisions_reject_a_malformed_observation():
    from agents import Decisions

    with pytest.raises(ValueError, match="observation"):
        Decisions.from_observation({"observation": np.zeros((29, 4, 15), np.int8)})
    with pytest.raises(ValueError, match="must be"):
        Decisions.from_observation({"observation": np.zeros((3, 4)), "action_mask": np.zeros(24648, np.int8)})


def test_act_batch_equals_act_one_by_one_for_every_agent():
    """On the batched env's decisions (every phase), act_batch gives what act gives on each alone."""
    torch = pytest.importorskip("torch", reason="the DMC agent needs the train extra")

    from agents import Decisions
    from agents.base import take_sets
    from agents.dmc import DMCAgent, DMCModel
    from ddz_env.vector import VectorDouDizhu

    torch.manual_seed(1)
    agents_ = [RuleAgent(), DMCAgent(DMCModel([32], [32, 16])), DMCAgent(DMCModel([], [32, 16], hand_after=True))]
    vec = VectorDouDizhu(24, seed=5)
    rng = np.random.default_rng(1)
    phases = set()
    for step in range(60):
        obs = vec.observe()
        _, ids, starts = vec.legal_sets()
        idx = np.arange(vec.num_envs)
        st, lid = take_sets(starts, ids, idx)
        d = Decisions(obs, lid, st, vec.phase.astype(np.int64), vec.roles(), vec.current_player.copy(), idx)
        phases |= set(vec.phase.tolist())
        masks = vec.action_masks()
        for agent in agents_:
            batch = agent.act_batch(d)
            one = [agent.act({"observation": obs[b], "action_mask": masks[b]}) for b in range(vec.num_envs)]
            assert batch.tolist() == one, (agent, step)
        vec.step(vec.random_actions(rng))
    assert phases == {0, 1, 2, 3}


def test_random_agent_streams_are_independent_and_reseedable():
    from agents import Decisions

    e = raw_env()
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    one = Decisions.from_observation(obs)
    many = one.take(np.zeros(6, np.int64))
    many = Decisions(many.observation, many.legal_ids, many.legal_starts, many.phase, many.role, many.seat,
                     np.array([4, 9, 4, 9, 4, 9]))
    r = RandomAgent(seed=0)
    r.begin_hands(np.array([4, 9]), np.array([11, 11], np.uint64))
    picks = r.act_batch(many)
    assert picks[0::2].tolist() == picks[1::2].tolist()  # same seed, same draws, whatever the interleaving
    solo = RandomAgent(seed=0)
    solo.reset(seed=11)
    assert [solo.act(obs) for _ in range(3)] == picks[0::2].tolist()


def test_an_act_only_agent_evaluates_like_its_batch_version():
    """as_batch_agent gives each stream its own copy: a one-decision agent scores what the batch agent does."""
    from agents import evaluate

    class ActOnlyRandom:
        def __init__(self):
            self.inner = RandomAgent(seed=0)

        def reset(self, seed=None):
            self.inner.reset(seed)

        def act(self, observation):
            return self.inner.act(observation)

    a = evaluate(ActOnlyRandom(), "rule", deals=6, seed=4)
    b = evaluate(RandomAgent(seed=0), "rule", deals=6, seed=4)
    assert a["per_deal_score_a"] == b["per_deal_score_a"] and a["A"] == b["A"]


def test_readme_write_your_own_agent_example_runs_as_pasted(capsys):
    import re

    from common import docs_text

    readme = docs_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "class MostCards" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert re.match(r"most-cards vs random: \+\d+\.\d\d per hand \[", out)


def test_the_rule_agents_fast_decode_reads_what_the_layouts_readers_read():
    """features.decode (a few numpy calls per observation: the rule agent decodes every decision) against
    decode_with_readers (ddz_env.observation's general readers) on every seat's view of random hands."""
    from agents.baselines.features import decode, decode_with_readers
    from ddz_env.vector import VectorDouDizhu

    vec = VectorDouDizhu(32, seed=11)
    rng = np.random.default_rng(11)
    seen = set()
    for _ in range(150):
        for seat in range(3):
            for planes in vec.observe(seat=seat):
                a, b = decode(planes), decode_with_readers(planes)
                for field in ("hand", "others", "left", "phase", "role", "to_beat", "beat_seat", "highest_bid"):
                    assert np.array_equal(getattr(a, field), getattr(b, field)), field
                assert (a.bottom is None) == (b.bottom is None) and (a.bottom is None or np.array_equal(a.bottom, b.bottom))
                seen.add((a.phase, a.role, a.bottom is None, a.to_beat == 0))
        vec.step(vec.random_actions(rng), observe=False)
    assert len(seen) >= 8  # bidding, doubling and play; leads and responses; before and after the bottom
