"""evigate: incident answers from an LLM pipeline that cannot put an unproven sentence in front of a user.

The heavy parts (DSPy, the local model) load lazily, so `import evigate.rules` stays free of them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# Nothing is fetched at run time: litellm's model cost map and DSPy's model metadata (which reads the same switch)
# come from the installed packages instead of a download on first use. Set before anything imports either of them;
# an explicit value in the environment still wins.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# MLflow (eval, optimize, ui) would otherwise post usage telemetry from a user's machine (it skips it only in CI).
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

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
