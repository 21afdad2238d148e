"""The page's Watch tab in a real browser (headless Chromium via Selenium), now that the server plays a watched
hand off the request path (issue 62, item 7): the page asks for the hand, says the agents are playing it while
it reads it, then opens it as a replay and steps it to its end.

Needs chromium and chromedriver (``.ci/run`` installs them from the distribution's packages)."""
import json
import shutil
import threading

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the dev extra) is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from agents import RuleAgent, loader  # noqa: E402
from agents.play.web.tables import Tables  # noqa: E402

from webserver import Server  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromedriver are not installed "
                                "(apt-get install chromium chromium-driver; .ci/run does it)")


class Gated(RuleAgent):
    """The rule agent, deciding only once its gate is open."""

    def __init__(self, gate: threading.Event):
        super().__init__()
        self.gate = gate

    def act_batch(self, decisions):
        self.gate.wait()
        return super().act_batch(decisions)


def test_the_watch_tab_reads_the_hand_the_server_plays_and_steps_it_to_its_end(monkeypatch):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    gate = threading.Event()
    monkeypatch.setitem(loader._REGISTRY, "test-gated", lambda checkpoint=None: Gated(gate))
    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    server = Server()
    try:
        d.get(server.url + "/")
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        Select(d.find_element(By.ID, "speed")).select_by_value("0")  # instant: the replay goes to its end
        d.find_element(By.ID, "tab-watch").click()
        for seat, name in enumerate(("test-gated", "random", "rule")):
            Select(d.find_element(By.ID, f"watch-{seat}")).select_by_visible_text(name)
        for field, value in (("watch-seed", "2"), ("watch-deal", "5")):
            d.find_element(By.ID, field).clear()
            d.find_element(By.ID, field).send_keys(value)
        d.find_element(By.ID, "btn-watch").click()
        # the hand is held (its first agent waits for the gate): the page says it waits, and reads on
        WebDriverWait(d, 30).until(lambda d: "The agents are playing the hand (0 moves so far)"
                                   in d.find_element(By.ID, "message").text)
        gate.set()
        WebDriverWait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-replay-end") == "1")
        assert d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "replay"
        assert d.find_element(By.ID, "message").text == ""
        # the same hand as the tables play it (a watched hand is its deal's and its agents')
        want = Tables().watch(["rule", "random", "rule"], seed=2, deal=5)["record"]
        n = len(want["actions"])
        assert d.find_element(By.ID, "step").text == f"{n} / {n}"
        assert json.loads(d.find_element(By.ID, "result").get_attribute("data-scores")) == want["result"]["scores"]
    finally:
        gate.set()
        d.quit()
        server.stop()
