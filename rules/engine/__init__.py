"""The Gatekeeper assembled: the rule index and metadata loaded (``config``), the rules of
``evigate.rules.builtin`` run over a session (``gatekeeper``), and the generated rule reference (``docs``).

Kept above ``evigate.rules.gate`` (the rule interface and the per-session evidence index every rule imports), so
that the rules and the machinery they use never import the Gatekeeper that runs them.
"""
