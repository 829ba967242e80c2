"""Explicit-state exploration of the reference controller with refinement against the spec (issue: formal checking)."""
