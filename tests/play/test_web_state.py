"""The web page's state without HTTP (agents.play.web.tables): games started, moves played and refused, stale
versions, the agents' turns, kept hands, spectating and record reading; and each move computed once (legality,
stake, the agents' phase and role). Needs no web extra: the tables import no FastAPI."""
import ast
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import agents.base
import ddz_env.view
from agents import RuleAgent
from agents.base import public_facts
from agents.play.match import Match, _agent_decisions
from agents.play.web import tables as T
from agents.play.web.tables import (AgentFailure, BadRequest, Conflict, MoveRefused, NotFound, Tables, TableError,
                                    TooLarge)
from ddz_env.game import Game
from ddz_env.record import save as save_record

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _play_out(tables: Tables, answer: dict) -> dict:
    """Play the person's first legal action until the hand is over; the last answer."""
    while not answer["view"]["over"]:
        answer = tables.act(answer["id"], answer["view"]["legal"][0], answer["version"])
    return answer


def _history(tables: Tables, gid: str) -> list:
    return list(tables.games[gid].game.history)


def test_the_tables_import_no_http():
    tree = ast.parse(Path(T.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    web = {m for m in imported if m.split(".")[0] in ("fastapi", "starlette", "pydantic", "uvicorn", "http")}
    assert not web, web
    assert all(issubclass(e, TableError) and not issubclass(e, (OSError, ValueError)) for e in
               (BadRequest, MoveRefused, NotFound, Conflict, TooLarge, AgentFailure))


def test_a_game_starts_with_the_persons_view():
    tables = Tables()
    a = tables.new_game(seat=0, vs="rule", seed=0, deal=0)
    gid = a["id"]
    assert set(a) == {"id", "version", "view", "steps", "kept"} and a["kept"] is None
    assert a["version"] == len(_history(tables, gid)) and a["steps"][-1] == a["view"]
    assert a["view"]["seat"] == 0 and a["view"]["your_turn"] and a["view"]["players"] == ["you", "rule", "rule"]
    assert [h is not None for h in a["view"]["hands"]] == [True, False, False]  # secrecy: no other hand
    assert tables.game(gid)["view"] == a["view"] and tables.game(gid)["steps"] == [a["view"]]
    b = tables.new_game(seat=2, vs=["random", "rule"], seed=1, deal=2)
    assert b["id"] != gid and b["view"]["players"] == ["random", "rule", "you"]
    with pytest.raises(NotFound, match="no game 'g99'"):
        tables.game("g99")
    for kwargs, said in (({"vs": ["rule"]}, "vs names the 2 other seats"), ({"vs": "rul"}, "unknown agent 'rul'"),
                         ({"vs": "/etc/passwd"}, "registered agents only"), ({"rules": "houserules"}, "houserules")):
        with pytest.raises(BadRequest, match=said):
            tables.new_game(**kwargs)
    assert len(tables.games) == 2  # nothing refused was kept


def test_the_oldest_games_are_dropped(monkeypatch):
    monkeypatch.setattr(T, "MAX_GAMES", 2)
    tables = Tables()
    ids = [tables.new_game(seed=s)["id"] for s in range(3)]
    assert list(tables.games) == ids[1:]
    with pytest.raises(NotFound):
        tables.game(ids[0])


def test_a_legal_move_is_played_then_the_agents_act():
    tables = Tables()
    a = tables.new_game(seat=0, vs="rule", seed=0, deal=0)
    gid, before = a["id"], len(_history(tables, a["id"]))
    b = tables.act(gid, "bid 3", a["version"])
    history = _history(tables, gid)
    assert history[before][0] == 0  # the person's bid, then the agents' actions
    assert b["version"] == len(history) == before + len(b["steps"]) and len(b["steps"]) > 1
    assert [len(v["history"]) for v in b["steps"]] == list(range(before + 1, len(history) + 1))
    assert b["view"] == b["steps"][-1] and (b["view"]["your_turn"] or b["view"]["over"])
    assert all(s != 0 for s, _ in history[before + 1:])  # the agents acted, the person's turn again
    c = tables.act(gid, b["view"]["legal"][-1], b["version"])  # an action by its name
    assert c["version"] > b["version"]


def test_an_illegal_move_is_refused_in_words_and_changes_nothing():
    tables = Tables()
    a = tables.new_game(seat=0, vs="rule", seed=0, deal=0)
    gid = a["id"]
    before, history = tables.game(gid), _history(tables, gid)
    for action, said in (("bid 9", "no bid"), ("bdi 3", "Did you mean"), (99999, "is no action"),
                         ("double", "is no bid")):
        with pytest.raises(MoveRefused, match=said) as e:
            tables.act(gid, action, a["version"])
        assert isinstance(e.value, BadRequest) and str(e.value) == e.value.refusal["text"]
        assert set(e.value.refusal) == {"text", "tried", "needs", "ruling", "suggestion"}
    assert tables.game(gid) == before and _history(tables, gid) == history


def test_a_stale_or_missing_version_is_refused_and_plays_nothing():
    tables = Tables()
    a = tables.new_game(seat=0, vs="rule", seed=0, deal=0)
    gid, v = a["id"], a["version"]
    before = tables.game(gid)
    with pytest.raises(BadRequest, match="names no version"):
        tables.act(gid, "bid 3", None)
    for stale in (v - 1, v + 1, 0 if v else 1):
        with pytest.raises(Conflict, match=f"stale action 'bid 3': it was chosen at move {stale} of the hand, "
                                           f"which is at move {v} now"):
            tables.act(gid, "bid 3", stale)
    assert tables.game(gid) == before
    b = tables.act(gid, "bid 3", v)
    with pytest.raises(Conflict, match="stale"):  # the same click twice: the second is refused
        tables.act(gid, "bid 3", v)
    assert tables.game(gid)["view"] == b["view"]


def test_the_agents_act_first_when_they_are_first_to_bid_and_can_play_alone():
    tables = Tables()
    answers = [tables.new_game(seat=seat, vs="rule", seed=0, deal=0) for seat in range(3)]
    first = answers[0]["view"]["first_bidder"]
    for seat, a in enumerate(answers):
        history = _history(tables, a["id"])
        assert len(a["steps"]) == 1 + len(history)  # the deal, then each agent's action before the person's
        assert (len(history) > 0) == (seat != first) and all(s != seat for s, _ in history)
        assert a["view"]["your_turn"] and a["view"]["to_act"] == seat
    w = tables.watch(["rule", "random", "rule"], seed=2, deal=5)
    assert set(w) == {"record", "positions"} and w["record"]["players"] == ["rule", "random", "rule"]
    assert w["positions"][-1]["over"] and all(h is not None for h in w["positions"][0]["hands"])  # a spectator's
    assert len(w["positions"]) == len(w["record"]["actions"]) + 1
    with pytest.raises(BadRequest, match="unknown agent 'nope'"):
        tables.watch(["rule", "nope", "rule"])


def test_an_agent_that_fails_is_the_servers_fault_and_is_named(monkeypatch):
    class Broken:
        def act(self, observation):
            raise RuntimeError("boom")

    tables = Tables()
    tables.cache["rule"] = Broken()
    with pytest.raises(AgentFailure, match="agent rule failed at seat"):
        tables.watch(["rule"] * 3)
    monkeypatch.setattr(T, "load", lambda spec: (_ for _ in ()).throw(ImportError("no torch")))
    with pytest.raises(AgentFailure, match="agent 'pretrained' cannot be played on this server \\(ImportError"):
        Tables().agent("pretrained")


def test_a_finished_hand_is_kept_once_and_replays(tmp_path):
    tables = Tables(save_dir=tmp_path / "hands")
    a = tables.new_game(seat=1, vs="rule", seed=3, deal=4)
    gid = a["id"]
    with pytest.raises(Conflict, match="not over"):
        tables.record(gid)
    with pytest.raises(Conflict, match="not over"):
        tables.replay(gid)
    end = _play_out(tables, a)
    kept = end["kept"]
    assert kept["dir"] == "hands" and kept["name"].startswith("web-") and "-seed3-deal4-seat1" in kept["name"]
    assert sorted(os.listdir(tmp_path / "hands")) == [kept["name"]]
    assert tables.game(gid)["kept"] == kept and os.listdir(tmp_path / "hands") == [kept["name"]]  # once
    with pytest.raises(Conflict, match="the hand is over"):
        tables.act(gid, "pass", end["version"])
    rec, name = tables.record(gid)
    assert name == kept["name"] and rec["meta"]["human_seat"] == 1
    listing = tables.replay_list()
    assert listing["kept_dir"] == "hands" and listing["kept"] == [kept["name"]] and listing["dir"] is None
    replay = tables.kept_file(kept["name"])
    assert replay == tables.replay(gid) and replay["positions"][-1]["over"]
    with pytest.raises(NotFound, match="without --replays"):
        tables.replay_file(kept["name"])
    with pytest.raises(NotFound, match="keeps no hands"):
        Tables().kept_file(kept["name"])
    plain = Tables()  # no folder: nothing kept, the download named after the hand
    end = _play_out(plain, plain.new_game(seat=0, seed=3, deal=4))
    assert end["kept"] is None and plain.record(end["id"])[1] == "hand-seed3-deal4-seat0.json"


def test_records_are_read_from_regular_files_only(tmp_path):
    m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=4, index=1)
    m.advance()
    save_record(m.record(), tmp_path / "watched.json")
    (tmp_path / "broken.json").write_text('{"format": "ddz-hand", "version": 1}')
    (tmp_path / "folder.json").mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.json")
    tables = Tables(replay_dir=tmp_path)
    assert tables.replay_list()["records"] == ["broken.json", "watched.json"]
    assert tables.replay_file("watched.json")["record"]["players"] == ["rule"] * 3
    with pytest.raises(BadRequest, match="bad hand record"):
        tables.replay_file("broken.json")
    for name in ("folder.json", "pipe.json", "missing.json"):
        with pytest.raises(NotFound, match=f"no record '{name}'"):
            tables.replay_file(name)
    for name in ("../x.json", ".hidden.json", "notes.txt"):
        with pytest.raises(BadRequest, match="bad record name"):
            tables.replay_file(name)
    with pytest.raises(TooLarge, match="over the limit"):
        T.parsed(b"x" * 10, size=T.MAX_RECORD_BYTES + 1)
    with pytest.raises(BadRequest, match="bad hand record"):
        T.parsed(b"{not json")


def test_the_operators_agents_are_checked_at_start(tmp_path):
    with pytest.raises(ValueError, match="a plain word"):
        Tables(agents={"a/b": "rule"})
    with pytest.raises(ValueError, match="already a registered agent"):
        Tables(agents={"rule": "random"})
    tables = Tables(agents={"mine": "rule"})
    assert tables.names()[-1] == "mine" and tables.agent("mine") is tables.agent("mine")
    assert tables.agent("random") is not tables.agent("random")  # per-stream state: one per game
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="--save-dir"):
        Tables(save_dir=tmp_path / "file")


