"""ddz_env.rules: the once-per-hand rulings as pure functions, scalars and arrays alike (one place
for each ruling; Game and VectorDouDizhu both call them)."""
import dataclasses
import itertools

import numpy as np
import pytest

from ddz_env import rules
from ddz_env.actions import BID_1, BID_2, BID_3, BID_PASS, NO_DOUBLE, NO_REDOUBLE
from ddz_env.cards import parse_cards
from ddz_env.moves import PASS, move_id
from ddz_env.rules import Phase


def test_r3_legal_bids_top_the_bid_so_far():
    assert rules.legal_bids(0).tolist() == [BID_PASS, BID_1, BID_2, BID_3]
    assert rules.legal_bids(2).tolist() == [BID_PASS, BID_3]
    assert rules.legal_bids(3).tolist() == [BID_PASS]


def _bid_sequence(values):
    bids, top = np.full(3, -1), 0
    out = None
    for seat, v in enumerate(values):
        bids[seat] = v
        out = rules.bid_outcome(bids, v, top)
        top = int(out[0])
        if out[1]:
            break
    return out


def test_r3_r4_bid_outcome_scalar_cases():
    top, over, void, lord = _bid_sequence([1, 0, 2])
    assert (int(top), bool(over), bool(void), int(lord)) == (2, True, False, 2)
    top, over, void, lord = _bid_sequence([0, 3])  # a 3 ends the bidding at once (R3)
    assert (int(top), bool(over), bool(void), int(lord)) == (3, True, False, 1)
    top, over, void, lord = _bid_sequence([0, 0, 0])  # R4: three passes void the hand
    assert (bool(over), bool(void), int(lord)) == (True, True, -1)
    top, over, void, lord = rules.bid_outcome([1, -1, -1], 1, 0)
    assert (int(top), bool(over), int(lord)) == (1, False, -1)


def test_bid_outcome_arrays_equal_the_scalar_calls():
    cases = []
    for values in itertools.product(range(4), repeat=3):  # every complete or partial bidding of 3 seats
        bids, top = np.full(3, -1), 0
        for seat, v in enumerate(values):
            if seat and v and v <= top:
                break  # not a legal sequence
            bids[seat] = v
            cases.append((bids.copy(), v, top))
            top = max(top, v)
            if v == 3:
                break
    b = np.stack([c[0] for c in cases])
    v = np.array([c[1] for c in cases])
    t = np.array([c[2] for c in cases])
    arr = rules.bid_outcome(b, v, t)
    for i, (bids, value, top) in enumerate(cases):
        one = rules.bid_outcome(bids, value, top)
        assert [int(x) for x in one] == [int(x[i]) for x in arr]


def test_r4_next_first_bidder_and_r5_r6_doubling():
    assert rules.next_first_bidder(2) == 0 and rules.next_first_bidder(np.array([0, 1])).tolist() == [1, 2]
    first, second = rules.doubling_order(np.array([0, 1, 2]))
    assert first.tolist() == [1, 2, 0] and second.tolist() == [2, 0, 1]
    assert not rules.redouble_allowed([-1, 0, 0]) and rules.redouble_allowed([-1, 0, 1])
    assert rules.redouble_allowed(np.array([[0, -1, 0], [1, 0, -1]])).tolist() == [False, True]


def test_r20_default_actions_per_phase_scalar_and_array():
    hand = parse_cards("5577TJ")
    assert rules.default_actions(Phase.BID, PASS, hand) == BID_PASS
    assert rules.default_actions(Phase.DOUBLE, PASS, hand) == NO_DOUBLE
    assert rules.default_actions(Phase.REDOUBLE, PASS, hand) == NO_REDOUBLE
    assert rules.default_actions(Phase.PLAY, PASS, hand) == move_id("5")  # lead the smallest single
    assert rules.default_actions(Phase.PLAY, move_id("33"), hand) == PASS  # respond: pass
    phases = np.array([Phase.BID, Phase.PLAY, Phase.PLAY])
    arr = rules.default_actions(phases, np.array([PASS, PASS, move_id("9")]), np.stack([hand] * 3))
    assert arr.tolist() == [BID_PASS, move_id("5"), PASS]


