"""Whether an answer states a claim: the one test the Composer's guard, the renderer and the question metrics share.

Pure code: no I/O, no DSPy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import compact, fold
from evigate.rules.verdict.confirmation import strip_attribution

ATTRIBUTED_TO = re.compile(r"^\s*([A-Za-z][\w\-]*)\s*(?:[（(][^（）()]{0,160}[）)])?\s*(?:返回|returned)\s*[：:]")
"""The tool a code-written observation names first: "query_logs 返回：…", "query_metrics (api-gateway) returned: …"."""


def states_claim(text: str, answer: str, tools: Iterable[str] = ()) -> bool:
    """Whether ``answer`` states the claim ``text``: its words, or every value it names.

    The cited tool only attributes the claim ("query_logs 返回：…"): a Composer that writes "查询日志返回：…" or the
    bare excerpt states the same fact, so neither the attribution nor the tool's name must be repeated, nor a field
    name ("error_code=" in "error_code=ERR_TIMEOUT"); each value is looked up as the guard looks it up (numbers by
    value, in any unit).
    """
    said_by = ATTRIBUTED_TO.match(text)
    tool_names = {fold(tool) for tool in (*tools, *(said_by.groups() if said_by else ())) if tool}
    said = compact(fold(answer))
    core = compact(strip_attribution(text, tool_names))
    if compact(fold(text)) in said or (core and core in said):
        return True
    values = [entity for entity in extract_entities(text) if fold(entity.text) not in tool_names
              and not re.search(rf"(?:^|\s){re.escape(entity.text)}\s*(?:=|返回|returned)", text)]
    return bool(values) and all(entity_occurs(entity, answer) for entity in values)


def unstated_claims(texts: Iterable[str], answer: str, tools: Iterable[str] = ()) -> list[str]:
    """The claims of ``texts`` that ``answer`` does not state, in order."""
    tools = tuple(tools)
    return [text for text in texts if not states_claim(text, answer, tools)]
