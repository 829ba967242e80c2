"""The JVM reader's hand-written fast paths give what they replace, on real lines and seeded random ones.

Both audit engines run the same Java code, so their agreement says nothing of these paths; here each is put
against its reference by a harness (``tests/support/jvm/HandMatchersCheck.java``, compiled against the audit's
jar, never part of it):

- ``LineHeads`` (the default layout's head and tail, the ``[Controller id=…]`` prefix's group and whether it
  starts with each template's lead) against ``java.util.regex`` with the same regexes, as ``LineParser`` uses
  either: the real-log corpus's lines, the layout corpus's default-layout lines, and seeded mutations of them
  (characters inserted, replaced, deleted, runs inserted, lines cut) from an alphabet of brackets, digits,
  spaces, levels, line terminators, lone and paired surrogates and ``é``.
- ``Utf8Lines`` against what its contract names, ``BufferedReader(InputStreamReader(UTF_8)).readLine()``:
  seeded random byte streams of every line end, malformed and truncated UTF-8, empty lines and a last line
  without terminator, read through small buffers by a stream whose reads return a few bytes at a time (so
  that reads end inside sequences and between ``\\r`` and ``\\n``); and the real-log files.

A failure shows the seed and the first differing inputs: the input, the reference's result, the hand path's.
"""

from __future__ import annotations

import random
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from kcspec.audit import jvm_parser, local_engine

from tests.support import layout_corpus
from tests.support.paths import SHARED, SUPPORT
from tests.support.timing import scaled

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(jvm_parser._javac() is None, reason="no javac"),
]

SEED = 20250611
"""Every random choice below is drawn from ``random.Random(SEED)`` (printed by each test)."""

REAL_LOGS = SHARED / "real-logs"
HARNESS = SUPPORT / "jvm" / "HandMatchersCheck.java"
MUTATED = 4000
BUILT = 3000
STREAMS = 3000

