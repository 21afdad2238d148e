"""The web page's JSON API (agents.play.web): secrecy during play, clear errors that leave games intact,
watching and replaying. Runs a real server on 127.0.0.1."""
import os
import time

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
             "legal", "legal_kinds", "over", "result", "stake", "outcome"}


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


def _watched(server, body):
    """A watched hand as the page gets it: ``POST /api/watch`` (202, its id at once: the server plays the hand
    off the request path), then ``GET /api/watch/{id}`` until the hand is over; (status, the last answer)."""
    status, r = server.call("POST", "/api/watch", body)
    if status != 202:
        return status, r
    assert r == {"id": r["id"], "done": False, "moves": 0}, r
    while True:
        status, r = server.call("GET", f"/api/watch/{r['id']}")
        if status != 200 or r["done"]:
            return status, r
        assert set(r) == {"id", "done", "moves"}, r
        time.sleep(0.01)


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


def _check_steps(answer, before, seat):
    """A game answer's ``steps``: the person's views after each action since the last answer (their own
    move, then each agent's), one action apart, each as secret as any view; the last is ``view``."""
    steps = answer["steps"]
    assert steps and steps[-1] == answer["view"]
    for k, v in enumerate(steps):  # (before = -1 for a new hand: its first step is the deal)
        _check_secret(v, seat)
        assert len(v["history"]) == before + 1 + k, [len(x["history"]) for x in steps]
        if k:  # one more action each time (a doubling choice may be revealed on the way, R5)
            assert [(h["seat"], h["phase"]) for h in v["history"][:-1]] == [
                (h["seat"], h["phase"]) for h in steps[k - 1]["history"]]
            assert v["history"][-1]["seat"] != seat  # an agent's: the person's own move comes first


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_person_plays_full_hands_and_never_receives_hidden_cards(server, seat):
    rng = np.random.default_rng(seat)
    for deal in range(4):
        status, r = server.call("POST", "/api/games", {"seat": seat, "vs": ["rule", "random"], "seed": 9, "deal": deal})
        assert status == 200, r
        gid, view = r["id"], r["view"]
        steps = 0
        _check_steps(r, -1, seat)
        assert r["version"] == len(view["history"])
        while not view["over"]:
            _check_secret(view, seat)
            assert view["your_turn"] and view["legal"]
            st, rec = server.call("GET", f"/api/games/{gid}/record")
            assert st == 409 and "not over" in rec["error"]
            before = len(view["history"])
            status, r = server.call("POST", f"/api/games/{gid}/action", {"action": str(rng.choice(view["legal"])),
                                                                        "version": r["version"]})
            assert status == 200, r
            view = r["view"]
            _check_steps(r, before, seat)
            assert r["version"] == len(view["history"])
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
        ({"action": "bid 9", "version": 0}, 400, "no bid"),
        ({"action": 17, "version": 0}, 400, "It is the bidding, not the time for a pair of 4s: bid 1, 2 or 3, or pass."),
        ({"action": [1], "version": 0}, 400, "bad request"),
        ({"version": 0}, 400, "bad request: action"),
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
    status, r = _watched(server, {"players": ["rule"] * 3, "seed": 1, "rules": "douzero"})
    rec = r["record"]
    assert status == 200 and rec["deal"]["rules"] == "douzero" and rec["deal"]["landlord"] is not None, r
    assert rec["actions"] and all(a["phase"] == "PLAY" for a in rec["actions"])  # no bidding, no doubling


def test_watch_replay_and_saved_records(server):
    status, r = _watched(server, {"players": ["rule", "random", "rule"], "seed": 2, "deal": 5})
    assert status == 200 and r["done"] and r["moves"] == len(r["record"]["actions"]), r
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
        ("POST", "/api/games", None, deep, 413, "request body: 200,000 bytes, over the limit of 65,536"),
        ("POST", "/api/games", None, deep[:30_000] + deep[-30_000:], 400, "error"),
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


# ---------------------------------------------------------------------------- issue 39: words, kept hands
def _to_the_lead(server, **extra):
    """A new hand (seed 0, deal 0: seat 0 bids first) where the person bids 3, so leads the play with 20
    cards: the game id and the view at the lead."""
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0, **extra})
    assert status == 200 and r["view"]["your_turn"] and r["view"]["phase"] == "BID", r
    gid = r["id"]
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "bid 3", "version": r["version"]})
    while r["view"]["phase"] in ("DOUBLE", "REDOUBLE"):
        status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "no", "version": r["version"]})
    view = r["view"]
    assert view["phase"] == "PLAY" and view["your_turn"] and view["to_beat"] is None and view["cards_left"][0] == 20
    assert r["version"] == len(view["history"])
    return gid, view


