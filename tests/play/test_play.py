"""Terminal play (agents.play) driven by scripted input, and the Match core it shares with the web page."""
import re
import subprocess
import sys

import numpy as np
import pytest

from agents import RandomAgent, RuleAgent
from agents.play.match import Match, parse_action, said, spaced
from agents.play.terminal import main
from ddz_env import record
from ddz_env.actions import BID_3, BID_PASS, DOUBLE, NO_DOUBLE
from ddz_env.game import Game, IllegalActionError, Phase
from ddz_env.moves import PASS, move_id


class Person:
    """Scripted input: bad text first at each kind of prompt, then a sane answer read off the screen."""

    def __init__(self, bid="3", double="double", redouble="redouble"):
        self.out: list[str] = []
        self.answers = {"bid": bid, "double": double, "redouble": redouble}
        self.tried: set[str] = set()
        self.prompts = 0

    def write(self, text):
        self.out.append(text)

    def read(self, prompt):
        self.prompts += 1
        assert self.prompts < 500, "the game keeps asking"
        kind = prompt.split()[0].rstrip("?")
        if kind not in self.tried:  # every kind of prompt first gets junk, then help
            self.tried.add(kind)
            return {"bid": "bid 9", "double": "maybe", "redouble": "perhaps", "your": "33333"}[kind]
        if kind in self.answers:
            return self.answers[kind]
        screen = "\n".join(self.out[-3:])
        mine = re.findall(r"your cards: (.*)", screen)[-1].split()
        if "you lead" in screen:
            return mine[0].lower()  # the lowest single (ranks shown low to high; "10" typed as 10)
        return "pass"


@pytest.mark.parametrize("seat, vs", [(0, "rule"), (1, "rule,random"), (2, "random")])
def test_person_plays_full_hands_by_typing(tmp_path, seat, vs):
    p = Person()
    rc = main(["--vs", vs, "--seat", str(seat), "--seed", "3", "--deals", "2", "--save-dir", str(tmp_path)],
              read=p.read, write=p.write)
    assert rc == 0
    text = "\n".join(p.out)
    assert "is no bid" in text or "not legal" in text  # the junk got a message, not a crash
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2
    for f in files:
        rec = record.load(f)
        game = record.replay(rec)  # the saved record replays to the same result
        assert game.is_over and rec["result"]["over"]
        assert rec["players"][seat] == "you"
        assert str(game.scores.tolist()) in text or game.void
    assert "your total after 2 hand(s)" in text


def test_person_never_sees_other_hands_before_the_end(tmp_path):
    p = Person()
    main(["--vs", "rule", "--seat", "1", "--seed", "0", "--save-dir", str(tmp_path)], read=p.read, write=p.write)
    text = "\n".join(p.out)
    before_end = text[:text.rindex("-- hand 1")]  # every screen but the final one
    assert "      cards:" not in before_end
    final = text[text.rindex("-- hand 1"):]
    assert final.count("      cards:") == 2  # at the end the other two hands are shown


