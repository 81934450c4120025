"""Fixtures of the console tests: the server scripts/test-browser.sh started, seeded through
the HTTP API, and a headless Debian chromium driven by Playwright (never a downloaded one)."""

import base64
import json
import os
import shutil
import urllib.request

import pytest
from playwright.sync_api import sync_playwright

URL = os.environ.get("PLEXUS_HTTP_URL", "")
USER = os.environ.get("PLEXUS_TEST_USER", "")
PASSWORD = os.environ.get("PLEXUS_TEST_PASSWORD", "")
SCREENSHOTS = os.environ.get("PLEXUS_SCREENSHOTS", ".")


def query(statement, parameters=None):
    """Runs a statement through the HTTP API; the parsed JSON answer."""
    body = json.dumps({"statement": statement, "parameters": parameters or {}}).encode()
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    request = urllib.request.Request(
        f"{URL}/db/neo4j/query/v2",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"},
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


@pytest.fixture(scope="session")
def seeded():
    if not URL:
        pytest.fail("PLEXUS_HTTP_URL is not set: run scripts/test-browser.sh")
    query("MATCH (n) DETACH DELETE n")
    query(
        "CREATE (ada:Person {name: 'Ada'}), (bob:Person {name: 'Bob'}), "
        "(cy:Person {name: 'Cy'}), (oslo:City {name: 'Oslo'}), "
        "(ada)-[:KNOWS]->(bob), (bob)-[:KNOWS]->(cy), (ada)-[:LIVES_IN]->(oslo), "
        "(cy)-[:LIVES_IN]->(oslo), (bob)-[:LIVES_IN]->(oslo)"
    )
    return URL


@pytest.fixture(scope="session")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: run scripts/test-browser.sh")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def console(browser, seeded):
    """A page logged in to the console, editor ready. Playwright's waits evaluate strings,
    which the console's Content-Security-Policy forbids, so the pages bypass it: the
    escaping test below then shows that values are text even without the policy's help."""
    page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(seeded)
    page.fill("#login-user", USER)
    page.fill("#login-password", PASSWORD)
    page.click("#login-button")
    page.wait_for_selector("body[data-ready='true']")
    yield page
    page.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def run(page, statement):
    """Types a statement, runs it with Ctrl-Enter and waits for its status line."""
    page.fill("#editor", statement)
    page.evaluate("document.getElementById('status').textContent = ''")
    page.focus("#editor")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "(() => { const s = document.getElementById('status').textContent;"
        " return s && s !== 'running…'; })()"
    )


def screenshot(page, name):
    page.screenshot(path=os.path.join(SCREENSHOTS, name))
