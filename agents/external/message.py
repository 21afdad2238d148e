"""The outside seat's protocol: one JSON message a decision, one reply naming a legal move.

A message holds what the seat on turn is given (`agents.base.Decisions`: its observation planes, its legal
ids, its absolute seat when known), read back through `ddz_env.readers`, so it can hold nothing a seat may
not know (R5, R21): no other seat's cards, another farmer's double only once both farmers chose. Seats are
named from the seat's side: ``"you"``, ``"next"`` (acts after you) and ``"previous"`` (acts before you).
Cards are written as in `ddz_env.cards` (``"33TTJ"``: ``T`` ten, ``B`` / ``R`` the black and red joker,
ranks from low to high); ``text`` is the same view in plain words (``10``, ``BJ``, ``RJ``) for a language model.

`messages` builds the messages of a batch of decisions, `read_reply` the move a reply names
(by id or name), or a `ReplyError` saying why the reply names none. docs/agents.md shows a message.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from ddz_env.actions import NUM_ACTIONS, action_from_string, action_to_string
from ddz_env.cards import counts_string
from ddz_env.moves import move_of_counts
from ddz_env.observation import HISTORY
from ddz_env.readers import read_bids, read_cards, read_cards_left, read_doubling, read_history, read_status
from ddz_env.rules import Phase
from ddz_env.view import said, spaced

#: the protocol's version, in every message (``"protocol"``)
PROTOCOL = "ddz-seat/1"
#: the relative seats (0 the seat itself, 1 the next, 2 the previous) as a message names them
SEATS = ("you", "next", "previous")
_PHASES = {int(p): p.name for p in Phase}
_PLAY = int(Phase.PLAY)
_ROLES = {-1: None, 0: "landlord", 1: "farmer", 2: "farmer"}
#: the name and the words of every action id (a message's legal moves and history)
NAMES = tuple(action_to_string(a) for a in range(NUM_ACTIONS))
WORDS = tuple(said(a) for a in range(NUM_ACTIONS))
#: the longest reply read (a line past it is refused)
MAX_REPLY = 4096


class ReplyError(ValueError):
    """A reply that names no legal move: ``kind`` is ``"malformed"`` (no move read from it) or ``"illegal"``
    (a move that is not among the legal ones)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


_CARDS: dict[bytes, str] = {}
_SPACED: dict[str, str] = {}


def _remembered(memo: dict, key: Any, make: Any) -> str:
    """``make()`` remembered under ``key`` in ``memo`` (a hand's strings recur from decision to decision; a memo
    is emptied past 200,000 entries)."""
    text = memo.get(key)
    if text is None:
        if len(memo) > 200_000:
            memo.clear()
        text = memo[key] = make()
    return text


def _cards(counts: np.ndarray) -> str:
    """``counts_string`` of (15,) int8 counts, remembered."""
    return _remembered(_CARDS, counts.tobytes(), lambda: counts_string(counts))


def _spaced(cards: str) -> str:
    return _remembered(_SPACED, cards, lambda: spaced(cards))


def _per_seat(values) -> dict[str, Any]:
    return {SEATS[r]: v for r, v in enumerate(values)}


def _seat(r: int) -> str | None:
    return SEATS[r] if r >= 0 else None


