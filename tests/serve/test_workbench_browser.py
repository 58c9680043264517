"""The Trace Workbench in a real browser (issue 20): Debian's headless Chromium over the DevTools protocol.

Each test starts ``evigate serve``'s app on 127.0.0.1 with scripted agents and drives the pages as a user does:
ask and watch the stages arrive, open the session, select a claim, check that the highlighted text is the
binding's excerpt in the tool output, filter the session list, run a verify, sign in with the token. Screenshots at
1280 px and 390 px go to the artifact directory the test prints (``WORKBENCH_ARTIFACTS`` or pytest's tmp dir).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.cdp import CHROMIUM, Browser
from tests.serve.conftest import QUERY
from tests.serve.workbench_data import LINES, planted_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"),
]
WIDTHS = (1280, 390)
TOKEN = "browser-s3cret"


@pytest.fixture()
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("WORKBENCH_ARTIFACTS")
    path = Path(configured) / "workbench" if configured else tmp_path_factory.mktemp("workbench-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    print(f"workbench screenshots: {path}")
    return path


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[Browser]:
    with Browser(tmp_path / "chromium-profile") as opened:
        yield opened


def shoot(browser: Browser, artifacts: Path, name: str) -> None:
    for width in WIDTHS:
        browser.viewport(width)
        browser.pump(0.2)
        overflow = browser.js("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{name} scrolls sideways at {width} px ({overflow} px)"
        browser.screenshot(artifacts / f"{name}-{width}.png")
    browser.viewport(WIDTHS[0])


def test_ask_shows_the_stages_as_they_arrive_then_the_answer_and_its_session(
    start_server: Any, browser: Browser, artifacts: Path
) -> None:
    server = start_server(sleep_s=0.4)  # the executor takes a moment: the page shows it running
    browser.goto(server.url + "/")
    assert "demo" in browser.js("document.querySelector('#domain').textContent")
    browser.js("document.querySelector('#query').focus()")
    browser.type_text(QUERY)
    browser.js("document.querySelector('#ask-button').click()")
    # a stage shows as running before the result exists: the page reads the stream as it comes
    browser.wait_for("!!document.querySelector('#stages li.running') && document.querySelector('#answer').hidden")
    browser.wait_for("!document.querySelector('#answer').hidden", 60)
    stages = browser.js("Array.from(document.querySelectorAll('#stages li')).map(l => l.dataset.stage)")
    assert [s for s in stages if s != "tool_call"] == ["planner", "executor", "gatekeeper", "verifier", "composer"]
    assert stages.count("tool_call") >= 1
    assert browser.js("document.querySelector('#answer').className") == "answer o-NORMAL"
    assert "ERR_TIMEOUT" in browser.js("document.querySelector('#answer-text').textContent")
    href = browser.js("document.querySelector('#answer-link').getAttribute('href')")
    assert href.startswith("/sessions/")
    assert browser.js("document.activeElement.id") == "answer-link"  # focus moves to the result
    assert browser.js("document.querySelectorAll('#history li').length") == 1
    shoot(browser, artifacts, "ask")
    # the side list survives a reload of the tab
    browser.goto(server.url + "/")
    assert browser.js("document.querySelector('#history a').getAttribute('href')") == href


def test_selecting_a_claim_highlights_the_gates_match_in_the_cited_output(
    start_server: Any, browser: Browser, artifacts: Path
) -> None:
    server = start_server()
    planted = planted_session(server.pool.store)
    browser.goto(f"{server.url}/sessions/{planted['session_id']}")
    browser.wait_for("!!document.querySelector('article.claim')")
    assert browser.js("window.__pwned === undefined")  # no planted script, handler or link ran
    # keyboard: Tab to the first sentence of the answer and press Enter
    browser.js("document.querySelector('main').focus()")
    for _ in range(10):
        browser.press("Tab")
        if browser.js("document.activeElement.classList.contains('sentence')"):
            break
    assert browser.js("document.activeElement.dataset.claims") == "c1"
    browser.press("Enter", text="\r")
    mark = browser.wait_for("document.querySelector('mark.gate-match') && "
                            "document.querySelector('mark.gate-match').textContent")
    assert mark == LINES[1]  # the binding's excerpt, planted markup and all, as text
    assert browser.js("document.querySelector('mark.gate-match').closest('details').open")
    assert browser.js("document.querySelector('article.claim.selected').dataset.claim") == "c1"
    # a mouse click on the second claim: its excerpt, an emoji inside it (UTF-16 offsets)
    browser.js("document.querySelectorAll('button.claim-head')[1].click()")
    assert browser.wait_for("document.querySelector('mark.gate-match').textContent") == LINES[3]
    assert browser.js("document.querySelectorAll('mark.gate-match').length") == 1
    badges = browser.js("Array.from(document.querySelectorAll('.binding .badge')).map(b => b.textContent)")
    assert badges == ["matched", "matched", "misattributed", "forged"]
    scripts = browser.js("Array.from(document.querySelectorAll('script')).map(s => s.getAttribute('src'))")
    assert [src.split("?v=")[0] for src in scripts] == ["/static/workbench.js", "/static/session.js"]  # ours only
    assert browser.js("document.querySelectorAll('#workbench img, #workbench a[href^=\"javascript\"]').length") == 0
    assert browser.js("window.__pwned === undefined")
    shoot(browser, artifacts, "session")


def test_a_page_asks_for_its_data_once_and_before_the_page_is_parsed(start_server: Any, browser: Browser) -> None:
    """The data request leaves while the shell is parsed (bench/workbench.py: the server renders it meanwhile), the
    page does not ask a second time when it starts, and a long session is laid out only where it is on screen."""
    server = start_server()
    session_id = planted_session(server.pool.store)["session_id"]
    for path, data in ((f"/sessions/{session_id}", f"/fragments/sessions/{session_id}"),
                       ("/sessions", "/fragments/sessions?")):
        browser.goto(server.url + path)
        browser.wait_for("document.body.dataset.loadedMs")
        browser.pump(0.3)
        asked = browser.js("performance.getEntriesByType('resource').filter((r) => r.name.includes('/fragments/'))"
                           ".map((r) => [r.name, r.startTime])")
        parsed = browser.js("performance.getEntriesByType('navigation')[0].domContentLoadedEventStart")
        assert [name for name, _ in asked] == [server.url + data], asked
        assert asked[0][1] < parsed
    # fifty claims and calls: those off screen are neither laid out nor painted until they come on screen
    browser.goto(f"{server.url}/sessions/{session_id}")
    browser.wait_for("document.body.dataset.loadedMs")
    skipped = browser.js("['article.claim', 'details.invocation', '#rounds-title']"
                         ".map((s) => getComputedStyle(document.querySelector(s).closest('article, details, section'))"
                         ".contentVisibility)")
    assert skipped == ["auto", "auto", "auto"]


def test_the_session_list_filters_and_pages(start_server: Any, browser: Browser, artifacts: Path) -> None:
    server = start_server()
    planted = planted_session(server.pool.store)
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _ in range(2):
            assert client.post("/v1/diagnoses", json={"query": QUERY}).status_code == 200
    browser.goto(server.url + "/sessions")
    browser.wait_for("document.querySelectorAll('#list tbody tr').length === 3")
    browser.js("document.querySelector('#filters [name=verdict]').value = 'LOW_CONFID'")
    browser.js("document.querySelector('#filters button[type=submit]').click()")
    browser.wait_for("document.querySelectorAll('#list tbody tr').length === 1")
    link = browser.js("document.querySelector('#list tbody a').getAttribute('href')")
    assert link == f"/sessions/{planted['session_id']}"
    assert "verdict=LOW_CONFID" in browser.js("location.search")  # a filtered list can be bookmarked
    shoot(browser, artifacts, "sessions")
    browser.js("document.querySelector('#filters [name=verdict]').value = ''")
    browser.js("document.querySelector('#filters [name=q]').value = 'ERR_TIMEOUT 是什么'")
    browser.js("document.querySelector('#filters button[type=submit]').click()")
    browser.wait_for("document.querySelectorAll('#list tbody tr').length === 2")


def test_verify_labels_each_sentence_and_highlights_its_passage_span(
    start_server: Any, browser: Browser, artifacts: Path
) -> None:
    server = start_server()
    browser.goto(server.url + "/verify")
    answer = "订单 123 支付失败，错误码 ERR_TIMEOUT。The payment service was rebooted by an operator."
    passage = "order 123 status=FAILED\n订单 123 支付失败，错误码 ERR_TIMEOUT，耗时 5300ms"
    browser.js(f"document.querySelector('#verify-answer').value = {json.dumps(answer)}")
    browser.js(f"document.querySelector('#passage-1').value = {json.dumps(passage)}")
    browser.js("document.querySelector('#add-passage').click()")
    browser.type_text("unrelated passage")
    browser.js("document.querySelector('#verify-form button[type=submit]').click()")
    browser.wait_for("document.querySelectorAll('.verify-sentence').length === 2")
    from evigate.verification import verify

    expected = verify(answer, {"passage 1": passage, "passage 2": "unrelated passage"})
    labels = browser.js("Array.from(document.querySelectorAll('.verify-sentence .badge')).map(b => b.textContent)")
    assert labels == [s.label for s in expected.sentences]
    marks = browser.js("Array.from(document.querySelectorAll('.passage-span mark')).map(m => m.textContent)")
    assert marks == [passage[s.span[0]:s.span[1]] for s in expected.sentences if s.span] and marks
    shoot(browser, artifacts, "verify")


def test_off_loopback_style_auth_the_page_asks_for_the_token_and_never_puts_it_in_a_url(
    start_server: Any, browser: Browser, artifacts: Path
) -> None:
    server = start_server(token=TOKEN)
    planted = planted_session(server.pool.store)
    browser.goto(f"{server.url}/sessions/{planted['session_id']}")
    browser.wait_for("!document.querySelector('#login').hidden")
    assert browser.js("document.querySelectorAll('article.claim').length") == 0
    shoot(browser, artifacts, "login")
    browser.js("document.querySelector('#token').focus()")
    browser.type_text(TOKEN)
    browser.press("Enter", text="\r")
    browser.wait_for("document.querySelectorAll('article.claim').length === 4")
    browser.pump(0.3)
    assert not [r["url"] for r in browser.requests if TOKEN in r["url"]]
    authorized = [r for r in browser.requests if "/fragments/" in r["url"]
                  and r["headers"].get("Authorization") == f"Bearer {TOKEN}"]
    assert authorized
    assert browser.js("document.cookie") == ""
    assert TOKEN not in browser.js("location.href")


@pytest.mark.local_model
def test_the_real_embedded_model_end_to_end_through_the_ask_page(
    start_server: Any, browser: Browser, artifacts: Path, private_world: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evigate.modules.program import DiagnosisProgram

    monkeypatch.setenv("EVIGATE_TIMEOUTS__AGENT_SECONDS", "420")
    monkeypatch.setenv("EVIGATE_COMPILED_PROGRAM", "false")  # the built-in prompts
    monkeypatch.setenv("EVIGATE_PREFIX_CACHE", str(tmp_path / "prompt-states"))
    server = start_server(workers=1, graceful_s=30,
                          factory=lambda: DiagnosisProgram.from_settings(database=private_world))
    browser.goto(server.url + "/")
    browser.js(f"document.querySelector('#query').value = {json.dumps(QUERY)}")
    browser.js("document.querySelector('#ask-button').click()")
    browser.wait_for("!!document.querySelector('#stages li[data-stage=planner]')", 120)
    browser.wait_for("!document.querySelector('#answer').hidden || /failed/.test(document.querySelector('#status')"
                     ".textContent)", 2400)
    assert browser.js("document.querySelector('#answer').hidden") is False, browser.js(
        "document.querySelector('#status').textContent")
    kind = browser.js("document.querySelector('#answer').className")
    assert kind in ("answer o-NORMAL", "answer o-LOW_CONFID_WITH_DISCLAIMER", "answer o-DEGRADED")
    stages = browser.js("Array.from(document.querySelectorAll('#stages li')).map(l => l.dataset.stage)")
    assert {"planner", "executor", "gatekeeper"} <= set(stages)
    shoot(browser, artifacts, "real-model-ask")
    browser.goto(server.url + browser.js("document.querySelector('#answer-link').getAttribute('href')"))
    browser.wait_for("!!document.querySelector('#rounds-title')", 60)
    session_id = browser.js("document.querySelector('#workbench').dataset.session")
    evaluation = server.pool.store.session(session_id)["self_evaluation"]["verifier_evaluation"]
    spans = evaluation.get("binding_spans") or []
    assert browser.js("document.querySelectorAll('article.claim').length") == len(
        (evaluation.get("executor_structured_output") or {}).get("claims") or [])
    if spans:  # the model's output had a binding the gate accepted: its match is what the page highlights
        target, invocation = spans[0]["target"], spans[0]["invocation_id"]
        first = min((s for s in spans if s["target"] == target and s["invocation_id"] == invocation),
                    key=lambda s: s["start"])
        claim, binding = (int(part.split("]")[0]) for part in target.split("[")[1:3])
        browser.js(f"document.querySelectorAll('article.claim')[{claim}].querySelectorAll('li.binding')[{binding}]"
                   f".querySelector('button.show-binding[data-invocation=\"{invocation}\"]').click()")
        mark = browser.wait_for("document.querySelector('mark.gate-match') && "
                                "document.querySelector('mark.gate-match').textContent", 30)
        output = server.pool.store.invocation_output(first["invocation_id"])
        assert mark == output[first["start"]:first["end"]]
    shoot(browser, artifacts, "real-model-session")
