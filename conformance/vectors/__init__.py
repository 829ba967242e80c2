"""Conformance test vectors: their format, their generation from the spec and the reference, and traceability."""
