"""The Trace Workbench over real HTTP (issue 20): pages, fragments, auth, CSP, escaping, the sessions endpoint."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import httpx
import pytest

from evigate.serve.pages import CSP
from evigate.store import AuditStore
from tests.serve.conftest import QUERY
from tests.serve.workbench_data import JS_LINK, LINES, LOG, ONERROR, SCRIPT, planted_session

TOKEN = "s3cret-token"
PAGES = ["/", "/sessions", "/sessions/anything", "/verify"]


def _planted(server: Any) -> dict[str, Any]:
    return planted_session(server.pool.store)


def test_every_page_is_a_shell_with_a_strict_csp_and_only_its_own_assets(start_server: Any) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path in PAGES:
            page = client.get(path)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert page.headers["content-security-policy"] == CSP
            assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
            assert page.headers["x-content-type-options"] == "nosniff"
            # no inline script or style, nothing from another origin
            scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page.text, re.S)
            assert len(scripts) == 2 and scripts == ["", ""]  # no inline script ...
            sources = re.findall(r'<script src="(/static/[a-z]+\.js)\?v=[0-9a-f]{12}">', page.text)
            assert sources[0] == "/static/workbench.js" and len(sources) == 2  # ... only ours, from this server
            assert all(client.get(source).status_code == 200 for source in sources)
            assert "<style" not in page.text and " style=" not in page.text and "http" not in page.text.lower()
        for asset in ("/static/workbench.js", "/static/workbench.css", "/static/session.js"):
            assert client.get(asset).status_code == 200
        ask = client.get("/").text
    assert "demo" in ask  # the domain the programs run on is shown on the ask page


def test_with_a_token_the_data_needs_the_header_and_never_a_url_or_a_cookie(start_server: Any) -> None:
    server = start_server(token=TOKEN)
    planted = _planted(server)
    session_id = planted["session_id"]
    data_urls = [f"/fragments/sessions/{session_id}", "/fragments/sessions", "/v1/sessions",
                 f"/v1/sessions/{session_id}"]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        shell = client.get(f"/sessions/{session_id}")
        assert shell.status_code == 200 and "pay-gateway" not in shell.text  # the shell holds no data
        for url in data_urls:
            assert client.get(url).status_code == 401, url
            assert client.get(url, params={"token": TOKEN, "access_token": TOKEN}).status_code == 401, url
            with httpx.Client(base_url=server.url, cookies={"token": TOKEN, "Authorization": f"Bearer {TOKEN}"}) as c:
                assert c.get(url).status_code == 401, url
            authorized = client.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
            assert authorized.status_code == 200, url
            assert "set-cookie" not in authorized.headers
        verify = {"answer": "a", "passages": ["a"]}
        assert client.post("/fragments/verify", json=verify).status_code == 401
    assert TOKEN not in shell.text


def test_planted_markup_in_a_log_line_renders_as_text(start_server: Any) -> None:
    server = start_server()
    planted = _planted(server)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.get(f"/fragments/sessions/{planted['session_id']}")
        output = client.get(f"/fragments/sessions/{planted['session_id']}/invocations/{planted['logs']}")
        foreign = client.get(f"/fragments/sessions/{planted['session_id']}/invocations/999999")
    assert response.status_code == 200 and output.status_code == 200 and foreign.status_code == 404
    assert response.headers["content-security-policy"] == CSP == output.headers["content-security-policy"]
    # the parser drops the newline after <pre>; a CR is shown as ␍ so that no offset shifts
    shown = unescape(re.search(r'<pre class="output"[^>]*>\n(.*?)</pre>', output.text, re.S).group(1))
    assert shown == LOG.replace("\r", "␍") and len(shown) == len(LOG)
    html = response.text + output.text
    # not one element or attribute came from the data ...
    tags = re.findall(r"<[a-zA-Z][^>]*>", html)
    assert tags and not [tag for tag in tags if re.match(r"<(script|img|a)\b", tag)]
    assert not [tag for tag in tags if "onerror" in tag or "javascript:" in tag]
    # ... and each planted string is there, escaped, as text (in the output, the question, a claim, the answer)
    for planted_text in (SCRIPT, ONERROR, JS_LINK):
        escaped = planted_text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped.replace('"', "&#34;").replace("'", "&#39;") in html or escaped in html
    assert unescape(html).count(SCRIPT) >= 3


def test_the_session_fragment_links_sentences_to_claims_and_shows_the_gates_spans(start_server: Any) -> None:
    server = start_server()
    planted = _planted(server)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        html = client.get(f"/fragments/sessions/{planted['session_id']}").text
        missing = client.get("/fragments/sessions/no-such-session")
    assert missing.status_code == 404 and "no-such-session" in missing.json()["error"]
    sentences = re.findall(r'<button type="button" class="sentence" data-claims="([^"]*)"', html)
    assert sentences == ["c1", "c2"]  # the third sentence states no claim
    span = next(s for s in planted["spans"] if s.claim_id == "c2")
    assert LOG[span.start:span.end] == LINES[3]
    assert f'&#34;start&#34;: {span.start}, &#34;end&#34;: {span.end}' in html  # the gate's own offsets
    statuses = re.findall(r'<span class="badge b-[^"]+">([^<]+)</span>', html)
    assert statuses == ["matched", "matched", "misattributed", "forged"]
    assert "code-confirmed quote" in html and "Verifier model" in html
    assert "999999 is no invocation of this session" in html
    assert f'id="inv-{planted["logs"]}"' in html and re.search(r"· 1[23] ms", html)


def test_verify_runs_evigate_verify_and_highlights_each_sentences_span(start_server: Any) -> None:
    server = start_server()
    body = {"answer": "订单 123 支付失败，错误码 ERR_TIMEOUT。The moon is made of cheese.",
            "passages": ["order 123: status=FAILED error_code=ERR_TIMEOUT\n订单 123 支付失败，错误码 ERR_TIMEOUT", "x"]}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.post("/fragments/verify", json=body)
        empty = client.post("/fragments/verify", json={"answer": "", "passages": []})
        planted = client.post("/fragments/verify", json={"answer": SCRIPT, "passages": [SCRIPT]})
    assert response.status_code == 200, response.text
    from evigate.verification import verify

    expected = verify(body["answer"], {f"passage {i + 1}": p for i, p in enumerate(body["passages"])})
    labels = re.findall(r'<li class="verify-sentence l-([a-z_]+)">', response.text)
    assert labels == [s.label for s in expected.sentences]
    marks = re.findall(r"<mark>([^<]*)</mark>", response.text)
    spans = [body["passages"][int(s.passage.split()[-1]) - 1][s.span[0]:s.span[1]]
             for s in expected.sentences if s.span]
    assert [unescape(m) for m in marks] == spans and spans
    assert empty.status_code == 422 and "error" in empty.json()
    assert planted.status_code == 200 and "<script" not in planted.text


def test_the_sessions_endpoint_filters_like_show_list(start_server: Any) -> None:
    server = start_server()
    planted = _planted(server)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.post("/v1/diagnoses", json={"query": QUERY}).status_code == 200
        everything = client.get("/v1/sessions").json()
        low = client.get("/v1/sessions", params={"verdict": "LOW_CONFID"}).json()
        text = client.get("/v1/sessions", params={"q": "ERR_TIMEOUT 是什么"}).json()
        page = client.get("/v1/sessions", params={"limit": 1, "offset": 1}).json()
        bad = [client.get("/v1/sessions", params=p) for p in ({"verdict": "ok"}, {"limit": 0}, {"since": "soon"})]
        fragment = client.get("/fragments/sessions", params={"output_type": "LOW_CONFID_WITH_DISCLAIMER"}).text
    assert everything["total"] == 2 and everything["sessions"][0]["query"] == QUERY  # newest first
    assert [row["session_id"] for row in low["sessions"]] == [planted["session_id"]]
    assert [row["query"] for row in text["sessions"]] == [QUERY]
    assert page["total"] == 2 and [row["session_id"] for row in page["sessions"]] == [planted["session_id"]]
    assert all(r.status_code == 422 and "error" in r.json() for r in bad)
    assert f'/sessions/{planted["session_id"]}' in fragment and QUERY not in fragment


@pytest.mark.parametrize("path", ["/fragments/sessions/%3Cscript%3E", "/sessions/%3Cscript%3Ealert(1)%3C%2Fscript%3E"])
def test_a_planted_session_id_in_the_url_renders_as_text(start_server: Any, path: str) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.get(path)
    if response.headers["content-type"].startswith("text/html"):
        assert "<script>" not in response.text and "&lt;script&gt;" in response.text
    else:  # an error is JSON, which the page only ever sets as text
        assert response.status_code == 404 and response.headers["content-type"] == "application/json"


def test_the_store_reads_invocations_with_whole_outputs_and_timing(tmp_path: Any) -> None:
    with AuditStore(tmp_path / "a.duckdb") as store:
        planted = planted_session(store)
        rows = store.invocation_records(planted["session_id"])
        light = store.invocation_records(planted["session_id"], with_output=False)
        one = store.invocation_records(planted["session_id"], invocation_id=planted["other"])
        foreign = store.invocation_records("no-such-session", invocation_id=planted["other"])
    assert [row["id"] for row in rows] == [planted["logs"], planted["other"]]
    assert rows[0]["output"] == LOG and rows[0]["latency_ms"] == 12.5 and rows[0]["started_at"] is not None
    assert rows[0]["input"]["service"] == "pay-gateway" and rows[0]["output_chars"] == len(LOG)
    assert "output" not in light[0] and light[0]["output_chars"] == len(LOG)
    assert [row["id"] for row in one] == [planted["other"]] and foreign == []


def test_a_diagnosis_records_the_gates_spans_in_the_audit_chain(start_server: Any) -> None:
    """binding_spans reach verifier_evaluation (so show --json and GET /v1/sessions/{id}) from a real run."""
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        session_id = client.post("/v1/diagnoses", json={"query": QUERY}).json()["session_id"]
        record = client.get(f"/v1/sessions/{session_id}").json()
    evaluation = record["session"]["self_evaluation"]["verifier_evaluation"]
    claims = evaluation["executor_structured_output"]["claims"]
    spans = evaluation["binding_spans"]
    assert {span["claim_id"] for span in spans} == {claim["claim_id"] for claim in claims}
    for span in spans:
        claim_index, binding_index = (int(part.split("]")[0]) for part in span["target"].split("[")[1:3])
        excerpt = claims[claim_index]["evidence_bindings"][binding_index]["evidence_excerpt"]
        output = server.pool.store.invocation_output(span["invocation_id"])
        assert span["match"] == "verbatim" and output[span["start"]:span["end"]] == excerpt.strip()


def test_bad_ids_and_a_closed_store_get_clear_errors_not_tracebacks(start_server: Any) -> None:
    server = start_server()
    planted = _planted(server)
    base = f"/fragments/sessions/{planted['session_id']}"
    with httpx.Client(base_url=server.url, timeout=30) as client:
        huge = client.get(f"{base}/invocations/{2**70}")
        word = client.get(f"{base}/invocations/abc")
        server.pool.store.close()  # what a store that went away looks like to the pages
        gone = [client.get(base), client.get("/fragments/sessions"), client.get(f"{base}/invocations/1"),
                client.get("/v1/sessions")]
    assert huge.status_code == 422 and word.status_code == 422 and "error" in huge.json()
    assert all(r.status_code == 503 and "audit store" in r.json()["error"] for r in gone)
