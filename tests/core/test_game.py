"""The one-hand state machine of ``ddz_env.game``: bidding, doubling, play, end of hand.

Every ruling of RULINGS.md that concerns the hand's flow has a test named after it
(``test_r3_...``). Positions are built with ``Game.from_deal`` from fixed deals whose
validity (17/17/17 + 3 of one 54-card deck) is itself checked below.
"""
from __future__ import annotations

import numpy as np
import pytest

from ddz_env.actions import (
    BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, REDOUBLE,
)
from ddz_env.cards import MAX_COUNTS, parse_cards
from ddz_env.game import Game, IllegalActionError, Phase
from ddz_env.observation import HIDDEN
from ddz_env.rules import Rules
from ddz_env.legal import legal_ids
from ddz_env.moves import MOVE_COUNTS, MOVE_TYPE, NUM_MOVES, PASS, MoveType, move_id

# --------------------------------------------------------------------------- fixed deals
# SCORED: landlord-to-be seat 0 (it bids 3). Farmer seat 1 holds the rocket, the bomb AAAA and
# an 11-card straight, so it can go out in three leads; seat 2 holds a lone 8 as its smallest card.
SCORED = (["33344455566677788", "3456789TJQKAAAABR", "8999TTTJJJQQQKKK2"], "222")
# SPRING: landlord seat 0 ends with BR, 2222, 456789TJQKA, AAA (20 cards); farmer seat 1 holds
# the bomb 3333 (used in the no-spring variant).
SPRING = (["456789TJQKABR2222", "33334445556667778", "88999TTTJJJQQQKKK"], "AAA")
# FOUR_JOKERS: seat 0 holds 3333 and both jokers.
FOUR_JOKERS = (["3333BR456789TJQKA", "444555666777888K2", "999TTTJJJQQQKKAAA"], "222")
DEALS = {"scored": SCORED, "spring": SPRING, "four_jokers": FOUR_JOKERS}

P = PASS


def m(cards: str) -> int:
    return move_id(cards)


def scored_game(first_bidder: int = 0, **kw) -> Game:
    return Game.from_deal(SCORED[0], SCORED[1], first_bidder, **kw)


def to_play(g: Game, bid_seq=(BID_3,), doubles=(NO_DOUBLE, NO_DOUBLE), redouble=None) -> Game:
    """Drive ``g`` through bidding and doubling to the play phase."""
    for a in bid_seq:
        g.step(a)
    for a in doubles:
        g.step(a)
    if redouble is not None:
        g.step(redouble)
    assert g.phase == Phase.PLAY
    return g


def play(g: Game, script) -> Game:
    """Play a script of card strings / PASS, asserting each one is legal before it is made."""
    for x in script:
        a = m(x) if isinstance(x, str) else x
        assert g.is_legal(a), (x, g)
        g.step(a)
    return g


# Farmer seat 1 wins: the landlord plays twice (no anti-spring), one rocket and one bomb are played.
FARMER_WINS = ["4", P, P, "5", "BR", P, P, "AAAA", P, P, "3456789TJQK"]
# The same but the landlord plays only its opening move: anti-spring.
FARMER_WINS_ANTI = ["4", "BR", P, P, "AAAA", P, P, "3456789TJQK"]
# SPRING deal: the landlord plays everything, the farmers only pass.
SPRING_SCRIPT = ["BR", P, P, "2222", P, P, "456789TJQKA", P, P, "AAA"]
# SPRING deal, but farmer 1 bombs once and leads a single: no spring (bombs 2, rocket 1).
NO_SPRING_SCRIPT = ["BR", P, P, "2222", P, P, "456789TJQKA", "3333", P, P, "4", P, "A", P, P, "AA"]