class Histories:
    """The whole play history of each stream (a seat's series of decisions in one hand), from the planes' window of
    the last ``HISTORY`` (15) plays: the plays between two of a seat's turns are the last 3 of its window (every
    seat plays or passes in turn), joined to what it was shown before. A window that does not continue the stream's
    history (a new hand on the stream, a decision skipped) starts it again from the window."""

    def __init__(self) -> None:
        self._plays: dict[int, list[tuple[int, int]]] = {}

    def begin(self, stream: int) -> None:
        """A hand starts on ``stream``."""
        self._plays.pop(int(stream), None)

    def extend(self, stream: int, window: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The stream's plays so far, oldest first, given the window its decision now shows."""
        old = self._plays.get(stream)
        if len(window) < HISTORY or old is None or len(old) < HISTORY - 3 or old[-(HISTORY - 3):] != window[:HISTORY - 3]:
            full = list(window)  # (a window not full holds every play of the hand)
        else:
            full = old + window[HISTORY - 3:]
        self._plays[stream] = full
        return full


def messages(decisions, numbers=None, text: bool = True, histories: Histories | None = None) -> list[dict[str, Any]]:
    """The protocol message of each decision of ``decisions`` (a `Decisions`), JSON-ready dicts.

    ``numbers[i]``: decision ``i``'s number within its seat's hand (0 its first), said as ``"decision"``;
    ``text``: add ``"text"``, the view in plain words (`render`); ``histories``: each stream's plays kept
    from decision to decision (`Histories`), so that ``"history"`` holds every play of the hand, not only
    the last 15 the planes carry."""
    d = decisions
    planes = d.observation
    hand, unseen, bottom = read_cards(planes, "hand"), read_cards(planes, "unseen"), read_cards(planes, "bottom")
    played, to_beat = read_cards(planes, "played"), read_cards(planes, "to_beat")
    left = read_cards_left(planes)
    bids, first = read_bids(planes)
    doubling, redouble = read_doubling(planes)
    status = read_status(planes)
    hist = read_history(planes)
    out = []
    for i in range(len(d)):
        bid_i = [int(b) for b in bids[i]]
        bid = max(bid_i)
        bombs, rocket = int(status.bombs[i]), bool(status.rocket[i])
        plays = _plays(hist, i)
        if histories is not None and int(d.phase[i]) == _PLAY:
            plays = histories.extend(int(d.stream[i]), plays)
        beat = int(status.beat_seat[i])
        legal = d.legal(i).tolist()
        m = {
            "protocol": PROTOCOL,
            "stream": int(d.stream[i]),
            "decision": int(numbers[i]) if numbers is not None else None,
            "seat": int(d.seat[i]) if d.seat[i] >= 0 else None,
            "phase": _PHASES[int(d.phase[i])],
            "role": _ROLES[int(status.role[i])],
            "landlord": _seat(int(status.landlord[i])),
            "hand": _cards(hand[i]),
            "cards_left": _per_seat(int(n) for n in left[i]),
            "played": _per_seat(_cards(c) for c in played[i]),
            "unseen": _cards(unseen[i]),
            "bottom": _cards(bottom[i]) if bottom[i].any() else None,
            "bids": _per_seat(None if b < 0 else b for b in bid_i),
            "first_bidder": _seat(int(first[i])),
            "doubled": _per_seat(None if x < 0 else bool(x) for x in doubling[i].tolist()),
            "redoubled": None if redouble[i] < 0 else bool(redouble[i]),
            "stakes": {"bid": bid if bid > 0 else None, "bombs": bombs, "rocket": rocket,
                       "base": bid * 2 ** (bombs + rocket) if bid > 0 else None},
            "to_beat": None,
            "history": [{"by": SEATS[s], "id": a, "move": NAMES[a]} for s, a in plays],
            "legal": [{"id": a, "move": NAMES[a]} for a in legal],
        }
        if beat >= 0:
            a = move_of_counts(to_beat[i])
            m["to_beat"] = {"by": SEATS[beat], "id": a, "move": NAMES[a]}
        if text:
            m["text"] = render(m)
        out.append(m)
    return out


def _plays(hist, i: int) -> list[tuple[int, int]]:
    seats, moves = hist.seats[i], hist.moves[i]
    n = int((seats >= 0).sum())
    return [(int(s), int(a)) for s, a in zip(seats[:n][::-1].tolist(), moves[:n][::-1].tolist())]


def _words(a: int) -> str:
    return WORDS[a]


def render(m: dict[str, Any]) -> str:
    """A message's view in plain words, a line a fact, then the legal moves (``id: words``)."""
    def seats(values: dict[str, Any], show) -> str:
        return ", ".join(f"{k} {show(v)}" for k, v in values.items())

    who = f"seat {m['seat']}" if m["seat"] is not None else "a seat"
    role = f", the {m['role']}" if m["role"] else ""
    lines = [f"Dou Dizhu: you are {who}{role}; phase {m['phase'].lower()}."]
    lines.append(f"Your cards ({len(m['hand'])}): {_spaced(m['hand'])}")
    lord = {"you": "you", "next": "the next seat", "previous": "the previous seat"}.get(m["landlord"] or "")
    lines.append(f"Cards left: {seats(m['cards_left'], str)}" + (f"; the landlord is {lord}" if lord else ""))
    if m["bottom"] is not None:
        lines.append(f"Bottom cards: {_spaced(m['bottom'])}")
    unasked = "not yet" if m["phase"] == "BID" else "not asked"
    lines.append(f"Bids: {seats(m['bids'], lambda b: unasked if b is None else ('no bid' if b == 0 else b))}"
                 + (f" (first bidder: {m['first_bidder']})" if m["first_bidder"] else ""))
    if any(v is not None for v in m["doubled"].values()) or m["redoubled"] is not None:
        dbl = seats({k: v for k, v in m["doubled"].items() if v is not None}, lambda v: "doubled" if v else "no")
        lines.append(f"Doubles: {dbl or 'none known'}" + (f"; redoubled: {'yes' if m['redoubled'] else 'no'}"
                                                         if m["redoubled"] is not None else ""))
    st = m["stakes"]
    if st["bid"] is not None:
        lines.append(f"Stakes: bid {st['bid']}, {st['bombs']} bomb(s){', the rocket' if st['rocket'] else ''}: "
                     f"{st['base']} a farmer before doubles and spring")
    lines.append(f"Played so far: {seats(m['played'], _spaced)}")
    lines.append(f"Cards not seen (in the other hands): {_spaced(m['unseen'])}")
    if m["history"]:
        lines.append("Plays, oldest first: " + "; ".join(f"{h['by']} {_words(h['id'])}" for h in m["history"]))
    if m["to_beat"] is not None:
        lines.append(f"To beat: {_words(m['to_beat']['id'])} (played by {m['to_beat']['by']})")
    elif m["phase"] == "PLAY":
        lines.append("You lead: play any move.")
    lines.append("Legal moves (reply with one id or one move):")
    lines.extend(f"  {e['id']}: {_words(e['id'])}" for e in m["legal"])
    return "\n".join(lines)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def read_reply(reply: str | bytes, legal: list[int] | np.ndarray) -> int:
    """The legal id a reply names, else `ReplyError`.

    A reply is one line: JSON ``{"move": ID}`` or ``{"move": NAME}``, a bare JSON number (an id) or string (a
    name), or a move's name as plain text. A number is an id, a string a name: ``"55"`` is the pair of fives,
    ``55`` id 55, or the pair of fives where id 55 is not legal and the pair is. A name is a move's ``move`` (``"33"``, ``"pass"``, ``"bid 2"``), its
    words in ``text`` (``"10 10"``, ``"BJ RJ"``, ``"no bid"``), or its cards in any order, in any case."""
    raw = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply)
    line = raw.strip()
    if not line:
        raise ReplyError("an empty line", "malformed")
    if len(line) > MAX_REPLY:
        raise ReplyError(f"a line of {len(line):,} characters (at most {MAX_REPLY:,})", "malformed")
    try:
        value = json.loads(line)
    except ValueError:
        value = line  # plain text: an id or a move
    if isinstance(value, dict):
        if "move" not in value:
            raise ReplyError(f"{_short(line)}: a JSON object without \"move\"", "malformed")
        value = value["move"]
    legal = [int(a) for a in legal]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ReplyError(f"{_short(line)}: the move is neither an id nor a name", "malformed")
    if isinstance(value, int):
        if value in legal:
            return value
        named = [a for a in legal if NAMES[a] == str(value)]  # (digits that are no legal id but a move's cards: 88)
        if not named:
            raise ReplyError(f"{_short(line)}: id {value} is no legal move", "illegal")
        return named[0]
    key = _norm(value)
    for a in legal:
        if key == NAMES[a] or key == _norm(WORDS[a]) or key == NAMES[a].lower():
            return a
    try:
        a = action_from_string(value)
    except (ValueError, TypeError):
        a = -1
    if a in legal:
        return a
    raise ReplyError(f"{_short(line)}: {value!r} is no legal move", "illegal")


def _short(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def legal_summary(legal, n: int = 6) -> str:
    """``'12 legal moves: 0 pass, 1 3, ...'``: a decision's legal moves in a few words, for an error."""
    legal = [int(a) for a in legal]
    shown = ", ".join(f"{a} {NAMES[a]!r}" for a in legal[:n])
    return f"{len(legal)} legal move{'s' if len(legal) != 1 else ''}: {shown}{', ...' if len(legal) > n else ''}"


__all__ = ["PROTOCOL", "SEATS", "NAMES", "Histories", "ReplyError", "messages", "render", "read_reply", "legal_summary"]