def test_refused_moves_are_explained_in_words_and_leave_the_game(server):
    """Issue 39 (5): an illegal move said what was tried and what the table needs, in words; the ruling a
    detail apart (``refusal.ruling``), never the text of a move table."""
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0})
    gid = r["id"]
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "bid 9", "version": 0})
    assert status == 400 and r["error"] == "'bid 9' is no bid: bid 1, 2 or 3, or pass.", r  # (issue 47: no typo)
    assert r["refusal"]["suggestion"] is None and r["refusal"]["ruling"].startswith("R3")
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "bdi 3", "version": 0})
    assert status == 400 and r["refusal"]["suggestion"] == "bid 3", r
    gid, view = _to_the_lead(server)
    hand = view["hands"][0]
    before = server.call("GET", f"/api/games/{gid}")[1]
    at = len(view["history"])  # the version: the actions taken so far
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "pass", "version": at})
    assert status == 400 and r["error"] == "You lead this trick, so you cannot pass: play any move.", r
    assert r["refusal"]["ruling"].startswith("R8") and "R8" not in r["error"]
    low, high = hand[0], hand[-1]  # a 3 and an ace or higher: no move together
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": low + high, "version": at})
    shown = " ".join({"T": "10", "B": "BJ", "R": "RJ"}.get(c, c) for c in low + high)
    assert status == 400 and r["error"].startswith(f"{shown} is not a move. Play one combination: a single, a pair"), r
    assert r["refusal"]["tried"] == shown and "R9" not in r["error"] and r["refusal"]["ruling"] == "R9-R13: the move types"
    missing = next(c for c in "3456789TJQKA2" if hand.count(c) < 2)
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": missing * 2, "version": at})
    assert status == 400 and "but you hold" in r["error"] and r["error"].startswith("You tried a pair of "), r
    assert server.call("GET", f"/api/games/{gid}")[1] == before  # nothing moved


def test_a_finished_hand_is_kept_in_the_operators_folder_and_replays(tmp_path):
    """Issue 39 (6): a hand played on the page is saved once over, in --save-dir (the server names the file:
    the names of the file and the folder travel, never a path), listed by /api/replays, replayed from the
    list or from the game, downloaded as a file; a server with no folder keeps none and says so."""
    import json
    import urllib.request

    keep = tmp_path / "kept-hands"
    s = Server(save_dir=keep)
    try:
        assert s.call("GET", "/api/replays")[1] == {"dir": None, "records": [], "kept_dir": "kept-hands", "kept": []}
        gid, view = _to_the_lead(s)
        rng = np.random.default_rng(0)
        r = {"kept": None}
        while not view["over"]:
            assert r["kept"] is None  # nothing is kept while the hand runs
            status, r = s.call("POST", f"/api/games/{gid}/action", {"action": str(rng.choice(view["legal"])),
                                                                   "version": len(view["history"])})
            view = r["view"]
        name = r["kept"]["name"]
        assert r["kept"] == {"name": name, "dir": "kept-hands"} and str(tmp_path) not in json.dumps(r)
        assert name.startswith("web-") and name.endswith("-seed0-deal0-seat0.json")
        assert [p.name for p in keep.iterdir()] == [name]
        saved = record.load(keep / name)
        assert saved["result"]["scores"] == view["result"]["scores"] and saved["meta"]["human_seat"] == 0
        assert s.call("GET", f"/api/games/{gid}")[1]["kept"] == r["kept"]  # kept once: asked again, the same file
        assert [p.name for p in keep.iterdir()] == [name]
        listing = s.call("GET", "/api/replays")[1]
        assert listing["kept"] == [name] and listing["records"] == []
        status, opened = s.call("GET", f"/api/kept/{name}")
        assert status == 200 and opened["positions"][-1]["result"] == saved["result"]
        assert len(opened["positions"]) == len(saved["actions"]) + 1
        assert s.call("GET", f"/api/games/{gid}/replay")[1] == opened
        with urllib.request.urlopen(f"{s.url}/api/games/{gid}/record?download=1", timeout=30) as f:
            assert f.headers["Content-Disposition"] == f'attachment; filename="{name}"'
            assert json.loads(f.read()) == saved
        for bad, want in (("..%2Fx.json", (400, 404)), ("missing.json", (404,)), (".hidden.json", (400,))):
            assert s.call("GET", f"/api/kept/{bad}")[0] in want, bad
    finally:
        s.stop()
    s = Server()  # no --save-dir: nothing kept, the hand still replays and downloads from the game
    try:
        gid, view = _to_the_lead(s)
        while not view["over"]:
            status, r = s.call("POST", f"/api/games/{gid}/action", {"action": view["legal"][-1],
                                                                   "version": len(view["history"])})
            view = r["view"]
        assert r["kept"] is None and s.call("GET", f"/api/games/{gid}/replay")[0] == 200
        assert s.call("GET", "/api/kept/x.json")[0] == 404
    finally:
        s.stop()


