"""The viewer in a real browser: Debian's chromium driven by Selenium through /usr/bin/chromedriver.

Open the generated page, select a task, open an episode, and check that the diff, the verdict and
the masked tokens are shown; the compare page and ``--serve`` too. Skipped (with the reason) where
chromium, chromedriver or selenium is missing: ``bash .ci/browser`` installs them.
``SWETRAIN_WRITE_SCREENSHOT=1`` writes the README's screenshot to docs/img/view.png.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from view_runs import FAILING, RESOLVED

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("SWETRAIN_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SWETRAIN_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000")
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img" / "view.png"


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            pytest.skip(f"{path} not found: install Debian's {pkg} (bash .ci/browser)")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, should it run at all: no network
    profile = tempfile.mkdtemp(prefix="swetrain-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    try:  # the driver path is given: selenium never downloads one
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start here is a skip, with why
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"chromium did not start under chromedriver: {' '.join(str(exc).split())[:300]}")
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _write(run: Path, out: Path, *extra: str) -> Path:
    from swetrain.cli import app

    res = CliRunner().invoke(app, ["view", str(run), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return out


def _open(driver, url: str):
    driver.get(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if driver.execute_script("return document.body.dataset.ready === '1'"):
            return
        time.sleep(0.1)
    raise AssertionError("the page did not finish loading: " + driver.find_element("id", "notes").text)


def _wait(driver, css: str, timeout: float = 20):
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"nothing matches {css}")


def _errors(driver) -> list:
    try:
        return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    except Exception:  # noqa: BLE001 - a driver without logs
        return []


def _rows(driver):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "#task-table tbody tr")


def test_select_task_open_episode(browser, rollout_run, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = _write(rollout_run, tmp_path / "view.html")
    _open(browser, page.as_uri())
    assert len(_rows(browser)) == 3
    # filter: resolved only, then the task box
    Select(browser.find_element(By.ID, "f-res")).select_by_visible_text("true")
    rows = _rows(browser)
    assert len(rows) == 1 and RESOLVED in rows[0].text
    Select(browser.find_element(By.ID, "f-res")).select_by_index(0)
    box = browser.find_element(By.ID, "f-text")
    box.send_keys("cartwise")
    rows = _rows(browser)
    assert len(rows) == 1
    rows[0].click()
    _wait(browser, "#ep-tokens .tk")
    diff = browser.find_element(By.ID, "ep-diff")
    assert "diff --git" in diff.text and diff.find_elements(By.CSS_SELECTOR, ".add") and diff.find_elements(By.CSS_SELECTOR, ".del")
    verdict = browser.find_element(By.ID, "ep-verdict").text
    assert "resolved" in verdict and "status FULL" in verdict and "PASSED" in verdict and "FAIL_TO_PASS" in verdict
    conv = browser.find_element(By.ID, "ep-conversation")
    assert conv.find_elements(By.CSS_SELECTOR, ".msg.assistant") and conv.find_elements(By.CSS_SELECTOR, ".msg.tool")
    # the tokens the trainer used: the masked (trainable) ones are exactly the generated turns
    tokens = browser.find_element(By.ID, "ep-tokens")
    got = browser.execute_script("""
        const tk = [...document.querySelectorAll('#ep-tokens .tokens .tk')];
        const m1 = tk.filter(t => t.classList.contains('m1'));
        return {n: tk.length, m1: m1.length, m1_data: m1.filter(t => t.dataset.m === '1').length,
                data1: tk.filter(t => t.dataset.m === '1').length, bad: tk.filter(t => t.classList.contains('bad')).length,
                pr: tk.filter(t => t.classList.contains('pr') && t.dataset.m === '0').length,
                text: m1.map(t => t.textContent).join('')};""")
    assert got["m1"] > 0 and got["m1"] == got["m1_data"] == got["data1"]  # green exactly where mask is 1
    assert "<tool_call>" in got["text"] and "finish" in got["text"]
    assert got["bad"] == 0  # a healthy record: no marked token
    assert got["pr"] > 100  # the prompt, mask 0
    assert tokens.find_elements(By.CSS_SELECTOR, ".tokens .segtag") and "trainable (mask 1)" in tokens.text
    if os.environ.get("SWETRAIN_WRITE_SCREENSHOT") == "1":
        browser.set_window_size(1400, 1350)
        browser.execute_script("document.getElementById('ep-diff').previousElementSibling.scrollIntoView()")
        time.sleep(0.3)
        DOCS_IMG.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(DOCS_IMG))
        browser.set_window_size(1400, 1000)
    browser.save_screenshot(str(tmp_path / "episode.png"))
    assert (tmp_path / "episode.png").stat().st_size > 10_000
    assert not _errors(browser)


def test_failure_context_and_summary(browser, rollout_run, tmp_path):
    from selenium.webdriver.common.by import By

    page = _write(rollout_run, tmp_path / "view.html")
    _open(browser, page.as_uri())
    th = next(h for h in browser.find_elements(By.CSS_SELECTOR, "#task-table th") if h.text == "attempt")
    th.click()
    th = next(h for h in browser.find_elements(By.CSS_SELECTOR, "#task-table th") if h.text == "attempt")
    th.click()  # descending: attempt 2 first
    row = _rows(browser)[0]
    assert FAILING in row.text
    row.click()
    ctx = _wait(browser, "#ep-context pre")[0]
    assert "Previous attempt" in ctx.text and "Verifier" in ctx.text
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=summary]").click()
    summary = browser.find_element(By.ID, "tab-summary").text
    assert "isolated" in summary and "resolved@1" in summary and "rollout.json" in summary
    assert not _errors(browser)


def test_compare_side_by_side(browser, rollout_run, tmp_path):
    from selenium.webdriver.common.by import By

    other = tmp_path / "b"
    shutil.copytree(rollout_run, other)
    page = _write(rollout_run, tmp_path / "cmp.html", "--compare", str(other))
    _open(browser, page.as_uri())
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#task-table th")]
    assert "B resolved" in heads
    _rows(browser)[0].click()
    _wait(browser, "#ep-tokens-b .tk")
    assert browser.find_element(By.ID, "ep-col").text.startswith("A: ")
    assert browser.find_element(By.ID, "ep-col-b").text.startswith("B: ")
    assert browser.find_element(By.ID, "ep-diff").text == browser.find_element(By.ID, "ep-diff-b").text
    assert not _errors(browser)


def test_serve_mode(browser, rollout_run):
    from selenium.webdriver.common.by import By

    from swetrain.view.build import build_run
    from swetrain.view.server import ViewServer

    server = ViewServer([build_run(rollout_run, details=False)], port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _open(browser, server.url)
        rows = [r for r in _rows(browser) if RESOLVED in r.text]
        rows[0].click()
        _wait(browser, "#ep-tokens .tk.m1")
        assert "diff --git" in browser.find_element(By.ID, "ep-diff").text
        assert "PASSED" in browser.find_element(By.ID, "ep-verdict").text
        # token texts came with the episode (decoded by the server), not ids
        assert "<tool_call>" in browser.find_element(By.ID, "tokens-body").get_attribute("textContent")
        assert not _errors(browser)
    finally:
        server.shutdown()
        server.server_close()


def test_shifted_mask_is_visible(browser, run_copy, tmp_path):
    """A loss mask shifted by one token: the page marks the tokens where mask and segments
    disagree (at both ends of every turn) and says so at the top of the episode."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from selenium.webdriver.common.by import By

    for part in (run_copy / "trajectories").glob("part-*.parquet"):
        table = pq.read_table(part)
        rows = table.to_pylist()
        for r in rows:
            r["assistant_mask"] = [0] + r["assistant_mask"][:-1]
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), part)
    page = _write(run_copy, tmp_path / "view.html")
    _open(browser, page.as_uri())
    _rows(browser)[0].click()
    _wait(browser, "#ep-tokens .tk")
    turns = browser.execute_script("return document.querySelectorAll('#ep-tokens table.turns tbody tr').length")
    bad = browser.execute_script("return document.querySelectorAll('#ep-tokens .tokens .tk.bad').length")
    # the first token of each turn (now mask 0) and the token after it (now mask 1; none after a final turn)
    assert turns >= 2 and 2 * turns - 1 <= bad <= 2 * turns
    assert "loss mask disagrees with the segments" in browser.find_element(By.ID, "episode").text
    assert not _errors(browser)
