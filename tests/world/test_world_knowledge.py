"""The shipped knowledge documents: enough of them, titled, and covering the documents the spec names."""

from __future__ import annotations

from evigate.demo import knowledge_dir


def test_documents() -> None:
    root = knowledge_dir()
    documents = {path.relative_to(root).as_posix(): path.read_text(encoding="utf-8") for path in root.rglob("*.md")}
    assert len(documents) >= 30
    assert {"payment/errors.md", "database/hikaricp.md", "cache/redis-avalanche.md"} <= set(documents)
    for name, text in documents.items():
        assert text.startswith("# "), name
        assert len(text) > 200, name
        assert any("\u4e00" <= char <= "\u9fff" for char in text), name  # Chinese runbooks
    assert len({name.split("/")[0] for name in documents}) >= 6
