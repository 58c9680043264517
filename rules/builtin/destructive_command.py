"""action.destructive_command — never suggest a destructive command unless it is a marked knowledge-base quote."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from evigate.rules.gate.actions import cited_knowledge, iter_user_texts
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.text.directives import find_directives
from evigate.rules.text.instructions import matches
from evigate.rules.text.normalize import compact, fold


class DestructiveCommandParams(RuleParams):
    """Values come from rules/metadata/action.destructive_command.yaml, the one source of every default."""

    fields: list[str] = Field(min_length=1)
    commands: list[str] = Field(min_length=1)
    quote_markers: list[str]
    knowledge_tools: list[str]


class DestructiveCommand(Rule):
    """An action or a gap never suggests deleting, dropping, wiping, scaling to zero or restarting everything.

    Each text of the `fields` is searched (case-folded) for the `commands` patterns: `kubectl delete`, `drop`,
    `rm -rf`, `scale … to 0`, `restart all`, `删除`, `清空`, `重启所有`, `缩容到 0` …. One is allowed only when it is
    quoted from a knowledge document and marked as such: the action binds evidence to a successful invocation of a
    `knowledgeTools` tool whose output holds the matched command, and its text carries one of `quoteMarkers`
    (知识库, 运维手册, runbook …). A gap has no bindings, so it is never allowed to carry one. The item is dropped
    from what the user sees; the claims decide the verdict (`warn_only`).
    Beside the `commands`, the structural shell shapes of :mod:`evigate.rules.text.directives` (pipe to a shell,
    `curl … | sh`, `sudo`, `chmod`/`chown`, `rm -rf`, `dd`, `mkfs`, a redirect into /etc) always count, and no quote
    allows them: a runbook is data anyone with wiki access can edit, not authority over a machine.
    """

    id = "action.destructive_command"
    Params = DestructiveCommandParams

    def validate(self, context: RuleContext, params: DestructiveCommandParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for target, text, item in iter_user_texts(context.data, params.fields):
            shapes = [found.text for found in find_directives(text) if found.kind in ("shell", "remote_code")]
            commands = matches(text, params.commands)
            if not commands and not shapes:
                continue
            if not shapes and self._quoted(context, item, text, commands, params):
                continue
            commands = shapes or commands
            findings.append(RuleFinding(
                target, f"suggests a destructive command ('{commands[0]}') that no marked knowledge-base quote backs"
            ))
        return findings

    @staticmethod
    def _quoted(context: RuleContext, item: Mapping[str, Any] | None, text: str, commands: list[str],
                params: DestructiveCommandParams) -> bool:
        if not matches(text, [_literal(marker) for marker in params.quote_markers]):
            return False
        views = cited_knowledge(context.session, item, params.knowledge_tools)
        sources = [compact(fold(view.raw_preview + "\n" + view.raw_details)) for view in views]
        return bool(sources) and all(any(compact(command) in source for source in sources) for command in commands)


def _literal(marker: str) -> str:
    return re.escape(fold(marker))