ALPHABET = (
    *"[]() :,-.$_=\t0123456789aZ",
    *("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"),
    *("[Controller id=", " epoch=", "] ", " ("),
    *("\n", "\r", "\r\n", "\u0085", "\u2028", "\u2029"),
    *("\U0001f600", "\ud83d", "\ude00", "é"),
)
"""What the mutations put in: single characters, and pieces of the regexes' literals. ``\\ud83d`` and
``\\ude00`` are the halves of ``\\U0001f600``: apart they are lone surrogates, side by side a pair again."""


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs the harness: compiled with ``javac`` against the audit's jar and the jars it is
    compiled against (pyspark's: ``LineParser``, whose regex path is the reference, implements Spark's UDF)."""
    jar, why = jvm_parser.build()
    assert jar is not None, why
    javac, java = jvm_parser._javac(), local_engine._java()
    assert javac is not None and java is not None, "javac without java"
    classes = tmp_path_factory.mktemp("hand-matchers")
    path = f"{jar}:{jvm_parser._pyspark_jars() / '*'}"
    done = subprocess.run(
        [javac, "--release", "17", "-cp", path, "-d", str(classes), str(HARNESS)],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [java, "-cp", f"{classes}:{path}", "kcspec.audit.HandMatchersCheck"]


def _run(harness: list[str], *args: Path) -> tuple[dict[str, int], str]:
    """The harness's summary counts and all it printed."""
    done = subprocess.run([*harness, *map(str, args)], capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0, done.stdout + done.stderr
    summary = re.search(r"^SUMMARY (.*)$", done.stdout, re.MULTILINE)
    assert summary is not None, done.stdout
    print(summary.group(0))
    counts = {k: int(v) for k, v in (kv.split("=") for kv in summary.group(1).split())}
    return counts, done.stdout


def _escaped(s: str) -> str:
    """``s`` as one line of the harness's input: every UTF-16 unit other than printable ASCII (and the
    backslash) as ``\\uXXXX``, so lone surrogates and line terminators reach it as they are."""
    out = []
    for c in s:
        n = ord(c)
        if 0x20 <= n < 0x7F and c != "\\":
            out.append(c)
        elif n > 0xFFFF:
            n -= 0x10000
            out.append(f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}")
        else:
            out.append(f"\\u{n:04x}")
    return "".join(out)


def _write(path: Path, lines: Iterable[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="ascii")
    return path


def _real_logs() -> list[Path]:
    return sorted(REAL_LOGS.glob("*.log")) if REAL_LOGS.is_dir() else []


def _base_lines() -> list[str]:
    """The real logs' lines and the layout corpus's default-layout lines (with and without ``:line``, with a
    padded level), and the ``[Controller id=…]`` message of each that has one, as ``LineHeads`` sees it."""
    lines = [
        line
        for path in _real_logs()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]
    for k, layout in enumerate(("kafka-default", "kafka-default-line", "kafka-default-padded")):
        lines += layout_corpus.corpus(SEED + k, layout, "none", records=60).lines
    messages = [line[line.index("[Controller id=") :] for line in lines if "[Controller id=" in line]
    return lines + messages


def _mutated(rng: random.Random, s: str) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(s) + 1)
        piece = rng.choice(ALPHABET)
        op = rng.randrange(5)
        if op == 0:  # insert
            s = s[:at] + piece + s[at:]
        elif op == 1:  # replace one character
            s = s[:at] + piece + s[at + 1 :]
        elif op == 2:  # delete one
            s = s[:at] + s[at + 1 :]
        elif op == 3:  # a run of one piece: long ids, runs of spaces, 64 code points of surrogate pairs
            s = s[:at] + piece * rng.randint(2, 70) + s[at:]
        else:  # cut
            s = s[:at]
    return s


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _rest(rng: random.Random) -> str:
    """What follows a ``[Controller id=…]`` prefix: around the group's 64 code points, of single chars,
    surrogate pairs and lone halves, and line terminators."""
    unit = _pick(rng, "a", "a", "\U0001f600", "\ud83d", "\ude00", "é", " ")
    text = "".join(rng.choice((unit, "a")) for _ in range(rng.choice((0, 1, 9, 62, 63, 64, 65, 66, 80))))
    at = rng.randrange(len(text) + 1)
    return text[:at] + _pick(rng, "", "", "\n", "\r", "\u0085", "\u2028", "\u2029", "\x0b") + text[at:]


BRACKET_PARTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # (valid, one edit from valid) for each part of BRACKET_REST, in order
    (("[Controller id=",), ("[Controller id", "[controller id=", "Controller id=")),
    (("1", "12", "0"), ("", "x", "\u0661", "1 ")),
    (("", " epoch=7", " epoch=10"), (" epoch=", " epoch=x", "epoch=7", " epoch=7 ", " epoch=\u0661")),
    (("] ",), ("]", "]  ", "] \n", " ] ", "]\t")),
)
DEFAULT_PARTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # the same for the default layout: DEFAULT_HEAD, the message, the split at the last " (", DEFAULT_TAIL
    (("[",), ("(", "")),
    (
        ("2021-01-10 10:00:00,000", "1999-12-31 23:59:59,999"),
        (
            "2021/01/10 10:00:00,000",
            "2021-01-10T10:00:00,000",
            "2021-01-10 10:00:00.000",
            "2021-01-10 10:00:00,00",
            "2021-01-10 10:00:00,00a",
            "2021-01-10 10:00:00,00\u0661",
            "2021-01-10 10:00:00,0000",
        ),
    ),
    (("] ", "]  "), ("]", "]\t", " ] ", "]\u00a0")),
    (("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"), ("INF", "INFOO", "info", "")),
    ((" ", "  "), ("", "\t", "x")),
    (("x", "a (b) c", "x (", "[Controller id=1] x", "é", "\u2028"), ("", " ", " (")),
    ((" (",), ("(", "  (", " ( ")),
    (("kafka.Logger", "a$b_c.D1", "kafka.controller.KafkaController"), ("", "a-b", "é", "a b", "a(b")),
    (("", ":66"), (":", ":6a", "::66", ":\u0661", ":66:7")),
    ((")",), ("", "))", ") ", ")\r", ")x")),
)


def _built(rng: random.Random) -> str:
    """A line of the default layout or a ``[Controller id=…]`` message built from the regexes' parts, each
    valid but none, one or two of them one edit away (an empty message, a ``:`` without digits, a non-ASCII
    digit, a group around its 64 code points, …): the boundaries that random edits of real lines rarely
    reach."""
    parts = BRACKET_PARTS if rng.random() < 0.5 else DEFAULT_PARTS
    wrong = set(rng.sample(range(len(parts)), rng.choice((0, 1, 1, 2))))
    line = "".join(rng.choice(edited if k in wrong else valid) for k, (valid, edited) in enumerate(parts))
    return line + _rest(rng) if parts is BRACKET_PARTS else line


