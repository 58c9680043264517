"""DuckDB persistence of evigate: the audit trail (``diagnosis_session``, ``tool_invocation``, ``agent_step``).

>>> from evigate.store import AuditStore
>>> with AuditStore(":memory:") as store:
...     session_id = store.start_session("订单 123 支付失败，ERR_TIMEOUT 是什么原因？")
...     store.merge_self_evaluation(session_id, "rule_evaluation", {"evidence_score": 65, "source": "rule"})
...     store.session(session_id)["self_evaluation"]
{'rule_evaluation': {'evidence_score': 65, 'source': 'rule'}}

The schema is versioned (``migrations/NNNN_*.sql``, recorded in ``schema_version``) and migrated on open.
Other tables of the same file (the demo world) are created through :meth:`AuditStore.cursor`.
"""

from evigate.store.audit import SESSION_STATUSES, THOUGHT_CHARS, AuditStore
from evigate.store.listing import SessionQuery
from evigate.store.preview import TRUNCATION_MARKER, make_preview, split_preview

__all__ = ["SESSION_STATUSES", "THOUGHT_CHARS", "TRUNCATION_MARKER", "AuditStore", "SessionQuery", "make_preview",
           "split_preview"]
