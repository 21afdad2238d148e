"""An outside seat in about 30 lines: reads one JSON message a line on standard input (the seat's view and
its legal moves) and answers one line naming a move. Its rule: the legal move with the lowest id, but not
a pass while anything else is legal (the cheapest move that beats, or the lowest single when leading; no bid,
no double). Seat it with

    python evaluate.py --a "ext:python3 examples/ext_client.py" --b rule --deals 10

(the protocol: docs/agents.md, "Outside programs"; examples/ext_server.py serves the same rule over HTTP).
"""
import json
import sys


def choose(message: dict) -> int:
    """The id of the move to play: the lowest legal id, skipping the pass (id 0) when another move is legal."""
    ids = sorted(move["id"] for move in message["legal"])
    return ids[1] if ids[0] == 0 and len(ids) > 1 else ids[0]


def main() -> None:
    for line in sys.stdin:  # one message a line; the loop ends when the evaluation closes our input
        message = json.loads(line)
        print(json.dumps({"move": choose(message)}), flush=True)


if __name__ == "__main__":
    main()
