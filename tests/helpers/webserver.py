"""A real uvicorn server of agents.play.web in a thread, for the API and browser tests."""
from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request


class Server:
    def __init__(self, replay_dir=None, agents=None, hosts=(), save_dir=None):
        import uvicorn

        from agents.play.web.server import create_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(create_app(replay_dir, agents, hosts, save_dir=save_dir), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        t0 = time.time()
        while not self.server.started:
            if time.time() - t0 > 120:  # (a hang guard: a busy machine starts it in seconds)
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def call(self, method: str, path: str, body=None, raw: bytes | None = None, host: str | None = None,
             timeout: float = 60):
        """(status, parsed JSON) of a request (``host``: its Host header, default the server's address;
        ``timeout``: seconds to wait for the answer, then ``TimeoutError``)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        headers = {"Content-Type": "application/json", **({"Host": host} if host is not None else {})}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def watch(self, body) -> tuple[int, dict]:
        """A watched hand as the page gets it: ``POST /api/watch`` (202 and an id at once: the server plays the
        hand off the request path), then ``GET /api/watch/{id}`` until it is over; (status, the last answer)."""
        status, r = self.call("POST", "/api/watch", body)
        return (status, r) if status != 202 else self.watched(r["id"])

    def watched(self, wid: str) -> tuple[int, dict]:
        """``GET /api/watch/{wid}`` until the hand is over (or an error): (status, the last answer)."""
        while True:
            status, r = self.call("GET", f"/api/watch/{wid}")
            if status != 200 or r["done"]:
                return status, r
            time.sleep(0.01)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)
