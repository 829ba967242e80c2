"""Inputs read by what their bytes say, not their names: gzip, bzip2, xz, an lz4 frame (the ``lz4`` tool's
format, which Hadoop's lz4 codec misread as a block length and ran out of memory on) and zstd are decoded
whatever the file is called; UTF-16 logs (with and without a byte-order mark) are read; a file a decoder cannot
read on (a truncated lz4 frame) is that file's problem, named, while every other file is audited."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from click.testing import CliRunner

from kcspec.commands.audit import command as audit_command

pytestmark = [pytest.mark.spark, pytest.mark.integration]

LOG = "".join(
    f"[2021-06-01 10:00:0{i},000] TRACE [Controller id=1 epoch=3] Changed state of replica 1 for partition "
    f"orders-0 from {frm} to {to} (state.change.logger)\n"
    for i, (frm, to) in enumerate(
        [
            ("NonExistentReplica", "NewReplica"),
            ("NewReplica", "OnlineReplica"),
            ("OnlineReplica", "OfflineReplica"),
        ]
    )
).encode()


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 (the LZ4 frame format's header checksum), for inputs shorter than 16 bytes."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    assert len(data) < 16
    h = (seed + p5 + len(data)) & mask
    i = 0
    while i + 4 <= len(data):
        h = (rotl((h + struct.unpack_from("<I", data, i)[0] * p3) & mask, 17) * p4) & mask
        i += 4
    while i < len(data):
        h = (rotl((h + data[i] * p5) & mask, 11) * p1) & mask
        i += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    return h ^ (h >> 16)


def lz4_frame(data: bytes) -> bytes:
    """``data`` as an LZ4 frame (the format of the ``lz4`` command-line tool), in one stored block."""
    descriptor = bytes([0x60, 0x40])  # version 1, independent blocks; 64 KB maximum block size
    header = b"\x04\x22\x4d\x18" + descriptor + bytes([(_xxh32(descriptor) >> 8) & 0xFF])
    block = struct.pack("<I", len(data) | 0x80000000) + data  # high bit: stored uncompressed
    return header + block + b"\x00\x00\x00\x00"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-compressed")


def test_inputs_are_decoded_by_their_bytes_and_a_broken_one_is_its_own_problem(
    spark: Any, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    made = {
        "gzip-named-plain.log": gzip.compress(LOG),
        "bzip2.log.bz2": bz2.compress(LOG),
        "xz-named-gz.log.gz": lzma.compress(LOG),
        "frame.log.lz4": lz4_frame(LOG),
        "plain-named-gz.log.gz": LOG,
        "utf16-bom.log": b"\xff\xfe" + LOG.decode().encode("utf-16-le"),
        "utf16-no-bom.log": LOG.decode().encode("utf-16-le"),
    }
    if shutil.which("lz4"):  # the tool's own output, as in the report of the out-of-memory error
        made["tool.log.lz4"] = subprocess.run(
            ["lz4", "-c"], input=LOG, capture_output=True, check=True
        ).stdout
    if shutil.which("zstd"):
        made["zstd.log.zst"] = subprocess.run(
            ["zstd", "-c"], input=LOG, capture_output=True, check=True
        ).stdout
    broken = lz4_frame(LOG)[:-60]  # cut inside its block
    for name, data in {**made, "broken.log.lz4": broken}.items():
        (logs / name).write_bytes(data)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        audit_command, [str(logs), "--history", "file", "--out", str(out)], catch_exceptions=False
    )
    stats = json.loads((out / "stats.json").read_text())
    per_file = {Path(f["file"]).name: f for f in stats["per_file"]}
    for name in made:
        assert (per_file[name]["record"], per_file[name]["quarantined"]) == (3, 0), (name, per_file[name])
    assert per_file["broken.log.lz4"]["unreadable"], per_file["broken.log.lz4"]
    verdict = json.loads((out / "verdict.json").read_text())
    assert result.exit_code == 2 and verdict["violations"] == 0, result.output[-2000:]
    assert [p for p in verdict["problems"] if "broken.log.lz4" in p], verdict
    assert not [p for p in verdict["problems"] if "broken.log.lz4" not in p], verdict
