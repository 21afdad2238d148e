"""The move table and classification (R2, R9-R16), checked against tests/helpers/bruteforce.py."""
from __future__ import annotations

import collections
import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bruteforce as bf
from ddz_env.actions import BID_2, BID_3, NUM_ACTIONS, action_from_string, action_to_string, as_action_id, bid_action
from ddz_env.cards import RANKS, parse_cards, to_string
from ddz_env.moves import (
    MOVE_COUNTS, MOVE_KICKERS, MOVE_LENGTH, MOVE_RANK, MOVE_STRINGS, MOVE_TYPE, NUM_MOVES, MoveInfo, MoveType,
    beats, classify, move_id, move_to_string,
)

EXPECTED_PER_TYPE = {
    MoveType.PASS: 1,
    MoveType.SINGLE: 15,
    MoveType.PAIR: 13,
    MoveType.TRIO: 13,
    MoveType.TRIO_SINGLE: 182,
    MoveType.TRIO_PAIR: 156,
    MoveType.STRAIGHT: 36,
    MoveType.PAIR_CHAIN: 52,
    MoveType.AIRPLANE: 45,
    MoveType.AIRPLANE_SINGLES: 18_990,
    MoveType.AIRPLANE_PAIRS: 2_939,
    MoveType.FOUR_TWO_SINGLES: 1_326,
    MoveType.FOUR_TWO_PAIRS: 858,
    MoveType.BOMB: 13,
    MoveType.ROCKET: 1,
}
CHAIN_TYPES = (MoveType.STRAIGHT, MoveType.PAIR_CHAIN, MoveType.AIRPLANE, MoveType.AIRPLANE_SINGLES,
               MoveType.AIRPLANE_PAIRS)
R = {ch: i for i, ch in enumerate(RANKS)}


def ids_of(t: MoveType) -> np.ndarray:
    return np.nonzero(MOVE_TYPE == int(t))[0]


# --- the table as a whole

def test_move_type_numbering():
    assert [int(t) for t in MoveType] == list(range(15))
    assert [t.name for t in MoveType] == [bf.TYPE_NAMES[i] for i in range(15)]


def test_table_size_and_shapes():
    assert NUM_MOVES == 24_640
    assert sum(EXPECTED_PER_TYPE.values()) == 24_640
    assert MOVE_COUNTS.shape == (NUM_MOVES, 15)
    assert MOVE_KICKERS.shape == (NUM_MOVES, 15)
    for a in (MOVE_TYPE, MOVE_LENGTH, MOVE_RANK):
        assert a.shape == (NUM_MOVES,)
    assert len(MOVE_STRINGS) == NUM_MOVES


@pytest.mark.parametrize("move_type, expected", list(EXPECTED_PER_TYPE.items()), ids=lambda x: getattr(x, "name", x))
def test_moves_per_type(move_type, expected):
    assert len(ids_of(move_type)) == expected


def test_pass_is_id_zero():
    assert MOVE_STRINGS[0] == "pass"
    assert MOVE_TYPE[0] == MoveType.PASS
    assert MOVE_RANK[0] == -1
    assert MOVE_COUNTS[0].sum() == 0 and MOVE_KICKERS[0].sum() == 0
    assert move_to_string(0) == "pass"
    assert move_id("pass") == 0 and move_id(" PASS ") == 0
    assert (MOVE_COUNTS[1:].sum(axis=1) > 0).all()


def test_every_move_is_listed_once():
    assert len(set(MOVE_STRINGS)) == NUM_MOVES
    assert len(np.unique(MOVE_COUNTS, axis=0)) == NUM_MOVES


def test_move_strings_are_canonical():
    for i in range(1, NUM_MOVES):
        assert MOVE_STRINGS[i] == to_string(MOVE_COUNTS[i])


def test_ids_contiguous_by_type_length_rank():
    keys = list(zip(MOVE_TYPE[1:].tolist(), MOVE_LENGTH[1:].tolist(), MOVE_RANK[1:].tolist()))
    assert keys == sorted(keys), "ids are not ordered by (type, length, main rank)"
    # hence every (type, length, rank) body group is one contiguous id range
    seen = set()
    for key, _ in itertools.groupby(keys):
        assert key not in seen
        seen.add(key)


