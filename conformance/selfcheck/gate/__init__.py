"""``kcspec verify``'s gate without its command line: the checks, their cases and verdicts, and the reports.

Every check of the gate is a check of kcspec itself (the reference controller against the spec, the proofs,
the generated TLA+ and diagrams), so the gate lives with those checks. It imports no CLI module
(``kcspec.commands``, ``kcspec.cli``, click): ``kcspec verify`` (``kcspec/commands/verify.py``) only draws the
progress and the table, and a CI system or a test can run ``CHECKS`` directly. A test enforces the direction.
"""
