"""Helpers shared by the test tiers (paths, time scaling, process bookkeeping): no tests live here."""
