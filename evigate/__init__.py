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
    from evigate.verification import VerifyResult, verify, verify_metric

__version__ = "0.1.0"
__all__ = [
    "DiagnosisProgram", "EvigateError", "VerifyResult", "__version__", "load_program", "verify", "verify_metric",
]
# The facade lives in evigate.verification, not evigate.verify: importing a submodule named like the function
# would bind the module over `evigate.verify`.
_VERIFICATION_NAMES = ("VerifyResult", "verify", "verify_metric")


def __getattr__(name: str) -> Any:
    if name in ("DiagnosisProgram", "load_program"):
        from evigate.modules import program

        return getattr(program, name)
    if name in _VERIFICATION_NAMES:
        from evigate import verification

        return getattr(verification, name)
    raise AttributeError(f"module 'evigate' has no attribute {name!r}")