def test_rewards_score_and_win():
    scores = np.array([[4, -8, 4], [0, 0, 0]])
    assert rules.rewards(scores, [0, -1], [1, -1], "score", 0.5).tolist() == [[2, -4, 2], [0, 0, 0]]
    assert rules.rewards(scores, [0, -1], [1, -1], "win").tolist() == [[1, -1, 1], [0, 0, 0]]
    assert rules.rewards([6, -3, -3], 0, 0, "win", 2.0).tolist() == [2, -2, -2]
    with pytest.raises(ValueError, match="'score' or 'win'"):
        rules.rewards(scores, 0, 0, "points")


def test_deal_hand_is_one_deck_and_draws_the_first_bidder():
    d = rules.deal_hand(np.random.default_rng(0))
    h, b, fb = d.hands, d.bottom, d.first_bidder
    assert h.sum(axis=1).tolist() == [17, 17, 17] and b.sum() == 3 and fb in (0, 1, 2)
    assert (h.sum(axis=0) + b).tolist() == [4] * 13 + [1, 1]
    assert rules.deal_hand(np.random.default_rng(0)) == d


# ------------------------------------------------------------------ Rules: the one value every layer takes
def test_rules_presets_fields_and_specs_read_back():
    from ddz_env.rules import PRESETS, Rules

    assert Rules.of(None) == Rules() == PRESETS["rulebook"] and Rules().name == "rulebook"
    assert Rules.of("douzero") == Rules(bidding=False, doubling=False)
    assert Rules.of("bidding=false, doubling=false").name == "douzero"  # a preset's fields give its name
    r = Rules.of({"doubling": False})
    assert (r.bidding, r.doubling) == (True, False) and Rules.of(r.name) == r and Rules.of(str(r)) == r
    assert Rules.of(r) is r and hash(r) == hash(Rules(doubling=False))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.bidding = False  # frozen
    assert r.to_dict() == {"bidding": True, "doubling": False}


@pytest.mark.parametrize("bad, err, match", [
    ("houserules", ValueError, "unknown preset 'houserules'.*rulebook, douzero"),
    ("bidding=maybe", ValueError, "bad field"),
    ("redouble=false", ValueError, r"unknown field\(s\) \['redouble'\]"),
    ({"bidding": "false"}, TypeError, "Rules.bidding must be True or False"),
    ({"doubling": 0}, TypeError, "Rules.doubling must be True or False"),
    (3, TypeError, "rules must be a Rules, a preset name"),
])
def test_rules_refuses_bad_values_by_name(bad, err, match):
    from ddz_env.rules import Rules

    with pytest.raises(err, match=match):
        Rules.of(bad)


@pytest.mark.parametrize("spec, first_phase", [("rulebook", Phase.BID), ("bidding=false", Phase.DOUBLE),
                                               ("doubling=false", Phase.BID), ("douzero", Phase.PLAY)])
def test_every_layer_takes_the_same_rules_value(spec, first_phase):
    """Game, raw_env, VectorDouDizhu and the seat env read one ``rules`` argument, and agree."""
    import ddz_env
    from agents.integrations.seat_env import DouDizhuSeatEnv
    from ddz_env.rules import Rules

    g = ddz_env.Game.deal(5, rules=spec)
    e = ddz_env.raw_env(rules=spec)
    e.reset(seed=5)
    vec = ddz_env.VectorDouDizhu(3, seed=5, rules=spec)
    seat = DouDizhuSeatEnv(seat=0, rules=spec)
    assert g.rules == e.rules == vec.rules == seat.aec.rules == Rules.of(spec)
    assert g.phase == e.game.phase == first_phase and set(vec.phase.tolist()) == {int(first_phase)}
    if not Rules.of(spec).bidding:  # the drawn first bidder is the landlord at bid 1
        assert g.landlord == g.first_bidder and g.bid == 1
        assert (vec.landlord == vec.state.first_bidder).all() and (vec.state.bid == 1).all()
    rng = np.random.default_rng(0)
    while not g.is_over:  # no doubling action is ever legal with doubling off
        ids = g.legal_actions()
        if not Rules.of(spec).doubling:
            assert not np.isin(ids, [NO_DOUBLE, NO_DOUBLE + 1, NO_REDOUBLE, NO_REDOUBLE + 1]).any()
        g.step(int(rng.choice(ids)))


