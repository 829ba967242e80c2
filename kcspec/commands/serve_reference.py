"""``kcspec serve-reference``: serve the reference controller over conformance protocol v1 on stdin/stdout."""

from __future__ import annotations

import sys

import click


@click.command(name="serve-reference")
@click.option(
    "--engine",
    type=click.Choice(["reference", "spec"]),
    default="reference",
    show_default=True,
    help="Serve the reference controller, or the declarative spec evaluated directly.",
)
def command(engine: str) -> None:
    """Serve the reference controller as a conformance SUT (JSON lines on stdin/stdout).

    The suite uses it to test itself through the real subprocess path.

    \b
    Example:
      kcspec conformance run --sut "kcspec serve-reference"
      kcspec conformance run --sut "kcspec serve-reference --engine spec" --level elections
    """
    from kcspec.conformance.adapters.serve import serve
    from kcspec.conformance.reference_sut import ReferenceSut, SpecSut

    sut = ReferenceSut() if engine == "reference" else SpecSut()
    sys.exit(serve(sut))