def snapshot(g: Game) -> dict:
    """Deep copy of every public attribute, for "the state is unchanged" checks (private caches skipped)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else (list(v) if isinstance(v, list) else v))
            for k, v in vars(g).items() if not k.startswith("_")}


def assert_same_state(g: Game, snap: dict) -> None:
    now = snapshot(g)
    assert now.keys() == snap.keys()
    for k, v in snap.items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(now[k], v), k
        else:
            assert now[k] == v, k


@pytest.mark.parametrize("name", sorted(DEALS))
def test_fixed_deals_are_one_deck(name):
    hands, bottom = DEALS[name]
    counts = [parse_cards(h) for h in hands]
    assert [int(c.sum()) for c in counts] == [17, 17, 17]
    assert int(parse_cards(bottom).sum()) == 3
    assert np.array_equal(sum(counts) + parse_cards(bottom), MAX_COUNTS)


# --------------------------------------------------------------------------- R3 bidding
@pytest.mark.parametrize("first", [0, 1, 2])
def test_r3_bidding_goes_in_seat_order_from_first_bidder(first):
    g = scored_game(first)
    assert g.phase == Phase.BID and g.current_player == first
    g.step(BID_1)
    assert g.current_player == (first + 1) % 3
    g.step(BID_PASS)
    assert g.current_player == (first + 2) % 3
    g.step(BID_2)
    # every seat has bid once: the highest bidder (the third) is landlord at base score 2
    assert g.phase == Phase.DOUBLE
    assert g.landlord == (first + 2) % 3 and g.bid == 2
    expected = np.zeros(3, dtype=int)
    expected[first], expected[(first + 1) % 3], expected[(first + 2) % 3] = 1, 0, 2
    assert g.bids.tolist() == expected.tolist()


def test_r3_bid_must_exceed_highest_so_far():
    g = scored_game(0)
    g.step(BID_2)
    assert set(g.legal_actions().tolist()) == {BID_PASS, BID_3}
    for bad in (BID_1, BID_2):
        snap = snapshot(g)
        assert not g.is_legal(bad)
        with pytest.raises(IllegalActionError):
            g.step(bad)
        assert_same_state(g, snap)
    g.step(BID_3)
    assert g.landlord == 1 and g.bid == 3


def test_r3_first_bid_may_be_any_value():
    g = scored_game(2)
    assert g.legal_actions().tolist() == [BID_PASS, BID_1, BID_2, BID_3]


def test_r3_bid_of_three_ends_bidding_at_once():
    g = scored_game(1)
    g.step(BID_PASS)  # seat 1
    g.step(BID_3)  # seat 2: seat 0 never bids
    assert g.phase == Phase.DOUBLE
    assert g.landlord == 2 and g.bid == 3
    assert g.bids.tolist() == [-1, 0, 3]
    assert [s for s, _ in g.history] == [1, 2]


def test_r3_first_bidder_bidding_three_ends_bidding():
    g = scored_game(0)
    g.step(BID_3)
    assert g.landlord == 0 and g.bid == 3 and g.phase == Phase.DOUBLE
    assert g.bids.tolist() == [3, -1, -1]


@pytest.mark.parametrize("bids,landlord,base", [
    ((BID_1, BID_PASS, BID_PASS), 0, 1),
    ((BID_PASS, BID_1, BID_PASS), 1, 1),
    ((BID_PASS, BID_PASS, BID_2), 2, 2),
    ((BID_1, BID_2, BID_PASS), 1, 2),
    ((BID_PASS, BID_2, BID_3), 2, 3),
])
def test_r3_highest_bidder_is_landlord_and_bid_is_base(bids, landlord, base):
    g = scored_game(0)
    for a in bids:
        g.step(a)
    assert g.landlord == landlord and g.bid == base
    assert g.role(landlord) == 0
    assert g.role((landlord + 1) % 3) == 1 and g.role((landlord + 2) % 3) == 2
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    assert g.phase == Phase.PLAY and g.current_player == landlord


def test_r3_role_is_unknown_before_bidding_ends():
    g = scored_game(0)
    assert [g.role(s) for s in range(3)] == [-1, -1, -1]
    assert g.landlord == -1


# --------------------------------------------------------------------------- R4 void hand
@pytest.mark.parametrize("first", [0, 1, 2])
def test_r4_all_pass_voids_the_hand(first):
    g = scored_game(first)
    for _ in range(3):
        g.step(BID_PASS)
    assert g.void and g.is_over and g.phase == Phase.OVER
    assert g.scores.tolist() == [0, 0, 0]
    assert g.landlord == -1 and g.winner == -1
    assert g.next_first_bidder == (first + 1) % 3
    assert g.legal_actions().size == 0
    assert not g.legal_action_mask().any()
    snap = snapshot(g)
    for a in (BID_PASS, BID_1, NO_DOUBLE, PASS, m("3")):
        with pytest.raises(IllegalActionError, match="over"):
            g.step(a)
    assert_same_state(g, snap)


def test_r4_two_passes_then_a_bid_is_not_void():
    g = scored_game(0)
    g.step(BID_PASS)
    g.step(BID_PASS)
    assert not g.is_over
    g.step(BID_1)
    assert not g.void and g.landlord == 2 and g.bid == 1


# --------------------------------------------------------------------------- R5 secret doubling
@pytest.mark.parametrize("first_choice", [NO_DOUBLE, DOUBLE])
def test_r5_first_doubling_choice_is_hidden_until_both_chose(first_choice):
    g = scored_game(0)
    g.step(BID_3)
    assert g.phase == Phase.DOUBLE and g.current_player == 1  # farmer after the landlord first
    assert g.legal_actions().tolist() == [NO_DOUBLE, DOUBLE]
    g.step(first_choice)
    assert g.phase == Phase.DOUBLE and g.current_player == 2
    assert not g.doubles_revealed
    pub = g.public_history()
    assert pub[-1] == (1, HIDDEN)
    assert first_choice not in [a for _, a in pub]
    assert pub[0] == (0, BID_3)  # bids stay public
    assert g.history[-1] == (1, first_choice)  # the full history is the referee's view
    g.step(DOUBLE)
    assert g.doubles_revealed
    pub = g.public_history()
    assert pub[-2:] == [(1, first_choice), (2, DOUBLE)]
    assert HIDDEN not in [a for _, a in pub]
    assert g.double_choice.tolist() == [-1, int(first_choice == DOUBLE), 1]


def test_r5_both_choices_revealed_together():
    g = scored_game(0)
    g.step(BID_1)
    g.step(BID_2)
    g.step(BID_PASS)  # landlord seat 1; farmers 2 then 0
    assert g.current_player == 2
    g.step(DOUBLE)
    assert [a for _, a in g.public_history()][-1] == HIDDEN
    assert g.current_player == 0
    g.step(NO_DOUBLE)
    assert g.doubles_revealed
    assert g.public_history()[-2:] == [(2, DOUBLE), (0, NO_DOUBLE)]
    assert g.doubled().tolist() == [False, False, True]


# --------------------------------------------------------------------------- R6 redouble
def test_r6_no_one_doubled_means_no_redouble_phase():
    g = scored_game(0)
    g.step(BID_2)
    g.step(BID_PASS)
    g.step(BID_PASS)
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    assert g.phase == Phase.PLAY and g.current_player == 0
    assert not g.redoubled
    assert NO_REDOUBLE not in g.legal_actions() and REDOUBLE not in g.legal_actions()
    with pytest.raises(IllegalActionError):
        g.step(REDOUBLE)


@pytest.mark.parametrize("d1,d2", [(True, False), (False, True), (True, True)])
def test_r6_someone_doubled_landlord_chooses_redouble(d1, d2):
    g = scored_game(0)
    g.step(BID_3)
    g.step(DOUBLE if d1 else NO_DOUBLE)
    g.step(DOUBLE if d2 else NO_DOUBLE)
    assert g.phase == Phase.REDOUBLE and g.current_player == 0
    assert g.legal_actions().tolist() == [NO_REDOUBLE, REDOUBLE]
    g.step(REDOUBLE)
    assert g.redoubled and g.phase == Phase.PLAY


@pytest.mark.parametrize("d1", [False, True])
@pytest.mark.parametrize("d2", [False, True])
@pytest.mark.parametrize("redouble", [False, True])
def test_r6_redouble_multiplies_only_doubled_farmers(d1, d2, redouble):
    g = scored_game(0)
    g.step(BID_3)
    g.step(DOUBLE if d1 else NO_DOUBLE)
    g.step(DOUBLE if d2 else NO_DOUBLE)
    if d1 or d2:
        g.step(REDOUBLE if redouble else NO_REDOUBLE)
    play(g, FARMER_WINS)
    assert g.winner == 1 and g.bombs == 1 and g.rockets == 1
    r = int(redouble and (d1 or d2))
    # bid 3, farmers win, bomb + rocket: 3 * 2^(2 + d + d*r)
    f1 = 3 * 2 ** (2 + d1 + d1 * r)
    f2 = 3 * 2 ** (2 + d2 + d2 * r)
    assert g.scores.tolist() == [-(f1 + f2), f1, f2]


# --------------------------------------------------------------------------- R7 bottom cards
def test_r7_bottom_joins_landlord_only_after_doubling_and_redouble():
    g = scored_game(0)
    bottom = parse_cards(SCORED[1])
    hand0 = parse_cards(SCORED[0][0])
    g.step(BID_3)
    assert g.phase == Phase.DOUBLE
    assert g.cards_left().tolist() == [17, 17, 17] and not g.bottom_revealed
    g.step(DOUBLE)
    g.step(NO_DOUBLE)
    assert g.phase == Phase.REDOUBLE
    assert g.cards_left().tolist() == [17, 17, 17] and not g.bottom_revealed
    g.step(NO_REDOUBLE)
    assert g.phase == Phase.PLAY and g.bottom_revealed
    assert g.cards_left().tolist() == [20, 17, 17]
    assert np.array_equal(g.hands[0], hand0 + bottom)
    assert np.array_equal(g.bottom, bottom)
    assert g.current_player == 0 and g.last_move == PASS  # landlord leads


@pytest.mark.parametrize("landlord", [0, 1, 2])
def test_r7_landlord_leads_first(landlord):
    bids = [BID_PASS] * 3
    bids[landlord] = BID_1
    g = scored_game(0)
    for a in bids:
        g.step(a)
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    assert g.phase == Phase.PLAY and g.current_player == g.landlord == landlord
    assert int(g.hands[landlord].sum()) == 20
    assert sorted(g.cards_left().tolist()) == [17, 17, 20]


# --------------------------------------------------------------------------- R8 leading / responding
def test_r8_no_pass_on_lead():
    g = to_play(scored_game(0))
    assert g.last_move == PASS
    assert PASS not in g.legal_actions()
    assert not g.legal_action_mask()[PASS]
    snap = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.step(PASS)
    assert_same_state(g, snap)


def test_r8_lead_may_be_any_move_held():
    g = to_play(scored_game(0))
    ids = g.legal_actions()
    assert np.array_equal(ids, legal_ids(g.hands[0]))
    for cards in ("3", "33", "333", "3334", "34567", "333444", "33344456", "2"):
        assert m(cards) in ids, cards
    assert m("BR") not in ids  # not held


def test_r8_responder_may_pass_and_must_beat():
    g = to_play(scored_game(0))
    g.step(m("4"))
    assert g.current_player == 1 and g.last_move == m("4")
    ids = g.legal_actions()
    assert PASS in ids and g.is_legal(PASS)
    assert m("5") in ids and m("BR") in ids and m("AAAA") in ids  # higher single, rocket, bomb
    for bad in ("3", "4", "33", "34567"):
        assert not g.is_legal(m(bad)), bad
        with pytest.raises(IllegalActionError):
            g.step(m(bad))


def test_r8_two_passes_return_the_lead_to_last_player():
    g = to_play(scored_game(0))
    play(g, ["4", "BR", P])
    assert g.current_player == 0 and g.last_move == m("BR")
    g.step(P)
    # two consecutive passes after seat 1's rocket: seat 1 leads any move, may not pass
    assert g.current_player == 1 and g.last_move == PASS
    assert PASS not in g.legal_actions()
    assert np.array_equal(g.legal_actions(), legal_ids(g.hands[1]))
    g.step(m("AA"))  # a pair, unrelated to the rocket it led after
    assert g.last_move == m("AA") and g.last_mover == 1


def test_r8_a_play_between_passes_resets_the_count():
    g = to_play(scored_game(0))
    play(g, ["4", P, "8", P])  # seat 1 passes, seat 2 plays, the landlord passes
    assert g.current_player == 1 and g.last_move == m("8")  # only one pass since seat 2's play
    assert PASS in g.legal_actions()
    g.step(P)
    assert g.current_player == 2 and g.last_move == PASS and g.last_mover == 2
    assert PASS not in g.legal_actions()


# --------------------------------------------------------------------------- R17 end of hand
def test_r17_hand_ends_when_a_farmer_plays_last_card_and_both_farmers_win():
    g = to_play(scored_game(0))
    play(g, FARMER_WINS[:-1])
    assert not g.is_over and int(g.hands[1].sum()) == 11
    g.step(m("3456789TJQK"))
    assert g.is_over and g.phase == Phase.OVER and g.winner == 1
    assert g.current_player == -1
    assert g.cards_left().tolist() == [18, 0, 17]  # the others still hold cards
    assert g.scores[1] > 0 and g.scores[2] > 0 and g.scores[0] < 0
    assert g.legal_actions().size == 0
    with pytest.raises(IllegalActionError, match="over"):
        g.step(PASS)


def test_r17_landlord_going_out_wins_against_both_farmers():
    g = Game.from_deal(*SPRING, 0, rules="douzero", landlord=0)
    play(g, SPRING_SCRIPT)
    assert g.is_over and g.winner == 0
    assert g.scores[0] > 0 and g.scores[1] < 0 and g.scores[2] < 0


# --------------------------------------------------------------------------- R18 multipliers
def test_r18_spring_doubles_and_bombs_rockets_count():
    g = Game.from_deal(*SPRING, 0, rules="douzero", landlord=0)
    assert g.bid == 1 and g.phase == Phase.PLAY
    play(g, SPRING_SCRIPT)
    assert g.winner == 0 and g.spring and not g.anti_spring
    assert g.bombs == 1 and g.rockets == 1
    assert g.moves_made.tolist() == [4, 0, 0]
    # 1 * 2^(bomb + rocket + spring) = 8 per farmer
    assert g.scores.tolist() == [16, -8, -8]


def test_r18_no_spring_once_a_farmer_played():
    g = Game.from_deal(*SPRING, 0, rules="douzero", landlord=0)
    play(g, NO_SPRING_SCRIPT)
    assert g.winner == 0 and not g.spring and not g.anti_spring
    assert g.bombs == 2 and g.rockets == 1
    assert g.scores.tolist() == [16, -8, -8]  # 2^(2 bombs + 1 rocket), no spring


def test_r18_anti_spring_doubles():
    g = scored_game(0, rules="douzero", landlord=0)
    play(g, FARMER_WINS_ANTI)
    assert g.winner == 1 and g.anti_spring and not g.spring
    assert g.moves_made[0] == 1
    assert g.scores.tolist() == [-16, 8, 8]  # 1 * 2^(bomb + rocket + anti-spring)


def test_r18_no_anti_spring_when_landlord_played_twice():
    g = scored_game(0, rules="douzero", landlord=0)
    play(g, FARMER_WINS)
    assert g.winner == 1 and not g.anti_spring and not g.spring
    assert g.moves_made[0] == 2
    assert g.scores.tolist() == [-8, 4, 4]


@pytest.mark.parametrize("bomb,rocket", [(False, False), (True, False), (False, True), (True, True)])
def test_r18_bomb_and_rocket_each_double(bomb, rocket):
    # farmer 1 sheds AAAA and BR either whole (bomb / rocket) or split (A + AAA, B + R)
    aces = ["AAAA", P, P] if bomb else ["A", P, P, "AAA", P, P]
    jokers = ["BR", P, P] if rocket else ["B", P, P, "R", P, P]
    g = scored_game(0, rules="douzero", landlord=0)
    play(g, ["4", P, P, "5", P, P, "6"] + aces + jokers + ["3456789TJQK"])
    assert g.winner == 1 and g.moves_made[0] == 3 and not g.anti_spring
    assert (g.bombs, g.rockets) == (int(bomb), int(rocket))
    f = 2 ** (bomb + rocket)
    assert g.scores.tolist() == [-2 * f, f, f]


# --------------------------------------------------------------------------- R19 worked example
def test_r19_worked_example_through_a_full_hand():
    g = scored_game(0)
    g.step(BID_3)
    g.step(DOUBLE)  # farmer 1 doubles
    g.step(NO_DOUBLE)  # farmer 2 does not
    g.step(REDOUBLE)  # the landlord redoubles
    play(g, FARMER_WINS)
    assert g.bombs == 1 and g.rockets == 1 and g.winner == 1
    assert not g.spring and not g.anti_spring
    assert g.scores.tolist() == [-60, 48, 12]
    assert int(g.scores.sum()) == 0


def test_r19_void_hand_scores_zero():
    g = scored_game(1)
    for _ in range(3):
        g.step(BID_PASS)
    assert g.void and g.scores.tolist() == [0, 0, 0]


# --------------------------------------------------------------------------- R20 defaults
def test_r20_default_actions_per_phase():
    g = scored_game(0)
    assert g.default_action() == BID_PASS
    g.step(BID_3)
    assert g.default_action() == NO_DOUBLE
    g.step(DOUBLE)
    assert g.default_action() == NO_DOUBLE
    g.step(DOUBLE)
    assert g.default_action() == NO_REDOUBLE
    g.step(NO_REDOUBLE)
    # lead: the landlord's smallest single (it holds 3s)
    assert g.default_action() == m("3")
    g.step(m("4"))
    assert g.default_action() == PASS  # respond
    g.step(P)
    g.step(m("8"))  # seat 2 plays its only 8
    assert g.default_action() == PASS
    g.step(P)
    g.step(P)
    # seat 2 leads; its smallest card now is 9 (the 8 is gone)
    assert g.current_player == 2 and g.last_move == PASS
    assert g.default_action() == m("9")


def test_r20_default_on_over_raises():
    g = scored_game(0)
    for _ in range(3):
        g.step(BID_PASS)
    with pytest.raises(IllegalActionError):
        g.default_action()


@pytest.mark.parametrize("seed", range(10))
def test_r20_only_default_actions_finish_a_hand(seed):
    g = Game.deal(seed, rules="bidding=false", landlord=seed % 3)
    n = 0
    while not g.is_over:
        a = g.default_action()
        assert g.is_legal(a)
        g.step(a)
        n += 1
        assert n < 200
    assert g.winner >= 0 and int(g.scores.sum()) == 0
    assert not g.doubled().any() and not g.redoubled


def test_r20_default_bids_void_the_hand():
    g = Game.deal(3)
    for _ in range(3):
        g.step(g.default_action())
    assert g.void and g.is_over


# --------------------------------------------------------------------------- R21 public information
def test_r21_cards_left_always_known():
    g = scored_game(0)
    seen = []
    g.step(BID_3)
    seen.append(g.cards_left().tolist())
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    seen.append(g.cards_left().tolist())
    play(g, ["33344456", P, "999TTTJQ"])
    seen.append(g.cards_left().tolist())
    assert seen == [[17, 17, 17], [20, 17, 17], [12, 17, 9]]
    assert np.array_equal(g.cards_left(), g.hands.sum(axis=1))


def test_r21_bottom_public_only_after_doubling():
    g = scored_game(0)
    g.step(BID_3)
    g.step(DOUBLE)
    assert not g.bottom_revealed
    assert "bottom" not in g.render()  # a player's view shows no bottom yet
    assert "bottom" in g.render(spectator=True)
    g.step(NO_DOUBLE)
    g.step(REDOUBLE)
    assert g.bottom_revealed
    assert "bottom 222" in g.render()


def test_r21_played_moves_are_public():
    g = to_play(scored_game(0), doubles=(DOUBLE, NO_DOUBLE), redouble=NO_REDOUBLE)
    play(g, ["4", "BR"])
    assert g.public_history()[-2:] == [(0, m("4")), (1, m("BR"))]
    assert g.public_history() == g.history


# --------------------------------------------------------------------------- R22 only this rule set
def test_r22_no_grab_the_landlord_rebid():
    g = scored_game(0)
    g.step(BID_1)
    g.step(BID_PASS)
    g.step(BID_PASS)
    # seat 0 bid once; no second round: it is landlord and bidding is over
    assert g.phase == Phase.DOUBLE and g.landlord == 0
    assert not any(g.is_legal(a) for a in (BID_PASS, BID_1, BID_2, BID_3))
    g2 = scored_game(0)
    g2.step(BID_1)
    g2.step(BID_2)
    g2.step(BID_PASS)
    # seat 0 was outbid but may not bid again
    assert g2.phase == Phase.DOUBLE and g2.landlord == 1
    with pytest.raises(IllegalActionError):
        g2.step(BID_3, seat=0)


def test_r22_four_plus_two_jokers_is_no_move():
    with pytest.raises(ValueError):
        move_id("3333BR")
    g = Game.from_deal(*FOUR_JOKERS, 0, rules="douzero", landlord=0)
    target = parse_cards("3333BR")
    ids = g.legal_actions()
    assert not any(np.array_equal(MOVE_COUNTS[i], target) for i in ids)
    assert m("3333") in ids and m("BR") in ids


# --------------------------------------------------------------------------- illegal input
def _positions():
    """(label, game) pairs in every phase, each with a seat to act."""
    out = [("bid", scored_game(0))]
    g = scored_game(0)
    g.step(BID_2)
    out.append(("bid2", g))
    g = scored_game(0)
    g.step(BID_3)
    out.append(("double", g))
    g = scored_game(0)
    g.step(BID_3)
    g.step(DOUBLE)
    g.step(NO_DOUBLE)
    out.append(("redouble", g))
    out.append(("lead", to_play(scored_game(0))))
    g = to_play(scored_game(0))
    g.step(m("4"))
    out.append(("respond", g))
    return out


@pytest.mark.parametrize("label,g", _positions(), ids=[p[0] for p in _positions()])
def test_illegal_input_out_of_turn_seat(label, g):
    snap = snapshot(g)
    other = (g.current_player + 1) % 3
    a = g.legal_actions()[0]
    with pytest.raises(IllegalActionError, match=f"seat {other}.*out of turn.*seat {g.current_player}"):
        g.step(a, seat=other)
    assert_same_state(g, snap)
    g.step(a, seat=snap["current_player"])  # the right seat is accepted
    assert len(g.history) == len(snap["history"]) + 1


@pytest.mark.parametrize("label,g", _positions(), ids=[p[0] for p in _positions()])
def test_illegal_input_wrong_action_id(label, g):
    legal = set(g.legal_actions().tolist())
    candidates = [PASS, m("3"), m("BR"), m("2222"), BID_PASS, BID_1, BID_3, NO_DOUBLE, DOUBLE,
                  NO_REDOUBLE, REDOUBLE]
    bad = [a for a in candidates if a not in legal]
    assert len(bad) >= 5
    snap = snapshot(g)
    for a in bad:
        assert not g.is_legal(a)
        assert not g.legal_action_mask()[a]
        with pytest.raises(IllegalActionError, match="illegal"):
            g.step(a)
        assert_same_state(g, snap)


@pytest.mark.parametrize("label,g", _positions(), ids=[p[0] for p in _positions()])
@pytest.mark.parametrize("a", [-1, NUM_ACTIONS, NUM_ACTIONS + 5, 10 ** 12])
def test_illegal_input_out_of_range_id(label, g, a):
    snap = snapshot(g)
    assert not g.is_legal(a)
    with pytest.raises(IllegalActionError, match="out of range"):
        g.step(a)
    assert_same_state(g, snap)


@pytest.mark.parametrize("bad", [None, "abc", [1], object(), {}], ids=["None", "str", "list", "object", "dict"])
def test_illegal_input_non_integer(bad):
    g = scored_game(0)
    snap = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.step(bad)
    assert_same_state(g, snap)


@pytest.mark.parametrize("phase", ["bid", "lead"])
def test_illegal_input_fractional_float_is_not_truncated(phase):
    # 24640.5 is no action id; int() would silently truncate it to a legal one
    g = scored_game(0) if phase == "bid" else to_play(scored_game(0))
    a = BID_PASS if phase == "bid" else m("3")
    assert g.is_legal(a)
    snap = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.step(a + 0.5)
    assert_same_state(g, snap)


def test_illegal_input_digit_string_is_not_an_action_id():
    g = scored_game(0)
    snap = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.step(str(BID_PASS))
    assert_same_state(g, snap)


def test_illegal_input_non_integer_message():
    g = scored_game(0)
    with pytest.raises(IllegalActionError, match="integer"):
        g.step("abc")


def test_numpy_integer_actions_accepted():
    g = scored_game(0)
    g.step(np.int64(BID_3))
    g.step(np.int32(NO_DOUBLE), seat=np.int64(1))
    assert g.history == [(0, BID_3), (1, NO_DOUBLE)]
    assert all(type(a) is int for _, a in g.history)


def test_illegal_input_after_hand_over():
    g = to_play(scored_game(0))
    play(g, FARMER_WINS)
    snap = snapshot(g)
    for a in (PASS, m("5"), BID_PASS, NO_DOUBLE, -1, "x"):
        with pytest.raises(IllegalActionError, match="over"):
            g.step(a)
    with pytest.raises(IllegalActionError):
        g.step(PASS, seat=0)
    assert_same_state(g, snap)


def test_illegal_action_error_is_value_error():
    assert issubclass(IllegalActionError, ValueError)


# --------------------------------------------------------------------------- construction errors
GOOD_HANDS, GOOD_BOTTOM = SCORED


@pytest.mark.parametrize("hands,bottom,match", [
    ([GOOD_HANDS[0][:-1], GOOD_HANDS[1], GOOD_HANDS[2] + "8"], GOOD_BOTTOM, "17/17/17"),  # 16/17/18
    ([GOOD_HANDS[0] + "2", GOOD_HANDS[1], GOOD_HANDS[2]], "22", "17/17/17"),  # 18 + 2
    ([GOOD_HANDS[0], GOOD_HANDS[1], GOOD_HANDS[2]], "2222", "17/17/17"),  # bottom of 4 (55 cards)
    ([GOOD_HANDS[0], GOOD_HANDS[1], GOOD_HANDS[2][:-1] + "3"], GOOD_BOTTOM, "54-card"),  # five 3s
    ([GOOD_HANDS[0], GOOD_HANDS[1], GOOD_HANDS[2]], "22B", "54-card"),  # two black jokers, three 2s
    (GOOD_HANDS[:2], GOOD_BOTTOM, "3 hands"),
    (GOOD_HANDS + ["3"], GOOD_BOTTOM, "3 hands"),
])
def test_construction_rejects_bad_deals(hands, bottom, match):
    with pytest.raises(ValueError, match=match):
        Game.from_deal(hands, bottom, 0)


def test_construction_rejects_bad_card_strings():
    with pytest.raises(ValueError):
        Game.from_deal([GOOD_HANDS[0][:-1] + "X", GOOD_HANDS[1], GOOD_HANDS[2]], GOOD_BOTTOM, 0)


@pytest.mark.parametrize("fb", [-1, 3, "0", None, 1.5])
def test_construction_rejects_bad_first_bidder(fb):
    with pytest.raises(ValueError, match="first_bidder"):
        Game.from_deal(GOOD_HANDS, GOOD_BOTTOM, fb)


@pytest.mark.parametrize("ll", [-1, 3, "1"])
def test_construction_rejects_bad_landlord(ll):
    with pytest.raises(ValueError, match="landlord"):
        Game.from_deal(GOOD_HANDS, GOOD_BOTTOM, 0, landlord=ll)


def test_construction_accepts_counts_and_does_not_alias_inputs():
    hands = [parse_cards(h) for h in GOOD_HANDS]
    bottom = parse_cards(GOOD_BOTTOM)
    g = Game.from_deal(hands, bottom, 1)
    assert np.array_equal(g.hands, np.stack(hands)) and g.current_player == 1
    to_play(g, bid_seq=(BID_3,))
    assert np.array_equal(hands[1], parse_cards(GOOD_HANDS[1]))  # inputs untouched
    assert np.array_equal(bottom, parse_cards(GOOD_BOTTOM))


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("landlord", [0, 1, 2])
def test_landlord_option_skips_bidding(landlord):
    g = Game.deal(7, rules="bidding=false", landlord=landlord)
    assert g.phase == Phase.DOUBLE and g.landlord == landlord and g.bid == 1
    assert g.current_player == (landlord + 1) % 3
    assert g.bids.tolist() == [-1, -1, -1] and g.history == []
    assert g.cards_left().tolist() == [17, 17, 17]


@pytest.mark.parametrize("landlord", [0, 1, 2])
def test_landlord_option_without_doubling_starts_play(landlord):
    g = Game.deal(7, rules="douzero", landlord=landlord)
    assert g.phase == Phase.PLAY and g.current_player == landlord and g.bid == 1
    assert g.bottom_revealed and int(g.hands[landlord].sum()) == 20
    assert PASS not in g.legal_actions()


def test_doubling_false_with_bidding_goes_straight_to_play():
    g = scored_game(0, rules="doubling=false")
    g.step(BID_PASS)
    g.step(BID_2)
    g.step(BID_PASS)
    assert g.phase == Phase.PLAY and g.landlord == 1 and g.bid == 2
    assert g.current_player == 1 and g.bottom_revealed
    with pytest.raises(IllegalActionError):
        g.step(DOUBLE)


def test_copy_is_independent():
    g = to_play(scored_game(0))
    h = g.copy()
    h.step(m("4"))
    assert g.last_move == PASS and g.history != h.history
    assert int(g.hands[0].sum()) == 20 and int(h.hands[0].sum()) == 19


# --------------------------------------------------------------------------- random play property
N_RANDOM = 300


def _expected_scores(g: Game) -> list[int]:
    """R19 computed from the history alone, independent of ``scoring.py``."""
    if g.void:
        return [0, 0, 0]
    plays = [(s, a) for s, a in g.history if 0 < a < NUM_MOVES]
    bombs = sum(MOVE_TYPE[a] == MoveType.BOMB for _, a in plays)
    rockets = sum(MOVE_TYPE[a] == MoveType.ROCKET for _, a in plays)
    ll = g.landlord
    farmers_won = g.winner != ll
    ll_moves = sum(s == ll for s, _ in plays)
    farmer_moves = len(plays) - ll_moves
    spring = (not farmers_won) and farmer_moves == 0
    anti = farmers_won and ll_moves == 1
    assert g.spring == spring and g.anti_spring == anti
    assert g.bombs == bombs and g.rockets == rockets
    doubled = {s for s, a in g.history if a == DOUBLE}
    r = any(a == REDOUBLE for _, a in g.history)
    sign = 1 if farmers_won else -1
    out = [0, 0, 0]
    for f in range(3):
        if f != ll:
            d = int(f in doubled)
            out[f] = g.bid * sign * 2 ** (bombs + rockets + spring + anti + d + d * r)
    out[ll] = -sum(out)
    return out


def _check_conservation(g: Game) -> None:
    total = g.hands.sum(axis=0) + g.played.sum(axis=0) + (0 if g.bottom_revealed else g.bottom)
    assert np.array_equal(total, MAX_COUNTS)
    assert (g.hands >= 0).all()
    assert g.cards_left().tolist() == g.hands.sum(axis=1).tolist()  # R21: the public count is the true one


def _random_game(seed: int, **kw) -> Game:
    rng = np.random.default_rng(10_000 + seed)
    g = Game.deal(seed, **kw)
    n = 0
    while not g.is_over:
        ids = g.legal_actions()
        assert ids.size > 0
        mask = g.legal_action_mask()
        assert mask.shape == (NUM_ACTIONS,) and int(mask.sum()) == ids.size and mask[ids].all()
        if g.phase != Phase.PLAY:
            assert not mask[:NUM_MOVES].any()
        a = int(rng.choice(ids))
        assert g.is_legal(a)
        seat = g.current_player
        before = g.hands[seat].copy()
        g.step(a, seat=seat)
        if 0 < a < NUM_MOVES:
            assert np.array_equal(g.hands[seat], before - MOVE_COUNTS[a])
        _check_conservation(g)
        n += 1
        assert n <= 3 + 2 + 1 + 20 * 3 * 3, "hand did not terminate"
    return g


def test_random_games_property():
    outcomes = {"void": 0, "landlord": 0, "farmers": 0, "redouble_phase": 0}
    for seed in range(N_RANDOM):
        g = _random_game(seed)
        assert g.phase == Phase.OVER and g.current_player == -1
        assert int(g.scores.sum()) == 0
        assert g.scores.tolist() == _expected_scores(g)
        assert g.legal_actions().size == 0
        if g.void:
            outcomes["void"] += 1
            assert (g.bids == 0).all() and g.winner == -1
            continue
        assert g.cards_left()[g.winner] == 0
        assert (g.cards_left() > 0).sum() == 2
        assert g.bid == int(g.bids.max()) and g.landlord == int(np.argmax(g.bids))
        if any(a in (NO_REDOUBLE, REDOUBLE) for _, a in g.history):
            outcomes["redouble_phase"] += 1
            assert g.doubled().any()
        outcomes["landlord" if g.winner == g.landlord else "farmers"] += 1
    # the property run really exercised every ending
    assert all(v > 0 for v in outcomes.values()), outcomes


@pytest.mark.parametrize("kw", [{"rules": "bidding=false", "landlord": 1}, {"rules": "douzero", "landlord": 2},
                                {"rules": "doubling=false"}])
def test_random_games_with_options(kw):
    for seed in range(40):
        g = _random_game(seed, **kw)
        assert int(g.scores.sum()) == 0
        assert g.scores.tolist() == _expected_scores(g)
        acts = [a for _, a in g.history]
        if "landlord" in kw:
            assert g.landlord == kw["landlord"] and g.bid == 1
            assert not any(BID_PASS <= a <= BID_3 for a in acts)
        if not Rules.of(kw["rules"]).doubling:
            assert not any(a >= NO_DOUBLE for a in acts)


def test_seeded_deals_reproduce():
    for seed in range(20):
        a, b = Game.deal(seed), Game.deal(seed)
        assert np.array_equal(a.hands, b.hands) and np.array_equal(a.bottom, b.bottom)
        assert a.first_bidder == b.first_bidder
        ga, gb = _random_game(seed), _random_game(seed)
        assert ga.history == gb.history and ga.scores.tolist() == gb.scores.tolist()
    c, d = Game.deal(1), Game.deal(2)
    assert not np.array_equal(c.hands, d.hands)
    fbs = {Game.deal(s).first_bidder for s in range(30)}
    assert fbs == {0, 1, 2}
    assert Game.deal(5, first_bidder=2).current_player == 2
    g = Game.deal(np.random.default_rng(5))
    assert np.array_equal(g.hands, Game.deal(5).hands)


# --------------------------------------------------------------------------- input validation (issue 12)
@pytest.mark.parametrize("kw", [{"first_bidder": 7}, {"first_bidder": 1.5}, {"landlord": 3}, {"landlord": 0.0}])
def test_rejected_deal_leaves_a_given_generator_unchanged(kw):
    """The seats are checked before the deal is drawn from the caller's generator."""
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=next(iter(kw))):
        Game.deal(rng, **kw)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("hands", [None, 5, "333444555", {"a": 1}], ids=["None", "int", "str", "dict"])
