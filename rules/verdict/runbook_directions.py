"""A runbook's direction for an error nobody saw: not shown as a direction or a gap of this incident (issue 18).

Measured on train (0.5B default, "凌晨 4 点多 payment-service 有没有异常？", a quiet hour no incident answers): the
planner's runbook explained ERR_TIMEOUT, the calls observed only ERR_INSUFFICIENT_BALANCE lines and metric points, and
the answer offered "上游支付通道超时导致支付失败" as a possible direction and as a gap: the runbook's cause of another
day, in words nothing this session observed.

A hypothesis or gap stands when it names something the evidence calls observed beyond the runbooks' own words (a
content term or a value of their returned lines, ``observed_text``: not their headers or arguments), or when the
evidence observed an error code that one of the session's knowledge documents explains (then the runbook is about
this incident, and its explanation, "索引失效 全表扫描" for SLOW_SQL lines, is a fair direction though English logs
never say it in those words). A session without knowledge documents is left to the other item rules. Pure code.
"""

from __future__ import annotations

from evigate.rules.gate.observed import is_knowledge_tool, observed_text
from evigate.rules.gate.session import SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.junk import content_terms, terms_found

RUNBOOK_DIRECTION_WHY = ("a knowledge document's direction: the evidence observed none of the error codes this "
                         "session's documents explain, nor anything it names beyond their words")


class RunbookDirections:
    """What a session's evidence observed and its knowledge documents explain, read once per output."""

    def __init__(self, session: SessionIndex) -> None:
        views = [view for view in session.in_session if view.success]
        runbooks = [view for view in views if is_knowledge_tool(view.tool_name)]
        self.active = bool(runbooks)
        self.observed = self._runbook_text = ""
        self.explains_what_was_seen = False
        if not self.active:
            return
        self.observed = observed_text(view for view in views if view.invocation.is_evidence
                                      and not is_knowledge_tool(view.tool_name))
        self._runbook_text = "\n".join(view.raw_preview or "" for view in runbooks)
        explained = {entity.text for view in runbooks for entity in extract_entities(view.raw_preview or "")
                     if entity.kind == "error_code"}
        seen = {entity.text for entity in extract_entities(self.observed) if entity.kind == "error_code"}
        self.explains_what_was_seen = bool(explained & seen)

    def without_footing(self, text: str) -> bool:
        """Whether ``text`` (a hypothesis or a gap) is a runbook's direction with no footing in this session."""
        if not self.active or self.explains_what_was_seen:
            return False
        # What the evidence observed counts only beyond the runbook's own words: the service a runbook names, seen
        # on lines of another error, is no footing for the runbook's cause (measured on train: "pay-gateway 调用上游支
        # 付通道超时" beside pay-gateway lines of ERR_INSUFFICIENT_BALANCE).
        if any(entity.is_key_value and entity_occurs(entity, self.observed)
               and not entity_occurs(entity, self._runbook_text) for entity in extract_entities(text)):
            return False
        terms = content_terms(text)
        return bool(terms) and not terms_found(terms, self.observed) - terms_found(terms, self._runbook_text)
