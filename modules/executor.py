"""Executor: collects evidence with the recorded tools and writes executor_evidence_v2 JSON (never prose).

Two modes:
- ``plan`` (default, for small local models): run the Planner's tool steps as written, then one model call turns the
  recorded outputs into the V2 JSON;
- ``react``: ``dspy.ReAct`` over the session's Toolbox; every observation shows the invocation id to cite.
Either way the stage contract is ``executor(query=, plan=, retry_context=, toolbox=) -> Prediction(raw_output=str)``
and the raw text is returned unparsed: parsing and judging it is the Gatekeeper's business.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, Literal

import dspy

from evigate.domain import load_domain
from evigate.llm.constraints import Constraints
from evigate.llm.lm import constrained_lm
from evigate.modules.evidence_view import format_evidence, query_entities, step_key
from evigate.signatures import Plan, RetryContext, ToolInvocation
from evigate.signatures.agents import WriteEvidence


def extract_field_json(raw: str, field: str) -> str:
    """The JSON adapter wraps the V2 object as ``{"<field>": {...}}``; return the inner object's text when so."""
    try:
        outer = json.loads(raw)
    except (TypeError, ValueError):
        return raw
    if isinstance(outer, dict) and set(outer) == {field}:
        inner = outer[field]
        if isinstance(inner, str):
            return inner
        return json.dumps(inner, ensure_ascii=False)
    return raw


def name_cited_tools(output: Any, invocations: list[ToolInvocation], tool_names: set[str]) -> list[str]:
    """Fill a binding's ``tool_name`` from its cited invocations when the model wrote something that is no tool.

    Small models often put a service name ("payment-service") where the tool name belongs. That is a format slip,
    not forgery, and the invocation ids already say which tool answered. Only names that are not tools at all are
    replaced, and only when every cited id is a real call of one tool: a binding that names a *different real tool*
    is left for the Gatekeeper to judge (evidence.invocation_ref), and so are unknown ids.
    """
    tool_of = {inv.id: inv.tool_name for inv in invocations}
    repairs: list[str] = []
    for claim in getattr(output, "claims", []) or []:
        for binding in claim.evidence_bindings:
            if binding.tool_name in tool_names:
                continue
            cited = {tool_of.get(i) for i in binding.source_invocation_ids}
            if len(cited) == 1 and None not in cited:
                (tool,) = cited
                repairs.append(f"{claim.claim_id}: tool_name {binding.tool_name!r} -> {tool!r}")
                binding.tool_name = tool
    return repairs


