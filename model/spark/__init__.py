"""Spark for every product that runs on it: a quiet ``SparkSession`` (``session``) and the ``--master`` URL check
(``master``). The audit (``kcspec.audit``) adds its JVM line parser to the session; the maintainers' checks
(the explorer and the swarm of ``conformance/selfcheck/``) use it as it is.
"""
