"""Helpers of the browser tests: Debian's Chromium driven by Selenium, axe-core, screenshots.

Chromium and its driver come from Debian's ``chromium`` and ``chromium-driver`` packages and
axe-core from the npm registry (``npm ci`` at the top of the repository), all installed by
``.ci/run``. Where they are missing the browser tests are skipped, except under CI (``CI`` set),
where a missing browser is an error: CI must never pass by skipping them.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TVCS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TVCS_CHROMEDRIVER", "/usr/bin/chromedriver")
AXE = Path(os.environ.get("TVCS_AXE_JS", ROOT / "node_modules" / "axe-core" / "axe.min.js"))
#: Where the tests leave their screenshots: ``docs/screenshots`` to refresh the README's.
SCREENSHOTS = os.environ.get("TVCS_SCREENSHOT_DIR")
#: axe-core impacts that fail a page.
FAILING_IMPACTS = ("serious", "critical")


def require_browser() -> None:
    """Skip (or, under CI, fail) when Chromium, its driver or axe-core is not installed."""
    missing = [
        what
        for what, path in (("chromium", CHROMIUM), ("chromium-driver", CHROMEDRIVER), ("axe", AXE))
        if not Path(path).exists() and not shutil.which(str(path))
    ]
    if missing:
        message = f"browser tests need {', '.join(missing)} (see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def chromium(*, width: int = 1280, height: int = 900):
    """A headless Chromium with no network of its own beyond the pages it is sent to."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    return driver


def axe_problems(driver) -> list[str]:
    """The page's serious and critical accessibility violations, as readable lines."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        "  .then(r => done(r.violations)).catch(e => done([{id: 'axe-error', impact: 'critical',"
        "   help: String(e), nodes: []}]));"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + ", ".join(str(node["target"]) for node in v["nodes"][:3])
        for v in result
        if v["impact"] in FAILING_IMPACTS
    ]


def screenshot(driver, name: str, folder: Path) -> Path:
    """The whole page as ``name.png`` at 1280 px, and phone-sized (390 px) in ``phone/``."""
    folder = Path(SCREENSHOTS) if SCREENSHOTS else folder
    size = driver.get_window_size()
    paths = []
    for width, where in ((1280, folder), (390, folder / "phone")):
        where.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(width, 900)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(int(height) + 20, 6000))
        time.sleep(0.1)
        paths.append(where / f"{name}.png")
        driver.save_screenshot(str(paths[-1]))
    driver.set_window_size(size["width"], size["height"])
    return paths[0]


def wait_until(predicate, *, timeout: float, what: str, every: float = 0.25):
    """Poll ``predicate`` until it returns something true; fail saying ``what`` otherwise.

    A WebDriver error while the page changes under the predicate (an element gone stale, a node
    no longer in the document) counts as "not yet"; the last one is reported on a time-out.
    """
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except WebDriverException as error:
            value, last_error = None, error
        if value:
            return value
        time.sleep(every)
    detail = f"; last WebDriver error: {last_error.msg}" if last_error is not None else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}{detail}")