def test_quit_and_end_of_input_keep_the_partial_record(tmp_path):
    out = []
    inputs = iter(["quit"])
    assert main(["--save-dir", str(tmp_path)], read=lambda _: next(inputs), write=out.append) == 0
    rec = record.load(next(tmp_path.glob("*.json")))
    assert rec["result"]["over"] is False
    r = subprocess.run([sys.executable, "-m", "agents.play", "--save-dir", str(tmp_path / "b")],
                       input="zzz\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "input ended" in r.stdout


def test_unknown_agent_is_a_clear_error(tmp_path):
    out = []
    assert main(["--vs", "rul", "--save-dir", str(tmp_path)], read=input, write=out.append) == 2
    assert "unknown agent 'rul'" in out[0]


def test_an_unknown_agent_is_one_error_line_naming_the_program(tmp_path):
    """``python -m agents.play --vs rul`` printed a bare ``error: unknown agent 'rul' ...`` on stdout, where the other
    programs (and its own bad options) say ``PROGRAM: error: ...`` on stderr: now it names the program as typed
    (``ddz-play`` as the console script), on stderr, and exits 2."""
    out = []
    assert main(["--vs", "rul", "--save-dir", str(tmp_path)], read=input, write=out.append) == 2
    assert out == [out[0]] and out[0].startswith("ddz-play: error: unknown agent 'rul' (did you mean 'rule'?)"), out
    r = subprocess.run([sys.executable, "-m", "agents.play", "--vs", "rul", "--save-dir", str(tmp_path / "h")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m agents.play: error: unknown agent 'rul'"), r.stderr
    r = subprocess.run([sys.executable, "-m", "agents.play", "--seat", "5"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "python -m agents.play: error: argument --seat" in r.stderr, r.stderr


def test_parse_action_per_phase():
    g = Game.deal(0, first_bidder=0)
    assert parse_action(" Pass ", g) == BID_PASS and parse_action("bid 3", g) == BID_3
    with pytest.raises(ValueError, match="no bid"):
        parse_action("4", g)
    g.step(BID_3)
    assert g.phase == Phase.DOUBLE
    assert parse_action("y", g) == DOUBLE and parse_action("no", g) == NO_DOUBLE
    g.step(NO_DOUBLE)
    g.step(NO_DOUBLE)
    assert parse_action("10 10 j j q q", g) == move_id("TTJJQQ") and parse_action("pass", g) == PASS
    with pytest.raises(ValueError, match="is no card"):
        parse_action("xyz", g)


def test_match_view_is_secret_until_revealed():
    """Every position of agent-only hands, seen from each seat: no other seat's cards, no bottom
    before R7's reveal, other farmers' doubles hidden until both chose (R5)."""
    for i in range(30):
        m = Match.deal([RandomAgent(), RuleAgent(), RandomAgent()], ["a", "b", "c"], seed=1, index=i)
        while True:
            g = m.game
            for seat in range(3):
                v = m.view(seat)
                for s in range(3):
                    assert (v["hands"][s] is not None) == (s == seat or g.is_over)
                assert (v["bottom"] is not None) == g.bottom_revealed
                if not g.doubles_revealed:
                    others = [h for h in v["history"] if h["phase"] == "DOUBLE" and h["seat"] != seat]
                    assert all(h["name"] == "?" for h in others)
                assert v["legal"] == ([] if g.is_over or g.current_player != seat else m.legal_names())
            if g.is_over:
                break
            m.step_agent()


def test_match_refuses_bad_person_moves_and_leaves_the_hand():
    m = Match.deal([None, RuleAgent(), RuleAgent()], ["you", "rule", "rule"], seed=0, index=0)
    m.advance()
    assert m.waiting_for_person()
    before = record.record_of(m.game)
    for bad, exc in [("bid 9", ValueError), (24646, IllegalActionError), (PASS, IllegalActionError)]:
        with pytest.raises(exc):
            m.play(0, bad)
    with pytest.raises(IllegalActionError, match="turn|person"):
        m.play(1, "pass")
    assert record.record_of(m.game) == before
    m.play(0, "3")
    m.advance()
    assert m.game.landlord == 0
    np.testing.assert_array_equal(record.replay(m.record()).scores, m.game.scores)


# ---------------------------------------------------------------------------- issue 22: faults
def test_ctrl_c_keeps_the_record_and_exits_130(tmp_path):
    """Issue 22 (6): Ctrl-C was a traceback and the hand's record was lost."""
    out = []
    answers = iter(["3"])

    def read(prompt):
        try:
            return next(answers)
        except StopIteration:
            raise KeyboardInterrupt from None
    assert main(["--seed", "2", "--save-dir", str(tmp_path)], read=read, write=out.append) == 130
    assert "interrupted: the hand stops here" in "\n".join(out)
    rec = record.load(next(tmp_path.glob("*.json")))
    assert rec["result"]["over"] is False and rec["actions"]  # the hand as it stood
    assert record.replay(rec).history  # and it replays


def test_input_that_is_not_utf8_is_a_typo_not_a_traceback(tmp_path):
    """Issue 22 (6): bytes the UTF-8 locale cannot decode raised UnicodeDecodeError (traceback, no record)."""
    import os

    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": ""}
    r = subprocess.run([sys.executable, "-m", "agents.play", "--save-dir", str(tmp_path)],
                       input=b"\xff\xfe\nquit\n", capture_output=True, timeout=120, env=env)
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0 and "Traceback" not in err, err
    assert "is no bid" in out and "you quit" in out and "record saved" in out
    assert len(list(tmp_path.glob("*.json"))) == 1
    out = []
    lines = iter([None, "quit"])  # a read function that raises as input() does on such bytes

    def read(prompt):
        line = next(lines)
        if line is None:
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return line
    assert main(["--save-dir", str(tmp_path / "b")], read=read, write=out.append) == 0
    assert "not utf-8 text: type it again" in "\n".join(out)


def test_bad_seed_and_save_dir_are_refused_before_the_hand(tmp_path, capsys, monkeypatch):
    """Issue 22 (7): --seed -1 and a --save-dir that is a file were tracebacks; a read-only
    --save-dir was found only after the hand was played (the record lost)."""
    import errno
    import tempfile

    def never(prompt):
        raise AssertionError("asked to play before the options were checked")
    (tmp_path / "afile").write_text("x")
    for argv, msg in ((["--seed", "-1"], "--seed must be 0 or more, got -1"),
                      (["--save-dir", str(tmp_path / "afile")], "it is a file"),
                      (["--save-dir", str(tmp_path / "afile" / "d")], "is a file, so no folder")):
        with pytest.raises(SystemExit) as e:
            main(argv, read=never, write=print)
        assert e.value.code == 2 and msg in capsys.readouterr().err

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(SystemExit) as e:
        main(["--save-dir", str(tmp_path / "ro")], read=never, write=print)
    assert e.value.code == 2 and "Read-only file system" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_record_that_cannot_be_saved_is_one_error_line(tmp_path, monkeypatch):
    """A disk that fills during play: one error line saying what is intact, no partial record."""
    import builtins
    import errno

    from ddz_env import files

    real_open = builtins.open
    saved = []

    def fills(path, mode="r", *args, **kwargs):
        if "w" in mode:
            saved.append(path)
            if len(saved) > 1:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *args, **kwargs)
    monkeypatch.setattr(files, "open", fills, raising=False)
    p = Person()
    rc = main(["--vs", "rule", "--seed", "3", "--deals", "3", "--save-dir", str(tmp_path)], read=p.read, write=p.write)
    errors = [x for x in p.out if x.startswith("ddz-play: error:")]
    assert rc == 1 and len(errors) == 1
    assert "record of hand 2" in errors[0] and "No space left on device" in errors[0]
    assert f"the records of hands 1-1 in {tmp_path} are intact" in errors[0]
    assert [x.name for x in tmp_path.iterdir()] == ["hand-seed3-deal0-seat0.json"]
    assert record.load(tmp_path / "hand-seed3-deal0-seat0.json")["result"]["over"]
    assert not any("=== hand 3" in x for x in p.out)  # it stops there


# ---------------------------------------------------------------------------------------------- live stake, result line
def _random_hands(n, seed=0):
    """Finished random hands (bids, doubles, bombs and rockets at random), each with its states as played."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        g = Game.deal(k)
        states = []
        while not g.is_over:
            g.step(int(rng.choice(g.legal_actions())))
            states.append(g.copy())
        yield g, states


def test_live_stake_follows_bombs_rockets_doubles_and_ends_on_the_score():
    from agents.play.match import outcome, stake

    seen_bomb = seen_double = seen_redouble = seen_spring = 0
    for g, states in _random_hands(120):
        if g.void:
            assert stake(g, None) is None and outcome(g, 0)["headline"] == "Void hand"
            continue
        lord = int(g.landlord)
        for s in range(3):  # at the end each seat's stake is its own score's size, its line says how
            st, out = stake(g, s), outcome(g, s)
            assert st["value"] == abs(int(g.scores[s])), (st, g.scores)
            assert out["headline"] == ("You win" if g.scores[s] > 0 else "You lose")
            head = ("farmers win: " if g.winner != lord else "landlord wins: ") + f"you {int(g.scores[s]):+d} = "
            assert out["line"].startswith(head) and f"bid {g.bid}" in out["line"], out["line"]
            if g.spring or g.anti_spring:
                seen_spring += 1
                assert ("(spring)" if g.spring else "(anti-spring)") in out["line"]
        before = None
        for st_g in states:
            now = stake(st_g, None)
            if now is None:
                continue
            if before is not None and (st_g.bombs, st_g.rockets) != (before[1], before[2]):
                assert now["value"] == 2 * before[0], (now, before)  # one bomb or rocket doubles it
                seen_bomb += 1
            before = (now["value"], st_g.bombs, st_g.rockets)
        for f in range(3):
            if f != lord and g.doubled()[f]:
                seen_double += 1
                seen_redouble += bool(g.redoubled)
                assert "x 2 (you doubled)" in stake(g, f)["text"]
                assert ("x 2 (landlord redoubled)" in stake(g, f)["text"]) == bool(g.redoubled)
    assert seen_bomb and seen_double and seen_redouble
    if not seen_spring:  # springs are rare in random play: the flag as Game sets it, on a finished hand's copy
        g = next(x for x, _ in _random_hands(20) if not x.void and x.winner == x.landlord)
        g = g.copy()
        g.spring = True
        assert "x 2 (spring)" in outcome(g, int(g.landlord))["line"]
        assert stake(g, None)["value"] == 2 * abs(int(g.scores[g.landlord]))


def test_live_stake_keeps_the_other_farmers_double_secret_until_revealed():
    from agents.play.match import seat_view

    for _g, states in _random_hands(200):
        for st_g in states:
            if st_g.phase != Phase.DOUBLE or not (st_g.double_choice == 1).any():
                continue
            first = int(np.flatnonzero(st_g.double_choice == 1)[0])  # doubled, the other has not chosen yet
            lord = int(st_g.landlord)
            other = 3 - first - lord
            assert "you doubled" in seat_view(st_g, first)["stake"]["text"]
            for s in (lord, other):
                v = seat_view(st_g, s)
                assert v["stake"]["value"] == (2 if s == lord else 1) * st_g.bid, v["stake"]  # nothing doubled
                assert "doubled" not in v["stake"]["text"]
            return
    pytest.fail("no hand with a first farmer's double")


def test_terminal_shows_the_stake_the_result_line_and_people_notation():
    from agents.play.terminal import render
    from agents.play.match import seat_view

    for g, states in _random_hands(120):
        if g.void or not (g.bombs or g.rockets) or not g.doubled().any():
            continue
        f = int(np.flatnonzero(g.doubled())[0])
        live = [render(seat_view(x, f)) for x in states if x.phase == Phase.PLAY and not x.is_over]
        assert any("stake: bid" in screen and "(you doubled)" in screen for screen in live)
        assert any(re.search(r"stake: .*x 2 \((1 bomb|rocket)\)", screen) for screen in live)
        end = render(seat_view(g, f))
        assert re.search(r"^  (farmers win|landlord wins): you [+-]\d+ = bid \d", end, re.M), end
        for screen in live + [end]:
            assert " 1 cards" not in screen
            for line in screen.splitlines():
                if line.startswith(("  last:", "  to beat:", "  your cards:", "      cards:")):
                    assert "T" not in line.split(":", 1)[1], line  # 10, never T
        return
    pytest.fail("no hand with a double and a bomb or rocket")


# ---------------------------------------------------------------------------------------------- issue 39: words
def _answering_a_pair():
    """Seat 0 (landlord, douzero rules) has led 8 8; seat 1 holds 5 5 5 5, 9 9 9 9 and 10s, no 8 nor joker."""
    g = Game.from_deal(["88333444666777JJJ", "5555999TTTTKKKKA9", "883467JQAAA2222BR"], "QQQ", first_bidder=0,
                       rules="douzero", landlord=0)
    g.step(move_id("88"))
    return g


def test_refused_moves_say_what_was_tried_and_what_the_table_needs():
    from agents.play.explain import Refusal, refusal

    g = _answering_a_pair()
    cases = {
        "55": "You tried a pair of 5s. The table needs a pair higher than 8s, or a bomb, or the rocket.",
        "5": "You tried a single 5. The table needs a pair higher than 8s, or a bomb, or the rocket.",
        "BR": "You tried the rocket (BJ RJ), but you hold no BJ.",
        "bj rj": "You tried the rocket (BJ RJ), but you hold no BJ.",
        "5 9": "5 9 is not a move. Play one combination: a single, a pair, a trio (alone, with a card or a pair), "
               "a straight (5+ in a row), 3+ pairs in a row, trios in a row, four with two, a bomb or the rocket.",
        "9 10 J Q": "9 10 J Q is not a move (a straight needs 5 or more cards in a row). Play one combination: a single, "
                    "a pair, a trio (alone, with a card or a pair), a straight (5+ in a row), 3+ pairs in a row, "
                    "trios in a row, four with two, a bomb or the rocket.",
        "pas": "'pas' is not a move. Did you mean 'pass'?",
        "xyz": "'xyz' is not a move: 'x' is no card. Cards are 3 to 9, 10 (or T), J, Q, K, A, 2, BJ and RJ (or B and R) "
               "for the black and red joker; or type pass.",
        "55555": "'55555' holds 5 x 5: the deck has only four 5s.",
        "bid 3": "'bid 3' is for the bidding and doubling; now play cards or pass.",
    }
    for text, want in cases.items():
        r = refusal(g, text)
        assert isinstance(r, Refusal) and r.text == want == str(r), (text, r)
    r = refusal(g, "55")
    assert r.tried == "a pair of 5s" and r.needs == "a pair higher than 8s, or a bomb, or the rocket"
    assert r.ruling.startswith("R8:") and "R15" in r.ruling and r.suggestion is None
    assert refusal(g, "pas").suggestion == "pass"
    for ok in ("99", "10 10", "tt", "5555", "pass", "KKKK"):
        assert refusal(g, ok) is None, ok
    g.step(move_id("TT"))
    g.step(move_id("2222"))  # seat 2 bombs with the top bomb: only the rocket beats it, seat 0 has none
    assert refusal(g, "33").text == ("You tried a pair of 3s. The table needs the rocket. "
                                     "Nothing in your hand beats it: pass.")
    m = Match(_answering_a_pair(), [None, None, None], ["a", "b", "c"])
    before = record.record_of(m.game)
    with pytest.raises(Refusal, match="The table needs a pair higher than 8s"):
        m.play(1, "5 5")
    assert record.record_of(m.game) == before


def test_a_refusal_is_given_exactly_for_the_illegal_moves():
    """In random positions of every phase, :func:`refusal` is ``None`` for the legal actions and a sentence
    for a sample of the others (ids of every kind: the bids, the doubles, moves held or not)."""
    from agents.play.explain import refusal
    from ddz_env.actions import NUM_ACTIONS

    rng = np.random.default_rng(3)
    checked = set()
    for _g, states in _random_hands(12, seed=3):
        for st in states[:-1]:
            legal = set(int(a) for a in st.legal_actions())
            for a in list(legal)[:3] + [int(x) for x in rng.integers(0, NUM_ACTIONS, 6)]:
                r = refusal(st, a)
                assert (r is None) == (a in legal), (a, r)
                if r is not None:
                    assert r.text and r.needs and "T" not in r.tried.split() and "B" not in r.tried.split()
                    checked.add(r.text.split(" ")[0])
    assert {"You", "It"} <= checked, checked


def test_describe_and_needs_name_every_kind_of_move_in_peoples_notation():
    from agents.play.explain import describe, needs
    from ddz_env.moves import MOVE_TYPE, MoveType

    assert describe(move_id("3334")) == "three 3s with a 4"
    assert describe(move_id("34567")) == "a straight 3 to 7"
    assert describe(move_id("TTJJQQ")) == "3 pairs in a row, 10s to Qs"
    assert describe(move_id("3334449B")) == "2 trios in a row, 3s to 4s, with 9 BJ"
    assert describe(move_id("3334445566")) == "2 trios in a row, 3s to 4s, with pairs of 5s and 6s"
    assert describe(move_id("22223344")) == "four 2s with pairs of 3s and 4s"
    assert describe(move_id("BR")) == "the rocket (BJ RJ)" and describe(move_id("R")) == "a single RJ"
    assert needs(move_id("TTJJQQ")) == "3 pairs in a row higher than 10s to Qs, or a bomb, or the rocket"
    assert needs(move_id("TJQKA")) == "a bomb or the rocket"  # no straight above 10 to A
    assert needs(move_id("R")) == needs(move_id("22")) == "a bomb or the rocket"
    assert needs(move_id("7777")) == "a higher bomb (four of a kind above 7s) or the rocket"
    assert needs(move_id("BR")) == "nothing: no move beats the rocket, so pass"
    for t in MoveType:
        if t == MoveType.PASS:
            continue
        for m in np.flatnonzero(MOVE_TYPE == t)[::997]:
            words = describe(int(m)) + " " + needs(int(m))
            assert not {"T", "B", "R", "Ts", "?"} & set(words.replace(",", " ").split()), words


def test_typos_get_a_did_you_mean_in_the_terminal(tmp_path):
    """Issue 39 (5): ``pas`` gave "unknown rank 'p'"; now the closest word, the terminal's commands too."""
    out = []
    lines = iter(["pas", "bdi 3", "3", "dobule", "no", "hlep", "quit"])
    main(["--vs", "rule", "--seed", "0", "--save-dir", str(tmp_path)], read=lambda _: next(lines), write=out.append)
    text = "\n".join(out)
    assert "'pas' is no bid: bid 1, 2 or 3, or pass. Did you mean 'pass'?" in text
    assert "Did you mean 'bid 3'?" in text
    assert "'hlep' is not a move. Did you mean 'help'?" in text  # (seat 0 bid 3: the landlord, leading)
    g = Game.deal(0, first_bidder=0)
    g.step(BID_3)
    with pytest.raises(ValueError, match=r"^'dobule': type 'double' \(or y\) or 'no' \(or n\)\. Did you mean 'double'\?$"):
        parse_action("dobule", g)


def test_both_front_ends_read_cards_one_way_and_say_bids_and_secret_doubles_in_words():
    """Issue 39 (11): jokers read BJ / RJ wherever a person reads cards, a bid of 0 reads "no bid" (not
    "passed", nor "doubled passed"), another farmer's secret double "chose (secret)", never a bare "?"."""
    from agents.play.terminal import render
    from agents.play.match import seat_view

    assert spaced("3TBR") == "3 10 BJ RJ" and said(move_id("BR")) == "BJ RJ" and said(BID_PASS) == "no bid"
    seen_secret = seen_joker = seen_flags = False
    for _g, states in _random_hands(60, seed=5):
        for st in states:
            for seat in range(3):
                v = seat_view(st, seat)
                screen = render(v)
                rows = [x for x in screen.splitlines() if x[2:].startswith("seat ") and "cards" in x]
                assert not [x for x in rows if "passed" in x] and " ?" not in screen, screen
                for line in screen.splitlines():
                    if line.startswith(("  last:", "  to beat:", "  your cards:", "      cards:", "  bottom:")):
                        tokens = line.split(":", 1)[1].replace(",", " ").split()
                        assert not {"T", "B", "R"} & set(tokens), line
                        seen_joker |= bool({"BJ", "RJ"} & set(tokens))
                hidden = [h for h in v["history"] if h["name"] == "?"]
                if hidden:
                    assert all(h["text"] == "chose (secret)" for h in hidden)
                    assert f"seat {hidden[0]['seat']} chose (secret)" in screen
                    seen_secret = True
                if "no bid, doubled" in screen:
                    seen_flags = True
    assert seen_secret and seen_joker and seen_flags


# ---------------------------------------------------------------------------------------------- issue 47: item 7
def test_moves_in_words_take_an_before_8_11_and_the_ace():
    from agents.play.explain import describe, needs

    assert needs(move_id("3456789T")).startswith("an 8-card straight higher than 3 to 10")
    assert needs(move_id("3456789TJQK")).startswith("an 11-card straight higher than 3 to K")
    assert needs(move_id("34567")).startswith("a 5-card straight")
    assert describe(move_id("9998")) == "three 9s with an 8" and describe(move_id("999A")) == "three 9s with an A"
    assert describe(move_id("999T")) == "three 9s with a 10"
    from ddz_env.moves import NUM_MOVES

    for m in range(1, NUM_MOVES, 7):  # every kind of move's words: no "a 8", "a 11", "a 18", "a A"
        words = f"{describe(m)} {needs(m)}"
        assert not re.search(r"\ba (8|11|18|A)\b", words), words


def test_a_did_you_mean_is_only_for_a_typo_of_a_legal_move():
    from agents.play.explain import refusal

    g = Game.deal(0, first_bidder=0)
    for text in ("bid 4", "4", "bid 10"):  # a bid out of range: said, no other bid offered as if it were a typo
        r = refusal(g, text)
        assert r.suggestion is None and "Did you mean" not in r.text and "bid 1, 2 or 3, or pass" in r.text, r.text
    assert refusal(g, "bdi 3").suggestion == "bid 3"
    g.step(BID_PASS + 2)
    assert refusal(g, "bdi 1").suggestion != "bid 1"  # bid 1 is below the bid of 2 so far
    g = Game.from_deal(["88333444666777JJJ", "5555999TTTTKKKKA9", "883467JQAAA2222BR"], "QQQ", first_bidder=0,
                       rules="douzero", landlord=0)  # seat 0 leads: pass is refused there
    r = refusal(g, "pas")
    assert r.suggestion is None and "pass" not in r.text, r.text
    assert refusal(g, "pass").text.startswith("You lead this trick")


def test_the_last_line_shows_the_plays_latest_move_of_each_seat_and_nothing_beats_it_is_said():
    from agents.play.match import seat_view
    from agents.play.terminal import render

    seen_only_pass = False
    for _g, states in _random_hands(30, seed=5):
        for st in states:
            screen = render(seat_view(st, int(st.current_player)))
            last = [x for x in screen.splitlines() if x.startswith("  last: ")]
            entries = last[0][len("  last: "):].split(", seat ") if last else []
            assert len(entries) <= 3, last
            seats = re.findall(r"(?:^|, )seat (\d)", last[0][len("  last: "):]) if last else []
            assert len(seats) == len(set(seats)), last
            if st.phase == Phase.PLAY or st.is_over:
                assert not last or not re.search(r"\b(bid|no bid|doubled|redoubled)\b", last[0]), (st.phase, last)
            if st.phase == Phase.PLAY and not st.is_over and [int(a) for a in st.legal_actions()] == [PASS] \
                    and st.last_move != PASS:
                assert "; nothing beats it: pass" in screen, screen
                seen_only_pass = True
    assert seen_only_pass