def test_a_landlord_is_given_only_with_bidding_off_and_a_refused_deal_draws_nothing():
    from ddz_env.game import Game

    rng = np.random.default_rng(4)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="landlord=1 is given only when bidding is off"):
        Game.deal(rng, landlord=1)
    with pytest.raises(ValueError, match="unknown preset"):
        Game.deal(rng, rules="nope")
    assert rng.bit_generator.state == before
    assert Game.deal(rng, rules="douzero", landlord=1).landlord == 1


def test_r1_r2_check_deals_names_the_first_bad_deal_for_game_and_the_batched_env():
    from ddz_env.cards import deal
    from ddz_env.game import Game
    from ddz_env.vector import VectorDouDizhu

    rng = np.random.default_rng(2)
    good = [deal(rng) for _ in range(3)]
    hands = np.stack([h for h, _ in good])
    bottoms = np.stack([b for _, b in good])
    rules.check_deals(hands, bottoms)  # three good deals: nothing raised
    rules.check_deals(hands[0], bottoms[0])
    bad = hands.copy()
    bad[2, 0, 0] += 1  # deal 2: seat 0 holds 18 cards
    with pytest.raises(ValueError, match=r"^deal 2: a deal is 17/17/17 cards \+ 3 bottom, got \[18, 17, 17\] \+ 3"):
        rules.check_deals(bad, bottoms)
    swap = hands.copy()  # deal 1: a 3 turned into a black joker (still 17 cards; three 3s in the deck)
    s = int(np.flatnonzero(swap[1, :, 0] > 0)[0])
    swap[1, s, 0] -= 1
    swap[1, s, 13] += 1
    with pytest.raises(ValueError, match="deal 1: the deal is not one 54-card deck: rank '3' appears 3 times"):
        rules.check_deals(swap, bottoms)
    with pytest.raises(ValueError, match=r"^a deal is 17/17/17"):  # Game: one deal, no index
        Game(bad[2], bottoms[2], 0)
    vec = VectorDouDizhu(3, seed=0)
    before = vec.hands.copy()
    with pytest.raises(ValueError, match=r"^load_deals: deal 2: a deal is 17/17/17"):
        vec.load_deals([0, 1, 2], bad, bottoms, [0, 0, 0])
    np.testing.assert_array_equal(vec.hands, before)  # refused: nothing changed


def test_r22_rules_only_skip_phases_and_add_no_variant():
    """R22: the Rules value has two fields, each turning a phase of the rulebook off; nothing in it
    changes what a phase does (the rulebook preset is every phase on)."""
    import dataclasses

    from ddz_env.rules import PRESETS, Rules

    assert [f.name for f in dataclasses.fields(Rules)] == ["bidding", "doubling"]
    assert PRESETS["rulebook"] == Rules(True, True) and set(PRESETS) == {"rulebook", "douzero"}


