"""Hypothesis stateful testing of the reference controller against the spec, and long fuzz campaigns."""
