"""The web page's JSON API (agents.web): secrecy during play, clear errors that leave games intact,
watching and replaying. Runs a real server on 127.0.0.1."""
import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (fastapi, uvicorn) is not installed")

from agents import RuleAgent  # noqa: E402
from agents.match import Match  # noqa: E402
from agents.web.server import parse_args  # noqa: E402
from ddz_env import record  # noqa: E402

from webserver import Server  # noqa: E402

VIEW_KEYS = {"seat", "players", "phase", "to_act", "your_turn", "hands", "cards_left", "roles", "landlord",
             "first_bidder", "bids", "bid", "doubled", "redoubled", "bottom", "played", "to_beat", "history",
             "legal", "over", "result"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("replays")
    m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=4, index=1)
    m.advance()
    record.save(m.record(), d / "watched.json")
    (d / "broken.json").write_text('{"format": "ddz-hand", "version": 1}')
    s = Server(d)
    yield s
    s.stop()


def _check_secret(view, seat):
    assert set(view) == VIEW_KEYS  # nothing else travels
    assert view["seat"] == seat
    for s in range(3):
        assert (view["hands"][s] is not None) == (s == seat or view["over"]), (s, view)
    revealed = view["phase"] == "PLAY" or (view["over"] and view["landlord"] >= 0)
    assert (view["bottom"] is not None) == revealed
    if view["phase"] == "DOUBLE":  # the other farmer's choice is secret until both chose (R5)
        assert all(h["name"] == "?" for h in view["history"] if h["phase"] == "DOUBLE" and h["seat"] != seat)


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_person_plays_full_hands_and_never_receives_hidden_cards(server, seat):
    rng = np.random.default_rng(seat)
    for deal in range(4):
        status, r = server.call("POST", "/api/games", {"seat": seat, "vs": ["rule", "random"], "seed": 9, "deal": deal})
        assert status == 200, r
        gid, view = r["id"], r["view"]
        steps = 0
        while not view["over"]:
            _check_secret(view, seat)
            assert view["your_turn"] and view["legal"]
            st, rec = server.call("GET", f"/api/games/{gid}/record")
            assert st == 409 and "not over" in rec["error"]
            status, r = server.call("POST", f"/api/games/{gid}/action", {"action": str(rng.choice(view["legal"]))})
            assert status == 200, r
            view = r["view"]
            steps += 1
            assert steps < 100
        _check_secret(view, seat)
        status, rec = server.call("GET", f"/api/games/{gid}/record")
        assert status == 200
        game = record.replay(rec)
        assert game.scores.tolist() == view["result"]["scores"] == rec["result"]["scores"]
        assert rec["players"][seat] == "you" and rec["meta"]["human_seat"] == seat


def test_bad_requests_get_clear_errors_and_leave_the_game(server):
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0})
    gid = r["id"]
    before = server.call("GET", f"/api/games/{gid}")[1]
    for body, status_want, text in [
        ({"action": "bid 9"}, 400, "no bid"),
        ({"action": 17}, 400, "not legal"),
        ({"action": [1]}, 400, "bad request"),
        ({}, 400, "bad request: action"),
    ]:
        status, r = server.call("POST", f"/api/games/{gid}/action", body)
        assert status == status_want and text in r["error"], r
    status, r = server.call("POST", f"/api/games/{gid}/action", raw=b"{not json")
    assert status == 400 and "error" in r
    assert server.call("GET", f"/api/games/{gid}")[1] == before
    assert server.call("GET", "/api/games/nope")[0] == 404
    status, r = server.call("POST", "/api/games", {"vs": ["rule", "rul"]})
    assert status == 400 and "unknown agent 'rul'" in r["error"]
    status, r = server.call("POST", "/api/games", {"vs": ["rule", "/etc/passwd"]})
    assert status == 400
    status, r = server.call("POST", "/api/games", {"seat": 3})
    assert status == 400 and "seat" in r["error"]


def test_rules_field_plays_those_rules_and_refuses_unknown_ones(server):
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "rules": "houserules"})
    assert status == 400 and "unknown preset 'houserules'" in r["error"], r
    status, r = server.call("POST", "/api/watch", {"players": ["rule"] * 3, "rules": "bidding=maybe"})
    assert status == 400 and "bad field" in r["error"], r
    status, r = server.call("POST", "/api/watch", {"players": ["rule"] * 3, "seed": 1, "rules": "douzero"})
    rec = r["record"]
    assert status == 200 and rec["deal"]["rules"] == "douzero" and rec["deal"]["landlord"] is not None, r
    assert rec["actions"] and all(a["phase"] == "PLAY" for a in rec["actions"])  # no bidding, no doubling


def test_watch_replay_and_saved_records(server):
    status, r = server.call("POST", "/api/watch", {"players": ["rule", "random", "rule"], "seed": 2, "deal": 5})
    assert status == 200
    rec, pos = r["record"], r["positions"]
    assert len(pos) == len(rec["actions"]) + 1
    assert pos[-1]["result"] == rec["result"] and pos[-1]["over"] and not pos[0]["over"]
    assert all(v["hands"][s] is not None for v in pos for s in range(3))  # a spectator sees all
    status, r2 = server.call("POST", "/api/replay", rec)
    assert status == 200 and r2["positions"] == pos
    rec["actions"][3]["action"] = 24647
    status, r3 = server.call("POST", "/api/replay", rec)
    assert status == 400 and "bad hand record" in r3["error"]
    status, r = server.call("GET", "/api/replays")
    assert r["records"] == ["broken.json", "watched.json"]
    status, r = server.call("GET", "/api/replays/watched.json")
    assert status == 200 and r["positions"][-1]["over"]
    assert server.call("GET", "/api/replays/broken.json")[0] == 400
    assert server.call("GET", "/api/replays/..%2Fx.json")[0] in (400, 404)
    assert server.call("GET", "/api/replays/missing.json")[0] == 404


def test_binds_localhost_by_default():
    assert parse_args([]).host == "127.0.0.1"