def test_id_string_round_trip():
    for i in range(NUM_MOVES):
        s = move_to_string(i)
        assert s == MOVE_STRINGS[i]
        assert move_id(s) == i


@settings(max_examples=300)
@given(st.integers(1, NUM_MOVES - 1), st.randoms(use_true_random=False))
def test_move_id_accepts_any_order_and_case(i, rnd):
    cards = list(MOVE_STRINGS[i])
    rnd.shuffle(cards)
    text = "".join(cards).lower().replace("t", "10")
    assert move_id(text) == i
    assert move_id(parse_cards(text)) == i
    info = classify(text)
    assert info.id == i and info.cards == MOVE_STRINGS[i]


@pytest.mark.parametrize("bad", [-1, NUM_MOVES, NUM_MOVES + 10, 10**9])
def test_move_to_string_rejects_out_of_range_ids(bad):
    with pytest.raises(ValueError):
        move_to_string(bad)


# --- exhaustive comparison with the brute force

def test_every_table_entry_is_classified_identically_by_the_bruteforce():
    for i in range(1, NUM_MOVES):
        got = bf.classify_brute(MOVE_COUNTS[i])
        assert got == (int(MOVE_TYPE[i]), int(MOVE_LENGTH[i]), int(MOVE_RANK[i])), MOVE_STRINGS[i]


def test_kickers_are_the_cards_outside_the_body():
    for i in range(1, NUM_MOVES):
        body = bf.body_counts(int(MOVE_TYPE[i]), int(MOVE_LENGTH[i]), int(MOVE_RANK[i]))
        expected = MOVE_COUNTS[i].astype(int) - np.array(body)
        assert (expected >= 0).all(), MOVE_STRINGS[i]
        np.testing.assert_array_equal(MOVE_KICKERS[i], expected, err_msg=MOVE_STRINGS[i])


def test_table_is_exactly_the_moves_the_bruteforce_accepts():
    brute = bf.all_moves_brute()
    table = set(MOVE_STRINGS[1:])
    missing = sorted(set(brute) - table)
    extra = sorted(table - set(brute))
    assert not missing, f"{len(missing)} moves missing from the table, e.g. {missing[:10]}"
    assert not extra, f"{len(extra)} table entries are no move, e.g. {extra[:10]}"


def test_bruteforce_per_type_counts_agree_with_the_rulings_arithmetic():
    # an independent check of the reference itself
    counts = collections.Counter(info[0] for _, info in bf.all_moves_brute().values())
    assert {MoveType(t): n for t, n in counts.items()} == {t: n for t, n in EXPECTED_PER_TYPE.items() if t}


def test_bruteforce_rejects_what_classify_rejects_on_all_small_multisets():
    # every multiset of up to 5 cards: classify and the brute force agree on move / no move
    for size in range(1, 6):
        for c in bf._multisets(size, bf.DECK):
            counts = np.array(c, dtype=np.int8)
            brute = bf.classify_brute(counts)
            if brute is None:
                with pytest.raises(ValueError):
                    classify(counts)
            else:
                info = classify(counts)
                assert (int(info.type), info.length, info.rank) == brute


# --- classify: examples and errors

