"""A ``--master`` URL checked before Spark starts, so that a bad one fails at once with one line.

Spark itself takes a minute or more to give up on a master it cannot reach, and then reports it with a
Java stack trace. ``check_master`` accepts the forms Spark accepts (``local``, ``local[N]``, ``local[*]``,
``local[N,F]``, ``local-cluster[N,C,M]``, ``spark://host:port[,host:port…]``, ``k8s://…``, ``yarn``) and,
for a cluster manager reached over the network, tries a TCP connection to every address it names (a few
seconds at most). ``None`` means "go ahead"; otherwise the reason, in one line.
"""

from __future__ import annotations

import os
import re
import socket
from urllib.parse import urlparse

LOCAL = re.compile(r"local(\[(\*|[1-9]\d*)(,([1-9]\d*))?\])?")
LOCAL_CLUSTER = re.compile(r"local-cluster\[[1-9]\d*,\s*[1-9]\d*,\s*[1-9]\d*\]")
CONNECT_SECONDS = 5.0
SPARK_PORT = 7077


def check_master(master: str, timeout: float = CONNECT_SECONDS) -> str | None:
    """``None`` when ``master`` is a well-formed master URL whose addresses answer, else why not (one line)."""
    if LOCAL.fullmatch(master) or LOCAL_CLUSTER.fullmatch(master):
        return None
    if master.startswith("local"):
        return f"--master {master!r}: expected local, local[N], local[*] or local[N,F] (N, F positive)"
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            return "--master yarn: set HADOOP_CONF_DIR or YARN_CONF_DIR to the cluster's configuration"
        return None
    if master.startswith("spark://"):
        hosts = master.removeprefix("spark://").split(",")
        addresses: list[tuple[str, int]] = []
        for h in hosts:
            parsed = urlparse(f"spark://{h}")
            try:
                port = parsed.port
            except ValueError:
                return f"--master {master!r}: {h!r} has no valid port"
            if not parsed.hostname:
                return f"--master {master!r}: {h!r} names no host"
            addresses.append((parsed.hostname, port or SPARK_PORT))
        return _reachable(master, addresses, timeout)
    if master.startswith("k8s://"):
        api = master.removeprefix("k8s://")
        parsed = urlparse(api if "://" in api else f"https://{api}")
        try:
            port = parsed.port
        except ValueError:
            return f"--master {master!r}: the API server's port is not a number"
        if not parsed.hostname:
            return f"--master {master!r}: names no API server"
        return _reachable(
            master, [(parsed.hostname, port or (443 if parsed.scheme == "https" else 80))], timeout
        )
    return (
        f"--master {master!r}: not a Spark master URL "
        "(local[*], local[N], spark://host:port, k8s://https://host:port or yarn)"
    )


def _reachable(master: str, addresses: list[tuple[str, int]], timeout: float) -> str | None:
    """``None`` when some address accepts a TCP connection within ``timeout`` seconds (any master of a
    high-availability list will do), else the first failure."""
    failures: list[str] = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return None
        except OSError as exc:
            failures.append(f"{host}:{port}: {exc.strerror or exc}")
    return f"--master {master!r}: cannot connect ({'; '.join(failures)})"
