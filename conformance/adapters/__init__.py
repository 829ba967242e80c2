"""Adapters that carry protocol messages to a system under test: a subprocess and an in-process one."""
