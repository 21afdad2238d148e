"""The web page's rough edges a new user met, in a real browser (headless Chromium via Selenium), each at a
phone's 390 x 844 and a desktop's 1280 x 1000: at the end of a watched hand no seat is lit as acting; a seat's
played row (a 12-card straight) and its hand shown face up stay in the seat's box, every rank readable; the
Replays menu's chosen name is readable in full; the live stake's last equation is never split (``= 9`` alone
on a line); the legal moves are grouped by kind, a button per kind with its count, every move one press away.
Screenshots go to $DDZ_SCREENSHOTS (default: a temp folder).

Needs chromium and chromedriver (``.ci/run`` installs them from the distribution's packages)."""
import os
from collections import Counter

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
pytest.importorskip("selenium.webdriver", reason="selenium (the dev extra) is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from agents.play.match import Match  # noqa: E402
from ddz_env import record  # noqa: E402
from ddz_env.game import Game  # noqa: E402
from ddz_env.rules import Deal  # noqa: E402

from webpage import MISSING, no_sideways_scroll, open_page, state, to_the_lead, viewport  # noqa: E402
from webserver import Server  # noqa: E402

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
# (the fixtures browser, one Chromium for the module, and shots, the screenshots' folder: tests/play/conftest.py)

SIZES = [(390, 844), (1280, 1000)]
#: a kept hand's name as the server writes it (web-DATE-TIME-seedS-dealD-seatX.json), with long numbers
LONG_NAME = "web-20260101-120000-seed123456789-deal987654321-seat2.json"


def _played(hands, bottom, first_bidder, actions, players=("you", "long-straight-player-name", "seat two")):
    """The record of a hand of these cards played by people as far as ``actions`` (seat, typed action) go."""
    m = Match(Game.from_deal(Deal(list(hands), bottom, first_bidder=first_bidder)), [None] * 3, list(players))
    for seat, action in actions:
        m.play(seat, action)
    return m.record({"human_seat": 0})


def straight_record():
    """Seat 1 bids 3 and leads the 12-card straight 3 to A (seen from seat 0: seat 1 is the top-right box)."""
    return _played(["6789TTJJQQKKAA2BR", "3456789TJQKA22345", "3456789TJQKA26789"], "345", 1,
                   [(1, "bid 3"), (2, "no"), (0, "no"), (1, "3456789TJQKA")])


def doubled_record():
    """Seat 0 bids 3, seat 1 doubles, seat 2 does not, seat 0 does not redouble: seat 0's stake, the landlord's,
    is ``bid 3 per farmer; seat 1 x 2 (doubled) = 6; 6 + 3 = 9``."""
    return _played(["6789TTJJQQKKAA2BR", "3456789TJQKA22345", "3456789TJQKA26789"], "345", 0,
                   [(0, "bid 3"), (1, "double"), (2, "no"), (0, "no")])


def _replays(tmp_path):
    folder = tmp_path / "replays"
    folder.mkdir()
    record.save(straight_record(), folder / LONG_NAME)
    record.save(doubled_record(), folder / "doubled.json")
    return folder


def _open_saved(d, name):
    """Open the saved record ``name`` from the Replays tab and step it to its last position."""
    d.find_element(By.ID, "tab-replay").click()
    WebDriverWait(d, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-list option"))
    Select(d.find_element(By.ID, "replay-list")).select_by_visible_text(name)
    d.execute_script("document.body.dataset.state = 'idle'")
    d.find_element(By.ID, "btn-open").click()
    WebDriverWait(d, 30).until(lambda d: state(d) == "replay")
    d.find_element(By.ID, "btn-last").click()
    WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-replay-end") == "1")


# ---------------------------------------------------------------------------- nobody acts once the hand is over
@pytest.mark.parametrize("width, height", SIZES)
def test_at_the_end_of_a_watched_hand_no_seat_is_lit_as_acting(browser, shots, width, height):
    """The last mover's "acting" box (lit, half the top row) stayed once a watched hand had ended: nobody is to
    act then. While the hand runs (a step back) the last mover is lit; at its end no seat is, nor on turn."""
    server = Server()
    try:
        d = browser
        viewport(d, width, height)
        open_page(d, server)  # (instant: the watched hand goes straight to its end)
        d.find_element(By.ID, "tab-watch").click()
        d.find_element(By.ID, "btn-watch").click()
        WebDriverWait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-replay-end") == "1")
        assert d.find_element(By.ID, "status").text.startswith("Hand over")
        d.save_screenshot(os.path.join(shots, f"edges-watch-end-{width}x{height}.png"))
        assert d.find_elements(By.CSS_SELECTOR, ".seat.acting, .seat.turn") == []
        d.find_element(By.ID, "btn-prev").click()
        assert len(d.find_elements(By.CSS_SELECTOR, ".seat.acting")) == 1  # (the hand still runs: its last mover)
        d.find_element(By.ID, "btn-last").click()
        assert d.find_elements(By.CSS_SELECTOR, ".seat.acting, .seat.turn") == []
    finally:
        server.stop()


# ---------------------------------------------------------------------------- a seat's rows of small cards
# each small card in a seat: its box inside the seat's, and its rank and suit seen whole (elementFromPoint at their
# corners is that card)
_SEAT_CARDS = """
const out = [];
for (const seat of document.querySelectorAll('.seat')) {
  const s = seat.getBoundingClientRect();
  for (const card of seat.querySelectorAll('.cards.small .card')) {
    const c = card.getBoundingClientRect();
    const seen = [...card.querySelectorAll('.rank, .suit')].every((part) => {
      const r = part.getBoundingClientRect();
      return [[r.left + 1, r.top + 1], [r.right - 1, r.top + 1], [r.left + 1, r.bottom - 1], [r.right - 1, r.bottom - 1]]
        .every(([x, y]) => { const e = document.elementFromPoint(x, y); return e !== null && e.closest('.card') === card; });
    });
    out.push({seat: seat.id, row: card.closest('.said') ? 'played' : 'hand', rank: card.dataset.rank,
              inside: c.left >= s.left - 0.5 && c.right <= s.right + 0.5, seen: seen});
  }
}
return out;
"""


@pytest.mark.parametrize("width, height", SIZES)
def test_a_12_card_straight_and_a_hand_shown_face_up_stay_in_the_seats_box(browser, shots, tmp_path, width, height):
    """On a 390 px phone a 12-card straight in a seat's played row ran past the seat's box. Now a seat's rows of
    small cards (what it played, its hand shown face up) overlap more, or wrap into lines of equal length, to fit
    the box: every card inside it, every rank and suit seen whole."""
    server = Server(_replays(tmp_path))
    try:
        d = browser
        viewport(d, width, height)
        open_page(d, server)
        _open_saved(d, LONG_NAME)
        d.save_screenshot(os.path.join(shots, f"edges-straight-{width}x{height}.png"))
        cards = d.execute_script(_SEAT_CARDS)
        played = [c["rank"] for c in cards if c["seat"] == "seat-right" and c["row"] == "played"]
        assert played == list("3456789TJQKA"), played
        assert len([c for c in cards if c["row"] == "hand"]) == 17 + 8  # (seat 2's hand, seat 1's: face up)
        out = [c for c in cards if not c["inside"]]
        assert not out, out
        hidden = [c for c in cards if not c["seen"]]
        assert not hidden, hidden
        no_sideways_scroll(d, width)
    finally:
        server.stop()


# ---------------------------------------------------------------------------- the Replays menu
# the text width of a name in the menu's font, and the room the menu has for it (its padding and arrow left out)
_MENU_ROOM = """
const sel = document.getElementById('replay-list'), cs = getComputedStyle(sel);
const ctx = document.createElement('canvas').getContext('2d');
ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
return [ctx.measureText(arguments[0]).width, sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 24];
"""


@pytest.mark.parametrize("width, height", SIZES)
def test_the_replays_menu_shows_a_long_file_name_in_full(browser, shots, tmp_path, width, height):
    """On a 390 px phone the Replays menu cut a kept hand's name (its seed, deal and seat lost). The menu shows one
    line: where the chosen name does not fit in it, the name is written in full on a line under it, wrapped on
    the screen; the menu and its option carry it as their title."""
    server = Server(_replays(tmp_path))
    try:
        d = browser
        viewport(d, width, height)
        open_page(d, server)
        d.find_element(By.ID, "tab-replay").click()
        WebDriverWait(d, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-list option"))
        menu = d.find_element(By.ID, "replay-list")
        Select(menu).select_by_visible_text(LONG_NAME)
        d.save_screenshot(os.path.join(shots, f"edges-replays-menu-{width}x{height}.png"))
        assert menu.get_attribute("title") == LONG_NAME
        assert {o.text: o.get_attribute("title") for o in menu.find_elements(By.TAG_NAME, "option")}[LONG_NAME] == LONG_NAME
        text, room = d.execute_script(_MENU_ROOM, LONG_NAME)
        line = d.find_elements(By.ID, "replay-name")
        if width < 700:
            assert text > room, (text, room)  # (the premise: a phone's menu cuts this name)
        if text > room:
            assert line and line[0].is_displayed() and line[0].text.replace("\n", "") == LONG_NAME
            left, right = d.execute_script("const r = document.getElementById('replay-name').getBoundingClientRect();"
                                           "return [r.left, r.right]")
            assert 0 <= left < right <= width, (left, right)
        else:
            assert not line[0].is_displayed()  # (the menu shows it whole: no second copy)
        Select(menu).select_by_visible_text("doubled.json")  # a short name: the menu shows it whole
        assert not d.find_element(By.ID, "replay-name").is_displayed()
        assert menu.get_attribute("title") == "doubled.json"
        no_sideways_scroll(d, width)
    finally:
        server.stop()


# ---------------------------------------------------------------------------- the live stake
# each word of the stake line and the top of the line it is on
_STAKE_WORDS = """
const box = document.getElementById('stake'), out = [];
const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  for (const m of n.data.matchAll(/\\S+/g)) {
    const r = document.createRange();
    r.setStart(n, m.index);
    r.setEnd(n, m.index + m[0].length);
    out.push([m[0], Math.round(r.getClientRects()[0].top)]);
  }
}
return out;
"""


@pytest.mark.parametrize("width, height", SIZES)
def test_the_stakes_last_equation_stays_on_one_line(browser, shots, tmp_path, width, height):
    """On a 390 px phone the landlord's stake (``stake: bid 3 per farmer; seat 1 x 2 (doubled) = 6; 6 + 3 = 9``)
    wrapped before ``= 9``, left alone on a line. Where it wraps now, its last equation stays
    whole on one line (``6 + 3 = 9``); the text is the server's."""
    server = Server(_replays(tmp_path))
    try:
        d = browser
        viewport(d, width, height)
        open_page(d, server)
        _open_saved(d, "doubled.json")
        want = "stake: bid 3 per farmer; seat 1 x 2 (doubled) = 6; 6 + 3 = 9"
        assert d.find_element(By.ID, "stake").text == want
        words = d.execute_script(_STAKE_WORDS)
        assert " ".join(w for w, _ in words) == want
        d.save_screenshot(os.path.join(shots, f"edges-stake-{width}x{height}.png"))
        lines = sorted({top for _, top in words})
        if width < 700:
            assert len(lines) > 1, words  # (the premise: a phone wraps this line)
        last = words[-5:]
        assert [w for w, _ in last] == ["6", "+", "3", "=", "9"] and len({top for _, top in last}) == 1, words
        no_sideways_scroll(d, width)
    finally:
        server.stop()


# ---------------------------------------------------------------------------- the legal moves, by kind
def _rows(d, selector):
    """How many rows the shown elements of ``selector`` take (their distinct middles: a row's are centred)."""
    return d.execute_script("return new Set([...document.querySelectorAll(arguments[0])]"
                            ".filter((e) => e.offsetParent !== null).map((e) => e.getBoundingClientRect())"
                            ".map((r) => Math.round((r.top + r.bottom) / 2))).size", selector)


@pytest.mark.parametrize("width, height", SIZES)
def test_the_legal_moves_are_grouped_by_kind_each_move_one_press_away(browser, shots, width, height):
    """Leading with 20 cards (89 legal moves) the chips took 8 rows on a phone, the first 40 of them, "49 more"
    out of reach. Now a button per kind with its count (the server's kinds), in at most 3 rows on a phone and 2
    on a desktop, none open on a lead; a kind's button shows all its moves as chips, a second press hides them;
    over the kinds every legal move is there once, and a chip picks its cards."""
    server = Server()
    try:
        d = browser
        viewport(d, width, height)
        open_page(d, server)
        to_the_lead(d)
        gid = d.find_element(By.TAG_NAME, "body").get_attribute("data-game")
        view = server.call("GET", f"/api/games/{gid}")[1]["view"]
        moves = [m for m in view["legal"] if m != "pass"]
        kinds = Counter(k for m, k in zip(view["legal"], view["legal_kinds"]) if m != "pass")
        assert len(moves) == 89 and len(kinds) > 3, kinds
        legal = d.find_element(By.ID, "legal")
        assert legal.find_element(By.CSS_SELECTOR, ".kinds > span").text == "legal moves (89):"
        buttons = legal.find_elements(By.CSS_SELECTOR, ".kind")
        assert [b.text for b in buttons] == [f"{k} {n}" for k, n in kinds.items()]
        assert not legal.find_elements(By.CSS_SELECTOR, ".chip")  # (a lead: no kind open)
        assert _rows(d, "#legal .kinds > *") <= (3 if width < 700 else 2)
        d.save_screenshot(os.path.join(shots, f"edges-legal-{width}x{height}.png"))
        seen = []
        for k in kinds:
            d.find_element(By.CSS_SELECTOR, f"#legal .kind[data-kind='{k}']").click()
            open_ = [b.get_attribute("data-kind") for b in d.find_elements(By.CSS_SELECTOR, "#legal .kind[aria-expanded=true]")]
            chips = [c.get_attribute("data-move") for c in d.find_elements(By.CSS_SELECTOR, "#legal .chip")]
            assert open_ == [k] and chips == [m for m, kk in zip(view["legal"], view["legal_kinds"]) if kk == k], (k, chips)
            seen += chips
            if k == "pairs":
                d.save_screenshot(os.path.join(shots, f"edges-legal-pairs-{width}x{height}.png"))
        assert sorted(seen) == sorted(moves)
        d.find_element(By.CSS_SELECTOR, f"#legal .kind[data-kind='{k}']").click()  # the open one again: hidden
        assert not d.find_elements(By.CSS_SELECTOR, "#legal .chip, #legal .kind[aria-expanded=true]")
        d.find_element(By.CSS_SELECTOR, "#legal .kind[data-kind='pairs']").click()
        pair = d.find_elements(By.CSS_SELECTOR, "#legal .chip")[0]
        move = pair.get_attribute("data-move")
        pair.click()
        picked = [c.get_attribute("data-rank") for c in d.find_elements(By.CSS_SELECTOR, "#hand .card.selected")]
        assert "".join(picked) == move, (picked, move)
        # (the kind stays open while the person picks cards: the chips are drawn again, the same)
        assert [b.get_attribute("data-kind") for b in d.find_elements(By.CSS_SELECTOR, "#legal .kind[aria-expanded=true]")] == ["pairs"]
        no_sideways_scroll(d, width)
    finally:
        server.stop()