def test_hands_that_are_no_sequence_of_hands_raise_a_type_error_naming_them(hands):
    with pytest.raises(TypeError, match=r"hands must be a sequence of 3 hands.*got " + type(hands).__name__):
        Game.from_deal(hands, "QKA", 0)


def test_seats_are_integers_never_floats():
    for bad in (1.0, np.float64(1.0), np.array([0, 1])):
        with pytest.raises(ValueError, match="first_bidder must be 0, 1 or 2"):
            Game.from_deal(GOOD_HANDS, GOOD_BOTTOM, bad)
    g = Game.from_deal(GOOD_HANDS, GOOD_BOTTOM, np.int64(1), rules="douzero", landlord=np.int8(2))
    assert type(g.first_bidder) is int and g.landlord == 2 and type(g.landlord) is int
    g = scored_game(0)
    snap = snapshot(g)
    for bad in (0.0, 1.5, "0", np.array([0, 1])):
        with pytest.raises(IllegalActionError, match="seat must be 0, 1 or 2"):
            g.step(BID_3, seat=bad)
    assert_same_state(g, snap)


def test_size_one_integer_array_actions_are_read_as_their_id():
    """Game.step reads ids through actions.as_action_id, as the seat env does."""
    g = scored_game(0)
    g.step(np.array([BID_3]))
    g.step(np.array([[NO_DOUBLE]], dtype=np.int16))
    assert g.history == [(0, BID_3), (1, NO_DOUBLE)] and all(type(a) is int for _, a in g.history)
    snap = snapshot(g)
    for bad in (np.array([NO_DOUBLE, DOUBLE]), np.array([float(NO_DOUBLE)]), np.array([], dtype=int)):
        with pytest.raises(IllegalActionError, match="integer"):
            g.step(bad)
    assert_same_state(g, snap)


def test_is_legal_never_truncates_a_float():
    g = scored_game(0)
    for bad in (BID_PASS + 0.5, float(BID_PASS), "24640", None, [BID_PASS]):
        assert not g.is_legal(bad)  # 24640.5 was read as the legal bid pass
    assert g.is_legal(BID_PASS) and g.is_legal(np.int64(BID_PASS)) and g.is_legal(np.array([BID_PASS]))
    g = to_play(g)
    assert g.is_legal(m("3")) and not g.is_legal(m("3") + 0.9)
