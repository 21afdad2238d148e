"""Pictures of the table: a hand drawn as the web page draws it, as an ``(H, W, 3)`` ``uint8`` array.

The PettingZoo env's ``render_mode="rgb_array"`` (`ddz_env.env.raw_env`) returns
`render_game` of its hand; PettingZoo's ``RecordVideo`` wrapper (``pettingzoo.utils.wrappers``,
MP4 through MoviePy) records those frames, and `record_hand` writes a hand as an animated
GIF or WebP with Pillow alone.

The picture is for people watching (as PettingZoo's own renders are): it draws the spectator's view
(`ddz_env.view.seat_view` with ``seat=None``), every hand face up, whatever the env's
``spectator`` option (which decides what the text modes show). The layout and colours are the web
page's (``agents/play/web/static``): the green table, seat 0 at the bottom, the next seat (1) top
right and seat 2 top left; each seat's name, role badge (landlord / farmer), doubled and redoubled
flags, cards left, its hand and what it did last in the round (the seat to act lit, a ``▶`` before
its name); in the middle the status line (whose turn, what to beat), the bottom cards (face up: the
spectator knows them), the stake line and, once the hand is over, the outcome and the scores. Cards
show their rank in the corner and a suit under it (suits play no part in Dou Dizhu: drawn for looks,
as the page does), ``BJ`` / ``RJ`` for the black and red joker.

Everything here is a pure function of a view (the JSON-able dict of `ddz_env.view`): the same
state gives the same pixels (on one machine: the text is in the system's DejaVu Sans where it has
it, else in the font Pillow bundles). A fixed size, `SIZE` (960 x 640).

Needs Pillow (the ``render`` extra: ``pip install -e ".[render]"``); importing this module does not
import it, and a missing Pillow raises one ``ImportError`` naming the extra.
"""
from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .cards import NUM_SEATS
from .view import seat_view

#: the picture's (width, height) in pixels
SIZE = (960, 640)
#: what a missing Pillow says
PILLOW_MISSING = ('drawing the table (render_mode="rgb_array", ddz_env.render) needs Pillow, which is not installed: '
                  'pip install -e ".[render]" (the \'render\' extra)')

# the web page's colours (agents/play/web/static/style.css)
PAGE = (0x1D, 0x2B, 0x22)
TEXT = (0xEE, 0xF2, 0xEE)
DIM = (0xB9, 0xC9, 0xBD)
COUNT = (0xD6, 0xE7, 0xDA)
LABEL = (0xCF, 0xE0, 0xD3)
TURN = (0xFF, 0xD3, 0x4D)
RIM = (0x5B, 0x3B, 0x22)
FELT = ((0.0, (0x2F, 0x7A, 0x4C)), (0.7, (0x1F, 0x5A, 0x37)), (1.0, (0x18, 0x4A, 0x2D)))
CARD = (0xFF, 0xFD, 0xF7)
CARD_EDGE = (0x55, 0x55, 0x55)
BLACK = (0x11, 0x11, 0x11)
RED = (0xC0, 0x26, 0x2D)
BACK = ((0x7B, 0x24, 0x30), (0x9B, 0x34, 0x40), (0xDD, 0xDD, 0xDD))
BADGES = {"landlord": ((0xE0, 0xB8, 0x4A), (0x2B, 0x1D, 0x00)), "farmer": ((0x9E, 0xC8, 0xFF), (0x0A, 0x21, 0x40)),
          "flag": ((0xC0, 0x39, 0x2B), (0xFF, 0xFF, 0xFF))}
PAPER = (0xF3, 0xF0, 0xE6)
INK = (0x1D, 0x2B, 0x22)
WIN = (0x17, 0x80, 0x3D)
LOSS = (0xB0, 0x2A, 0x2A)
SHOW = {"T": "10", "B": "BJ", "R": "RJ"}
SUITS = ("spade", "heart", "club", "diamond")  # the page's order: the n-th card of a rank has suit n % 4
PHASE_LABEL = {"BID": "BIDDING", "DOUBLE": "DOUBLING", "REDOUBLE": "REDOUBLING", "PLAY": "PLAYED"}

# card sizes (the page's wide-screen sizes): (width, height, rank font, suit size, radius, step in a row, least step)
BIG = (54, 78, 19, 15, 6, 33, 26)
SMALL = (36, 50, 16, 12, 4, 22, 19)


