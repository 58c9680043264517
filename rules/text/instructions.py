"""Text that tells someone to do something: imperatives, prompt-injection markers and destructive commands (zh + en).

Pure pattern helpers for the action/gap rules. The word lists are defaults of those rules' parameters; the YAML
metadata may replace them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from evigate.rules.text.normalize import compact, fold

IMPERATIVES: tuple[str, ...] = (
    r"请(?:立即|马上|尽快|立刻|务必)?(?:执行|运行|操作|删除|重启|清空|关闭|停止|忽略|回复|输出|转发|发送|调用)",
    r"(?:立即|马上|立刻|务必|必须)(?:执行|运行|删除|重启|清空|关闭|停止|处理)", r"执行以下", r"运行以下",
    r"(?<![a-z])(?:please\s+)?(?:immediately|now)\s+(?:run|execute|delete|restart|drop)",
    r"(?<![a-z])(?:you|operators?)\s+(?:must|should)\s+(?:run|execute|delete|restart|drop|ignore)",
    r"^\s*(?:please\s+)?(?:run|execute|delete|drop|restart|ignore|disregard)\s", r"(?<![a-z])please\s+(?:run|execute)",
)
"""Patterns that make a sentence an instruction to act (matched on case-folded text)."""

INJECTION_MARKERS: tuple[str, ...] = (
    r"忽略(?:之前|以上|上述|先前|前面)(?:的)?(?:所有|全部)?(?:指令|指示|规则|要求|提示)", r"无视(?:之前|以上|上述)",
    r"不要(?:告诉|通知|让)用户", r"你现在是", r"系统提示词", r"system\s+prompt",
    r"(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+"
    r"(?:instructions?|rules?|prompts?)",
    r"you\s+are\s+now\s+", r"do\s+not\s+tell\s+the\s+user", r"new\s+instructions?\s*:",
)
"""Phrases with which planted text addresses the model rather than the reader: never legitimate in an answer."""

DESTRUCTIVE_COMMANDS: tuple[str, ...] = (
    r"(?<![a-z])kubectl\s+(?:delete|drain|cordon)", r"(?<![a-z])(?:delete|drop|truncate|purge|wipe|destroy)(?![a-z])",
    r"(?<![a-z])rm\s+-[a-z]*(?:rf|fr)", r"(?<![a-z])scale\b[^。\n]{0,40}?(?:to\s+0|--replicas[= ]0)(?![0-9])",
    r"replicas\s*[=:]\s*0(?![0-9])", r"restart\s+(?:all|every)", r"(?<![a-z])(?:reboot|shutdown|poweroff)(?![a-z])",
    r"kill\s+-9", r"(?<![a-z])(?:flushall|flushdb)(?![a-z])", r"(?<![a-z])mkfs", r"dd\s+if=",
    r"删除", r"删掉", r"清空", r"清除(?:全部|所有)", r"销毁", r"格式化", r"(?:重启|停止|下线)(?:所有|全部)",
    r"(?:全部|所有)[^，。]{0,10}?(?:重启|停止|下线)", r"缩容?(?:到|至)\s*0(?![0-9])",
    r"副本数?(?:设为|改为|调为)\s*0(?![0-9])",
)
"""Commands that destroy data or take capacity away (case-folded regexes)."""

QUOTE_MARKERS: tuple[str, ...] = (
    "知识库", "运维手册", "手册", "runbook", "引自", "摘自", "根据文档", "文档建议", "according to the runbook",
    "per the runbook", "the runbook says", "knowledge base",
)
"""Words by which an action says it quotes a knowledge document rather than proposing the step itself."""

_SENTENCES = re.compile(r"[^。！？!?\n；;]+[。！？!?；;]?")


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:  # a broken user pattern matches literally rather than failing the rule
            compiled.append(re.compile(re.escape(pattern)))
    return tuple(compiled)


def matches(text: str, patterns: Sequence[str]) -> list[str]:
    """The matched texts of ``patterns`` in the case-folded ``text`` (one per pattern that matches)."""
    folded = fold(text)
    found = []
    for pattern in _compiled(tuple(patterns)):
        hit = pattern.search(folded)
        if hit:
            found.append(hit.group(0).strip())
    return found


def addresses_model(text: str, markers: Sequence[str] = INJECTION_MARKERS) -> bool:
    """Whether a text speaks to the model ("忽略之前的所有指令", "ignore previous instructions"): never for a user."""
    return bool(text) and bool(matches(text, markers))


def sentences_of(text: str) -> list[str]:
    """The sentences of a field's text, stripped (clauses such as "运维通告：…" stay with their sentence)."""
    return [piece.strip() for piece in _SENTENCES.findall(text or "") if piece.strip()]


_CLAUSES = re.compile(r"[，,：:、]")


def copied_from(sentence: str, outputs: Iterable[str], min_chars: int) -> bool:
    """Whether the sentence, or one clause of it at least ``min_chars`` long, occurs in one of the outputs
    (punctuation, spacing and case aside): copied, not written. A clause is enough — a model may put its own words
    ("缺口：") before a planted instruction."""
    pieces = [compact(fold(sentence)), *(compact(fold(clause)) for clause in _CLAUSES.split(sentence))]
    needles = {piece for piece in pieces if len(piece) >= min_chars}
    if not needles:
        return False
    haystacks = [compact(fold(output)) for output in outputs if output]
    return any(needle in haystack for needle in needles for haystack in haystacks)
