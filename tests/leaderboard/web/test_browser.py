"""A real browser (headless Chromium driven by selenium, cut off from the internet) against a live
server: a board, a submission page, a submission uploaded through the form that then appears,
the problem pages and the API docs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.leaderboard.lbkit import (
    GPU,
    HW,
    SUITE,
    VECTOR_ADD,
    finish,
    make_node,
    submit,
    user_client,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip(
            "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-extensions",
        "--window-size=1280,1000",
        # no internet: every page must work from this server alone (API docs included)
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


def test_board_submission_and_upload(browser, live_server, local_storage, tmp_path):
    from django.contrib.auth.models import User
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from leaderboard.runs.models import Run
    from leaderboard.submissions.models import Submission

    alice = User.objects.create_user("alice", password="alice-pw")
    node, auditor = make_node("browser-node", [GPU]), make_node("browser-audit", [GPU])
    body = submit(user_client(alice), private=False, hardware=[GPU])
    run = Run.objects.get(pk=body.json()["runs"][0]["id"])
    assert finish(node, run, auditor=auditor, score=0.75, time_ms=2.5).status_code == 200

    browser.get(f"{live_server.url}/boards/{SUITE}/vector_add/{GPU}/")
    table = browser.find_element(By.ID, "board")
    assert "alice" in table.text and "0.7500" in table.text
    assert browser.find_elements(By.CSS_SELECTOR, "svg.roofline circle.pt")

    browser.get(f"{live_server.url}/accounts/login/?next=/submit/")
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys("alice-pw")
    browser.find_element(By.ID, "login").click()
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "submit-form")))

    browser.get(f"{live_server.url}/submissions/{body.json()['id']}/")
    assert "return a + b" in browser.find_element(By.ID, "source").text
    assert GPU in browser.find_element(By.ID, "runs").text

    kernel = Path(tmp_path / "my_kernel.py")
    kernel.write_text(VECTOR_ADD.replace("a + b", "b + a"))
    browser.get(f"{live_server.url}/submit/")
    browser.find_element(By.CSS_SELECTOR, f"input[name=hardware][value='{HW}']").click()
    browser.find_element(By.NAME, "file").send_keys(str(kernel))
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 10).until(ec.url_contains("/submissions/"))
    created = Submission.objects.exclude(pk=body.json()["id"]).get()
    assert browser.current_url.endswith(f"/submissions/{created.pk}/")
    assert created.filename == "my_kernel.py" and created.user == alice
    assert "queued" in browser.find_element(By.ID, "state").text
    assert "b + a" in browser.find_element(By.ID, "source").text

    # live status: the page follows the run to its end without a manual reload
    new_run = created.runs.get()
    other = make_node("browser-node-2", [HW])
    finish(other, new_run, score=0.5)
    # the page reloads itself once every run has finished: an element looked up while the old
    # document goes away raises (stale node, or an inspector error); the wait polls on
    reloading = (StaleElementReferenceException, WebDriverException)
    WebDriverWait(browser, 15, ignored_exceptions=reloading).until(
        lambda d: d.find_element(By.ID, "state").text == "done"
    )
    browser.get(f"{live_server.url}/")
    assert "vector_add" in browser.page_source


def test_problem_pages_and_api_docs(browser, live_server, local_storage):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from leaderboard.runs.models import Run

    node, auditor = make_node("pages-node", [GPU]), make_node("pages-audit", [GPU])
    body = submit(user_client(_user("bea")), private=False, hardware=[GPU])
    finish(node, Run.objects.get(pk=body.json()["runs"][0]["id"]), auditor=auditor, score=0.5)

    browser.get(f"{live_server.url}/")
    browser.find_element(By.CSS_SELECTOR, "#start a").click()  # the home page leads there
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "problems")))
    browser.find_element(By.LINK_TEXT, "vector_add").click()
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "signature")))
    assert "def kernel(a, b):" in browser.find_element(By.ID, "starter-pytorch").text
    assert "return a + b" in browser.find_element(By.ID, "reference").text
    across = browser.find_element(By.ID, "across")
    assert "bea" in across.text and "0.5000" in across.text
    browser.find_element(By.CSS_SELECTOR, "#starter-triton summary").click()
    assert "@triton.jit" in browser.find_element(By.ID, "starter-triton").text
    across.find_element(By.LINK_TEXT, "board").click()
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "board")))
    assert browser.find_elements(By.CSS_SELECTOR, "svg.roofline text.tick")

    browser.get(f"{live_server.url}/api/docs/")  # Swagger UI from our static files
    WebDriverWait(browser, 20).until(
        ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".swagger-ui .info"), "Kernel")
    )
    browser.get(f"{live_server.url}/api/redoc/")
    WebDriverWait(browser, 20).until(
        ec.text_to_be_present_in_element((By.TAG_NAME, "body"), "/api/problems/")
    )


def _user(name: str):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    return User.objects.create_user(name, password=f"{name}-pw")


def test_board_reads_at_a_glance(browser, live_server, local_storage, tmp_path):
    """An npu-sim board with a tie kept in submission order, a flagged copy, per-workload columns
    with the eager baseline beneath, and a labelled roofline; the screenshot is the one in
    docs/screenshots/board.png."""
    from django.contrib.auth.models import User
    from selenium.webdriver.common.by import By

    from leaderboard.boards.models import Board
    from leaderboard.boards.services import board_update
    from leaderboard.runs.models import Run
    from tests.leaderboard.boards.test_likeness import PERSISTENT, RETYPED, TILED

    node, auditor = make_node("glance-node", [HW]), make_node("glance-audit", [HW])
    entries = (("alice", TILED, 0.62, 0.150), ("bob", RETYPED, 0.6201, 0.14999))
    entries += (("carol", PERSISTENT, 0.41, 0.210),)
    for name, source, score, time_ms in entries:
        client = user_client(User.objects.create_user(name))
        body = submit(client, private=False, source=source).json()
        run = Run.objects.get(pk=body["runs"][0]["id"])
        finish(node, run, auditor=auditor, score=score, time_ms=time_ms, ci=0.0)
        board_update(board=Board.objects.get(), sources_public=True)

    browser.get(f"{live_server.url}/boards/{SUITE}/vector_add/{HW}/")
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#board tbody tr")]
    assert rows[0].startswith("=1 alice") and rows[1].startswith("=1 bob")
    assert "≈ copy of" in rows[1] and "copy" not in rows[0] and rows[2].startswith("3 carol")
    head = browser.find_element(By.CSS_SELECTOR, "#board thead").text
    assert "big" in head and "N=16777216 float32" in head
    assert "eager baseline" in browser.find_element(By.ID, "eager-row").text
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.roofline text.wl")]
    assert labels == ["big, small"]  # both workloads move 12 bytes per FLOP: one line
    ranks = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.roofline .pt-label")]
    assert "#1" in " ".join(ranks) and "#3" in " ".join(ranks)
    browser.set_window_size(1280, 1400)
    browser.save_screenshot(str(tmp_path / "board.png"))


def test_a_queued_run_shows_its_place_and_is_cancelled_from_its_page(
    browser, live_server, local_storage
):
    from django.contrib.auth.models import User
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from leaderboard.runs.models import Run

    User.objects.create_user("carol", password="carol-pw")
    body = submit(user_client(User.objects.get(username="carol")), hardware=[HW]).json()
    browser.get(f"{live_server.url}/accounts/login/?next=/submissions/{body['id']}/")
    browser.find_element(By.NAME, "username").send_keys("carol")
    browser.find_element(By.NAME, "password").send_keys("carol-pw")
    browser.find_element(By.ID, "login").click()
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "runs")))
    queue = browser.find_element(By.CSS_SELECTOR, "#runs td.queue").text
    assert f"#1 in the {HW} queue" in queue and f"no node serves {HW} right now" in queue
    browser.find_element(By.CSS_SELECTOR, "#runs button.cancel").click()
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.message")))
    assert "is cancelled" in browser.find_element(By.CSS_SELECTOR, "p.message").text
    assert "CANCELLED: cancelled by carol while queued" in browser.page_source
    assert not browser.find_elements(By.CSS_SELECTOR, "#runs button.cancel")
    assert Run.objects.get(pk=body["runs"][0]["id"]).failure_code == "CANCELLED"
