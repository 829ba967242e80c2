"""``kcspec serve-reference``: serve the reference controller over conformance protocol v1 on stdin/stdout."""

from __future__ import annotations

import sys

import click


@click.command(name="serve-reference")
def command() -> None:
    """Serve the reference controller as a conformance SUT (JSON lines on stdin/stdout).

    The suite uses it to test itself through the real subprocess path.

    \b
    Example:
      kcspec conformance run --sut "kcspec serve-reference"
    """
    from kcspec.conformance.adapters.serve import serve
    from kcspec.conformance.reference_sut import EngineUnavailable, ReferenceSut

    try:
        sut = ReferenceSut()
    except EngineUnavailable as exc:
        click.echo(f"kcspec serve-reference: the reference controller cannot be loaded: {exc}", err=True)
        sys.exit(2)
    sys.exit(serve(sut))