@pytest.mark.parametrize(
    "cards, move_type, length, rank",
    [
        ("3", MoveType.SINGLE, 1, "3"),
        ("R", MoveType.SINGLE, 1, "R"),
        ("B", MoveType.SINGLE, 1, "B"),
        ("22", MoveType.PAIR, 1, "2"),
        ("TTT", MoveType.TRIO, 1, "T"),
        ("3334", MoveType.TRIO_SINGLE, 1, "3"),
        ("4333", MoveType.TRIO_SINGLE, 1, "3"),
        ("222R", MoveType.TRIO_SINGLE, 1, "2"),
        ("33322", MoveType.TRIO_PAIR, 1, "3"),
        ("34567", MoveType.STRAIGHT, 5, "3"),
        ("3456789TJQKA", MoveType.STRAIGHT, 12, "3"),
        ("TJQKA", MoveType.STRAIGHT, 5, "T"),
        ("334455", MoveType.PAIR_CHAIN, 3, "3"),
        ("33445566778899TTJJQQ", MoveType.PAIR_CHAIN, 10, "3"),
        ("QQKKAA", MoveType.PAIR_CHAIN, 3, "Q"),
        ("333444", MoveType.AIRPLANE, 2, "3"),
        ("KKKAAA", MoveType.AIRPLANE, 2, "K"),
        ("333444555666777888", MoveType.AIRPLANE, 6, "3"),
        ("33344456", MoveType.AIRPLANE_SINGLES, 2, "3"),
        ("33344455", MoveType.AIRPLANE_SINGLES, 2, "3"),
        ("3334442R", MoveType.AIRPLANE_SINGLES, 2, "3"),
        ("777888999TTTJJJ34562", MoveType.AIRPLANE_SINGLES, 5, "7"),
        ("3334445566", MoveType.AIRPLANE_PAIRS, 2, "3"),
        ("JJJQQQKKKAAA33445566", MoveType.AIRPLANE_PAIRS, 4, "J"),
        ("333345", MoveType.FOUR_TWO_SINGLES, 1, "3"),
        ("333355", MoveType.FOUR_TWO_SINGLES, 1, "3"),
        ("2222BA", MoveType.FOUR_TWO_SINGLES, 1, "2"),
        ("33334455", MoveType.FOUR_TWO_PAIRS, 1, "3"),
        ("3333", MoveType.BOMB, 1, "3"),
        ("2222", MoveType.BOMB, 1, "2"),
        ("BR", MoveType.ROCKET, 1, "B"),
    ],
)
def test_classify_examples(cards, move_type, length, rank):
    info = classify(cards)
    assert isinstance(info, MoveInfo)
    assert info.type is move_type or info.type == move_type
    assert isinstance(info.type, MoveType)
    assert (info.length, info.rank) == (length, R[rank])
    assert info.rank_name == rank
    assert info.cards == to_string(parse_cards(cards))
    assert info.id == move_id(cards)
    assert bf.classify_brute(parse_cards(cards)) == (int(move_type), length, R[rank])


@pytest.mark.parametrize(
    "cards",
    [
        "34", "3344", "3456", "334", "33345", "333444555777", "JQKA2", "QKA2B", "KKAA22", "KKKAAA222",
        "AAA222", "BR3", "333BR", "3333BR", "33334444", "3333444", "33334", "333444BR",
        "3334445555", "3333444455", "33344434", "3333444555", "333555", "3355", "33445577", "344556",
    ],
)
def test_classify_rejects_cards_that_are_no_move(cards):
    with pytest.raises(ValueError) as err:
        classify(cards)
    assert repr(cards) in str(err.value)
    assert bf.classify_brute(parse_cards(cards)) is None


@pytest.mark.parametrize("cards", ["33X", "77777", "RR", "BB"])
def test_classify_rejects_malformed_card_strings(cards):
    with pytest.raises(ValueError) as err:
        classify(cards)
    assert repr(cards) in str(err.value)


def test_classify_pass():
    info = classify("pass")
    assert info.id == 0 and info.type == MoveType.PASS


# --- R1 / R2

def test_r1_single_ranks_are_ordered_3_to_red_joker():
    singles = ids_of(MoveType.SINGLE)
    assert [MOVE_STRINGS[i] for i in singles] == list(RANKS)
    for lo, hi in itertools.combinations(RANKS, 2):
        assert beats(hi, lo) and not beats(lo, hi)


def test_r2_rocket_is_the_two_jokers_and_never_a_pair():
    assert classify("BR").type == MoveType.ROCKET
    assert classify("RB").id == classify("BR").id
    for i in ids_of(MoveType.PAIR):
        assert MOVE_RANK[i] <= R["2"]
        assert MOVE_COUNTS[i, R["B"]] == 0 and MOVE_COUNTS[i, R["R"]] == 0
    assert len(ids_of(MoveType.ROCKET)) == 1


