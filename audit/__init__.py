"""``kcspec audit``: recorded controller history (Kafka logs, canonical JSONL traces) replayed against the spec.

Modules: ``traces`` (canonical JSONL trace lines → facts), ``jvm_parser`` (the JVM line parser over the §10 line
grammar of ``kcspec.model.kafka_log``), ``session`` (the shared quiet SparkSession of ``kcspec.model.spark`` with
that parser's jar), ``spark_job`` (reading, numbering, parsing and quarantining on Spark),
``replay`` (the per-partition / per-replica rules), ``report`` (Parquet/JSON/HTML outputs, coverage).
"""
