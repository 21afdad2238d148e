"""The rule of examples/ext_client.py served over HTTP: each decision is POSTed as JSON, the reply is the body.

    python examples/ext_server.py 8765 &
    python evaluate.py --a http://127.0.0.1:8765/ --b rule --deals 10

(port 0 takes a free port; the server prints the URL it serves on its first line).
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ext_client import choose  # noqa: E402 (the same rule)


class Seat(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep the connection: one POST a decision
    disable_nagle_algorithm = True  # (else each reply waits for the client's delayed ACK: 40 ms a decision)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"move": choose(message)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet: a line a decision would flood the terminal
        pass


def make_server(port: int = 8765, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), Seat)  # (a thread a connection: each evaluation worker keeps one)


if __name__ == "__main__":
    server = make_server(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
    print(f"serving on http://{server.server_address[0]}:{server.server_address[1]}/", flush=True)
    server.serve_forever()