# --- R9: move types and chains

def test_r9_chains_never_hold_a_two_or_joker():
    for t in CHAIN_TYPES:
        for i in ids_of(t):
            body = MOVE_COUNTS[i] - MOVE_KICKERS[i]
            assert body[R["2"]:].sum() == 0, MOVE_STRINGS[i]
            assert MOVE_RANK[i] + MOVE_LENGTH[i] - 1 <= R["A"]
    for cards in ["JQKA2", "TJQKA2", "3456789TJQKA2", "QQKKAA22", "KKAA22", "KKKAAA222", "AAA222", "QKA2B",
                  "A2BR3"]:
        assert bf.classify_brute(parse_cards(cards)) is None
        with pytest.raises(ValueError):
            classify(cards)


def test_r9_chain_minimum_lengths():
    assert classify("34567").type == MoveType.STRAIGHT
    assert classify("334455").type == MoveType.PAIR_CHAIN
    assert classify("333444").type == MoveType.AIRPLANE
    for cards in ["3456", "3344", "789T"]:
        with pytest.raises(ValueError):
            classify(cards)
    assert classify("333").type == MoveType.TRIO
    assert MOVE_LENGTH[ids_of(MoveType.STRAIGHT)].min() == 5
    assert MOVE_LENGTH[ids_of(MoveType.PAIR_CHAIN)].min() == 3
    for t in (MoveType.AIRPLANE, MoveType.AIRPLANE_SINGLES, MoveType.AIRPLANE_PAIRS):
        assert MOVE_LENGTH[ids_of(t)].min() == 2


@pytest.mark.parametrize("move_type, width, max_len", [(MoveType.STRAIGHT, 1, 12), (MoveType.PAIR_CHAIN, 2, 10),
                                                      (MoveType.AIRPLANE, 3, 6)])
def test_r9_every_chain_of_each_length_exists_once(move_type, width, max_len):
    # chains of 3..A: a chain of length n may start at 12 - n + 1 ranks (no hand holds more than 20 cards)
    ids = ids_of(move_type)
    per_len = collections.Counter(MOVE_LENGTH[ids].tolist())
    min_len = {1: 5, 2: 3, 3: 2}[width]
    assert per_len == {n: 13 - n for n in range(min_len, max_len + 1)}
    for i in ids:
        body = MOVE_COUNTS[i]
        assert set(body[body > 0].tolist()) == {width}


def test_r9_non_chain_lengths_are_one():
    for t in MoveType:
        if t in CHAIN_TYPES or t == MoveType.PASS:
            continue
        assert (MOVE_LENGTH[ids_of(t)] == 1).all(), t


def test_r9_pairs_trios_bombs_of_every_rank_3_to_2():
    for t, width in ((MoveType.PAIR, 2), (MoveType.TRIO, 3), (MoveType.BOMB, 4)):
        assert [MOVE_STRINGS[i] for i in ids_of(t)] == [ch * width for ch in RANKS[:13]]


# --- R10: trio + single / trio + pair

def test_r10_trio_single_kicker_any_other_rank_joker_fine():
    assert classify("333B").type == MoveType.TRIO_SINGLE
    assert classify("222R").type == MoveType.TRIO_SINGLE
    assert classify("3332").type == MoveType.TRIO_SINGLE
    assert classify("3333").type == MoveType.BOMB          # the "single" of the trio's rank: a bomb
    for i in ids_of(MoveType.TRIO_SINGLE):
        k = MOVE_KICKERS[i]
        assert k.sum() == 1 and k[MOVE_RANK[i]] == 0
    kickers = collections.Counter(int(np.argmax(MOVE_KICKERS[i])) for i in ids_of(MoveType.TRIO_SINGLE))
    assert kickers[R["B"]] == 13 and kickers[R["R"]] == 13