class Executor(dspy.Module):
    """Evidence collector + V2 writer. ``toolbox`` is the session's recorded Toolbox for the current round."""

    def __init__(
        self,
        mode: Literal["plan", "react"] = "plan",
        max_iters: int = 6,
        max_evidence_chars: int = 500,
        registry: Any = None,
        domain: Any = None,
    ):
        super().__init__()
        self.domain = load_domain(domain)
        self.mode = mode
        self.max_evidence_chars = max_evidence_chars
        self.write = dspy.Predict(WriteEvidence)
        self.react = None
        self.tool_names: frozenset[str] = frozenset()
        if mode == "react":
            registry = registry if registry is not None else self.domain.build_registry()
            self.tool_names = frozenset(registry.names())
            tools = [self._react_tool(registry.get(name)) for name in registry.names()]
            self.react = dspy.ReAct(_ReactEvidence, tools=tools, max_iters=max_iters)

    def forward(
        self, query: str, plan: Plan, retry_context: RetryContext | None = None, toolbox: Any = None
    ) -> dspy.Prediction:
        if toolbox is None:
            raise ValueError("the executor needs the session's toolbox")
        if self.mode == "react" and self.react is not None:
            try:
                prediction = self._react_for(toolbox)(query=query, plan=plan, retry_context=retry_context)
            except dspy.utils.exceptions.AdapterParseError as exc:
                # As in plan mode: what the model wrote goes to the Gatekeeper verbatim; it is not an agent failure.
                return dspy.Prediction(raw_output=extract_field_json(str(exc.lm_response), "executor_output"),
                                       mode="react")
            return dspy.Prediction(raw_output=_dump_output(prediction.executor_output), mode="react")
        self._run_plan(plan, retry_context, toolbox)
        invocations = toolbox.invocations()
        evidence = format_evidence(
            invocations,
            self.max_evidence_chars,
            focus_terms=[term for terms in query_entities(query, self.domain).values() for term in terms],
        )
        try:
            # The prompt shows every invocation the constraints are made of: a cached answer never meets other ones.
            constraints = Constraints.create(object_variants={"EvidenceBinding": citable(invocations)})
            lm = constrained_lm(self.write.lm or dspy.settings.lm, constraints)
            prediction = self.write(query=query, evidence=evidence, retry_context=retry_context, lm=lm)
        except dspy.utils.exceptions.AdapterParseError as exc:
            # Keep what the model wrote, verbatim: the Gatekeeper, not the adapter, decides what it is worth.
            return dspy.Prediction(raw_output=extract_field_json(str(exc.lm_response), "executor_output"), mode="plan")
        output = prediction.executor_output
        repairs = name_cited_tools(output, invocations, set(toolbox.registry.names()))
        return dspy.Prediction(raw_output=_dump_output(output), mode="plan", repairs=repairs)

    def _run_plan(self, plan: Plan, retry_context: RetryContext | None, toolbox: Any) -> None:
        done = set(retry_context.completed_queries) if retry_context else set()
        for step in plan.steps:
            key = step_key(step.tool, step.args)
            if key in done:
                continue
            done.add(key)
            toolbox.call(step.tool, **step.args)

    def _react_for(self, toolbox: Any) -> Any:
        """This call's ReAct: the shared module (its prompts and demos) over tools that record into ``toolbox``.

        dspy.ReAct calls its tools itself, with the model's arguments only, and builds them into its prompt when it
        is made; so the module is shared and only its tools are bound per call, on a shallow copy. Sessions running
        in other threads (``evigate serve``'s workers) each call their own copy, and never see another's toolbox.
        """
        shared: Any = self.react
        react = copy.copy(shared)
        react.callbacks = getattr(shared, "callbacks", [])  # dspy.Module.__getstate__ drops them from a copy
        tools = getattr(shared, "tools", {})
        react.tools = {
            name: tool.model_copy(update={"func": self._recorder(toolbox, name)}) if name in self.tool_names else tool
            for name, tool in tools.items()
        }
        return react

    def _recorder(self, toolbox: Any, name: str) -> Callable[..., str]:
        """Run tool ``name`` through ``toolbox`` (recorded); the model sees its output under its invocation id."""

        def call(**kwargs: Any) -> str:
            result = toolbox.call(name, **kwargs)
            status = "" if result.success else " FAILED"
            body = result.output if result.success else (result.error or result.output)
            return f"[invocation {result.invocation_id} {name}{status}]\n{body[: self.max_evidence_chars]}"

        return call

    @staticmethod
    def _react_tool(tool: Any) -> dspy.Tool:
        """What ReAct shows the model of one registered tool; each call binds it to its toolbox (`_react_for`)."""
        name = tool.name

        def unbound(**_: Any) -> str:
            raise RuntimeError(f"{name} was called outside an Executor call: no session toolbox to record it")

        # Argument schemas go to the model without their "type" keys: DSPy would otherwise reject a badly typed
        # call before the Toolbox sees it, and every attempt — bad arguments included — must be recorded.
        properties = tool.Args.model_json_schema().get("properties", {})
        args = {
            key: {"description": f"{prop.get('type', 'any')}: {prop.get('description', '')}".strip()}
            for key, prop in properties.items()
        }
        return dspy.Tool(unbound, name=name, desc=tool.description, args=args)


# ReAct gathers the evidence itself, so its signature is the writer's without the pre-collected evidence, and it
# reads the plan it is to carry out. (In plan mode the steps already ran; the writer reads their outputs.)
_ReactEvidence = WriteEvidence.delete("evidence").insert(1, "plan", dspy.InputField(desc="Planner 的计划"), type_=Plan)


def citable(invocations: list[ToolInvocation]) -> list[dict[str, list[Any]]]:
    """One evidence-binding choice per tool: its name with the ids of its successful calls in this session.

    A model decoding under a grammar (see llm.constraints) can then only cite calls this session recorded, under
    the tool that answered them; the Gatekeeper still checks every citation, of this and of any other Executor.
    """
    ids_by_tool: dict[str, list[int]] = {}
    for inv in invocations:
        if inv.is_evidence and inv.success:
            ids_by_tool.setdefault(inv.tool_name, []).append(inv.id)
    return [{"tool_name": [tool], "source_invocation_ids[]": ids} for tool, ids in sorted(ids_by_tool.items())]


def _dump_output(value: Any) -> str:
    if hasattr(value, "model_dump_json"):
        return value.model_dump_json(exclude_none=False)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
