"""Reports of a conformance run: terminal summary, JSON, JUnit XML and HTML."""