def test_r10_trio_pair_needs_a_real_pair_never_the_jokers():
    assert classify("33322").type == MoveType.TRIO_PAIR
    assert classify("22233").type == MoveType.TRIO_PAIR
    for cards in ["333BR", "22BR2", "33345", "333B5"]:
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.TRIO_PAIR):
        k = MOVE_KICKERS[i]
        assert k.sum() == 2 and k.max() == 2 and k[MOVE_RANK[i]] == 0 and k[13:].sum() == 0


# --- R11: airplane + single wings

def test_r11_airplane_wings_three_of_a_rank_is_no_move():
    for cards in ["333444555777", "444555666888", "TTTJJJQQQ222", "777888999TTTJJJ33345", "3334445556667778"]:
        assert bf.classify_brute(parse_cards(cards)) is None, cards
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.AIRPLANE_SINGLES):
        assert MOVE_KICKERS[i].max() <= 2


def test_r11_two_wings_may_share_a_rank():
    assert classify("33344455").type == MoveType.AIRPLANE_SINGLES
    assert classify("333444555226").type == MoveType.AIRPLANE_SINGLES
    assert classify("333444555662").type == MoveType.AIRPLANE_SINGLES


def test_r11_wings_never_both_jokers_one_joker_fine():
    assert classify("333444B5").type == MoveType.AIRPLANE_SINGLES
    assert classify("333444R2").type == MoveType.AIRPLANE_SINGLES
    for cards in ["333444BR", "333444555BR6"]:
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.AIRPLANE_SINGLES):
        assert not (MOVE_KICKERS[i, 13] and MOVE_KICKERS[i, 14])


def test_r11_wings_never_a_whole_four_nor_a_body_rank():
    # a whole four as the 4 wings of a 4-trio airplane; a body rank's 4th card as a wing
    for cards in ["3334445556667777", "3333444555666777", "33334445", "33344445"]:
        assert bf.classify_brute(parse_cards(cards)) is None, cards
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.AIRPLANE_SINGLES):
        body = MOVE_COUNTS[i] - MOVE_KICKERS[i]
        assert not ((body > 0) & (MOVE_KICKERS[i] > 0)).any()
        assert MOVE_KICKERS[i].sum() == MOVE_LENGTH[i]


def test_r11_airplane_singles_per_length():
    # n trios + n wings; with 20 cards at most the airplane has 2..5 trios
    per_len = collections.Counter(MOVE_LENGTH[ids_of(MoveType.AIRPLANE_SINGLES)].tolist())
    assert sorted(per_len) == [2, 3, 4, 5]
    # length 2: bodies 33..KK-AA (11); wings: 2 cards from the other 13 ranks, at most 2 per rank,
    # jokers once, never both: C(13, 2) + 11 pairs of 3..2 ranks - 1 (BR) = 78 + 11 - 1 = 88
    assert per_len[2] == 11 * 88


# --- R12: airplane + pair wings

def test_r12_airplane_pair_wings_n_pairs_of_different_ranks_no_jokers_no_body_rank():
    assert classify("3334445566").type == MoveType.AIRPLANE_PAIRS
    assert classify("333444AA22").type == MoveType.AIRPLANE_PAIRS
    # two pairs of one rank (a four), the jokers as a "pair", a body rank's 4th card among the wings
    for cards in ["3334445555", "333444BR55", "3333444455", "33344455566677BR"]:
        assert bf.classify_brute(parse_cards(cards)) is None, cards
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.AIRPLANE_PAIRS):
        k = MOVE_KICKERS[i]
        assert set(k[k > 0].tolist()) == {2}
        assert (k > 0).sum() == MOVE_LENGTH[i]
        assert k[13:].sum() == 0
        body = MOVE_COUNTS[i] - k
        assert not ((body > 0) & (k > 0)).any()
    per_len = collections.Counter(MOVE_LENGTH[ids_of(MoveType.AIRPLANE_PAIRS)].tolist())
    # C(13 - n, n) pair choices for each of the 12 - n + 1 bodies
    assert per_len == {2: 11 * 55, 3: 10 * 120, 4: 9 * 126}


