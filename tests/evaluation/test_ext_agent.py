"""A seat for outside programs (agents/external): the JSON message holds a seat's public view and legal moves, no
more; ``ext:COMMAND`` and ``http:URL`` agents play an evaluation with the scores of the same rule played in
process; a reply that is illegal, malformed or late ends the evaluation in one line naming the hand and the
decision; the program is gone once the evaluation ends."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from agents import load
from agents.base import BatchAgent, Decisions, public_facts
from agents.evaluation.arena import AgentError
from agents.evaluation.protocols import evaluate
from agents.external.message import NAMES, Histories, ReplyError, messages, read_reply
from common import ROOT
from ddz_env.actions import BID_PASS, action_from_string, action_to_string
from ddz_env.cards import counts_string
from ddz_env.game import Game
from ddz_env.observation import observe_game

PY = shlex.quote(sys.executable)
CLIENT = f"ext:{PY} {shlex.quote(str(ROOT / 'examples' / 'ext_client.py'))}"


class LowestNotPass(BatchAgent):
    """examples/ext_client.py's rule in process: the lowest legal id, not the pass (0) while another is legal."""

    def act_batch(self, d: Decisions) -> np.ndarray:
        out = []
        for i in range(len(d)):
            ids = d.legal(i)
            out.append(ids[1] if ids[0] == 0 and ids.size > 1 else ids[0])
        return np.array(out, np.int64)

    def __repr__(self) -> str:
        return "LowestNotPass()"


def _decision(game: Game, seat: int) -> Decisions:
    planes = observe_game(game, seat)[None]
    legal = np.asarray(game.legal_actions(), np.int64)
    phase, role = public_facts(planes)
    return Decisions(planes, legal, np.array([0, legal.size]), phase, role, np.array([seat]), np.array([3]))


def _mid_hand(seed: int = 5, steps: int = 14) -> Game:
    rule = load("rule")
    game = Game.deal(seed)
    for _ in range(steps):
        d = _decision(game, game.current_player)
        game.step(int(rule.act_batch(d)[0]))
    return game


def _strings(obj) -> list[str]:
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return [obj] if isinstance(obj, str) else []


def test_a_message_holds_the_seats_public_view_and_its_legal_moves_and_no_hidden_card():
    game = _mid_hand()
    seat = game.current_player
    assert game.phase.name == "PLAY" and game.plays
    m = messages(_decision(game, seat), [7])[0]
    json.dumps(m)  # JSON-ready
    assert m["seat"] == seat and m["decision"] == 7 and m["phase"] == "PLAY"
    assert m["hand"] == counts_string(game.hands[seat])
    rel = [seat, (seat + 1) % 3, (seat + 2) % 3]
    assert m["cards_left"] == {"you": int(game.n_cards[rel[0]]), "next": int(game.n_cards[rel[1]]),
                               "previous": int(game.n_cards[rel[2]])}
    assert [e["id"] for e in m["legal"]] == game.legal_actions().tolist()
    assert [e["move"] for e in m["legal"]] == [action_to_string(a) for a in game.legal_actions()]
    assert m["bottom"] == counts_string(game.bottom) and m["landlord"] == ["you", "next", "previous"][
        rel.index(int(game.landlord))]
    assert [(h["by"], h["id"]) for h in m["history"]][-len(game.plays[-15:]):] == [
        (["you", "next", "previous"][rel.index(s)], a) for s, a in game.plays[-15:]]
    # no other seat's cards: no string of the message is another hand, and the unseen cards are the two together
    others = [s for s in range(3) if s != seat]
    for s in others:
        assert counts_string(game.hands[s]) not in _strings(m)
    assert "hands" not in m
    # the same message whatever the hidden cards: swap a card between the two other hands (none of the bottom)
    other = game.copy()
    a, b = others
    free_a = np.flatnonzero((game.hands[a] > 0) & (game.hands[b] < 4) & (game.bottom == 0))
    free_b = np.flatnonzero((game.hands[b] > 0) & (game.hands[a] < 4) & (game.bottom == 0) & ~np.isin(
        np.arange(15), free_a))
    ra, rb = int(free_a[0]), int(free_b[0])
    other.hands[a][ra] -= 1
    other.hands[b][ra] += 1
    other.hands[b][rb] -= 1
    other.hands[a][rb] += 1
    assert other.hands.tolist() != game.hands.tolist()
    assert messages(_decision(other, seat), [7])[0] == m


