"""The Z3 backend of the spec's expression language and the proofs built on it (``kcspec prove``).

Decision: Z3 never takes the process's Ctrl-C. By default every ``check()`` replaces the SIGINT handler with
its own for the length of the query and turns Ctrl-C into an ``unknown`` answer ("interrupted from keyboard"):
the run's own handling never hears of it, and a proof suite could go on as if nothing had happened. Here
``ctrl_c`` is off for every solver of the process, so Ctrl-C reaches whoever handles it (``model/interrupts``),
which stops a query in progress with ``interrupt`` (registered as a stopper)."""

import z3

z3.set_param("ctrl_c", False)


def interrupt() -> None:
    """Stop the query running in Z3's main context (from another thread: an interrupt's stopper)."""
    z3.main_ctx().interrupt()