def _leads() -> list[str]:
    """The bracketed templates' leads as ``grammar_config`` hands them to the parser, and leads it does not
    hold: empty, one past the group's 64 code points, with non-ASCII characters, and prefixes of real leads."""
    records = jvm_parser.grammar_config().split("\u0003")[2:]
    real = sorted({r.split("\u0002")[4] for r in records if r.split("\u0002")[3] == "bracket"})
    assert real, "the grammar has bracketed templates"
    made = ["", "x" * 65, "Changed state of " + "é", "\U0001f600", "Changed partition"[:9], real[0][:1]]
    return real + [lead for lead in made if lead not in real]


def test_line_heads_match_as_the_regexes_do(harness: list[str], tmp_path: Path) -> None:
    print(f"seed {SEED}")
    rng = random.Random(SEED)
    base = _base_lines()
    cases = base + [_mutated(rng, rng.choice(base)) for _ in range(MUTATED)]
    cases += [_built(rng) for _ in range(BUILT)]
    leads = _leads()
    counts, out = _run(
        harness,
        Path("heads"),
        _write(tmp_path / "cases.txt", map(_escaped, cases)),
        _write(tmp_path / "leads.txt", map(_escaped, leads)),
    )
    regexes = out.splitlines()[0].split("\t")[1:]
    assert regexes == [
        _escaped(r) for r in (jvm_parser.BRACKET_REST, jvm_parser.DEFAULT_HEAD, jvm_parser.DEFAULT_TAIL)
    ], (
        "the grammar's regexes are no longer LineHeads': the parser takes the regex path, this test checks no path"
    )
    assert counts["cases"] == len(cases) and counts["leads"] == len(leads), out
    assert counts["mismatches"] == 0, (
        f"seed {SEED}: {counts['mismatches']} checks differ on {len(cases)} inputs"
        f" ({len(base)} real and corpus lines, {MUTATED} mutated, {BUILT} built); the first:\n{out}"
    )
    # both outcomes seen, for every path
    for key in ("default_matches", "bracket_matches"):
        assert 0 < counts[key] < len(cases), (key, out)
    assert 0 < counts["lead_hits"] < counts["lead_checks"], out


PIECES: tuple[bytes, ...] = (
    b"a",
    b"kafka",
    b"[2021-01-10 10:00:00,000] INFO x (y)",
    b"\t",
    b"\x00",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\r\r",
    "é".encode(),
    "€".encode(),
    "\U0001f600".encode(),
    "\u2028".encode(),  # a line terminator for regexes, not for readLine
    "\u0085".encode(),
    b"\xef\xbb\xbf",  # a byte-order mark
    b"\xc3",  # truncated sequences
    b"\xe2",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\x80",  # a lone continuation byte
    b"\xbf\xbf",
    b"\xff",  # never in UTF-8
    b"\xc0\x80",  # overlong
    b"\xe0\x80",
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf4\x90\x80\x80",  # past U+10FFFF
)


def _stream(rng: random.Random) -> bytes:
    n = rng.randint(0, 400) if rng.random() < 0.03 else rng.randint(0, 30)
    parts = [rng.choice(PIECES) for _ in range(n)]
    if rng.random() < 0.1:  # a line longer than the buffer: it grows
        parts.insert(rng.randrange(n + 1), b"x" * rng.randint(20, 300))
    return b"".join(parts)


def test_utf8_lines_reads_the_lines_buffered_reader_reads(harness: list[str], tmp_path: Path) -> None:
    print(f"seed {SEED}")
    rng = random.Random(SEED)
    specs = []
    for _ in range(STREAMS):
        buffer = rng.choice((1, 16, 17, 23, 32, 64))  # Utf8Lines' buffer is 16 bytes at the least
        reads = [rng.randint(1, 9) for _ in range(rng.randint(1, 4))] if rng.random() < 0.8 else [1 << 16]
        specs.append(f"{buffer} {','.join(map(str, reads))} {_stream(rng).hex()}")
    for path in _real_logs():  # as the reader opens them (a buffer of 4 KiB at least), and a byte at a time
        specs += [f"4096 65536 {path.read_bytes().hex()}", f"16 1,2,3,5,7 {path.read_bytes().hex()}"]
    counts, out = _run(harness, Path("lines"), _write(tmp_path / "streams.txt", specs))
    assert counts["streams"] == len(specs), out
    assert counts["mismatches"] == 0, (
        f"seed {SEED}: {counts['mismatches']} of {len(specs)} streams read differently; the first:\n{out}"
    )
    assert counts["crlf_splits"] > 0 and counts["sequence_splits"] > 0, f"reads never split there: {out}"
