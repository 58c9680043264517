"""evigate: incident answers from an LLM pipeline that cannot put an unproven sentence in front of a user.

The heavy parts (DSPy, the local model) load lazily, so `import evigate.rules` stays free of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evigate.errors import EvigateError

if TYPE_CHECKING:
    from evigate.modules.program import DiagnosisProgram, load_program

__version__ = "0.1.0"
__all__ = ["DiagnosisProgram", "EvigateError", "__version__", "load_program"]


def __getattr__(name: str) -> Any:
    if name in ("DiagnosisProgram", "load_program"):
        from evigate.modules import program

        return getattr(program, name)
    raise AttributeError(f"module 'evigate' has no attribute {name!r}")
