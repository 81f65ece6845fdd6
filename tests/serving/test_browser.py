"""The page of ``serve`` in a real browser: headless Chromium, driven by Selenium,
types two sentences, presses the button and sees their two trees."""

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from _serving import Server, expected

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
# CI sets this, so that a missing browser fails there instead of skipping
REQUIRED = os.environ.get("SKLEARN_STRUCTURED_REQUIRE_BROWSER") == "1"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,900")
TEXT = "The cat sat on the mat. It was very happy."


@pytest.fixture
def browser(tmp_path):
    if not (CHROMIUM and DRIVER):
        message = "chromium and chromedriver are not installed (Debian: chromium chromium-driver)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def test_the_page_draws_the_trees_of_a_typed_text(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    server = Server("--workers", "2")
    try:
        browser.get(server.url("/"))
        WebDriverWait(browser, 60).until(
            lambda page: page.find_elements(By.CSS_SELECTOR, "#model option"))
        browser.find_element(By.ID, "data").send_keys(TEXT)
        browser.find_element(By.ID, "parse").click()
        WebDriverWait(browser, 120).until(
            lambda page: page.find_elements(By.CSS_SELECTOR, "#trees svg")
            or page.find_element(By.ID, "error").text)
        assert not browser.find_element(By.ID, "error").text
        trees = browser.find_elements(By.CSS_SELECTOR, "#trees svg")
        conllu = expected(TEXT)
        sentences = [block for block in conllu.split("\n\n") if block.strip()]
        assert len(trees) == len(sentences) == 2
        for tree, sentence in zip(trees, sentences):
            heads = [line.split("\t")[6] for line in sentence.splitlines()
                     if line[:1].isdigit() and line.split("\t")[0].isdigit()]
            assert len(tree.find_elements(By.CSS_SELECTOR, "g.word")) == len(heads)
            arcs = tree.find_elements(By.CSS_SELECTOR, "g.arc")
            assert len(arcs) == len(heads) - heads.count("0")
            assert len(tree.find_elements(By.CSS_SELECTOR, "g.root")) == heads.count("0")
            ET.fromstring(tree.get_attribute("outerHTML"))  # well-formed as it is shown
        assert browser.find_element(By.ID, "conllu").get_property("textContent") == conllu
        folder = Path(os.environ.get("SKLEARN_STRUCTURED_SCREENSHOTS", tmp_path))
        folder.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(folder / "serve-page.png"))
    finally:
        assert server.stop() == 0
