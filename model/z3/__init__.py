"""The Z3 backend of the spec's expression language and the proofs built on it (``kcspec prove``)."""
