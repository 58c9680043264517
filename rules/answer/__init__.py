"""The answer side: composer input (§19.2.1), the composer output guard, the claim-echo check and the renderer of
fixed templates (§19.4)."""