def _spy(monkeypatch, counts: Counter, owner, name: str, key: str) -> None:
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        counts[key] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def _counters(monkeypatch) -> Counter:
    counts: Counter = Counter()
    _spy(monkeypatch, counts, Game, "is_legal", "legality")
    _spy(monkeypatch, counts, ddz_env.view, "stake", "stake")
    _spy(monkeypatch, counts, agents.base, "read_status", "planes read")  # public_facts: phase, role
    return counts


def test_each_move_checks_legality_and_computes_the_stake_once(monkeypatch):
    """One legality check per action (the person's, each agent's), one stake per view sent, no phase or role read
    back out of the agents' planes; the old server checked twice, computed the answer's view twice (and the stake
    again for the outcome) and decoded the planes' status for each agent."""
    counts = _counters(monkeypatch)
    tables = Tables()
    a = tables.new_game(seat=0, vs=["rule", "random"], seed=0, deal=0)
    assert counts["planes read"] == 0
    moves = 0
    while not a["view"]["over"]:
        counts.clear()
        actions_before = a["version"]
        a = tables.act(a["id"], a["view"]["legal"][-1], a["version"])
        actions = a["version"] - actions_before
        assert actions == len(a["steps"])  # one view per action
        assert counts == {"legality": actions, "stake": len(a["steps"])}, (moves, counts)
        moves += 1
    assert moves > 3


