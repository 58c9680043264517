"""`lm_from_settings`: the one place an agent's LM is built from settings (program, eval and optimize alike).

Everything that changes what a model is asked or how long it may take comes from the same settings here: the
server (api_base, the secret api_key), the per-call time limit, the agent's completion budget, the temperature and,
for the embedded model, the JSON-schema limits it decodes under. An evaluation or an optimization therefore scores
and tunes the prompts under exactly the conditions `evigate ask` serves them with.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evigate.llm.models import is_local_model

NO_KEY = "no-key"
"""Sent to a self-hosted server configured without a key (``models.api_base`` set, ``models.api_key`` unset)."""

if TYPE_CHECKING:
    import dspy

    from evigate.settings import AgentName, Settings


def lm_options(settings: Settings, agent: AgentName, model: str | None = None) -> tuple[str, dict[str, Any]]:
    """The model string and the `make_lm` keywords for ``agent`` (``model`` overrides the settings' choice).

    A remote model gets the server and key; the embedded one gets its decoding bounds instead (a custom engine
    refuses connection settings, and the local engine enforces the time limit itself).
    """
    models = settings.models
    model = model or models.for_agent(agent)
    options: dict[str, Any] = {
        "temperature": models.temperature,
        "max_tokens": models.max_tokens_for(agent),
        # The local engine aborts a generation at this deadline; litellm gives up on the request at it.
        "timeout": settings.timeouts.agent_seconds,
    }
    if is_local_model(model):
        options.update(models.local_bounds)
        options["field_limits"] = dict(models.local_field_limits)
        options["omit_fields"] = list(models.local_omit_fields)
        return model, options
    if models.api_base:
        options["api_base"] = models.api_base
        model = self_hosted(model)
    if models.api_key is not None:
        options["api_key"] = models.api_key.get_secret_value()
    elif models.api_base and not os.environ.get("OPENAI_API_KEY"):
        # Self-hosted servers (llama_cpp.server, vLLM, Ollama) usually take no key, but the OpenAI client refuses to
        # send a request without one: give it a placeholder the server ignores.
        options["api_key"] = NO_KEY
    # A server that is down or too slow degrades the answer now rather than after litellm's backoff retries; a
    # rerun of the same question really asks the server again (the audit records what it answered this time).
    options["num_retries"] = models.num_retries
    options["cache"] = False
    return model, options


def self_hosted(model: str) -> str:
    """``openai/<name>`` at a configured api_base, spoken in the self-hosted servers' dialect (``hosted_vllm/``).

    DSPy's OpenAI dialect sends the completion budget as ``max_completion_tokens``, which llama_cpp.server ignores
    (its ``max_tokens`` then defaults to unlimited: a small model runs on to the end of its context, measured at
    more than 900 s for one call here) and older vLLM and Ollama do not read either. The self-hosted dialect sends
    ``max_tokens``, which all of them honour, so the per-agent budgets hold on every server.
    """
    provider, _, name = model.partition("/")
    return f"hosted_vllm/{name}" if provider == "openai" and name else model


def lm_from_settings(settings: Settings, agent: AgentName, *, model: str | None = None, **engine: Any) -> dspy.LM:
    """The LM ``agent`` runs with under ``settings``; ``engine`` adds local-engine options such as ``n_threads``."""
    from evigate.llm.lm import make_lm

    model, options = lm_options(settings, agent, model)
    if is_local_model(model):
        options.update(engine)
    return make_lm(model, **options)
