"""Every error the API returns has one shape, ``{"error": ...}``; the query limit counts characters; invisible
queries are blank; a body that arrives too slowly is refused."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from evigate.serve.limits import MAX_BODY_BYTES, MAX_QUERY_CHARS, has_visible_text
from tests.serve.conftest import QUERY

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u202e\u3000\u00a0\u3164\u2800\u180e \t\n\r\u0301"


def assert_error_shape(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]


def test_unknown_routes_wrong_methods_and_unparsable_bodies_answer_the_error_shape(start_server: Any) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert_error_shape(client.get("/v1/nothing-here"), 404)
        assert_error_shape(client.get("/v1/diagnoses"), 405)
        json_headers = {"Content-Type": "application/json"}
        assert_error_shape(client.post("/v1/diagnoses", content=b"{not json", headers=json_headers), 400)
        assert_error_shape(client.post("/v1/diagnoses", content=b'{"query": "\xff\xfe"}', headers=json_headers), 400)
        assert_error_shape(client.post("/v1/diagnoses", json={"query": QUERY, "extra": 1}), 422)
        assert_error_shape(client.get("/v1/sessions/no-such-session"), 404)


def test_a_query_of_invisible_characters_is_refused_like_a_blank_one(start_server: Any) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for query in ("\u200b\u200b\u200b", "\ufeff\u2060 \u200d", "\u3164\u3164", "\u00ad\u202e\u3000"):
            response = client.post("/v1/diagnoses", json={"query": query})
            assert_error_shape(response, 422)
            assert "blank" in response.json()["error"]
    assert server.pool.store.sessions(limit=5) == []


@given(st.text(alphabet=INVISIBLE, max_size=50))
def test_text_of_only_invisible_characters_has_nothing_visible(text: str) -> None:
    assert not has_visible_text(text)


@given(st.text(alphabet=INVISIBLE, max_size=20), st.sampled_from("a订1%#Éя"), st.text(alphabet=INVISIBLE, max_size=20))
def test_one_visible_character_among_invisible_ones_is_text(before: str, visible: str, after: str) -> None:
    assert has_visible_text(before + visible + after)


def test_the_query_limit_counts_characters_however_the_body_escapes_them(start_server: Any) -> None:
    server = start_server()
    chinese = ("订单123支付失败" * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    astral = "\U00020000" * (MAX_QUERY_CHARS - 7) + " 订单 123"  # CJK Ext. B: a \\u surrogate pair per character
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for query in (chinese, astral):
            body = json.dumps({"query": query, "locale": "zh"}).encode()  # ensure_ascii: every character escaped
            assert len(query) == MAX_QUERY_CHARS and len(body) > 16 * 1024
            response = client.post("/v1/diagnoses", content=body, headers={"Content-Type": "application/json"})
            assert response.status_code == 200, response.text[:300]
        over = json.dumps({"query": chinese + "订"}).encode()
        assert_error_shape(client.post("/v1/diagnoses", content=over, headers={"Content-Type": "application/json"}),
                           422)
        # the body is still bounded
        assert_error_shape(client.post("/v1/diagnoses", content=b" " * (MAX_BODY_BYTES + 1)), 413)


def test_a_body_that_arrives_too_slowly_is_refused_with_408(start_server: Any) -> None:
    server = start_server(body_read_timeout_s=1.0)
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /v1/diagnoses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"query\": ")
        started = time.monotonic()
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert time.monotonic() - started < 5
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and "did not arrive" in json.loads(body)["error"]


def test_a_request_that_is_not_http_gets_400_in_the_error_shape(start_server: Any) -> None:
    server = start_server()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert list(json.loads(body)) == ["error"]


def test_an_unexpected_failure_is_a_500_in_the_error_shape(start_server: Any) -> None:
    server = start_server()
    server.pool.close()  # the audit store is gone: reading a session fails in a way no handler expects
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.get("/v1/sessions/whatever")
    assert_error_shape(response, 500)
    assert "StoreError" in response.json()["error"]