def test_save_dir_is_the_operators_and_checked_at_start(tmp_path, capsys):
    from agents.play.web.server import main

    assert parse_args([]).save_dir == "hands" and not parse_args([]).no_save
    (tmp_path / "f").write_text("x")
    assert main(["--save-dir", str(tmp_path / "f"), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "--save-dir" in err and "it is a file" in err and err.count("error:") == 1


# ---------------------------------------------------------------------------- stale actions, pipes in the folders
def test_an_action_chosen_in_an_older_state_is_refused_and_plays_nothing(server):
    """A double click on Pass played two passes, and a second click while a slow agent thought was played as the
    next move: the person never saw the position it was played in. Each answer now gives the hand's
    ``version`` (the actions taken so far); an action naming another one is a 409 in words, and nothing moves."""
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0})
    gid, first = r["id"], r["version"]
    assert status == 200 and first == len(r["view"]["history"]) == 0 and r["view"]["your_turn"], r
    status, r = server.call("POST", f"/api/games/{gid}/action", {"action": "bid 3", "version": first})
    assert status == 200 and r["version"] == len(r["view"]["history"]) > first, r
    now = server.call("GET", f"/api/games/{gid}")[1]
    assert now["version"] == r["version"]
    # the second click of a double click names the state the first was chosen in; a page of a restarted
    # server (whose game ids start again) may name one the hand has not reached
    for stale in (first, r["version"] - 1, r["version"] + 1, r["version"] + 100):
        for action in ("bid 3", "no", "pass", 0):
            status, body = server.call("POST", f"/api/games/{gid}/action", {"action": action, "version": stale})
            assert status == 409 and set(body) == {"error"}, (stale, action, body)
            assert body["error"].startswith("stale action ") and f"chosen at move {stale} of the hand, which is at " \
                   f"move {r['version']} now" in body["error"] and body["error"].endswith("nothing was played"), body
            assert server.call("GET", f"/api/games/{gid}")[1] == now  # nothing moved, nothing was kept
    status, r2 = server.call("POST", f"/api/games/{gid}/action", {"action": r["view"]["legal"][-1],
                                                                  "version": r["version"]})
    assert status == 200 and r2["version"] > r["version"], r2  # the version shown still plays


def test_an_action_without_a_valid_version_is_refused_and_plays_nothing(server):
    """The version is required (the page is this repository's only client): one missing, or not a count, is a
    400 in words and the hand stays as it was."""
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0})
    gid = r["id"]
    before = server.call("GET", f"/api/games/{gid}")[1]
    for body, text in [
        ({"action": "bid 3"}, "the action names no version: send the \"version\" of the answer"),
        ({"action": "bid 3", "version": None}, "the action names no version"),
        ({"action": "bid 3", "version": -1}, "bad request: version"),
        ({"action": "bid 3", "version": "0"}, "bad request: version"),
        ({"action": "bid 3", "version": True}, "bad request: version"),
        ({"action": "bid 3", "version": 0.5}, "bad request: version"),
    ]:
        status, r = server.call("POST", f"/api/games/{gid}/action", body)
        assert status == 400 and set(r) == {"error"} and r["error"].startswith(text), (body, r)
        assert server.call("GET", f"/api/games/{gid}")[1] == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_pipe_named_like_a_record_is_neither_listed_nor_opened(tmp_path):
    """A FIFO named x.json in --save-dir or --replays froze its request: open() of a pipe waits for a writer.
    The server reads regular files only: the listing leaves the pipes out, a GET of one is a 404 at once,
    and the server answers on."""
    replays, keep = tmp_path / "replays", tmp_path / "kept"
    replays.mkdir()
    m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=4, index=1)
    m.advance()
    record.save(m.record(), replays / "watched.json")
    s = Server(replays, save_dir=keep)
    pipes = [replays / "x.json", keep / "x.json", keep / "y.json"]
    for p in pipes:
        os.mkfifo(p)
    (keep / "folder.json").mkdir()  # not a file either
    try:
        for path in ("/api/replays/x.json", "/api/kept/x.json", "/api/kept/y.json", "/api/kept/folder.json"):
            status, r = s.call("GET", path, timeout=60)  # (opening a pipe would block: the timeout fails the test)
            assert status == 404 and set(r) == {"error"} and "not a regular file" in r["error"], (path, r)
            assert str(tmp_path) not in r["error"], path
        status, r = s.call("GET", "/api/replays", timeout=5)
        assert status == 200 and r["records"] == ["watched.json"] and r["kept"] == [], r
        assert s.call("GET", "/api/replays/watched.json", timeout=5)[0] == 200  # still serving
        assert s.call("GET", "/api/agents", timeout=5)[0] == 200
    finally:
        for p in pipes:  # a request stuck in open() (the old server) gets its writer, so the server can stop
            try:
                os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader waits on it
                pass
        s.stop()


