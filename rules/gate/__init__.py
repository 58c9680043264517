"""The gate machinery: executor-output parsing, the rule interface, rule config loading, the per-session evidence
index and the Gatekeeper that runs the rules of ``evigate.rules.builtin`` (one rule per file)."""
