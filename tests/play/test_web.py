"""The web page's JSON API (agents.play.web): secrecy during play, clear errors that leave games intact,
watching and replaying. Runs a real server on 127.0.0.1."""
import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (fastapi, uvicorn) is not installed")

from agents import RuleAgent  # noqa: E402
from agents.play.match import Match  # noqa: E402
from agents.play.web.server import parse_args  # noqa: E402
from ddz_env import record  # noqa: E402

from webserver import Server  # noqa: E402

VIEW_KEYS = {"seat", "players", "phase", "to_act", "your_turn", "hands", "cards_left", "roles", "landlord",
             "first_bidder", "bids", "bid", "doubled", "redoubled", "bottom", "played", "to_beat", "history",
             "legal", "over", "result", "stake", "outcome"}


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
        # nor does the live stake tell it: only this seat's own double counts in it
        assert view["stake"] is not None and "doubled" not in view["stake"]["text"].replace("you doubled", "")


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


# ---------------------------------------------------------------------------- issue 22: names, errors
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A server started in a working folder whose neighbours a client might name: ``../checkpoint.pt``
    (a real rule checkpoint when torch is there), a ``notes`` file, a ``runs`` folder; its
    --replays folder holds a non-UTF-8 record and a 100,000-deep JSON array."""
    import os

    root = tmp_path_factory.mktemp("hostile")
    work = root / "work"
    (work / "runs").mkdir(parents=True)
    (work / "notes").write_text("not a checkpoint")
    replays = work / "replays"
    replays.mkdir()
    (replays / "latin1.json").write_bytes('{"format": "ddz-hand", "players": ["Jos\xe9"]}'.encode("latin-1"))
    (replays / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    try:
        import agents

        agents.save_checkpoint(root / "checkpoint.pt", "rule")
    except ImportError:  # no torch: the names are still refused the same way
        pass
    cwd = os.getcwd()
    os.chdir(work)
    s = Server(replays)
    yield s, root
    s.stop()
    os.chdir(cwd)


def test_games_seat_registered_names_only_and_never_open_a_file(hostile):
    """Issue 22 (3): {"vs": ".."} loaded ../checkpoint.pt, {"vs": "notes"} ran torch.load on ./notes,
    /api/watch the same; the error texts told a folder from a file. Now every unknown name gets
    the same 400, whatever exists under that name on the server."""
    server, root = hostile
    texts = {}
    for name in ("..", "notes", "runs", "nothing", "../checkpoint.pt", str(root / "checkpoint.pt"), "./notes"):
        for path, body in (("/api/games", {"vs": name}), ("/api/games", {"vs": ["rule", name]}),
                           ("/api/watch", {"players": ["rule", name, "rule"]})):
            status, r = server.call("POST", path, body)
            assert status == 400, (name, path, r)
            texts.setdefault(r["error"].replace(repr(name), "NAME"), []).append(name)
    assert len(texts) == 1, texts  # one text for all: nothing tells what the server holds
    from agents import registered

    # (other test modules register names of their own in this process: the list is the live one)
    assert f"the page seats the registered agents only ({', '.join(registered())})" in next(iter(texts))
    status, r = server.call("POST", "/api/games", {"vs": "rule"})  # a registered name still plays
    assert status == 200 and r["view"]["players"][1:] == ["rule", "rule"]


def test_every_bad_request_is_a_json_4xx_that_shows_no_server_path(hostile):
    """Issue 22 (8): a negative seed, a non-UTF-8 record in --replays and a 100,000-deep JSON array
    (from the folder or posted) were plain-text 500s."""
    server, root = hostile
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = [
        ("POST", "/api/games", {"seed": -1}, None, 400, "seed"),
        ("POST", "/api/watch", {"seed": -1}, None, 400, "seed"),
        ("POST", "/api/games", {"sead": 3}, None, 400, "sead"),
        ("GET", "/api/replays/latin1.json", None, None, 400, "not UTF-8"),
        ("GET", "/api/replays/deep.json", None, None, 400, "nested too deeply"),
        ("POST", "/api/replay", None, deep, 400, "nested too deeply"),
        ("POST", "/api/replay", None, b"\xff\xfe", 400, "not UTF-8"),
        ("POST", "/api/replay", None, b" " * (2 << 20), 413, "over the limit"),
        ("POST", "/api/games", None, deep, 400, "error"),
        ("GET", "/api/replays/a%00b.json", None, None, 400, "bad record name"),
        ("GET", "/api/replays/missing.json", None, None, 404, "no record 'missing.json'"),
        ("GET", "/api/nowhere", None, None, 404, "Not Found"),
        ("DELETE", "/api/games", None, None, 405, "Method Not Allowed"),
    ]
    for method, path, body, raw, want, text in cases:
        status, r = server.call(method, path, body, raw=raw)
        assert status == want and set(r) == {"error"} and text in r["error"], (path, status, r)
        assert str(root) not in r["error"] and "/tmp" not in r["error"], r
    status, r = server.call("GET", "/api/replays")
    assert status == 200 and r["dir"] == "replays" and str(root) not in str(r)


def test_replays_that_is_no_folder_is_refused_at_start(tmp_path, capsys):
    from agents.play.web.server import main

    (tmp_path / "f.json").write_text("{}")
    for bad in (tmp_path / "f.json", tmp_path / "missing"):
        assert main(["--replays", str(bad), "--port", "0"]) == 2
        err = capsys.readouterr().err
        assert "is not a folder" in err and err.count("error:") == 1


def test_only_the_served_host_names_are_answered(server):
    """Issue 38, case 6: a request whose Host names another site (DNS rebinding: a page of evil.example whose
    name now points at 127.0.0.1) gets 400 JSON and touches nothing; this machine's names are served."""
    before = server.call("GET", "/api/agents")
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", "localhost.evil.example"):
        status, body = server.call("GET", "/api/agents", host=host)
        assert status == 400 and "is not served here" in body["error"], (host, body)
        status, body = server.call("POST", "/api/games", {"seat": 0, "vs": ["rule", "rule"], "seed": 1}, host=host)
        assert status == 400
    for host in ("localhost", f"localhost:{server.port}", "127.0.0.1", f"[::1]:{server.port}", "LOCALHOST"):
        assert server.call("GET", "/api/agents", host=host) == before, host


def test_an_operator_adds_host_names():
    from agents.play.web.server import host_name

    assert host_name("[::1]:8000") == "::1" and host_name("Example.COM:80") == "example.com"
    s = Server(hosts=("ddz.lan",))
    try:
        assert s.call("GET", "/api/agents", host="ddz.lan:8000")[0] == 200
        assert s.call("GET", "/api/agents", host="other.lan")[0] == 400
    finally:
        s.stop()