# ------------------------------------------------------------------ issue 23: the last rulings in one place each
def test_r3_r5_r6_legal_choices_is_the_one_table_of_the_non_play_sets():
    """rules.legal_choices decides the bids, doubles and redoubles (scalars or arrays); Game's
    legal_actions and is_legal read it, and the batched env's legal sets equal Game's."""
    from ddz_env.actions import DOUBLE_ACTIONS, FIRST_CHOICE, NUM_ACTIONS, NUM_CHOICES, REDOUBLE_ACTIONS
    from ddz_env.game import Game

    ids = lambda p, top: (FIRST_CHOICE + np.flatnonzero(rules.legal_choices(p, top))).tolist()  # noqa: E731
    for top in range(4):
        assert ids(Phase.BID, top) == [BID_PASS] + list(range(BID_1 + top, BID_3 + 1))  # R3
        assert ids(Phase.BID, top) == rules.legal_bids(top).tolist()
        assert ids(Phase.DOUBLE, top) == list(DOUBLE_ACTIONS) and ids(Phase.REDOUBLE, top) == list(REDOUBLE_ACTIONS)
        assert ids(Phase.PLAY, top) == [] and ids(Phase.OVER, top) == []
    phases = np.array([p for p in Phase for _ in range(4)])
    tops = np.tile(np.arange(4), len(Phase))
    arr = rules.legal_choices(phases, tops)
    assert arr.shape == (len(phases), NUM_CHOICES) and arr.dtype == bool
    for i in range(len(phases)):
        np.testing.assert_array_equal(arr[i], rules.legal_choices(int(phases[i]), int(tops[i])))
    with pytest.raises(ValueError):
        rules.LEGAL_CHOICES[0, 0, 0] = True  # read-only
    rng = np.random.default_rng(0)
    seen = set()
    for seed in range(40):
        g = Game.deal(seed)
        while not g.is_over:
            if g.phase != Phase.PLAY:
                want = ids(g.phase, g.bid)
                assert g.legal_actions().tolist() == want
                assert [a for a in [-1, 0, 1] + list(range(FIRST_CHOICE - 3, NUM_ACTIONS + 2)) if g.is_legal(a)] == want
                seen.add((int(g.phase), g.bid))
            la = g.legal_actions()
            g.step(int(la[-1] if seed % 3 == 0 else la[rng.integers(la.size)]))
        assert g.legal_actions().size == 0 and not g.is_legal(BID_PASS)
    assert {(0, 0), (0, 1), (0, 2), (1, 3), (2, 3)} <= seen, seen


def test_one_role_table_for_game_the_planes_and_the_batched_env():
    from ddz_env.game import Game
    from ddz_env.observation import observe_game
    from ddz_env.readers import read_status
    from ddz_env.vector import VectorDouDizhu

    assert rules.ROLE_OF.tolist() == [[-1, 0, 2, 1], [-1, 1, 0, 2], [-1, 2, 1, 0]]
    assert [int(r) for r in rules.Role] == [0, 1, 2]
    assert rules.role_of(1, 0) == rules.Role.FARMER_AFTER and rules.role_of(2, 0) == rules.Role.FARMER_BEFORE
    assert rules.role_of(np.array([0, 1, 2]), np.array([0, 0, -1])).tolist() == [0, 1, -1]
    g = Game.deal(1, rules="douzero")
    for s in range(3):
        assert g.role(s) == rules.role_of(s, g.landlord) == int(read_status(observe_game(g, s)).role)
    vec = VectorDouDizhu(16, seed=2, rules="bidding=false")
    np.testing.assert_array_equal(vec.roles(), rules.role_of(vec.current_player, vec.landlord))


def test_one_num_seats_defined_in_cards():
    """NUM_SEATS is assigned once (cards.py); the other modules import that object."""
    import ast
    from pathlib import Path

    from ddz_env import cards, game, vector

    root = Path(rules.__file__).parent
    assigned = [p.name for p in sorted(root.glob("*.py"))
                if any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "NUM_SEATS" for t in n.targets)
                       for n in ast.walk(ast.parse(p.read_text())))]
    assert assigned == ["cards.py"]
    assert rules.NUM_SEATS is cards.NUM_SEATS is game.NUM_SEATS is vector.NUM_SEATS == 3