# --- R13: four + two (move level)

def test_r13_four_two_singles_may_share_a_rank_never_the_two_jokers():
    assert classify("333345").type == MoveType.FOUR_TWO_SINGLES
    assert classify("333355").type == MoveType.FOUR_TWO_SINGLES
    assert classify("33332B").type == MoveType.FOUR_TWO_SINGLES
    assert classify("3333R5").type == MoveType.FOUR_TWO_SINGLES
    with pytest.raises(ValueError):
        classify("3333BR")
    for i in ids_of(MoveType.FOUR_TWO_SINGLES):
        k = MOVE_KICKERS[i]
        assert k.sum() == 2 and not (k[13] and k[14]) and k[MOVE_RANK[i]] == 0


def test_r13_four_two_pairs_two_different_ranks():
    assert classify("33334455").type == MoveType.FOUR_TWO_PAIRS
    assert classify("2222AA33").type == MoveType.FOUR_TWO_PAIRS
    for cards in ["33334444", "3333445", "333344556", "3333BR44"]:
        with pytest.raises(ValueError):
            classify(cards)
    for i in ids_of(MoveType.FOUR_TWO_PAIRS):
        k = MOVE_KICKERS[i]
        assert (k == 2).sum() == 2 and k.sum() == 4


def test_r14_four_with_two_is_not_a_bomb():
    for cards in ["333345", "33334455"]:
        assert classify(cards).type not in (MoveType.BOMB, MoveType.ROCKET)


# --- R14-R16 through moves.beats

def _group_representatives() -> list[int]:
    reps = {}
    for i in range(1, NUM_MOVES):
        reps.setdefault((MOVE_TYPE[i], MOVE_LENGTH[i], MOVE_RANK[i]), i)
    return sorted(reps.values())


def _brute_beats(m: int, h: int) -> bool:
    mc, hc = MOVE_COUNTS[m], MOVE_COUNTS[h]
    return bf.beats_brute(bf.classify_brute(mc), int(mc.sum()), bf.classify_brute(hc), int(hc.sum()))


def test_r14_r15_r16_beats_matches_bruteforce_on_every_pair_of_bodies():
    reps = _group_representatives()
    assert len(reps) > 250
    for m in reps:
        for h in reps:
            assert beats(int(m), int(h)) == _brute_beats(m, h), (MOVE_STRINGS[m], MOVE_STRINGS[h])


@settings(max_examples=500)
@given(st.integers(1, NUM_MOVES - 1), st.integers(1, NUM_MOVES - 1))
def test_r16_beats_matches_bruteforce_on_random_moves(m, h):
    assert beats(m, h) == _brute_beats(m, h)
    assert beats(MOVE_STRINGS[m], MOVE_STRINGS[h]) == _brute_beats(m, h)


def test_r8_beats_lead_and_pass():
    assert beats("3", None)
    assert beats("3", "pass")
    assert not beats("pass", None)
    assert beats("pass", "3")          # a responder may pass
    assert beats(0, move_id("BR"))


def test_r15_bombs_and_rocket_in_beats():
    assert beats("3333", "2")
    assert beats("3333", "KKKKAA")
    assert beats("3333", "333444555666777888")
    assert beats("4444", "3333") and not beats("3333", "4444") and not beats("3333", "3333")
    assert beats("BR", "2222") and beats("BR", "34567")
    assert not any(beats(int(i), move_id("BR")) for i in range(1, NUM_MOVES))


def test_r16_kickers_never_matter_in_beats():
    assert not beats("333R", "3334")
    assert not beats("3334", "333R")
    assert beats("4443", "333R")
    assert beats("44433", "33322")
    assert not beats("33344422", "333444R2")
    assert beats("44455533", "333444R2")
    assert not beats("2222AK", "222234")
    assert not beats("44445566", "44443377")
    assert beats("55553366", "4444AAKK")
    assert beats("444433", "3333R2")
    assert not beats("444433", "44445566") and not beats("44445566", "333345")


