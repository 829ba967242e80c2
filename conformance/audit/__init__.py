"""``kcspec audit``: recorded controller history (Kafka logs, canonical JSONL traces) replayed against the spec.

Modules: ``lines`` (the §10 line grammar as data), ``reference_parser`` (a pure-Python parser over that
grammar, the oracle of the tests), ``traces`` (canonical JSONL trace lines → facts), ``session``
(a quiet SparkSession), ``spark_job`` (reading, numbering, parsing and quarantining on Spark),
``replay`` (the per-partition / per-replica rules), ``report`` (Parquet/JSON/HTML outputs, coverage).
"""
