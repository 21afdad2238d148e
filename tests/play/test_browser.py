"""The web page in a real browser (headless Chromium via Selenium): a person plays a full hand
against `rule` agents by clicking, the score shown equals the server's record, then a saved
record is opened and stepped through. Screenshots go to $DDZ_SCREENSHOTS (default: a temp folder).

Needs chromium and chromedriver (``.ci/run`` installs them from the distribution's packages)."""
import json
import os
import shutil

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the dev extra) is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from agents import RuleAgent  # noqa: E402
from agents.play.match import Match  # noqa: E402
from ddz_env import record  # noqa: E402

from webserver import Server  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromedriver are not installed "
                                "(apt-get install chromium chromium-driver; .ci/run does it)")


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = os.environ.get("DDZ_SCREENSHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(d, exist_ok=True)
    return d


def _state(driver):
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-state")


def _log_len(driver):
    return len(driver.find_elements(By.CSS_SELECTOR, "#log li"))


def _click_and_wait(driver, element):
    n = _log_len(driver)
    element.click()
    WebDriverWait(driver, 30).until(lambda d: _log_len(d) != n or _state(d) == "over"
                                    or d.find_element(By.ID, "message").text)


def test_play_a_hand_by_clicking_then_step_through_a_replay(browser, shots, tmp_path):
    replays = tmp_path / "replays"
    replays.mkdir()
    m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=11, index=0)
    m.advance()
    saved = m.record()
    record.save(saved, replays / "rule-vs-rule.json")
    server = Server(replays)
    try:
        d = browser
        d.get(server.url + "/")
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        Select(d.find_element(By.ID, "play-vs1")).select_by_visible_text("rule")
        Select(d.find_element(By.ID, "play-vs2")).select_by_visible_text("rule")
        d.find_element(By.ID, "btn-new").click()
        WebDriverWait(d, 30).until(lambda d: _state(d) in ("your-turn", "over"))
        clicks = 0
        shot_mid = False
        gid = d.find_element(By.TAG_NAME, "body").get_attribute("data-game")
        stakes = []
        while _state(d) != "over":
            # the live stake is the server's, for this seat (R5 secrecy decided there), after every action
            view = server.call("GET", f"/api/games/{gid}")[1]["view"]
            shown_stake = d.find_element(By.ID, "stake").text
            assert shown_stake == (f"stake: {view['stake']['text']}" if view["stake"] else ""), (shown_stake, view["stake"])
            stakes.append(shown_stake)
            assert clicks < 200
            phase = d.find_element(By.TAG_NAME, "body").get_attribute("data-phase")
            if phase == "BID":
                b = d.find_element(By.CSS_SELECTOR, ".bid-btn[data-action='bid 3']")
                _click_and_wait(d, b if b.is_enabled() else d.find_element(By.CSS_SELECTOR, ".bid-btn[data-action='pass']"))
            elif phase in ("DOUBLE", "REDOUBLE"):
                _click_and_wait(d, d.find_element(By.ID, "btn-double"))
            else:
                pas = d.find_element(By.ID, "btn-pass")
                if pas.is_enabled():
                    _click_and_wait(d, pas)
                else:  # we lead: click our lowest card, then "Play selected"
                    card = d.find_elements(By.CSS_SELECTOR, "#hand .card")[0]
                    card.click()
                    picked = d.find_elements(By.CSS_SELECTOR, "#hand .card.selected")  # (the hand is redrawn)
                    assert len(picked) == 1 and picked[0].get_attribute("data-index") == "0"
                    if not shot_mid:
                        d.save_screenshot(os.path.join(shots, "play.png"))
                        shot_mid = True
                    _click_and_wait(d, d.find_element(By.ID, "btn-play"))
            assert d.find_element(By.ID, "message").text == "", d.find_element(By.ID, "message").text
            WebDriverWait(d, 30).until(lambda d: _state(d) in ("your-turn", "over"))
            clicks += 1
        shown = json.loads(d.find_element(By.ID, "result").get_attribute("data-scores"))
        status, rec = server.call("GET", f"/api/games/{gid}/record")
        assert status == 200 and shown == rec["result"]["scores"]
        cells = d.find_elements(By.CSS_SELECTOR, "#result td.score")
        assert [int(c.text) for c in cells] == rec["result"]["scores"]
        # the stake changed as the hand went (the bid, then our double or a bomb): shown each time
        assert any(t.startswith("stake: bid 3") for t in stakes) and len(set(stakes)) >= 2, stakes
        view = server.call("GET", f"/api/games/{gid}")[1]["view"]
        me = view["seat"]
        if me != view["landlord"] and view["result"]["doubled"][me]:
            assert any("x 2 (you doubled)" in t for t in stakes), stakes
        # the result: a headline for this seat, the plain line, the score table; all above the fold
        headline = d.find_element(By.ID, "headline").text
        assert headline == ("You win" if rec["result"]["scores"][me] > 0 else "You lose")
        assert d.find_element(By.ID, "outcome-line").text == view["outcome"]["line"]
        assert view["outcome"]["line"].startswith(("farmers win: you " if rec["result"]["winner"] != view["landlord"]
                                                   else "landlord wins: you ") + f"{rec['result']['scores'][me]:+d} = ")
        fold = d.execute_script("const r = document.getElementById('result').getBoundingClientRect();"
                                "return [window.scrollY, r.top, r.bottom, window.innerHeight];")
        assert fold[0] == 0 and 0 < fold[1] < fold[2] <= fold[3], fold
        # people's notation in the log: 10, never T
        assert not [li.text for li in d.find_elements(By.CSS_SELECTOR, "#log li") if "T" in li.text]
        d.save_screenshot(os.path.join(shots, "play-over.png"))

        # the saved record, opened from the Replays tab and stepped forward and back
        d.find_element(By.ID, "tab-replay").click()
        WebDriverWait(d, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-list option"))
        Select(d.find_element(By.ID, "replay-list")).select_by_visible_text("rule-vs-rule.json")
        d.find_element(By.ID, "btn-open").click()
        WebDriverWait(d, 30).until(lambda d: _state(d) == "replay")
        n = len(saved["actions"])
        assert d.find_element(By.ID, "step").text == f"0 / {n}"
        for _ in range(6):
            d.find_element(By.ID, "btn-next").click()
        d.find_element(By.ID, "btn-prev").click()
        assert d.find_element(By.ID, "step").text == f"5 / {n}"
        assert _log_len(d) == 5
        # all three hands are visible in a replay: the two other seats show their cards
        assert len(d.find_elements(By.CSS_SELECTOR, "#seat-left .cards .card")) > 0
        d.save_screenshot(os.path.join(shots, "replay-step.png"))
        d.find_element(By.ID, "btn-last").click()
        assert d.find_element(By.ID, "step").text == f"{n} / {n}"
        shown = json.loads(d.find_element(By.ID, "result").get_attribute("data-scores"))
        assert shown == saved["result"]["scores"]
        lord_won = saved["result"]["winner"] == saved["result"]["landlord"]
        assert d.find_element(By.ID, "headline").text == ("Landlord wins" if lord_won else "Farmers win")
        assert d.find_element(By.ID, "stake").text.startswith("stake: bid ")
        # an opponent's remaining hand and its last play are labelled rows, apart
        for seat in ("#seat-left", "#seat-right"):
            box = d.find_element(By.CSS_SELECTOR, seat)
            labels = [e.text.lower() for e in box.find_elements(By.CSS_SELECTOR, ".row-label")]
            assert "hand" in labels or box.find_element(By.CSS_SELECTOR, ".count").text == "0 cards left", labels
        d.save_screenshot(os.path.join(shots, "replay-end.png"))
    finally:
        server.stop()


PAYLOADS = [
    '<img src=x onerror="document.title=\'PWNED\';window.__pwned=(window.__pwned||0)+1">',
    "<script>window.__pwned=(window.__pwned||0)+1</script>",
    '<svg onload="window.__pwned=(window.__pwned||0)+1"></svg><b id="injected">bold</b>',
]


def _hostile_record():
    """A finished hand whose every string field that is not the deal itself carries markup."""
    m = Match.deal([RuleAgent()] * 3, ["rule"] * 3, seed=5, index=2)
    m.advance()
    rec = m.record()
    rec["players"] = list(PAYLOADS)
    for k, a in enumerate(rec["actions"]):
        a["name"] = PAYLOADS[k % 3]
    rec["meta"] = {"note": PAYLOADS[0], PAYLOADS[1]: PAYLOADS[2], "human_seat": PAYLOADS[0]}
    rec["comment"] = PAYLOADS[1]
    rec["result"]["winner_name"] = PAYLOADS[2]
    return rec


def _nothing_ran(d):
    assert d.title == "ddz-env · Dou Dizhu"
    assert d.execute_script("return window.__pwned === undefined")
    assert d.execute_script("return document.querySelectorAll('img, svg, iframe, #injected').length") == 0
    assert d.execute_script("return document.scripts.length") == 1  # app.js alone


def test_markup_in_a_shared_record_is_shown_as_text_and_never_runs(browser, shots, tmp_path):
    """Issue 22 (1): a record whose players held <img onerror=...> ran it in the page when the replay
    reached its end (the score table was built with innerHTML). Opened from --replays (its file name
    is markup too) and from the file picker, stepped through every position: nothing runs, and the
    names are shown as the text they are."""
    replays = tmp_path / "replays"
    replays.mkdir()
    rec = _hostile_record()
    name = "<img src=x onerror=window.__pwned=1>.json"
    record.save(rec, replays / name)
    picked = tmp_path / "shared.json"
    record.save(rec, picked)
    broken = dict(rec, actions=[dict(rec["actions"][0], action=24647)])  # does not replay: an error message
    record.save(broken, tmp_path / "broken.json")
    server = Server(replays)
    try:
        d = browser
        d.get(server.url + "/")
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        d.find_element(By.ID, "tab-replay").click()
        WebDriverWait(d, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-list option"))
        assert [o.text for o in d.find_elements(By.CSS_SELECTOR, "#replay-list option")] == [name]
        n = len(rec["actions"])
        for how in ("list", "picker"):
            d.execute_script("document.body.dataset.state = 'idle'")
            if how == "list":
                Select(d.find_element(By.ID, "replay-list")).select_by_visible_text(name)
                d.find_element(By.ID, "btn-open").click()
            else:
                d.find_element(By.ID, "replay-file").send_keys(str(picked))
            WebDriverWait(d, 30).until(lambda d: _state(d) == "replay")
            for _ in range(n):
                d.find_element(By.ID, "btn-next").click()
            assert d.find_element(By.ID, "step").text == f"{n} / {n}"
            _nothing_ran(d)
            cells = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#result tr td:first-child")]
            assert cells == [f"seat {s} · {PAYLOADS[s]}" for s in range(3)], cells
            names = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".seat .name")]
            assert all(any(p in t for t in names) for p in PAYLOADS), names
            d.save_screenshot(os.path.join(shots, f"replay-markup-{how}.png"))
        d.find_element(By.ID, "replay-file").send_keys(str(tmp_path / "broken.json"))
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "message").text)
        assert "does not replay" in d.find_element(By.ID, "message").text
        _nothing_ran(d)
    finally:
        server.stop()