def test_r1_deal_is_one_value_in_every_old_shape():
    """rules.Deal: dealt by deal_hand, read by its fields (never as a tuple or a dict: issue 46), read from
    tuples, dicts and card strings, checked (R1, R2), read-only, compared by value; Game and records give it
    back."""
    from ddz_env import record
    from ddz_env.game import Game

    d = rules.deal_hand(np.random.default_rng(5))
    assert isinstance(d, rules.Deal)
    assert d.hands.shape == (3, 15) and d.bottom.shape == (15,) and d.first_bidder in (0, 1, 2) and d.landlord is None
    with pytest.raises(ValueError):
        d.hands[0, 0] = 1  # read-only
    as_tuple = (d.hands, d.bottom, d.first_bidder)
    assert rules.Deal.of(as_tuple) == d == rules.Deal.of(d.to_dict()) == rules.Deal.of(d.to_dict(strings=True))
    assert rules.Deal.of(d) is d and hash(rules.Deal.of(as_tuple)) == hash(d)
    assert d != rules.Deal(d.hands, d.bottom, (d.first_bidder + 1) % 3)
    for old in (lambda: tuple(d), lambda: d["hands"], lambda: d[2], lambda: d.get("landlord")):
        with pytest.raises((TypeError, AttributeError)):  # no longer a tuple or a dict
            old()
    assert "Deal(hands=(" in repr(d)
    import pickle

    back = pickle.loads(pickle.dumps(d))  # (evaluation workers receive deals pickled)
    assert back == d and not back.hands.flags.writeable
    with pytest.raises(ValueError, match=r"^the deal is not one 54-card deck"):
        rules.Deal(d.hands[[0, 0, 1]], d.bottom, 0)  # seat 0's hand twice
    with pytest.raises(ValueError, match="first_bidder must be 0, 1 or 2, got 1.5"):
        rules.Deal(d.hands, d.bottom, 1.5)
    with pytest.raises(ValueError, match="a deal needs 'hands'"):
        rules.Deal.of({"bottom": "33"})
    with pytest.raises(TypeError, match="a deal is a Deal"):
        rules.Deal.of(5)
    g = Game.from_deal(d)
    assert g.initial_deal == d and g.first_bidder == d.first_bidder
    g2 = Game(d.hands, d.bottom, d.first_bidder)
    assert g2.initial_deal == d
    fixed = Game.from_deal(rules.Deal(d.hands, d.bottom, 0, landlord=2), rules="douzero")
    assert fixed.landlord == 2 and fixed.initial_deal.landlord == 2
    with pytest.raises(ValueError, match="landlord=2 is given only when bidding is off"):
        Game.from_deal(fixed.initial_deal)  # the rulebook bids for the landlord
    rec = record.record_of(fixed)
    assert record.deal_of(rec) == fixed.initial_deal and rec["deal"]["landlord"] == 2
    assert record.replay(rec).initial_deal == fixed.initial_deal


def test_rules_md_names_only_functions_that_exist():
    """Every `module.name` in RULES.md's table of deciders is a real attribute (the table cannot drift)."""
    import importlib
    import importlib.util
    import re
    from pathlib import Path

    text = (Path(rules.__file__).resolve().parent.parent / "RULES.md").read_text()
    table = text[text.index("## Where the code decides each ruling"):]
    names = [n for n in re.findall(r"`((?:agents\.)?[a-z_]+)\.([A-Za-z_]+)(?:\.([A-Za-z_]+))?`", table)
             if n[1] != "py"]
    assert len(names) > 30
    from ddz_env.game import Game
    from ddz_env.vector import VectorDouDizhu

    classes = {"Game": Game, "VectorDouDizhu": VectorDouDizhu}
    methods = re.findall(r"`(Game|VectorDouDizhu)\.([A-Za-z_]+)`", table)
    assert len(methods) > 8
    for cls, attr in methods:
        assert hasattr(classes[cls], attr), f"RULES.md names {cls}.{attr}, which does not exist"
    for mod, attr, sub in names:
        module = importlib.import_module(mod if mod.startswith("agents") else f"ddz_env.{mod}")
        obj = getattr(module, attr, None)
        if obj is None and importlib.util.find_spec(f"{module.__name__}.{attr}") is not None:
            obj = importlib.import_module(f"{module.__name__}.{attr}")  # a submodule (imported here: alone, it passes)
        assert obj is not None, f"RULES.md names {mod}.{attr}, which does not exist"
        if sub:
            assert hasattr(obj, sub), f"RULES.md names {mod}.{attr}.{sub}, which does not exist"