def test_a_match_checks_legality_once_per_action(monkeypatch):
    counts = _counters(monkeypatch)
    m = Match.deal([None, RuleAgent(), RuleAgent()], ["you", "rule", "rule"], seed=1, index=1)
    m.advance()
    moves = 0
    while not m.game.is_over:
        counts.clear()
        n = len(m.game.history)
        m.play(0, m.game.default_action())
        views = m.advance_views(0)
        assert counts == {"legality": len(m.game.history) - n, "stake": len(views)}, counts
        moves += 1
    assert moves > 3 and views[-1]["outcome"] is not None  # the last views' outcome reads their stake


@pytest.mark.parametrize("rules", ["rulebook", "douzero"])
def test_the_agents_phase_and_role_from_the_game_are_their_planes(rules):
    """Read from the game, the decisions' phase and role are what the planes' status plane says."""
    for deal in range(6):
        m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=deal, index=deal, rules=rules)
        seen = set()
        while not m.game.is_over:
            s = m.game.current_player
            d = _agent_decisions(m.game, s, s)
            phase, role = public_facts(d.observation)
            assert d.phase.dtype == phase.dtype == d.role.dtype == role.dtype == np.int64
            assert (d.phase.tolist(), d.role.tolist()) == (phase.tolist(), role.tolist())
            seen.add((int(phase[0]), int(role[0])))
            m.step_agent()
        assert len(seen) >= 3, seen


def test_an_agent_choosing_an_illegal_action_changes_nothing():
    class Cheat:
        def act(self, observation):
            return 1  # a card played during the bidding

    m = Match.deal([Cheat()] * 3, ["cheat"] * 3, seed=0, index=0)
    history = list(m.game.history)
    with pytest.raises(RuntimeError, match="agent cheat chose illegal action"):
        m.step_agent()
    assert m.game.history == history and not m.game.is_over
