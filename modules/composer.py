"""Composer: turns only the material the Verifier allowed into a user-readable answer (§19).

It receives the code-assembled ComposerInput and nothing else. Its output is checked by
``evigate.rules.check_composer_output`` before anyone sees it; code wraps it in the fixed templates.
"""

from __future__ import annotations

import dspy

from evigate.signatures import ComposerInput
from evigate.signatures.agents import ComposeAnswer


class Composer(dspy.Module):
    """``composer(composer_input=ComposerInput) -> Prediction(composer_output=ComposerOutput)``."""

    def __init__(self) -> None:
        super().__init__()
        self.compose = dspy.Predict(ComposeAnswer)

    def forward(self, composer_input: ComposerInput) -> dspy.Prediction:
        return dspy.Prediction(composer_output=self.compose(composer_input=composer_input).composer_output)
