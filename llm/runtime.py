"""Loaded llama.cpp models, shared per process: one `Llama` per (file, context settings), one lock each.

A GGUF is ~100–500 MB of weights plus a KV cache; every DSPy LM that names the same model shares one
loaded instance instead of loading its own. `Llama` is not thread-safe, so each instance carries the lock
that serialises generation on it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evigate.errors import ModelError
from evigate.llm.prefix_cache import PrefixCache
from evigate.llm.prefix_reuse import install as install_prefix_cache

EXTRA_BUFFERS_ENV = "EVIGATE_LLAMA_EXTRA_BUFFERS"
THREADS_ENV = "EVIGATE_LLAMA_THREADS"


@dataclass(frozen=True)
class LoadSettings:
    """What makes two loaded instances different (and so not shareable)."""

    path: Path
    n_ctx: int
    n_threads: int
    chat_format: str | None
    prompt_cache_bytes: int
    use_extra_buffers: bool
    prefix_dir: Path | None = None


@dataclass
class LoadedModel:
    """A loaded `Llama`, the lock that serialises its use, and how long loading took."""

    llama: Any
    settings: LoadSettings
    load_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    grammar_checks: dict[str, bool] = field(default_factory=dict)
    prefix_cache: PrefixCache | None = None
    _formatter: Any = None

    def chat_prompt(self, messages: list[dict[str, str]]) -> list[int] | None:
        """The prompt tokens exactly as llama-cpp-python's chat handler builds them from the GGUF's own template,
        or None when the model uses a named chat format instead (then only the library's own path applies)."""
        if getattr(self.settings, "chat_format", None) is not None:
            return None
        template = (getattr(self.llama, "metadata", None) or {}).get("tokenizer.chat_template")
        if not template:
            return None
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            eos, bos = self.llama.token_eos(), self.llama.token_bos()
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=self.llama._model.token_get_text(eos) if eos != -1 else "",
                bos_token=self.llama._model.token_get_text(bos) if bos != -1 else "",
                stop_token_ids=[eos],
            )
        rendered = self._formatter(messages=messages)
        return list(
            self.llama.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True)
        )

    def accepts_grammar(self, gbnf: str) -> bool:
        """Whether llama.cpp's grammar parser accepts `gbnf` for this model's vocabulary (cached).

        llama-cpp-python adds the grammar sampler without checking it: a grammar the parser refuses
        becomes a NULL sampler and the process dies with SIGSEGV at the first token. Building the
        sampler once here, and checking it, turns that into a False. Call with `lock` held.
        """
        known = self.grammar_checks.get(gbnf)
        if known is None:
            import llama_cpp

            sampler = llama_cpp.llama_sampler_init_grammar(self.llama._model.vocab, gbnf.encode("utf-8"), b"root")
            known = bool(sampler)
            if sampler:
                llama_cpp.llama_sampler_free(sampler)
            self.grammar_checks[gbnf] = known
        return known


_loaded: dict[LoadSettings, LoadedModel] = {}
_registry_lock = threading.Lock()


def default_threads() -> int:
    """$EVIGATE_LLAMA_THREADS, else every core but one.

    llama.cpp's threads meet at a barrier after every operation; when another process holds a core, each
    barrier waits for a descheduled thread. Measured on 2 cores with two other busy processes: Qwen 0.5B decoded
    1 tok/s with 2 threads and 14 tok/s with 1 (quiet machine, 2 threads: 21 tok/s). An incident tool runs when
    machines are busy, so the default gives up some peak speed to never fall off that cliff.
    """
    configured = os.environ.get(THREADS_ENV, "").strip()
    if configured:
        try:
            threads = int(configured)
        except ValueError:
            raise ModelError(f"{THREADS_ENV} must be a positive integer, got {configured!r}") from None
        if threads < 1:
            raise ModelError(f"{THREADS_ENV} must be a positive integer, got {configured!r}")
        return threads
    return max(1, (os.cpu_count() or 1) - 1)


