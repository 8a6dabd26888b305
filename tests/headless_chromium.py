"""Headless Chromium for tests, driven with selenium through Debian's chromedriver.

``chromium()`` yields a WebDriver, or skips the test with a printed reason
when the browser cannot be started (not installed: ``scripts/system-deps.sh``
installs Debian's ``chromium`` and ``chromium-driver`` as root). Nothing is
downloaded: the binaries are given explicitly, so Selenium Manager stays idle.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
)


def _skip(reason: str) -> None:
    print(f"headless chromium: skipped: {reason}", file=sys.stderr)
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium WebDriver with a fresh profile, closed on exit."""
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _skip("selenium is not installed (the 'dev' extra)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not browser or not driver_path:
        _skip("Debian's chromium / chromium-driver are not installed "
              "(scripts/system-deps.sh installs them as root)")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    with tempfile.TemporaryDirectory(prefix="agentflow-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(browser)
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        try:
            driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)),
                                      options=options)
        except WebDriverException as exc:
            _skip(f"chromium did not start: {str(exc).splitlines()[0]}")
        try:
            yield driver
        finally:
            driver.quit()
