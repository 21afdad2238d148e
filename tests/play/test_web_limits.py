"""The web server's limits (issue 62): watched hands played off the request path (item 7), request bodies
bounded before they are parsed (N40), kept hands of two servers on one folder (N41), ``--port`` checked (N48)."""
import errno
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (fastapi, uvicorn) is not installed")

from agents import RuleAgent, loader  # noqa: E402
from agents.play.web import tables as T  # noqa: E402
from agents.play.web.tables import Tables  # noqa: E402
from common import ROOT  # noqa: E402
from ddz_env import record  # noqa: E402

from webserver import Server  # noqa: E402


class Gated(RuleAgent):
    """The rule agent, deciding only once its gate is open (the test holds a watched hand mid-play)."""

    def __init__(self, gate: threading.Event):
        super().__init__()
        self.gate = gate

    def act_batch(self, decisions):
        self.gate.wait()
        return super().act_batch(decisions)


class Broken(RuleAgent):
    def act_batch(self, decisions):
        raise RuntimeError("boom")


@pytest.fixture
def gated(monkeypatch):
    """A server that seats ``test-gated`` (waits for the gate) and ``test-fails-at-table`` (fails); the gate, closed."""
    gate = threading.Event()
    monkeypatch.setitem(loader._REGISTRY, "test-gated", lambda checkpoint=None: Gated(gate))
    monkeypatch.setitem(loader._REGISTRY, "test-fails-at-table", lambda checkpoint=None: Broken())
    server = Server()
    yield server, gate
    gate.set()  # (a hand still waiting ends, so that the server stops)
    server.stop()


# ---------------------------------------------------------------------------- item 7: watched hands
def test_a_watched_hand_is_played_off_the_request_path_and_the_server_serves_meanwhile(gated):
    """POST /api/watch played the whole hand inside the request, under the games' one lock: every request
    waited behind it (p99 1.0-1.6 s under load, GET /api/agents 0.5-0.8 s). Now it answers at once with the
    hand's id; while the hand is held mid-play (its agents wait for a gate), new hands, moves, the agents list
    and the watched hand's progress are all answered; opened, it plays to its end and reads as a replay."""
    server, gate = gated
    status, r = server.call("POST", "/api/watch", {"players": ["test-gated", "rule", "test-gated"], "seed": 3},
                            timeout=30)
    assert status == 202 and r == {"id": r["id"], "done": False, "moves": 0}, r
    wid = r["id"]
    assert server.call("GET", "/api/agents", timeout=30)[0] == 200
    status, g = server.call("POST", "/api/games", {"seat": 0, "vs": "rule", "seed": 0, "deal": 0}, timeout=30)
    assert status == 200, g
    status, g = server.call("POST", f"/api/games/{g['id']}/action", {"action": "bid 3", "version": g["version"]},
                            timeout=30)
    assert status == 200 and g["version"] > 1, g
    status, r = server.call("GET", f"/api/watch/{wid}", timeout=30)
    assert status == 200 and r == {"id": wid, "done": False, "moves": 0}, r  # still held: nothing waited for it
    gate.set()
    status, r = server.watched(wid)
    assert status == 200 and set(r) == {"id", "done", "moves", "record", "positions"}, r
    rec = r["record"]
    assert r["id"] == wid and r["moves"] == len(rec["actions"]) and rec["players"] == ["test-gated", "rule", "test-gated"]
    assert record.replay(rec).is_over and len(r["positions"]) == len(rec["actions"]) + 1
    assert server.call("POST", "/api/replay", rec)[1]["positions"] == r["positions"]  # the spectator's views


def test_a_watched_hand_that_fails_says_so_and_too_many_waiting_are_refused(gated, monkeypatch):
    server, gate = gated
    status, r = server.call("POST", "/api/watch", {"players": ["rule", "test-fails-at-table", "rule"]})
    assert status == 202, r
    status, r = server.watched(r["id"])
    assert status == 500 and set(r) == {"error"} and "agent test-fails-at-table failed at seat 1" in r["error"], r
    assert server.call("GET", "/api/watch/w999")[0] == 404
    monkeypatch.setattr(T, "MAX_WATCHES_WAITING", 2)
    waiting = [server.call("POST", "/api/watch", {"players": ["test-gated"] * 3})[1]["id"] for _ in range(2)]
    status, r = server.call("POST", "/api/watch", {"players": ["rule"] * 3})
    assert status == 503 and "2 watched hands are waiting" in r["error"], r
    gate.set()
    for wid in waiting:
        assert server.watched(wid)[1]["done"]
    assert server.call("POST", "/api/watch", {"players": ["rule"] * 3})[0] == 202


