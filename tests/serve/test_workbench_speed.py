"""What keeps every Trace Workbench page under issue 20's 300 ms (bench/workbench.py measures it in Chromium).

Each test pins one cause of a slow load that the bench found: a page's store reads reopening the DuckDB file
between them (~250 ms: the store's courtesy pause plus an opening), a template compiled by the first request, a
full garbage collection over everything the server imported, static files read from disk on a worker thread for
every request and fetched again on every load.
"""

from __future__ import annotations

import gc
import re
from typing import Any

import httpx
import pytest

import evigate.store.duck as duck
from tests.serve.workbench_data import planted_session


@pytest.fixture()
def counted_openings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every opening of a DuckDB file, with the store releasing the file at once after each lease (as it does
    once a file has been open for ``MAX_HOLD_SECONDS``): what a page's reads meet on a busy server."""
    openings: list[str] = []
    opener = duck.open_connection

    def counting(*args: Any, **kwargs: Any) -> Any:
        openings.append(str(args[0]))
        return opener(*args, **kwargs)

    monkeypatch.setattr(duck, "open_connection", counting)
    monkeypatch.setattr(duck, "MAX_HOLD_SECONDS", 0.0)
    return openings


def test_each_page_fragment_reads_the_store_under_one_opening_of_its_file(
    start_server: Any, counted_openings: list[str]
) -> None:
    server = start_server()
    planted = planted_session(server.pool.store)
    store_file = str(server.pool.store.path)
    session_id = planted["session_id"]
    urls = [f"/fragments/sessions/{session_id}", "/fragments/sessions",
            f"/fragments/sessions/{session_id}/invocations/{planted['logs']}"]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for url in urls:
            counted_openings.clear()
            assert client.get(url).status_code == 200, url
            # the session view reads three tables, the list two: one opening each, never a reopening between. Only
            # the store's file counts: a thread another test left behind may open its own world file meanwhile.
            assert [path for path in counted_openings if path == store_file] == [store_file], (url, counted_openings)


def test_the_templates_are_compiled_before_the_first_request(start_server: Any) -> None:
    from evigate.serve.pages import _ENV

    start_server()
    cached = {template.name for template in _ENV.cache.values()} if _ENV.cache is not None else set()
    assert set(_ENV.list_templates()) <= cached


def test_what_the_server_loaded_at_start_is_kept_out_of_full_collections(start_server: Any) -> None:
    gc.unfreeze()
    start_server()
    assert gc.get_freeze_count() > 10_000  # the imported modules, the app and its routes
    gc.unfreeze()


def test_static_files_are_cached_by_content_and_pages_name_them_by_content(start_server: Any) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/sessions/anything").text
        assets = re.findall(r'(?:src|href)="(/static/[a-z]+\.(?:js|css)\?v=[0-9a-f]{12})"', page)
        assert len(assets) == 3, page
        for asset in assets:
            response = client.get(asset)
            assert response.status_code == 200
            assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
            assert "nosniff" in response.headers["x-content-type-options"]
        # a name without the right version is never cached: a new release's page cannot meet an old script
        unversioned = client.get("/static/workbench.js")
        stale = client.get("/static/workbench.js?v=000000000000")
        again = client.get("/static/workbench.js", headers={"If-None-Match": unversioned.headers["etag"]})
        missing = [client.get(path) for path in ("/static/nothing.js", "/static/..%2Fpages.py", "/static/")]
    assert unversioned.headers["cache-control"] == "no-cache" == stale.headers["cache-control"]
    assert unversioned.headers["content-type"] == "text/javascript; charset=utf-8" and "PAGES" in unversioned.text
    assert again.status_code == 304 and not again.content
    assert all(response.status_code == 404 for response in missing)