def threads_for_next_call(sample_seconds: float = 0.1) -> int:
    """Threads for the next generation: $EVIGATE_LLAMA_THREADS, else the cores other processes leave free now.

    The same barrier cliff as in `default_threads` decides: a thread per core is the fastest setting on an idle
    machine (prompt evaluation measured at 77 tok/s with 1 thread, 162 tok/s with 2 on 2 idle cores) and the
    slowest on a busy one. So the CPU time other processes used over a short sample (from /proc/stat, taken while
    this process waits for the model lock and is itself idle) decides; a core counts as free when it was at least
    70% idle. Elsewhere than Linux: every core but one.
    """
    if os.environ.get(THREADS_ENV, "").strip():
        return default_threads()
    cores = os.cpu_count() or 1
    first = _cpu_times()
    if first is None or cores == 1:
        return default_threads()
    time.sleep(sample_seconds)
    second = _cpu_times()
    if second is None:
        return default_threads()
    busy_delta = second[0] - first[0]
    total_delta = second[1] - first[1]
    if total_delta <= 0:
        return default_threads()
    busy_cores = cores * busy_delta / total_delta
    return max(1, min(cores, int(cores - busy_cores + 0.3)))


def use_threads(llama: Any, threads: int) -> None:
    """Run the next evaluations of `llama` on `threads` threads (prompt batches and decoding alike)."""
    context = getattr(llama, "_ctx", None)
    if context is not None:
        context.set_n_threads(threads, threads)


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies over all CPUs from /proc/stat, or None where it does not exist."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already counted in user
    return total - idle, total


def extra_buffers_enabled() -> bool:
    """Whether llama.cpp may use extra weight buffer types (AMX / repacked layouts); off unless the env says 1.

    A native build of llama-cpp-python 0.3.36 on a CPU that reports AMX repacks weights into AMX tiles,
    and the first decode then dies with SIGSEGV in sandboxes that do not grant tile state (measured on
    the project machine). Plain CPU buffers always work; set EVIGATE_LLAMA_EXTRA_BUFFERS=1 where AMX runs.
    """
    return os.environ.get(EXTRA_BUFFERS_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def load_model(settings: LoadSettings) -> LoadedModel:
    """The shared instance for `settings`, loading it on first use."""
    with _registry_lock:
        loaded = _loaded.get(settings)
        if loaded is None:
            loaded = _load(settings)
            _loaded[settings] = loaded
        return loaded


def unload_all() -> None:
    """Drop every shared instance (tests and benchmarks that need a cold start)."""
    with _registry_lock:
        for loaded in _loaded.values():
            with loaded.lock:
                loaded.llama.close()
        _loaded.clear()


def _close_at_exit() -> None:
    # Llama.__del__ at interpreter teardown calls into half-destroyed modules and prints a TypeError;
    # closing while the interpreter is whole avoids that. A model still generating is left alone.
    with _registry_lock:
        for loaded in _loaded.values():
            if loaded.lock.acquire(blocking=False):
                try:
                    loaded.llama.close()
                finally:
                    loaded.lock.release()
        _loaded.clear()


atexit.register(_close_at_exit)


def _load(settings: LoadSettings) -> LoadedModel:
    try:
        import llama_cpp
    except ImportError as exc:  # the runtime is a dependency, but a broken build shows up here
        raise ModelError(
            f"llama-cpp-python is not importable ({exc}); install it with: pip install llama-cpp-python"
        ) from exc
    started = time.perf_counter()
    try:
        with _model_params_override(use_extra_buffers=settings.use_extra_buffers):
            llama = llama_cpp.Llama(
                model_path=str(settings.path),
                n_ctx=settings.n_ctx,
                n_threads=settings.n_threads,
                n_threads_batch=settings.n_threads,
                chat_format=settings.chat_format,
                verbose=False,
            )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(f"llama.cpp could not load {settings.path}: {exc}") from exc
    cache = None
    if settings.prompt_cache_bytes > 0:
        cache = PrefixCache(settings.prompt_cache_bytes, settings.prefix_dir)
        install_prefix_cache(llama, cache)
    return LoadedModel(llama=llama, settings=settings, load_seconds=time.perf_counter() - started, prefix_cache=cache)


# Llama() offers no argument for llama_model_params.use_extra_bufts; it reads the defaults from this one
# module function. Swapping it only while a model loads (under _registry_lock) changes nothing else.
@contextlib.contextmanager
def _model_params_override(*, use_extra_buffers: bool) -> Iterator[None]:
    import llama_cpp.llama as llama_module

    if use_extra_buffers:
        yield
        return
    bindings = llama_module.llama_cpp
    original = bindings.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        bindings.llama_model_default_params = original


def perf_counters(llama: Any) -> tuple[int, int, float, float]:
    """(prompt tokens evaluated, tokens generated, prompt ms, generation ms) since the context was created."""
    import llama_cpp

    data = llama_cpp.llama_perf_context(llama.ctx)
    return int(data.n_p_eval), int(data.n_eval), float(data.t_p_eval_ms), float(data.t_eval_ms)