def test_the_history_of_a_message_is_every_play_of_the_hand_though_the_planes_carry_15():
    rule, histories, longest = load("rule"), Histories(), 0
    for seed in (5, 6):
        game = Game.deal(seed)
        for s in range(3):
            histories.begin(3 + s)
        while not game.is_over:
            seat = game.current_player
            d = _decision(game, seat)
            d = Decisions(d.observation, d.legal_ids, d.legal_starts, d.phase, d.role, d.seat, np.array([3 + seat]))
            m = messages(d, [0], text=False, histories=histories)[0]
            if m["phase"] == "PLAY":
                rel = {seat: "you", (seat + 1) % 3: "next", (seat + 2) % 3: "previous"}
                assert [(h["by"], h["id"]) for h in m["history"]] == [(rel[s], a) for s, a in game.plays]
                longest = max(longest, len(m["history"]))
            game.step(int(rule.act_batch(d)[0]))
    assert longest > 15


def test_the_text_of_a_message_says_the_view_in_words_and_lists_every_legal_move():
    game = _mid_hand()
    m = messages(_decision(game, game.current_player), [0])[0]
    text = m["text"]
    assert "Your cards (" in text and "Legal moves" in text and "Cards left:" in text
    for e in m["legal"]:
        assert f"  {e['id']}: " in text


def test_a_reply_names_a_legal_move_by_id_or_name():
    legal = [0, action_from_string("TT"), action_from_string("BR"), action_from_string("KKQQJJ")]
    assert read_reply('{"move": %d}' % legal[1], legal) == legal[1]
    assert read_reply(str(legal[1]), legal) == legal[1]
    assert read_reply(b'{"move": "TT"}\n', legal) == legal[1]
    assert read_reply("10 10", legal) == legal[1]  # the words of the text
    assert read_reply('"BJ RJ"', legal) == legal[2]
    assert read_reply("jjqqkk", legal) == legal[3]  # cards in any order, any case
    assert read_reply("pass", legal) == 0
    assert read_reply("no bid", [BID_PASS, BID_PASS + 1]) == BID_PASS
    for bad, kind in (("", "malformed"), ('{"mv": 1}', "malformed"), ("[1]", "malformed"), ("1.5", "malformed"),
                      ("true", "malformed"), ("99", "illegal"), ('{"move": "33"}', "illegal"), ("xyz", "illegal")):
        with pytest.raises(ReplyError) as e:
            read_reply(bad, legal)
        assert e.value.kind == kind, bad


def _client(tmp_path: Path, body: str, name: str = "client.py") -> str:
    """An ext: spec of a Python client whose reply to ``message`` (a dict) is ``body``'s ``reply``; it writes its
    process id to pid.txt."""
    path = tmp_path / name
    path.write_text(f"""import json, os, sys, time
open({str(tmp_path / 'pid.txt')!r}, "w").write(str(os.getpid()))
def ids(m):
    return sorted(e["id"] for e in m["legal"])
for line in sys.stdin:
    m = json.loads(line)
{body}
    print(reply, flush=True)
""")
    return f"ext:{PY} {shlex.quote(str(path))}"


def _started(tmp_path: Path) -> bool:
    path = tmp_path / "pid.txt"
    return path.exists() and path.read_text().strip().isdigit()