def test_the_operators_agents_are_seated_by_their_names_only_and_play(tmp_path):
    """Issue 47 (3): with --agent lib=sb3.pt every menu also listed "movescore" (with a run folder: "dmc"), the
    kind its checkpoint names, and choosing it answered "agent 'movescore' cannot be played on this server".
    The menus list the registered names and the operator's NAMEs, nothing else, and each NAME plays."""
    torch = pytest.importorskip("torch", reason="the operator's agents here need the train extra")
    from common import ROOT

    from agents import registered
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = load_config("smoke", {"state_layers": [16], "head_layers": [16, 8]})
    torch.manual_seed(0)
    model = make_model(cfg)
    run = tmp_path / "run"
    run.mkdir()
    save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), 0, 0, 0.0, None), run / "checkpoint.pt")
    ops = {"lib": str(ROOT / "benchmarks" / "results" / "marl" / "sb3.pt"), "mine": str(run),
           "look": "search:random?samples=2&candidates=2"}
    s = Server(agents=ops, save_dir=None)
    try:
        status, r = s.call("GET", "/api/agents")
        assert status == 200 and r["agents"] == registered() + ["lib", "look", "mine"], r
        assert not {"movescore", "dmc"} & set(r["agents"]), r
        status, r = s.call("POST", "/api/games", {"seat": 0, "vs": ["lib", "mine"], "seed": 2, "deal": 1})
        assert status == 200, r
        gid, view = r["id"], r["view"]
        assert view["players"] == ["you", "lib", "mine"]
        rng = np.random.default_rng(0)
        while not view["over"]:
            status, r = s.call("POST", f"/api/games/{gid}/action", {"action": str(rng.choice(view["legal"])),
                                                                   "version": r["version"]})
            assert status == 200, r
            view = r["view"]
        record = s.call("GET", f"/api/games/{gid}/record")[1]
        assert {a["seat"] for a in record["actions"]} == {0, 1, 2} and record["players"] == ["you", "lib", "mine"]
        status, r = _watched(s, {"players": ["look", "lib", "mine"], "seed": 1})
        assert status == 200 and r["record"]["players"] == ["look", "lib", "mine"], r
        for kind in ("movescore", "dmc"):  # the kinds a checkpoint names are no agent of the page
            status, r = s.call("POST", "/api/games", {"vs": ["rule", kind]})
            assert status == 400 and f"unknown agent {kind!r}" in r["error"], r
    finally:
        s.stop()


def test_a_move_from_the_button_to_the_next_view_is_computed_once(server, monkeypatch):
    """Each action of a POST is checked once (``Game.is_legal``: the person's move, then each agent's), each
    view sent computes its stake once (the answer's ``view`` is its last step, not a second view; a finished
    hand's outcome reads the view's stake) and no agent's phase or role is read back out of its planes (the
    game holds them). The old server checked twice, built the last view twice (5 stakes for 2 views at the end)
    and decoded the status plane once per agent action."""
    from collections import Counter

    import agents.base
    import ddz_env.view
    from ddz_env.game import Game

    counts: Counter = Counter()

    def spy(owner, name, key):
        real = getattr(owner, name)

        def counted(*args, **kwargs):
            counts[key] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, counted)

    spy(Game, "is_legal", "legality")
    spy(ddz_env.view, "stake", "stake")
    spy(agents.base, "read_status", "planes read")
    status, r = server.call("POST", "/api/games", {"seat": 0, "vs": ["rule", "random"], "seed": 0, "deal": 0})
    assert status == 200 and counts["stake"] == len(r["steps"]) and counts["planes read"] == 0, counts
    while not r["view"]["over"]:
        counts.clear()
        before = r["version"]
        status, r = server.call("POST", f"/api/games/{r['id']}/action", {"action": r["view"]["legal"][-1],
                                                                          "version": before})
        assert status == 200, r
        assert r["version"] - before == len(r["steps"])  # one view per action
        assert counts == {"legality": len(r["steps"]), "stake": len(r["steps"])}, counts
