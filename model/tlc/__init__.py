"""Running TLC, the TLA+ model checker, as a subprocess and reading what it says.

Layers, each a module with one job: ``args`` (what to run), ``locate`` (where Java and
``tla2tools.jar`` are), ``command`` (the exact argv), ``output`` (TLC's ``-tool`` and plain output
parsed into typed messages and a summary), ``values`` (TLA+ values as TLC prints them and as
``-dumpTrace json`` writes them), ``trace`` (error traces), ``run`` (a hermetic run with a timeout).
"""
