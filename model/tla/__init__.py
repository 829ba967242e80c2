"""The TLA+ backend of the spec's expression language, and the module generator.

``layout`` (indentation-safe text blocks), ``types`` (type inference over ``Expr`` trees, needed because
TLA+ spells set, sequence and map operations differently), ``values`` (Python values as TLA+ text),
``emit`` (``Expr`` → TLA+), ``prelude`` (the helper operators every module defines), ``config`` (the
finite model: brokers, topics, partitions, bounds), ``module`` (``generate(profile, config)``),
``syntax`` (a real TLA+ parser as a syntax check) and ``counterexample`` (TLC traces back to kcspec
traces).
"""
