"""The DSPy layer: one module per agent, the trace-summary builder and the program that runs the rounds."""

from evigate.modules.composer import Composer
from evigate.modules.executor import Executor
from evigate.modules.planner import Planner
from evigate.modules.program import DiagnosisProgram, load_program
from evigate.modules.trace_summary import build_tool_trace_summary
from evigate.modules.verifier import Verifier

__all__ = [
    "Composer",
    "DiagnosisProgram",
    "Executor",
    "Planner",
    "Verifier",
    "build_tool_trace_summary",
    "load_program",
]
