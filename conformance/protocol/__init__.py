"""Protocol v1 between the conformance suite and a system under test: messages, framing and schema."""
