"""Terminal play (agents.play) driven by scripted input, and the Match core it shares with the web page."""
import re
import subprocess
import sys

import numpy as np
import pytest

from agents import RandomAgent, RuleAgent
from agents.match import Match, parse_action
from agents.play import main
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
    with pytest.raises(ValueError, match="bad card string"):
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
