"""Legal move generation (R8, R11, R13-R16), single-hand and batched, against tests/helpers/bruteforce.py."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bruteforce as bf
from ddz_env.cards import deal, parse_cards, to_string
from ddz_env.legal import legal_ids, legal_ids_batch, legal_mask, legal_mask_batch, legal_moves
from ddz_env.moves import MOVE_STRINGS, NUM_MOVES, move_id

DECK_CARDS = [r for r in range(15) for _ in range(bf.DECK[r])]  # the 54 cards, by rank
assert len(DECK_CARDS) == 54


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def counts_of(ranks) -> np.ndarray:
    return np.bincount(np.asarray(ranks, dtype=np.int64), minlength=15).astype(np.int8)


def draw_cards(draw, pool: list[int], n: int) -> np.ndarray:
    """Counts of ``n`` cards drawn without replacement from ``pool`` (a list of ranks, one per card)."""
    n = min(n, len(pool))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n, unique=True)) if n else []
    return counts_of([pool[i] for i in picks])


def strings_of_mask(mask: np.ndarray) -> set[str]:
    return {MOVE_STRINGS[i] for i in np.nonzero(mask)[0]}


def last_id(last) -> int:
    return 0 if last is None else move_id(to_string(np.asarray(last)))


def describe(hand, last, got: set[str], expected: set[str]) -> str:
    return (f"hand {to_string(np.asarray(hand))!r} last {None if last is None else to_string(np.asarray(last))!r}: "
            f"missing {sorted(expected - got)[:8]} ({len(expected - got)}), "
            f"extra {sorted(got - expected)[:8]} ({len(got - expected)})")


def canon(move: str) -> str:
    """Canonical string of a move written in any order (``"pass"`` stays)."""
    return move if move == "pass" else to_string(parse_cards(move))


class Moves(frozenset):
    """A set of canonical move strings; ``"AAAA35" in moves`` works in any card order."""

    def __contains__(self, move) -> bool:
        return frozenset.__contains__(self, canon(move))


def S(moves) -> frozenset:
    """Canonical set of moves written in any order, for comparisons."""
    return frozenset(canon(m) for m in moves)


def check(hand: str, last: str | None) -> Moves:
    """legal_moves on strings, checked against the brute force; returns the set."""
    got = legal_moves(hand, last)
    expected = bf.legal_brute(parse_cards(hand), None if last is None else parse_cards(last))
    assert len(got) == len(set(got))
    assert set(got) == expected, describe(parse_cards(hand), None if last is None else parse_cards(last),
                                          set(got), expected)
    return Moves(got)


@pytest.fixture(scope="module", autouse=True)
def _warm_bruteforce():
    bf.all_moves_brute()  # build the reference universe once, outside the timed hypothesis examples


_BY_TYPE: dict[int, list[tuple[int, ...]]] = {}


def brute_moves_of_type(t: int) -> list[tuple[int, ...]]:
    if not _BY_TYPE:
        for _s, (c, info) in sorted(bf.all_moves_brute().items()):
            _BY_TYPE.setdefault(info[0], []).append(c)
    return _BY_TYPE[t]


# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------

@st.composite
def random_hands(draw, sizes=(17, 20)):
    """17 or 20 cards drawn from the 54-card deck."""
    return draw_cards(draw, DECK_CARDS, draw(st.sampled_from(sizes)))


def _fill(draw, base: list[int], n: int) -> np.ndarray:
    rest = [r for r in range(15) for _ in range(bf.DECK[r] - base[r])]
    return np.array(base, dtype=np.int8) + draw_cards(draw, rest, max(0, n - sum(base)))


@st.composite
def bomb_hands(draw):
    """Hands biased to hold 1-3 bombs and often both jokers (R13, R15)."""
    n = draw(st.sampled_from([17, 20]))
    base = [0] * 15
    for r in draw(st.lists(st.integers(0, 12), min_size=1, max_size=3, unique=True)):
        base[r] = 4
    if draw(st.integers(0, 3)) > 0:
        base[13] = base[14] = 1
    return _fill(draw, base, n)


@st.composite
def airplane_hands(draw):
    """Hands holding 2-5 consecutive trios of 3..A (R11, R12), sometimes a whole four in the wings."""
    n = draw(st.sampled_from([17, 20]))
    length = draw(st.integers(2, 5))
    low = draw(st.integers(0, bf.ACE - length + 1))
    base = [0] * 15
    for r in range(low, low + length):
        base[r] = 3
    return _fill(draw, base, n)


@st.composite
def small_hands(draw, max_cards=12):
    return draw_cards(draw, DECK_CARDS, draw(st.integers(0, max_cards)))


def any_hand():
    return st.one_of(random_hands(), bomb_hands(), airplane_hands(), small_hands())


@st.composite
def last_moves(draw, hand: np.ndarray):
    """None (a lead) or a move on the table: any type of the table, another hand's lead, or a lead the
    responder itself could have made (so that answers of the same type are likely)."""
    kind = draw(st.sampled_from(["lead", "table", "table", "other", "own"]))
    if kind == "lead":
        return None
    if kind == "table":
        t = draw(st.integers(bf.SINGLE, bf.ROCKET))
        return np.array(draw(st.sampled_from(brute_moves_of_type(t))), dtype=np.int8)
    if kind == "other":
        rest = [r for r in range(15) for _ in range(bf.DECK[r] - int(hand[r]))]
        other = draw_cards(draw, rest, draw(st.sampled_from([17, 20])))
    else:
        other = hand
    leads = sorted(bf.legal_brute(other, None))
    if not leads:
        return None
    return parse_cards(draw(st.sampled_from(leads)))


@st.composite
def situations(draw, hands=None):
    hand = draw(hands if hands is not None else any_hand())
    return hand, draw(last_moves(hand))


def _shuffled(text: str, rnd) -> str:
    chars = list(text)
    rnd.shuffle(chars)
    return "".join(chars)


# ---------------------------------------------------------------------------
# property tests against the brute force
# ---------------------------------------------------------------------------

@settings(max_examples=1000)
@given(situations(), st.sampled_from([np.int8, np.int64]))
def test_legal_mask_matches_bruteforce(situation, dtype):
    hand, last = situation
    expected = bf.legal_brute(hand, last)
    mask = legal_mask(hand.astype(dtype), None if last is None else last_id(last))
    assert mask.shape == (NUM_MOVES,) and mask.dtype == np.bool_
    got = strings_of_mask(mask)
    assert got == expected, describe(hand, last, got, expected)


@settings(max_examples=600)
@given(situations(hands=st.one_of(bomb_hands(), airplane_hands())))
def test_legal_mask_matches_bruteforce_bomb_and_airplane_hands(situation):
    hand, last = situation
    expected = bf.legal_brute(hand, last)
    got = strings_of_mask(legal_mask(hand, last_id(last)))
    assert got == expected, describe(hand, last, got, expected)


@settings(max_examples=800)
@given(situations(), st.randoms(use_true_random=False))
def test_legal_ids_and_legal_moves_match_bruteforce(situation, rnd):
    hand, last = situation
    expected = bf.legal_brute(hand, last)
    hand_str = _shuffled(to_string(hand), rnd).lower()
    last_str = None if last is None else _shuffled(to_string(last), rnd)

    ids = legal_ids(hand_str, last_str)
    assert (np.diff(ids) > 0).all(), "legal_ids must be sorted and unique"
    assert {MOVE_STRINGS[i] for i in ids} == expected, describe(hand, last, {MOVE_STRINGS[i] for i in ids}, expected)

    moves = legal_moves(hand_str, last_str)
    assert moves == [MOVE_STRINGS[i] for i in ids]
    assert set(moves) == expected
    if last is None:
        assert "pass" not in moves
    else:
        assert moves[0] == "pass" and moves.count("pass") == 1


@settings(max_examples=300)
@given(st.lists(situations(), min_size=1, max_size=6), st.sampled_from([np.int8, np.int64]))
def test_legal_mask_batch_matches_bruteforce(batch, dtype):
    hands = np.stack([h for h, _ in batch]).astype(dtype)
    lasts = np.array([last_id(last) for _, last in batch], dtype=np.int64)
    masks = legal_mask_batch(hands, lasts)
    assert masks.shape == (len(batch), NUM_MOVES) and masks.dtype == np.bool_
    for b, (hand, last) in enumerate(batch):
        expected = bf.legal_brute(hand, last)
        got = strings_of_mask(masks[b])
        assert got == expected, f"row {b}: " + describe(hand, last, got, expected)


@settings(max_examples=300)
@given(st.lists(situations(), min_size=1, max_size=6))
def test_legal_ids_batch_matches_bruteforce(batch):
    hands = np.stack([h for h, _ in batch])
    lasts = np.array([last_id(last) for _, last in batch])
    rows, ids = legal_ids_batch(hands, lasts)
    assert rows.shape == ids.shape
    order = np.lexsort((ids, rows))
    assert (order == np.arange(len(rows))).all(), "(rows, ids) must be sorted by row then id"
    assert len(set(zip(rows.tolist(), ids.tolist()))) == len(rows)
    assert ((rows >= 0) & (rows < len(batch))).all()
    for b, (hand, last) in enumerate(batch):
        expected = bf.legal_brute(hand, last)
        got = {MOVE_STRINGS[i] for i in ids[rows == b]}
        assert got == expected, f"row {b}: " + describe(hand, last, got, expected)


@settings(max_examples=500)
@given(situations(hands=small_hands(max_cards=11)))
def test_small_hands_every_sub_multiset(situation):
    """Literally every sub-multiset of the hand, classified one by one: checks the reference's shortcut
    through its move universe and the implementation on the same hands."""
    hand, last = situation
    expected = bf.legal_brute_exhaustive(hand, last)
    assert bf.legal_brute(hand, last) == expected
    got = strings_of_mask(legal_mask(hand, last_id(last)))
    assert got == expected, describe(hand, last, got, expected)
    got_batch = strings_of_mask(legal_mask_batch(hand[None, :], np.array([last_id(last)]))[0])
    assert got_batch == expected, describe(hand, last, got_batch, expected)


def test_batch_agrees_with_single_hand_path_on_many_deals():
    """The two code paths on 3,000 dealt situations (landlord with 20 cards), without the brute force."""
    rng = np.random.default_rng(20160101)
    hands, lasts = [], []
    for seed in range(1000):
        h, bottom = deal(seed)
        h = h.copy()
        h[0] += bottom  # the landlord's 20 cards
        for seat in range(3):
            hands.append(h[seat])
            kind = rng.integers(3)
            if kind == 0:
                lasts.append(0)
            elif kind == 1:
                lasts.append(int(rng.integers(1, NUM_MOVES)))
            else:  # something the previous seat could lead
                prev = legal_ids(h[(seat + 2) % 3])
                lasts.append(int(rng.choice(prev)))
    hands, lasts = np.array(hands), np.array(lasts)
    rows, ids = legal_ids_batch(hands, lasts)
    masks = legal_mask_batch(hands, lasts)
    starts = np.searchsorted(rows, np.arange(len(hands) + 1))
    for b in range(len(hands)):
        single = legal_ids(hands[b], int(lasts[b]))
        np.testing.assert_array_equal(ids[starts[b]:starts[b + 1]], single)
        np.testing.assert_array_equal(np.nonzero(masks[b])[0], single)


def test_legal_mask_batch_reuses_an_out_buffer():
    hands = np.stack([parse_cards("3333BR567"), parse_cards("33344456"), parse_cards("2")])
    lasts = np.array([0, move_id("34567"), move_id("A")])
    fresh = legal_mask_batch(hands, lasts)
    out = np.ones((3, NUM_MOVES), dtype=bool)  # stale contents must be cleared
    got = legal_mask_batch(hands, lasts, out=out)
    assert got is out
    np.testing.assert_array_equal(out, fresh)
    for b in range(3):
        assert strings_of_mask(out[b]) == bf.legal_brute(hands[b], None if lasts[b] == 0 else
                                                         parse_cards(MOVE_STRINGS[lasts[b]]))
    # reused with other situations: no leftovers from the previous call
    legal_mask_batch(hands[::-1].copy(), np.zeros(3, dtype=np.int64), out=out)
    np.testing.assert_array_equal(out, legal_mask_batch(hands[::-1].copy(), np.zeros(3, dtype=np.int64)))


@pytest.mark.parametrize("out", [np.zeros((2, NUM_MOVES), dtype=bool), np.zeros((3, NUM_MOVES), dtype=np.int8),
                                 np.zeros((3, 2 * NUM_MOVES), dtype=bool)[:, ::2], np.zeros((NUM_MOVES, 3), bool).T])
def test_legal_mask_batch_rejects_a_bad_out_buffer(out):
    hands = np.stack([parse_cards("345"), parse_cards("66"), parse_cards("BR")])
    with pytest.raises(ValueError):
        legal_mask_batch(hands, np.zeros(3, dtype=np.int64), out=out)


def test_empty_batch():
    rows, ids = legal_ids_batch(np.zeros((0, 15), dtype=np.int8), np.zeros(0, dtype=np.int64))
    assert rows.size == 0 and ids.size == 0
    assert legal_mask_batch(np.zeros((0, 15), dtype=np.int8), np.zeros(0, dtype=np.int64)).shape == (0, NUM_MOVES)


# ---------------------------------------------------------------------------
# R8: leading and passing
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("hand", ["3", "BR", "3333", "33445566778899TTJJQ", "3456789TJQKA2BRK"])
def test_r8_no_pass_on_lead(hand):
    moves = check(hand, None)
    assert "pass" not in moves and moves
    assert not legal_mask(hand)[0]
    assert not legal_mask(hand, 0)[0]
    assert not legal_mask(hand, "pass")[0]
    assert not legal_mask_batch(parse_cards(hand)[None, :], np.array([0]))[0, 0]
    rows, ids = legal_ids_batch(parse_cards(hand)[None, :], np.array([0]))
    assert 0 not in ids.tolist()


def test_r8_leader_may_play_any_move_it_holds():
    assert check("3", None) == S({"3"})
    assert check("34", None) == S({"3", "4"})
    assert check("BR", None) == S({"B", "R", "BR"})
    assert check("333", None) == S({"3", "33", "333"})
    assert check("3334", None) == S({"3", "4", "33", "333", "3334"})
    assert check("", None) == set()


@pytest.mark.parametrize("hand, last", [("4", "3"), ("2222", "3"), ("BR", "2"), ("5", "BR"), ("", "3"),
                                        ("3", "4"), ("AAAA", "2222"), ("456789", "34567")])
def test_r8_pass_allowed_when_responding(hand, last):
    moves = legal_moves(hand, last)
    assert moves[0] == "pass"
    check(hand, last)
    assert legal_mask(hand, last)[0]
    assert legal_mask(hand, move_id(last))[0]
    assert legal_mask_batch(parse_cards(hand)[None, :], np.array([move_id(last)]))[0, 0]


def test_r8_responder_needs_same_type_and_higher_rank():
    assert check("45", "3") == S({"pass", "4", "5"})
    assert check("33", "4") == S({"pass"})
    assert check("2", "A") == S({"pass", "2"})
    assert check("R", "B") == S({"pass", "R"})
    assert check("B", "2") == S({"pass", "B"})
    assert check("55", "44") == S({"pass", "55"})
    assert check("555", "44") == S({"pass", "55"})  # a trio does not answer a pair, its pair does
    assert check("3456789", "34567") == S({"pass", "45678", "56789"})


def test_r8_straight_of_length_5_cannot_answer_length_6():
    assert check("456789TJ", "345678") == S({"pass", "456789", "56789T", "6789TJ"})
    assert check("9TJQK", "345678") == S({"pass"})
    assert check("45678", "345678") == S({"pass"})


def test_r8_chain_lengths_must_match_for_pair_chains_and_airplanes():
    assert check("4455667788", "334455") == S({"pass", "445566", "556677", "667788"})
    assert check("444555666", "333444") == S({"pass", "444555", "555666"})
    assert "444555666789" not in check("4445556667899", "33344456")
    assert check("44455566678", "33344456") >= S({"44455567", "44455578", "55566678"})


def test_r8_last_move_pass_means_a_lead():
    for hand in ["33344456", "BR2", "3333BR"]:
        assert legal_moves(hand, "pass") == legal_moves(hand, None) == legal_moves(hand)
        np.testing.assert_array_equal(legal_mask(hand, 0), legal_mask(hand))


# ---------------------------------------------------------------------------
# R11 / R13: kickers drawn from bombs and the rocket in hand
# ---------------------------------------------------------------------------

def test_r13_four_with_two_kicker_from_bomb_is_illegal():
    moves = check("3333444456", None)
    assert "333356" in moves and "444456" in moves
    for illegal in ["333345", "333344", "333346", "444435", "444433", "444436"]:
        assert illegal not in moves, illegal
    pairs = check("33334444556677", None)
    assert "33335566" in pairs and "44445577" in pairs
    for illegal in ["33334455", "33334466", "44443355", "44443377"]:
        assert illegal not in pairs, illegal
    # the same when responding
    answers = check("AAAA222235", "KKKK34")
    assert "AAAA35" in answers and "222235" in answers and "AAAA" in answers and "2222" in answers
    for illegal in ["AAAA23", "AAAA25", "2222A3", "2222A5", "AAAA22", "2222AA"]:
        assert illegal not in answers, illegal


def test_r13_four_with_two_may_use_a_kicker_rank_that_is_not_a_whole_bomb():
    moves = check("3333444566", None)
    assert S({"333344", "333345", "333356", "333366", "33334466"}) <= moves
    assert "444433" not in moves  # no four of 4s at all


def test_r13_four_with_two_cannot_use_joker_when_holding_rocket():
    moves = check("3333BR56", None)
    assert "333356" in moves and "BR" in moves and "3333" in moves
    for illegal in ["3333B5", "3333R5", "3333B6", "3333R6"]:
        assert illegal not in moves, illegal
    # with one joker only, the joker is a fine kicker
    assert "3333B5" in check("3333B56", None)
    assert "3333R5" in check("3333R56", None)
    answers = check("AAAABR5", "KKKK34")
    assert answers == {"pass", "AAAA", "BR"}


def test_r13_airplane_wings_may_use_a_card_of_a_held_bomb():
    moves = check("3334445555BR", None)
    assert "33344455" in moves            # a pair of 5s from the four 5s
    assert "3334445B" in moves            # one joker while holding both
    assert "3334445R" in moves
    assert "333444BR" not in moves        # never both jokers (R11, move level)
    assert "3334445555" not in moves      # never a whole four
    pairs = check("3334445555667", None)
    assert "3334445566" in pairs          # a pair of wings from the four 5s
    assert "3334445555" not in pairs


def test_r13_trio_kickers_are_not_restricted_by_bombs_in_hand():
    assert "3334" in check("3334444", None)
    assert "33344" in check("3334444", None)
    assert "333B" in check("333BR", None)


# ---------------------------------------------------------------------------
# R14-R16: beating
# ---------------------------------------------------------------------------

def test_r14_four_with_two_is_beaten_by_any_bomb():
    assert check("3333", "222234") == S({"pass", "3333"})
    assert check("3333", "22223344") == S({"pass", "3333"})
    assert check("3333BR", "AAAAKK") == S({"pass", "3333", "BR"})


def test_r14_four_with_two_only_beats_same_kind():
    hand = "AAAA345677889"
    singles = check(hand, "KKKK34")
    assert "AAAA35" in singles and "AAAA77" in singles and "AAAA" in singles
    assert not any(len(m) == 8 for m in singles), "four + two pairs cannot answer four + two singles"
    pairs = check(hand, "KKKK3344")
    assert "AAAA7788" in pairs and "AAAA" in pairs
    assert not any(len(m) == 6 for m in pairs), "four + two singles cannot answer four + two pairs"
    # a four-with-two is no bomb: it cannot answer a bomb nor an ordinary move of another type
    assert check("AAAA56", "3333") == S({"pass", "AAAA"})
    assert check("AAAA56", "KKK5") == S({"pass", "AAAA", "AAA5", "AAA6"})  # the trio + single answers
    assert "AAAA56" not in check("AAAA56", "5")
    # a lower four never answers, whatever its kickers
    assert check("QQQQ2B", "KKKK34") == S({"pass", "QQQQ"})


@pytest.mark.parametrize("last", ["2", "R", "22", "222", "2223", "22233", "TJQKA", "QQKKAA", "KKKAAA",
                                  "KKKAAA2B", "JJJQQQKKKAAA22334455", "22223B", "2222AAKK"])
def test_r15_bomb_beats_any_ordinary_move(last):
    assert "3333" in check("3333", last)


def test_r15_higher_bomb_beats_lower_bomb():
    assert check("44446666", "5555") == S({"pass", "6666"})
    assert check("3333", "4444") == S({"pass"})
    assert check("2222", "AAAA") == S({"pass", "2222"})


def test_r15_rocket_beats_everything():
    for last in ["2222", "3333", "34567", "KKKK34", "R", "222B", "333444555666777888"]:
        assert "BR" in check("BR3", last), last


def test_r15_nothing_beats_the_rocket():
    assert check("2222AAAAKKKKQQQQ3", "BR") == S({"pass"})
    assert legal_moves("3333", "BR") == ["pass"]
    assert legal_mask_batch(parse_cards("2222AAAA")[None, :], np.array([move_id("BR")]))[0].sum() == 1


def test_r16_kickers_never_matter():
    # same main rank: no answer, whatever the kickers
    assert check("333R", "3334") == S({"pass"})
    assert check("3334", "333R") == S({"pass"})
    assert check("33344422", "333444R2") == S({"pass"})
    # higher main rank with lower kickers: an answer
    assert "4443" in check("4443", "333R")
    assert "44433" in check("44433", "33322")
    assert "44455533" in check("44455533", "333444R2")
    assert "444433" in check("444433", "3333R2")


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [-1, NUM_MOVES, NUM_MOVES + 1, 10**6])
def test_bad_last_move_id_is_rejected(bad):
    hand = parse_cards("33344456")
    with pytest.raises(ValueError):
        legal_mask(hand, bad)
    with pytest.raises(ValueError):
        legal_ids(hand, bad)
    with pytest.raises(ValueError):
        legal_ids_batch(hand[None, :], np.array([bad]))
    with pytest.raises(ValueError):
        legal_mask_batch(np.stack([hand, hand]), np.array([0, bad]))


@pytest.mark.parametrize("last", ["34", "33X", "BB", "3333BR"])
def test_last_move_that_is_no_move_is_rejected(last):
    with pytest.raises(ValueError):
        legal_moves("33344456", last)
    with pytest.raises(ValueError):
        legal_mask("33344456", last)


@pytest.mark.parametrize("hand", ["33X", "77777", "RR", "BB", "3 4 1"])
def test_malformed_hand_string_is_rejected(hand):
    with pytest.raises(ValueError) as err:
        legal_moves(hand)
    assert repr(hand) in str(err.value)
    with pytest.raises(ValueError):
        legal_mask(hand, "3")


def test_malformed_count_vector_is_rejected():
    with pytest.raises(ValueError):
        legal_mask(np.array([5] + [0] * 14))
    with pytest.raises(ValueError):
        legal_mask(np.array([0] * 13 + [2, 0]))
    with pytest.raises(ValueError):
        legal_mask(np.array([-1] + [0] * 14))
    with pytest.raises(ValueError):
        legal_mask(np.zeros(14, dtype=np.int8))


@pytest.mark.parametrize("row0", [
    {13: 2},   # two black jokers
    {0: 5},    # five 3s
    {0: -1},   # minus one 3
])
def test_batched_paths_reject_impossible_hands(row0):
    from ddz_env.cards import parse_cards
    for n in (1, 2):
        h = np.zeros((n, 15), np.int8)
        h[-1] = parse_cards("34")
        for r, c in row0.items():
            h[0, r] = c
        with pytest.raises(ValueError, match="impossible count"):
            legal_ids_batch(h, np.zeros(n, dtype=np.int64))
        with pytest.raises(ValueError, match="impossible count"):
            legal_mask_batch(h, np.zeros(n, dtype=np.int64))


def test_batched_paths_reject_mismatched_shapes():
    h = np.zeros((2, 15), np.int8)
    with pytest.raises(ValueError, match="last moves"):
        legal_ids_batch(h, np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="shape"):
        legal_ids_batch(np.zeros((2, 14), np.int8), np.zeros(2, dtype=np.int64))


# ---------------------------------------------------------------------------
# input validation (issue 12)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [1.9, 1.0, np.float64(1.0), [1], np.array([1, 2]), {}])
def test_last_move_ids_are_never_truncated(bad):
    """legal_moves('34', 1.9) read move 1; legal_moves('3', [1]) was a bare TypeError."""
    for fn in (legal_moves, legal_ids, legal_mask):
        with pytest.raises(TypeError, match=r"last move is None, a card string or an integer move id, got .*" + re.escape(repr(bad))):
            fn("34", bad)
    assert legal_moves("34", np.int64(1)) == ["pass", "4"] and legal_moves("34", np.array([1])) == ["pass", "4"]


def test_count_vector_hands_must_hold_whole_numbers():
    hand = np.zeros(15)
    hand[0] = 2.9  # was two 3s
    with pytest.raises(ValueError, match="whole numbers, got 2.9"):
        legal_moves(hand)
    hand[0] = np.nan
    with pytest.raises(ValueError, match="whole numbers, got nan"):
        legal_mask(hand, "3")
    hand[0] = 2.0
    assert legal_moves(hand) == ["3", "33"]


@pytest.mark.parametrize("n", [1, 2])
def test_batched_paths_reject_float_hands_and_last_moves(n):
    """NaN hands were a bare IndexError; float last moves were truncated (1.9 -> move 1)."""
    for hands in (np.full((n, 15), np.nan), np.zeros((n, 15)), np.zeros((n, 15), bool)):
        with pytest.raises(TypeError, match=f"hands must be an integer array of card counts, got dtype {hands.dtype}"):
            legal_ids_batch(hands, np.zeros(n, dtype=np.int64))
        with pytest.raises(TypeError, match="integer array"):
            legal_mask_batch(hands, np.zeros(n, dtype=np.int64))
    h = np.tile(parse_cards("34"), (n, 1))
    with pytest.raises(TypeError, match="last_moves must be integer move ids, got an array of dtype float64"):
        legal_ids_batch(h, np.full(n, 1.9))
    with pytest.raises(ValueError, match=r"last_moves must have shape \(B,\)"):
        legal_ids_batch(h, np.zeros((n, 1), dtype=np.int64))
    rows, ids = legal_ids_batch(h, np.ones(n, dtype=np.int64))
    assert ids.tolist() == [0, 2] * n
    rows, ids = legal_ids_batch(np.zeros((0, 15), np.int8), [])  # an empty batch is still fine
    assert rows.size == ids.size == 0