def _gone(tmp_path: Path) -> None:
    pid = int((tmp_path / "pid.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _figures(res: dict) -> dict:
    return {k: v for k, v in res.items() if k != "config"}


def test_an_ext_agent_scores_as_the_same_rule_in_process_and_its_program_is_gone_after(tmp_path):
    base = _figures(evaluate(LowestNotPass(), "rule", deals=2, seed=3))
    assert _figures(evaluate(CLIENT, "rule", deals=2, seed=3)) == base
    # by name: the move's name, or its words, instead of the id; its process id recorded: gone after the run
    by_name = _client(tmp_path, """    k = ids(m)
    pick = k[1] if k[0] == 0 and len(k) > 1 else k[0]
    name = [e["move"] for e in m["legal"] if e["id"] == pick][0]
    plain = name if not name.isdigit() else json.dumps(name)  # (bare digits are an id: "55" quoted is cards)
    reply = json.dumps({"move": name}) if m["decision"] % 2 else plain""")
    assert _figures(evaluate(by_name, "rule", deals=2, seed=3)) == base
    _gone(tmp_path)


def test_an_http_agent_scores_as_the_same_rule_in_process():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from ext_server import make_server
    finally:
        sys.path.remove(str(ROOT / "examples"))
    server = make_server(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        base = _figures(evaluate(LowestNotPass(), "rule", deals=2, seed=4))
        assert _figures(evaluate(url, "rule", deals=2, seed=4)) == base
        assert _figures(evaluate(f"http:{url}?timeout=5", "rule", deals=1, seed=4)) == _figures(
            evaluate(LowestNotPass(), "rule", deals=1, seed=4))
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("body, options, says", [
    ('    reply = json.dumps({"move": "pass"})', "", "illegal reply '{\"move\": \"pass\"}': 'pass' is no legal move"),
    ('    reply = json.dumps({"mv": ids(m)[0]})', "", "malformed reply '{\"mv\": "),
    ('    print("thinking hard", file=sys.stderr, flush=True); time.sleep(30); reply = ids(m)[0]', "?timeout=0.3&startup=2",
     "no reply within 2.3 s"),
])
def test_an_illegal_malformed_or_late_reply_ends_the_evaluation_in_one_line(tmp_path, body, options, says):
    spec = _client(tmp_path, body) + options
    with pytest.raises(AgentError) as e:
        evaluate(spec, "rule", deals=2, seed=1)
    text = str(e.value)
    assert "\n" not in text and says in text, text
    assert "failed at seat " in text and ", deal 0, phase BID" in text, text  # the hand
    assert "decision 0 of the hand at seat " in text, text  # the decision
    assert "its standard error" in text, text
    assert len(e.value.records) == 0  # no hand scored
    _gone(tmp_path)
    if "late" in body or "sleep" in body:
        err = text.split("its standard error: ")[1].split(",")[0]
        assert "thinking hard" in Path(err).read_text() and "'thinking hard'" in text
        os.remove(err)


def test_a_late_http_reply_ends_the_evaluation_in_one_line():
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Sleepy(BaseHTTPRequestHandler):
        def do_POST(self):
            time.sleep(1.5)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sleepy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        with pytest.raises(AgentError) as e:
            evaluate(f"{url}?timeout=0.3", "rule", deals=1)
        text = str(e.value)
        assert "\n" not in text and f"no reply within 0.3 s (POST {url})" in text, text
        assert "decision 0 of the hand at seat " in text and ", deal 0, phase BID" in text, text
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_jq_example_scores_as_the_same_rule_in_process():
    spec = f"ext:sh {shlex.quote(str(ROOT / 'examples' / 'ext_client.sh'))}?text=no"
    assert _figures(evaluate(spec, "rule", deals=1, seed=2)) == _figures(evaluate(LowestNotPass(), "rule", deals=1,
                                                                                   seed=2))


def test_a_program_that_ends_or_cannot_start_is_said_in_one_line(tmp_path):
    with pytest.raises(AgentError, match=r"the program ended before replying \(exit status 3\)") as e:
        evaluate(f"ext:{PY} -c 'import sys; sys.exit(3)'", "rule", deals=1)
    assert "\n" not in str(e.value)
    with pytest.raises(AgentError, match="cannot start"):
        evaluate(f"ext:{tmp_path / 'nowhere'}", "rule", deals=1)


@pytest.mark.parametrize("spec, message", [
    ("ext:", "names a program"),
    ("ext:x?timeout=soon", "timeout is a number of seconds"),
    ("ext:x?colour=red", "unknown option 'colour'"),
    ("ext:'x", "cannot be split"),
    ("http:nowhere", "names a URL"),
    ("http://127.0.0.1:1/?stderr=f", "unknown option 'stderr'"),
])
def test_a_bad_spec_is_refused_before_any_hand(spec, message):
    with pytest.raises(ValueError, match=message):
        load(spec)


def test_the_agent_as_a_context_manager_stops_its_program():
    with load(CLIENT) as agent:
        game = Game.deal(1)
        d = _decision(game, game.current_player)
        assert agent.act_batch(d)[0] == LowestNotPass().act_batch(d)[0]
        pid = agent.pid
        assert pid is not None
        os.kill(pid, 0)
    assert agent.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert NAMES[0] == "pass"


def test_an_interrupted_evaluation_stops_its_program(tmp_path):
    """Ctrl-C (SIGINT) in the evaluation: the program, in a process group of its own that the signal does not reach,
    is stopped by the evaluation on its way out."""
    import signal
    import subprocess
    import time

    spec = _client(tmp_path, """    k = ids(m)
    reply = k[1] if k[0] == 0 and len(k) > 1 else k[0]""")
    code = f"from agents.evaluation.protocols import evaluate; evaluate({spec!r}, 'rule', deals=300)"
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _started(tmp_path) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _started(tmp_path), p.stderr.read() if p.poll() is not None else "no client started"
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        assert "KeyboardInterrupt" in err, err[-2000:]
    finally:
        if p.poll() is None:
            p.kill()
    _gone(tmp_path)
