"""Text that instructs its reader, found by its structure (zh + en): the one detector the action and claim rules use.

No list of whole phrasings: a sentence instructs when its *shape* does —

- ``remote_code``: a URL fetched and run (``curl … | sudo sh``, ``bash <(wget …)``, a download then ``sh``, a link
  to a script): never a step, whoever wrote it;
- ``shell``: a command that changes a machine beyond the incident (``sudo``, ``chmod``/``chown``, ``rm -rf``,
  ``dd``, ``mkfs``, a redirect into ``/etc``), whatever verb stands before it;
- ``directive``: a modal aimed at the reader (you / operators / they / 运维 … must, need to, should, 必须, 需要, 务必
  + a verb), a modal + an action verb + a command-like object ("must run `x.sh`"), a passive order ("must be
  restarted"), "please"/"now" + an action verb, or a sentence that opens with an action verb and its object
  ("Run the script", "Delete this namespace"); 请/务必/立即 … + 执行/运行/删除 … in Chinese.

The verb lexicon only says which words are actions; the structure around the verb decides. A sentence that only
*describes* a command in the past ("the job ran `kubectl rollout restart`") holds no directive; it holds a ``shell``
finding only when the command itself is one of the dangerous shapes above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from evigate.rules.text.normalize import INVISIBLE, fold

DirectiveKind = Literal["remote_code", "shell", "directive"]


@dataclass(frozen=True, slots=True)
class Directive:
    """One place where a text instructs its reader: the kind of instruction and the matched text."""

    kind: DirectiveKind
    text: str


_SHELLS = r"(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|php|iex|powershell|pwsh"
_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|httpie|http)"
_REMOTE = (
    rf"(?<![a-z0-9_-]){_FETCH}\b[^\n|;&]{{0,400}}?\|\s*(?:{_SHELLS})\b",  # curl … | sudo sh
    rf"(?:{_SHELLS})\s+(?:-c\s+)?[\"']?[$<]\(\s*{_FETCH}\b",  # bash <(curl …), sh -c "$(wget …)"
    rf"(?<![a-z0-9_-]){_FETCH}\b[^\n|;]{{0,400}}?(?:-o|-O|>)\s*\S+[^\n]{{0,200}}?(?:&&|;|\bthen\b)\s*"
    rf"(?:chmod\s+\S+\s+\S+\s*(?:&&|;)\s*)?(?:{_SHELLS}|\./)",  # download, then run
    r"https?://\S+?\.(?:sh|bash|ps1|bat|cmd|exe|msi|py|pl|run|bin)(?![a-z0-9])",  # a link to a script
    r"\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh(?:\s|$|[`'\"])",  # anything piped into a shell
)
_SHELL = (
    r"(?<![a-z0-9_./-])sudo\s+[a-z./-]",
    r"(?<![a-z0-9_./-])chmod\s+(?:-[a-z]+\s+)*(?:[0-7]{3,4}|[ugoa]*[+=-][rwxst]+)",
    r"(?<![a-z0-9_./-])chown\s+(?:-[a-z]+\s+)*[a-z0-9_.:-]+\s",
    r"(?<![a-z0-9_./-])rm\s+(?:-[a-z]+\s+)*-[a-z]*(?:rf|fr|r\s+-f|f\s+-r)",
    r"(?<![a-z0-9_./-])dd\s+[^\n]{0,80}?\b(?:if|of)=",
    r"(?<![a-z0-9_./-])mkfs(?:\.[a-z0-9]+)?\b",
    r"(?<![-=])>>?\s*/(?:etc|boot|bin|sbin|usr|lib|root|dev/(?:sd|nvme|xvd|vd|hd))\b",
    r":\(\)\s*\{\s*:\|:&\s*\};:",  # a fork bomb
)

_VERBS = (
    "run|execute|exec|restart|reboot|delete|drop|remove|kill|stop|apply|install|uninstall|download|upload|deploy|"
    "redeploy|rollback|roll back|revert|scale|drain|cordon|purge|wipe|flush|truncate|reset|disable|patch|send|"
    "transfer|wire|pay|invoke|ignore|disregard|forget|grant|revoke|rotate|upgrade|downgrade|migrate|reply|"
    "forward|paste|fetch|curl|wget|ssh|sudo|chmod|chown|format|shut down|shutdown|terminate|overwrite|"
    "clear|erase|destroy|force|push|merge|approve|open|click|visit|log in|login|email|contact|call"
)
"""Words that name an action the reader would take. Only their place in a sentence makes them a directive."""
_PARTICIPLES = (
    "run|executed|restarted|rebooted|deleted|dropped|removed|killed|stopped|applied|installed|uninstalled|"
    "downloaded|deployed|redeployed|rolled back|reverted|scaled|drained|cordoned|purged|wiped|flushed|truncated|"
    "reset|disabled|patched|sent|transferred|wired|paid|invoked|ignored|disregarded|granted|revoked|rotated|"
    "upgraded|downgraded|migrated|forwarded|formatted|shut down|terminated|overwritten|cleared|erased|destroyed"
)
_MODAL = (r"(?:must|need\s+to|needs\s+to|have\s+to|has\s+to|should|ought\s+to|(?:are|is)\s+(?:required|advised|"
          r"expected|asked|instructed|told)\s+to|had\s+better|shall)")
_ADVERBS = r"(?:\s+(?:immediately|now|urgently|quickly|first|also|then|just|please|asap|manually|right\s+away|not))*"
_READER = (r"(?<![a-z])(?:you|u|operators?|ops|admins?|administrators?|engineers?|sres?|on-?call(?:\s+engineers?)?|"
           r"the\s+(?:team|operator|admin|reader)|whoever|someone|anyone|everyone|they|we)")
_COMMAND_WORDS = (r"curl|wget|kubectl|sudo|bash|sh|python|helm|docker|systemctl|service|psql|mysql|redis-cli|rm|"
                  r"chmod|chown|dd|mkfs|git|ssh|scp|iptables|crontab|nc|powershell")
_COMMAND_OBJECT = (rf"[^.\n。]{{0,60}}?(?:`|\$\s|--?[a-z]|\S+/\S*|\S+\.(?:sh|py|ps1|bat|exe)\b|"
                   rf"(?<![a-z])(?:{_COMMAND_WORDS})(?![a-z])|the\s+following|this\s+(?:command|script)|以下)")
_OPENING = r"^[\s\"'“‘(（\[*_>-]*(?:(?:now|first|then|next|so|and|also)\s*,?\s+)?(?:please\s+)?"
_OBJECT = (rf"(?:the|this|that|these|those|all|every|it|them|`|[a-z0-9_-]+[/._-]\S*|(?:{_COMMAND_WORDS})(?![a-z])|"
           r"[a-z0-9_-]+\s+(?:on|in|from|to|at)\s)")
_DIRECTIVE = (
    rf"{_READER}{_ADVERBS}\s+{_MODAL}{_ADVERBS}\s+(?!have\b|had\b|been\b|be\s+able\b)[a-z]+",
    rf"(?<![a-z]){_MODAL}{_ADVERBS}\s+(?:{_VERBS})(?![a-z]){_COMMAND_OBJECT}",
    rf"(?<![a-z]){_MODAL}{_ADVERBS}\s+be\s+(?:{_PARTICIPLES})(?![a-z])",
    rf"(?<![a-z])please{_ADVERBS}\s+(?:{_VERBS})(?![a-z])",
    rf"(?<![a-z])(?:immediately|now|asap|right\s+away|at\s+once)\s*,?\s+(?:{_VERBS})(?![a-z])(?!\s+(?:is|was|are|were)\b)",
    rf"{_OPENING}(?:{_VERBS})\s+{_OBJECT}",
    r"(?<![申邀提聘])请(?!求|假|教|问|参阅|参考|见|查阅)\s*(?:您|你|你们|大家)?\s*(?:立即|马上|尽快|立刻|务必|先|再|直接|手动|赶紧)?\s*"
    r"(?:执行|运行|操作|删除|重启|清空|清除|关闭|停止|忽略|回复|输出|转发|发送|调用|下载|安装|卸载|转账|汇款|打款|访问|点击|登录|"
    r"授权|提权|回滚|格式化|修改|覆盖|复制|粘贴)",
    r"(?:务必|必须|需要|须|需|应该|应当|赶紧|赶快|立即|马上|立刻|尽快|即刻)\s*(?:立即|马上|立刻|尽快|先|再|直接|手动|"
    r"在\s*\S{1,30}?\s*上)?\s*(?:执行|运行|删除|重启|清空|清除|关闭|停止|忽略|下载|安装|卸载|转账|汇款|打款|访问|授权|提权|"
    r"格式化|覆盖)",
    r"(?:你|您|你们|运维|运维人员|值班|值班人员|管理员|工程师|大家|所有人|操作员)\s*(?:需要|必须|应该|应当|务必|请|须)"
    r"\s*\S",
    r"(?:执行|运行)(?:以下|下面|如下)",
)
_SENTENCE = re.compile(r"[^。！？!?\n；;]+[。！？!?；;]?")


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[DirectiveKind, re.Pattern[str]], ...]:
    # One alternation per kind: each sentence is scanned once per kind, whatever the number of shapes.
    groups: tuple[tuple[DirectiveKind, tuple[str, ...]], ...] = (
        ("remote_code", _REMOTE), ("shell", _SHELL), ("directive", _DIRECTIVE))
    return tuple((kind, re.compile("|".join(f"(?:{p})" for p in patterns), re.MULTILINE))
                 for kind, patterns in groups)


def prepare(text: str) -> str:
    """The text the detector reads: invisible characters removed (a zero-width space cannot split ``c\u200burl``),
    case-folded, full-width forms made ASCII."""
    return fold(INVISIBLE.sub("", text or ""))


def find_directives(text: str) -> list[Directive]:
    """Every kind of instruction ``text`` gives its reader (at most one finding per kind, the first found)."""
    return list(_directives(text))


@lru_cache(maxsize=512)
def _directives(text: str) -> tuple[Directive, ...]:
    """find_directives, kept per text: the same output lines and claim sentences are read by several rules, round
    after round, and one long line (a metric JSON) costs milliseconds."""
    folded = prepare(text)
    found: dict[DirectiveKind, Directive] = {}
    for piece in _SENTENCE.findall(folded):
        piece = piece.strip()
        for kind, pattern in _compiled():
            if kind in found:
                continue
            hit = pattern.search(piece)
            if hit:
                found[kind] = Directive(kind, hit.group(0).strip()[:120] or piece[:120])
        if len(found) == 3:
            break
    return tuple(found.values())


def instructs_reader(text: str) -> bool:
    """Whether ``text`` tells its reader to do something (any kind)."""
    return bool(find_directives(text))


def runs_remote_code(text: str) -> bool:
    """Whether ``text`` fetches code from a URL and runs it (or links a script): never a step, from any source."""
    return any(found.kind == "remote_code" for found in find_directives(text))