# ---------------------------------------------------------------------------- N40: bodies bounded
def _post(port, path, body: bytes, chunked=False):
    """(status, JSON) of a POST of ``body`` (``chunked``: without a Content-Length, in 64 KB chunks)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        if chunked:
            c.request("POST", path, body=(body[i:i + 65536] for i in range(0, len(body), 65536)),
                      headers={"Content-Type": "application/json"}, encode_chunked=True)
        else:
            c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, json.loads(r.read())
    finally:
        c.close()


def test_a_body_of_a_million_keys_is_refused_before_it_is_parsed_and_the_server_serves_on():
    """N40: one 13 MB body of a million keys took the server 12-25 s and 1.2 GB (parsed, then a million
    validation errors). Bodies are bounded before anything parses them: over 64 KiB (a record posted to
    /api/replay: over 1 MiB) is a 413 in one line, with or without a Content-Length; the server serves on."""
    huge = b"{" + b", ".join(b'"k%d": 0' % i for i in range(1_000_000)) + b"}"
    assert len(huge) > 13_000_000
    server = Server()
    try:
        for path in ("/api/games", "/api/games/g1/action", "/api/watch", "/api/replay"):
            for chunked in (False, True):
                status, r = _post(server.port, path, huge, chunked)
                assert status == 413 and set(r) == {"error"} and "over the limit of" in r["error"], (path, r)
                assert "\n" not in r["error"]
                assert server.call("GET", "/api/agents")[0] == 200
        body = b'{"seat": 0, ' + b" " * 70_000 + b'"vs": "rule"}'
        status, r = _post(server.port, "/api/games", body)
        assert status == 413 and r["error"] == f"request body: {len(body):,} bytes, over the limit of 65,536", r
        status, r = _post(server.port, "/api/games", b'{"seat": 0, ' + b" " * 60_000 + b'"vs": "rule"}')
        assert status == 200 and r["view"]["players"] == ["you", "rule", "rule"], r  # within it: played
    finally:
        server.stop()


# ---------------------------------------------------------------------------- N41: two servers, one folder
@pytest.mark.parametrize("hard_links", [True, False], ids=["links", "no-links"])
def test_two_servers_on_one_save_dir_keep_both_sets_of_hands(tmp_path, monkeypatch, hard_links):
    """N41: the name of a kept hand was chosen by looking for a free one, then written over whatever took it
    meanwhile: two servers on one --save-dir finishing the same deal in the same second kept one hand. Now a
    name is claimed without replacing anything (a hard link; where the file system has none, O_EXCL): each
    hand of each server is kept."""
    monkeypatch.setattr(T.time, "strftime", lambda fmt, *a: "20260101-120000")  # one second for all
    if not hard_links:
        def no_link(src, dst):
            raise PermissionError(errno.EPERM, "Operation not permitted", str(dst))
        monkeypatch.setattr(T.os, "link", no_link)
    keep = tmp_path / "hands"
    a, b = Tables(save_dir=keep), Tables(save_dir=keep)
    kept = []
    for seat in range(3):  # server a's hand ends while server b's, of the same deal and seat, is being kept
        ra = a.new_game(seat=seat, vs="rule", seed=4, deal=1)
        rb = b.new_game(seat=seat, vs="rule", seed=4, deal=1)
        ma = a.games[ra["id"]]

        def b_ends_first(meta=None, real=ma.record, rb=rb):  # (a's record, asked for as a keeps its hand)
            while not rb["view"]["over"]:  # b plays its hand to the end and keeps it, meanwhile
                rb.update(b.act(rb["id"], rb["view"]["legal"][0], rb["version"]))
            kept.append(rb["kept"]["name"])
            return real(meta)

        ma.record = b_ends_first
        while not ra["view"]["over"]:
            ra = a.act(ra["id"], ra["view"]["legal"][0], ra["version"])
        kept.append(ra["kept"]["name"])
    names = sorted(p.name for p in keep.iterdir())
    assert len(set(kept)) == 6 and names == sorted(kept), (kept, names)  # six hands, six files, none hidden
    for name in names:
        assert record.load(keep / name)["meta"]["human_seat"] in (0, 1, 2)


def test_two_server_processes_on_one_save_dir_keep_every_hand(tmp_path):
    """N41 with real processes: two processes keep 40 hands each of one deal in one folder, at once."""
    keep = tmp_path / "hands"
    keep.mkdir()
    code = """
import sys, time
from agents.play.web.tables import Tables
t = Tables(save_dir=sys.argv[1])
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
for k in range(40):
    r = t.new_game(seat=0, vs="rule", seed=4, deal=1)
    while not r["view"]["over"]:
        r = t.act(r["id"], r["view"]["legal"][0], r["version"])
    print(r["kept"]["name"])
"""
    start = str(time.time() + 3)  # both start together
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(keep), start], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    kept = [line for out, _ in outs for line in out.split()]
    assert len(kept) == 80 and len(set(kept)) == 80, kept
    assert sorted(p.name for p in keep.iterdir()) == sorted(kept)


# ---------------------------------------------------------------------------- N48: --port
def _web(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "agents.play.web", *args, "--no-save"], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("port", ["70000", "-1", "eighty"])
def test_a_port_out_of_range_is_one_line_naming_it(port):
    """N48: --port 70000 ended in a traceback (getaddrinfo's OverflowError) and --port -1 said the host was not
    of this machine. A port is 0 to 65535, said in one line before anything starts."""
    p = _web("--port", port)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"argument --port: {port!r} is not a port: give a number from 1 to 65535" in lines[0], lines
    assert "Traceback" not in p.stderr and "host" not in lines[0] and "http://" not in p.stdout


def test_port_0_takes_a_free_port_and_prints_the_one_it_serves():
    """--port 0 printed http://127.0.0.1:0/, an address nothing serves; the address printed is now the
    port taken, and the page is served there."""
    proc = subprocess.Popen([sys.executable, "-m", "agents.play.web", "--port", "0", "--no-save"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        line = proc.stdout.readline()
        m = re.fullmatch(r"ddz-env web: http://127\.0\.0\.1:(\d+)/\n", line)
        assert m and int(m.group(1)) > 0, (line, proc.stderr.read() if proc.poll() is not None else "")
        c = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=60)
        c.request("GET", "/api/agents")
        r = c.getresponse()
        assert r.status == 200 and "rule" in json.loads(r.read())["agents"]
        c.close()
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_port_in_use_is_one_line_naming_it():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = _web("--port", str(port))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and f"port {port} is in use" in lines[0], p.stderr