def require_pillow():
    """PIL's ``Image``, ``ImageDraw`` and ``ImageFont``; ``ImportError`` naming the extra when Pillow is missing."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as e:
        raise ImportError(PILLOW_MISSING) from e
    return Image, ImageDraw, ImageFont


@functools.lru_cache(maxsize=None)
def _font(size: int, bold: bool = False):
    """DejaVu Sans (what the page's ``system-ui`` is on most Linux desktops) where the system has it, else the
    font bundled with Pillow (scalable since Pillow 10.1); the basic layout, the same on every machine."""
    _, _, ImageFont = require_pillow()
    for name in (("DejaVuSans-Bold.ttf",) if bold else ()) + ("DejaVuSans.ttf",):
        try:
            return ImageFont.truetype(name, size, layout_engine=ImageFont.Layout.BASIC)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


# ---------------------------------------------------------------------------------------------------- shapes
_SS = 4  # shapes are drawn this many times larger, then scaled down (smooth edges)


def _suit_points(kind: str, w: float, h: float) -> tuple[list, list]:
    """``(circles, polygons)`` of a suit in a ``w`` x ``h`` box: circles as ``(cx, cy, r)``."""
    if kind == "diamond":
        return [], [[(w / 2, 0), (w * 0.9, h / 2), (w / 2, h), (w * 0.1, h / 2)]]
    if kind == "heart":
        r = w * 0.26
        return ([(w * 0.27, h * 0.3, r), (w * 0.73, h * 0.3, r)],
                [[(w * 0.03, h * 0.4), (w * 0.97, h * 0.4), (w / 2, h * 0.97)]])
    if kind == "spade":
        r = w * 0.24
        return ([(w * 0.28, h * 0.58, r), (w * 0.72, h * 0.58, r)],
                [[(w * 0.05, h * 0.5), (w * 0.95, h * 0.5), (w / 2, h * 0.02)],
                 [(w / 2, h * 0.6), (w * 0.3, h), (w * 0.7, h)]])
    if kind == "club":
        r = w * 0.22
        return ([(w / 2, h * 0.25, r), (w * 0.26, h * 0.58, r), (w * 0.74, h * 0.58, r), (w / 2, h * 0.5, r * 0.7)],
                [[(w / 2, h * 0.55), (w * 0.32, h), (w * 0.68, h)]])
    # a five-pointed star (the jokers')
    cx, cy, ro, ri = w / 2, h * 0.53, w / 2, w / 5
    pts = [(cx + (ro if k % 2 == 0 else ri) * math.sin(k * math.pi / 5),
            cy - (ro if k % 2 == 0 else ri) * math.cos(k * math.pi / 5)) for k in range(10)]
    return [], [pts]


@functools.lru_cache(maxsize=None)
def _shape(kind: str, size: int, color: tuple[int, int, int], hollow: bool = False):
    """A suit (or star: ``kind="star"``) ``size`` px high as an RGBA tile, smooth-edged."""
    Image, ImageDraw, _ = require_pillow()
    w = size if kind != "diamond" else round(size * 0.8)
    big = Image.new("L", (w * _SS, size * _SS), 0)
    d = ImageDraw.Draw(big)
    circles, polys = _suit_points(kind, w * _SS, size * _SS)
    for cx, cy, r in circles:
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
    for p in polys:
        if hollow:
            d.polygon(p, outline=255, width=max(1, round(_SS * size / 12)))
        else:
            d.polygon(p, fill=255)
    alpha = big.resize((w, size), Image.LANCZOS)
    tile = Image.new("RGBA", (w, size), color + (255,))
    tile.putalpha(alpha)
    return tile


@functools.lru_cache(maxsize=None)
def _card(rank: str, nth: int, big: bool):
    """One card face as an RGBA tile (its shadow included), the page's ``.card``: the rank in the top-left
    corner, the suit under it; a joker's ``BJ`` / ``RJ`` over an open (black) or filled (red) star."""
    Image, ImageDraw, _ = require_pillow()
    cw, ch, fs, ss, radius = (BIG if big else SMALL)[:5]
    tile = Image.new("RGBA", (cw + 2, ch + 2), (0, 0, 0, 0))
    d = ImageDraw.Draw(tile)
    d.rounded_rectangle((1, 1, cw + 1, ch + 1), radius, fill=(0, 0, 0, 100))  # the shadow, 1 px down and right
    d.rounded_rectangle((0, 0, cw - 1, ch - 1), radius, fill=CARD + (255,), outline=CARD_EDGE + (255,))
    joker = rank in "BR"
    suit = "star" if joker else SUITS[nth % 4]
    color = RED if rank == "R" or suit in ("heart", "diamond") else BLACK
    pad = 4 if big else 3
    if joker:
        fs = round(fs * 0.8)
    font = _font(fs, True)
    text = SHOW.get(rank, rank)
    if rank == "T":  # the page's .ten: the two digits drawn close
        d.text((pad - 1, pad), "1", font=font, fill=color)
        d.text((pad - 1 + font.getlength("1") - max(1, fs // 8), pad), "0", font=font, fill=color)
    else:
        d.text((pad, pad), text, font=font, fill=color)
    top = pad + fs + 2
    size = round(ss * 1.35) if joker else ss
    mark = _shape(suit, size, color, hollow=rank == "B")
    tile.alpha_composite(mark, (pad, top))
    return tile


@functools.lru_cache(maxsize=None)
def _back():
    """A card's back as the page draws the other seats' hidden cards (``.back``): 10 x 24, red stripes."""
    Image, ImageDraw, _ = require_pillow()
    w, h = 10, 24
    tile = Image.new("RGBA", (w, h), BACK[0] + (255,))
    d = ImageDraw.Draw(tile)
    for k in range(-h, w + h, 6):
        d.line([(k, 0), (k + h, h)], fill=BACK[1] + (255,), width=2)
    d.rounded_rectangle((0, 0, w - 1, h - 1), 2, outline=BACK[2] + (255,))
    return tile


@functools.lru_cache(maxsize=4)
def _felt(size: tuple[int, int]) -> bytes:
    """The page (dark green) with the table on it: a rounded felt with the page's radial gradient and a wooden rim."""
    Image, ImageDraw, _ = require_pillow()
    W, H = size
    x0, y0, x1, y1 = 10, 10, W - 10, H - 10
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    rx, ry = (x1 - x0) / 2 * math.sqrt(2), (y1 - y0) / 2 * math.sqrt(2)  # "ellipse at center": to the corners
    t = np.sqrt(((xx - W / 2) / rx) ** 2 + ((yy - H / 2) / ry) ** 2)
    stops = np.array([s for s, _ in FELT], np.float32)
    colors = np.array([c for _, c in FELT], np.float32)
    felt = np.stack([np.interp(t, stops, channel) for channel in colors.T], axis=-1)
    felt = Image.fromarray(np.round(felt).astype(np.uint8), "RGB")
    img = Image.new("RGB", (W, H), PAGE)
    mask = Image.new("L", (W, H), 0)
    radius = min(140, (y1 - y0) // 3)
    ImageDraw.Draw(mask).rounded_rectangle((x0 + 8, y0 + 8, x1 - 8, y1 - 8), radius - 8, fill=255)
    ImageDraw.Draw(img).rounded_rectangle((x0, y0, x1, y1), radius, fill=RIM)
    img.paste(felt, (0, 0), mask)
    return img.tobytes()


# ---------------------------------------------------------------------------------------------------- the table
class _Canvas:
    """The picture being drawn, with the page's elements (text, badges, rows of cards) as methods."""

    def __init__(self, size: tuple[int, int]):
        Image, ImageDraw, _ = require_pillow()
        self.img = Image.frombytes("RGB", size, _felt(size))
        self.draw = ImageDraw.Draw(self.img, "RGBA")  # (an RGB picture drawn in RGBA: translucent fills blend)
        self.W, self.H = size

    def width(self, text: str, size: int, bold: bool = False) -> float:
        return _font(size, bold).getlength(text)

    def text(self, xy, text: str, size: int, color=TEXT, bold: bool = False, anchor: str = "la", shadow: bool = False):
        font = _font(size, bold)
        if shadow:
            self.draw.text((xy[0], xy[1] + 1), text, font=font, fill=(0, 0, 0, 150), anchor=anchor)
        self.draw.text(xy, text, font=font, fill=color, anchor=anchor)

    def badge(self, x: float, y: float, text: str, kind: str) -> float:
        """A pill (the page's ``.badge``) with its left edge at ``x``; returns its width."""
        bg, fg = BADGES[kind]
        w = self.width(text, 11) + 12
        self.draw.rounded_rectangle((x, y, x + w, y + 16), 8, fill=bg)
        self.text((x + w / 2, y + 8), text, 11, fg, anchor="mm")
        return w

    def cards(self, x: float, y: float, cards: str, big: bool, width: float, dry: bool = False) -> float:
        """A row of overlapping cards from ``x`` (each ``step`` px right of the last, the step shrunk to fit
        ``width``, rows of equal length below it where even the least step would not); returns the height
        (``dry``: only that, nothing drawn)."""
        cw, ch, *_, step, least = BIG if big else SMALL
        n = len(cards)
        if not n:
            return 0
        per = n
        if n > 1 and (width - cw) / (n - 1) < least:
            per = max(1, int((width - cw) // least) + 1)
            per = math.ceil(n / math.ceil(n / per))  # lines of equal length
        if per > 1:
            step = min(step, (width - cw) / (per - 1))
        seen: dict[str, int] = {}
        for i, c in enumerate(cards if not dry else ""):
            nth = seen.get(c, 0)
            seen[c] = nth + 1
            row, col = divmod(i, per)
            self.paste(_card(c, nth, big), x + col * step, y + row * (ch + 3))
        rows = math.ceil(n / per)
        return rows * ch + (rows - 1) * 3

    def cards_width(self, n: int, big: bool, width: float) -> float:
        cw, _, *_, step, least = BIG if big else SMALL
        if n <= 1:
            return cw * n
        per = n if (width - cw) / (n - 1) >= least else max(1, int((width - cw) // least) + 1)
        per = math.ceil(n / math.ceil(n / per))
        return cw + (per - 1) * min(step, (width - cw) / max(1, per - 1)) if per > 1 else cw

    def paste(self, tile, x: float, y: float) -> None:
        """An RGBA tile blended in at ``(x, y)``."""
        self.img.paste(tile, (round(x), round(y)), tile)

    def backs(self, x: float, y: float, n: int) -> None:
        for i in range(n):
            self.paste(_back(), x + i * 7, y)

    def wrapped(self, x: float, y: float, text: str, size: int, width: float, color=TEXT, bold: bool = False,
                center: bool = False, dry: bool = False) -> float:
        """``text`` in lines no wider than ``width`` (broken at spaces); returns the height used (``dry``: only
        that, nothing drawn)."""
        lines, line = [], ""
        for word in text.split(" "):
            trial = f"{line} {word}" if line else word
            if line and self.width(trial, size, bold) > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
        for k, ln in enumerate(lines if not dry else ()):
            lx = x + (width - self.width(ln, size, bold)) / 2 if center else x
            self.text((lx, y + k * (size + 4)), ln, size, color, bold)
        return len(lines) * (size + 4)


def last_said(view: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """What each seat did last in the round on the table, as the page shows it (its ``lastSaid``): each seat's
    most recent action among the last three; in the play only plays."""
    said: dict[int, dict[str, Any]] = {}
    for h in view["history"][-3:]:
        if view["phase"] == "PLAY" and h["phase"] != "PLAY":
            continue
        said[int(h["seat"])] = h
    return said


def status_text(view: dict[str, Any]) -> str:
    """The page's status line for someone watching: ``PLAY · seat 2's turn · to beat 7 7 (seat 1)``."""
    if view["over"]:
        r = view["result"]
        return "Void hand: everyone passed" if r["void"] else f"Hand over: seat {r['winner']} went out"
    beat = view["to_beat"]
    what = {"BID": "bid", "DOUBLE": "double?", "REDOUBLE": "redouble?",
            "PLAY": f"to beat {_spaced(beat['cards'])} (seat {beat['seat']})" if beat else "lead"}[view["phase"]]
    return f"{view['phase']} · seat {view['to_act']}'s turn · {what}"


def _spaced(cards: str) -> str:
    return " ".join(SHOW.get(c, c) for c in cards)


def _is_cards(name: str) -> bool:
    return bool(name) and all(c in "3456789TJQKA2BR" for c in name)


def _seat(cv: _Canvas, view: dict[str, Any], s: int, box: tuple[float, float, float, float], me: bool,
          said: dict[int, dict[str, Any]]) -> None:
    """One seat's box (the page's ``seatBox``): lit when it is to act, its name with a ``▶`` on turn, the badges,
    the cards left, its hand (big cards for the seat at the bottom) and what it did last."""
    x0, y0, x1, y1 = box
    right = not me and x0 > cv.W / 2
    on_turn = view["to_act"] == s and not view["over"]
    hand = view["hands"][s]
    inner = x1 - x0 - 2 * 10  # (10 px in from each side)
    if on_turn:  # the page's .seat.acting, as high as what the box holds
        if me:
            high = 34 + BIG[1] + 8
        else:
            rows = 30 if hand is None else (cv.cards(0, 0, hand, False, inner - 40, dry=True) + 8 if hand else 0)
            high = 34 + rows + (SMALL[1] + 16 if s in said else 0)
        cv.draw.rounded_rectangle((x0, y0, x1, min(y1, y0 + high)), 10, fill=(255, 211, 77, 41),
                                  outline=(255, 211, 77, 140), width=2)
    name = f"seat {s} · {view['players'][s]}"
    badges = []
    role = view["roles"][s]
    if role:
        badges.append((role, role))
    if view["doubled"][s]:
        badges.append(("doubled", "flag"))
    if s == view["landlord"] and view["redoubled"]:
        badges.append(("redoubled", "flag"))
    n = view["cards_left"][s]
    count = f"{n} card{'s' if n != 1 else ''} left"
    head = ((16 if on_turn else 0) + cv.width(name, 15, True) + sum(cv.width(t, 11) + 16 for t, _ in badges)
            + 10 + cv.width(count, 13))
    x = (x0 + x1 - head) / 2 if me else (x1 - 10 - head if right else x0 + 10)
    y = y0 + 8
    if on_turn:  # the page's "▶ " before the name
        cv.draw.polygon([(x, y + 3), (x + 10, y + 9), (x, y + 15)], fill=TURN)
        x += 16
    cv.text((x, y), name, 15, TEXT, bold=True)
    x += cv.width(name, 15, True) + 6
    for text, kind in badges:
        x += cv.badge(x, y + 1, text, kind) + 4
    cv.text((x + 6, y + 2), count, 13, COUNT)
    y += 26
    said_w = 150 if me else inner
    if me:
        hand_w = inner - said_w - 12
        used = cv.cards_width(len(hand or ""), True, hand_w)
        hx = x0 + 10 + (hand_w - used) / 2
        if hand:
            cv.cards(hx, y, hand, True, hand_w)
        else:
            cv.backs(hx, y + 24, n)
        _said(cv, said.get(s), (x1 - 10 - said_w, y, x1 - 10, y + BIG[1]))
        return
    label_w = 40
    if hand is None:
        cv.backs(x1 - 10 - 10 - 7 * max(0, n - 1) if right else x0 + 10, y, n)
        y += 30
    elif hand:
        row_w = inner - label_w
        used = cv.cards_width(len(hand), False, row_w)
        hx = x1 - 10 - used if right else x0 + 10 + label_w
        cv.text((hx - label_w, y + 3), "HAND", 10, DIM)
        y += cv.cards(hx, y, hand, False, row_w) + 8
    h = said.get(s)
    w = _said_width(cv, h, said_w)
    _said(cv, h, (x1 - 10 - w, y, x1 - 10, y + SMALL[1] + 8) if right else (x0 + 10, y, x0 + 10 + w, y + SMALL[1] + 8))


def _said_width(cv: _Canvas, h: dict[str, Any] | None, most: float) -> float:
    if h is None:
        return 0
    label = cv.width(PHASE_LABEL.get(h["phase"], "SAID"), 10) + 10
    if h["phase"] == "PLAY" and _is_cards(h["name"]):
        return min(most, label + cv.cards_width(len(h["name"]), False, most - label) + 12)
    return min(most, label + cv.width(h["text"], 14) + 28)


def _said(cv: _Canvas, h: dict[str, Any] | None, box: tuple[float, float, float, float]) -> None:
    """What a seat did last (the page's ``.said``): a label (``PLAYED``, ``BIDDING``...) and the cards or the word."""
    if h is None:
        return
    x0, y0, x1, y1 = box
    cv.draw.rounded_rectangle(box, 8, fill=(0, 0, 0, 56))
    label = PHASE_LABEL.get(h["phase"], "SAID")
    cv.text((x0 + 6, y0 + 6), label, 10, DIM)
    x = x0 + 6 + cv.width(label, 10) + 6
    if h["phase"] == "PLAY" and _is_cards(h["name"]):
        cv.cards(x, y0 + 4, h["name"], False, x1 - x - 4)
        return
    w = cv.width(h["text"], 14) + 16
    cv.draw.rounded_rectangle((x, y0 + 4, x + w, y0 + 28), 6, fill=(0, 0, 0, 90))
    secret = h["name"] == "?"
    cv.text((x + w / 2, y0 + 16), h["text"], 14, (0xD8, 0xD0, 0xFF) if secret else TEXT, anchor="mm")


def _center(cv: _Canvas, view: dict[str, Any], top: float, bottom: float) -> None:
    """The middle of the table: the status line, the bottom cards, the stake, the outcome once over."""
    W = cv.W
    y = top
    cv.text((W / 2, y), status_text(view), 17, TEXT, bold=True, anchor="ma", shadow=True)
    y += 28
    label_w = cv.width("bottom", 12) + 8
    if view["bottom"]:
        w = cv.cards_width(len(view["bottom"]), False, 200)
        x = (W - w - label_w) / 2
        cv.text((x, y + 18), "bottom", 12, LABEL)
        cv.cards(x + label_w, y, view["bottom"], False, 200)
    else:
        x = (W - label_w - 24) / 2
        cv.text((x, y + 6), "bottom", 12, LABEL)
        cv.backs(x + label_w, y, 3)
    y += SMALL[1] + 6
    if view["stake"]:
        y += cv.wrapped(120, y, f"stake: {view['stake']['text']}", 13, W - 240, TEXT, center=True) + 4
    out = view.get("outcome")
    if not out:
        return
    x0, x1 = W / 2 - 330, W / 2 + 330
    res = view["result"]
    text_h = cv.wrapped(0, 0, out["line"], 12, x1 - x0 - 28, bold=True, dry=True)
    box_h = 34 + text_h + (22 if not res["void"] else 0) + 6
    y0 = min(y + 2, bottom - box_h)
    cv.draw.rounded_rectangle((x0, y0, x1, y0 + box_h), 8, fill=PAPER)
    cv.text((x0 + 14, y0 + 4), out["headline"], 22, INK, bold=True)
    yy = y0 + 34
    yy += cv.wrapped(x0 + 14, yy, out["line"], 12, x1 - x0 - 28, INK, bold=True)
    if res["void"]:
        return
    x = x0 + 14
    for s in range(NUM_SEATS):
        score = int(res["scores"][s])
        part = f"seat {s} {view['roles'][s]} "
        cv.text((x, yy + 2), part, 12, INK)
        x += cv.width(part, 12)
        cv.text((x, yy + 2), f"{score:+d}", 12, WIN if score > 0 else LOSS, bold=True)
        x += cv.width(f"{score:+d}", 12, True) + 24


def table_image(view: dict[str, Any] | None, me: int = 0, size: tuple[int, int] = SIZE, note: str | None = None):
    """The table of ``view`` (a `ddz_env.view.seat_view` dict) as a PIL RGB image of ``size`` (width,
    height): seat ``me`` at the bottom, the next seat top right, the one after top left, as on the page.
    ``view=None`` draws the empty table with ``note`` in the middle."""
    cv = _Canvas(tuple(size))
    W, H = cv.W, cv.H
    if view is None:
        cv.text((W / 2, H / 2), note or "(no hand)", 17, TEXT, bold=True, anchor="mm", shadow=True)
        return cv.img
    said = last_said(view)
    right, left = (me + 1) % NUM_SEATS, (me + 2) % NUM_SEATS
    half = (W - 130) / 2
    _seat(cv, view, left, (50, 30, 50 + half, 232), False, said)
    _seat(cv, view, right, (W - 50 - half, 30, W - 50, 232), False, said)
    _seat(cv, view, me, (70, H - 160, W - 70, H - 34), True, said)
    _center(cv, view, 244, H - 166)
    return cv.img


def table_array(view: dict[str, Any] | None, me: int = 0, size: tuple[int, int] = SIZE,
                note: str | None = None) -> np.ndarray:
    """`table_image` as an ``(H, W, 3)`` ``uint8`` array (what ``render_mode="rgb_array"`` returns)."""
    return np.asarray(table_image(view, me, size, note), dtype=np.uint8)


def render_game(game, names: Sequence[str] | None = None, me: int = 0, size: tuple[int, int] = SIZE) -> np.ndarray:
    """The table of ``game`` (a `ddz_env.Game`, or ``None``: no hand yet) as a spectator sees it (every hand,
    the bottom, every choice), as an ``(H, W, 3)`` ``uint8`` array; ``names`` are the seats' players."""
    if game is None:
        return table_array(None, me, size, note="(no hand: call reset())")
    return table_array(seat_view(game, None, names), me, size)


# ---------------------------------------------------------------------------------------------------- animations
def save_animation(frames: Sequence[np.ndarray], path: str | Path, fps: float = 1.0, hold_last: float = 3.0,
                   quality: int = 80) -> Path:
    """Write ``frames`` (``(H, W, 3)`` arrays) as an animated GIF or WebP (by ``path``'s suffix) with Pillow alone,
    ``fps`` frames a second, the last shown ``hold_last`` seconds; loops. ``quality``: the WebP's lossy frames'
    (0-100; each frame is lossless or lossy, whichever is smaller); a GIF is lossless in 255 colours, and about
    twice as large. Returns the path."""
    Image, _, _ = require_pillow()
    path = Path(path)
    if not len(frames):
        raise ValueError("save_animation: no frames")
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".webp"):
        raise ValueError(f"save_animation: write a .gif or a .webp, got {path.name!r}")
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8), "RGB") for f in frames]
    durations = [round(1000 / fps)] * (len(images) - 1) + [round(1000 * max(hold_last, 1 / fps))]
    if suffix == ".gif":
        # one palette for every frame, from a few of them (a badge or a colour may appear only later), not
        # dithered: what does not change from one frame to the next stays the same pixels
        sample = images[:: max(1, len(images) // 6)] + [images[-1]]
        strip = Image.new("RGB", (images[0].width, images[0].height * len(sample)))
        for k, im in enumerate(sample):
            strip.paste(im, (0, k * im.height))
        palette = strip.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        images = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
        images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0)
    else:
        # allow_mixed: each frame lossless or lossy, whichever is smaller (most are lossless: flat colours and text)
        images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, quality=quality,
                       method=4, allow_mixed=True)
    return path


def record_hand(env, path: str | Path, policy: Callable[[dict, str], int] | None = None, seed: int | None = None,
                fps: float = 1.0, hold_last: float = 3.0, options: dict | None = None,
                quality: int = 80) -> list[np.ndarray]:
    """Play one hand of ``env`` (``ddz_env.env(render_mode="rgb_array")`` or ``raw_env``) and write it to ``path``
    as an animated GIF or WebP (`save_animation`): a frame after the reset and after each move.

    ``policy(observation, agent) -> action`` chooses the moves (an agent's ``act`` is
    ``lambda obs, agent: agent_obj.act(obs)``); by default a uniformly random legal action, seeded by ``seed``
    (which also seeds the deal: ``env.reset(seed=seed, options=options)``); ``fps``, ``hold_last`` and
    ``quality`` as `save_animation` takes them. Returns the frames."""
    if getattr(env, "render_mode", None) != "rgb_array":
        raise ValueError(f"record_hand: the env must render rgb_array (ddz_env.env(render_mode='rgb_array')), got "
                         f"render_mode={getattr(env, 'render_mode', None)!r}")
    require_pillow()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed, options=options)
    frames = [env.render()]
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy(obs, agent) if policy is not None else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        frames.append(env.render())
    save_animation(frames, path, fps=fps, hold_last=hold_last, quality=quality)
    return frames


__all__ = ["SIZE", "PILLOW_MISSING", "require_pillow", "table_image", "table_array", "render_game", "last_said", "status_text",
           "save_animation", "record_hand"]
