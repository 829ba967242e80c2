"""Kafka's controller log lines: their grammar as data (``lines``, semantics §10) and a pure-Python parser over it
(``reference_parser``). The audit reads recorded logs with it (and tests its JVM parser against the Python one);
the explorer and the swarm read the reference controller's log lines with it for transition coverage.
"""
