"""Relations between names: a Kubernetes object and the objects it generated.

Controllers name what they create after themselves plus a generated suffix: a Deployment `web` makes the ReplicaSet
`web-7d4b9c6f8` (the pod-template hash), which makes the pod `web-7d4b9c6f8-x2k5p`; a Job `backup` makes the pod
`backup-q7wzt`; a StatefulSet `db` makes `db-0`; a CronJob `report` makes the Job `report-28312345`. The suffix
alphabet is fixed (Kubernetes' `rand.SafeEncodeString`: consonants and the digits 2, 4-9, never a vowel), so a
generated suffix can be told from a word: `web-canary` is no pod of `web`.
"""

from __future__ import annotations

import re

_GENERATED_SEGMENT = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5,10}|\d{1,12}")
"""One segment a controller appends: a random or hash suffix (5 characters for pods, up to 10 for a pod-template
hash) or an ordinal / schedule number."""

MAX_GENERATED_SEGMENTS = 2
"""Deployment → ReplicaSet → pod adds two segments; more would be a different object."""


def generated_from(name: str, owner: str) -> bool:
    """Whether ``name`` is what the object ``owner`` generated (directly or through one more controller):
    ``web-7d4b9c6f8-x2k5p`` from ``web-7d4b9c6f8`` or ``web``. Case-insensitive; ``web-canary`` is not from ``web``.
    """
    name, owner = name.casefold(), owner.casefold()
    if not owner or not name.startswith(owner + "-"):
        return False
    segments = name[len(owner) + 1:].split("-")
    return len(segments) <= MAX_GENERATED_SEGMENTS and all(_GENERATED_SEGMENT.fullmatch(s) for s in segments)


def same_object_family(left: str, right: str) -> bool:
    """Whether one name is an object the other generated: a claim naming the owner of what a line names (the Job of
    a pod) or the reverse speaks of the same workload."""
    return generated_from(left, right) or generated_from(right, left)
