"""The web page in a real browser (headless Chromium via Selenium), for the browser tests: the browser, a
device's viewport, the page opened and ready. The ``browser`` and ``shots`` fixtures (tests/play/conftest.py)
are built on it.

Needs chromium and chromedriver (``.ci/run`` installs them from the distribution's packages) and selenium (the
dev extra): :data:`MISSING` says which is not there (a test module skips with it)."""
from __future__ import annotations

import importlib.util
import shutil

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
#: why the browser tests cannot run here (None: they can)
MISSING = ("selenium (the dev extra) is not installed" if importlib.util.find_spec("selenium") is None else
           None if CHROMIUM and DRIVER else
           "chromium and chromedriver are not installed (apt-get install chromium chromium-driver; .ci/run does it)")


def chrome():
    """A headless Chromium, 1280 x 1000 (:func:`viewport` sets a device's size)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def viewport(driver, width, height):
    """The page as a device of this size shows it (a phone below 700 px wide: its viewport meta honoured)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                                  "deviceScaleFactor": 1, "mobile": width < 700})


def open_page(driver, server, speed="0"):
    """The page of ``server`` (a :class:`webserver.Server`), ready, with the agents' pace set (``"0"``: instant)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver.get(server.url + "/")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    Select(driver.find_element(By.ID, "speed")).select_by_value(speed)


def _body(driver, attribute):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").get_attribute(attribute)


def state(driver):
    """The page's state (body data-state): idle, your-turn, sending, agents, waiting, over, replay."""
    return _body(driver, "data-state")


def armed(driver):
    """Whether the person's controls are armed (body data-armed: ARM_MS after a decision's are drawn)."""
    return _body(driver, "data-armed") == "1"


def phase(driver):
    """The phase of the hand shown (body data-phase): BID, DOUBLE, REDOUBLE, PLAY."""
    return _body(driver, "data-phase")


def log_len(driver):
    """How many actions the page's log shows."""
    from selenium.webdriver.common.by import By

    return len(driver.find_elements(By.CSS_SELECTOR, "#log li"))


def click_and_wait(driver, element):
    """Click ``element`` (a move's control) and wait for its answer: one more action in the log, the hand over, or
    a message."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    n = log_len(driver)
    element.click()
    WebDriverWait(driver, 30).until(lambda d: log_len(d) != n or state(d) == "over"
                                    or d.find_element(By.ID, "message").text)


def to_the_lead(driver):
    """A new hand (the page's seed 0, deal 0: seat 0 bids first): bid 3, no redouble; the person leads with 20
    cards."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d = driver
    d.find_element(By.ID, "btn-new").click()
    WebDriverWait(d, 30).until(lambda d: state(d) == "your-turn" and armed(d))
    d.find_element(By.CSS_SELECTOR, ".bid-btn[data-action='bid 3']").click()
    WebDriverWait(d, 30).until(lambda d: state(d) == "your-turn" and armed(d) and phase(d) != "BID")
    while phase(d) == "REDOUBLE":
        click_and_wait(d, d.find_element(By.ID, "btn-nodouble"))
        WebDriverWait(d, 30).until(lambda d: state(d) == "your-turn" and armed(d))
    assert phase(d) == "PLAY" and len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 20


def no_sideways_scroll(driver, width):
    """Nothing wider than the screen: no sideways scroll, and (on a phone, which would zoom out to fit a wider
    page) the layout as wide as the device."""
    sw, iw = driver.execute_script("return [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= iw == width, (sw, iw, width)