def test_r8_same_type_needs_same_length():
    assert not beats("456789", "34567")
    assert not beats("45678", "345678")
    assert beats("45678", "34567")
    assert not beats("445566", "33445566")
    assert not beats("444555666", "333444")
    assert not beats("44455566", "333444555678")


def test_beats_rejects_non_moves():
    with pytest.raises(ValueError):
        beats("34", "3")
    with pytest.raises(ValueError):
        beats("3", "34")


# --------------------------------------------------------------------------- input validation (issue 12)
def test_classify_rejects_fractional_and_nan_counts():
    threes = np.zeros(15)
    threes[0] = 2.9
    with pytest.raises(ValueError, match="whole numbers, got 2.9"):
        classify(threes)  # was a PAIR of threes
    fours = np.zeros(15)
    fours[1] = np.nan
    with pytest.raises(ValueError, match="whole numbers, got nan"):
        move_id(fours)
    threes[0] = 2.0
    assert classify(threes).type == MoveType.PAIR  # whole-number floats are still counts


@pytest.mark.parametrize("bad", [-1, -NUM_MOVES, NUM_MOVES, 99999, np.int64(-2)])
def test_beats_rejects_move_ids_out_of_range(bad):
    """A negative id wrapped to the rocket (beats(-1, '3') was True); 99999 was a raw IndexError."""
    with pytest.raises(ValueError, match=rf"move id {int(bad)} out of range \[0, {NUM_MOVES}\)"):
        beats(bad, "3")
    with pytest.raises(ValueError, match=rf"last move id {int(bad)} out of range"):
        beats("4", bad)


def test_beats_rejects_float_ids_and_still_takes_ids_strings_and_counts():
    for bad in (1.5, 1.0, None):
        with pytest.raises(TypeError, match="integer"):
            beats(bad, "3")
    with pytest.raises(TypeError, match="integer"):
        beats("4", 1.5)
    four, three = move_id("4"), move_id("3")
    assert beats(four, three) and beats(np.int64(four), "3") and beats("4", None) and beats(parse_cards("4"), three)
    assert not beats(three, four) and not beats(0, None) and beats(0, three)


def test_move_to_string_never_truncates_a_float_id():
    assert move_to_string(np.int64(1)) == "3" and move_to_string(np.array([1])) == "3"
    for bad in (1.5, 1.0, "1", [1]):
        with pytest.raises(TypeError, match=re.escape(repr(bad))):
            move_to_string(bad)  # 1.5 was '3'
    with pytest.raises(ValueError, match="out of range"):
        move_to_string(-1)


def test_action_ids_are_never_truncated():
    """actions.action_to_string(2.5) was '4' (move 2); bid_action(1.0) returned a float."""
    assert action_to_string(2) == "4" and action_to_string(np.int32(BID_2)) == "bid 2"
    for bad in (2.5, 2.0, np.float64(BID_2), "2", None):
        with pytest.raises(TypeError, match=re.escape(repr(bad))):
            action_to_string(bad)
    for bad in (-1, NUM_ACTIONS):
        with pytest.raises(ValueError, match="out of range"):
            action_to_string(bad)
    assert bid_action(2) == BID_2 and bid_action(np.int64(3)) == BID_3 and type(bid_action(np.int64(3))) is int
    for bad in (1.0, 1.5, "1", 4, -1):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            bid_action(bad)
    with pytest.raises(TypeError, match="string"):
        action_from_string(5)


def test_as_action_id_is_the_one_reader_of_action_ids():
    assert as_action_id(5) == 5 and as_action_id(np.uint16(5)) == 5 and as_action_id(np.array(5)) == 5
    assert as_action_id(np.array([[5]])) == 5 and type(as_action_id(np.array([5]))) is int
    for bad in (5.0, np.float32(5), np.array([5, 6]), np.array([5.0]), np.array([], dtype=int), [5], "5", None):
        with pytest.raises(TypeError, match="integer"):
            as_action_id(bad)
