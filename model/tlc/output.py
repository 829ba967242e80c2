"""Parse TLC's output — ``-tool`` mode (framed messages with codes) or plain mode — into a ``TlcReport``.

In ``-tool`` mode TLC wraps each message as ``@!@!@STARTMSG <code>:<severity> @!@!@`` … ``@!@!@ENDMSG
<code> @!@!@``; text between messages (SANY's parse errors) is kept as unframed text. Severity 1 is an
error, 3 a warning, 4 a state of an error trace. ``parse_output`` detects the mode itself.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace

from kcspec.model.tlc.trace import TlcTraceState, TraceFormatError, parse_state_text

START = re.compile(r"^@!@!@STARTMSG (\d+):(\d+) @!@!@$")
END = re.compile(r"^@!@!@ENDMSG (\d+) @!@!@$")

# TLC message codes (tlc2.output.EC) that the summary reads.
VERSION = 2262
SANY_END = 2219
SUCCESS = 2193
STATS = 2199
PROGRESS = 2200
DEPTH = 2194
FINISHED = 2186
INVARIANT_VIOLATED_INITIAL = 2107
INVARIANT_VIOLATED_BEHAVIOR = 2110
ACTION_PROPERTY_VIOLATED = 2112
"""An action property (a safety property of steps) is false for some step: a safety violation."""
TEMPORAL_PROPERTY_VIOLATED = 2116
"""A ``PROPERTY`` (liveness) is violated: TLC's counterexample is a lasso, not a finite path to a bad state."""
COUNTER_EXAMPLE = 2264
BACK_TO_STATE = 2122
STUTTERING = 2218
DEADLOCK = 2114
BEHAVIOR_UP_TO_HERE = 2121
STATE_PRINT = 2217
STATE_PRINT_NO_ACTION = 2216
"""A state of an error trace without its action ("N:"), as a depth-first run (``-dfid``) prints them."""
ASSERT_FAILED = 2132
PARSING_FAILED = 3002
CHECKPOINT_END = 2196
"""A checkpoint of the run is complete ("Checkpointing completed at …")."""
RECOVER_END = 2198
DFS_MODE = 2271
"""TLC runs its depth-first iterative deepening (``-dfid N``): "Running depth-first search Model-Checking …"."""
DFID_STATS = 2204
"""The final counts of a depth-first run ("N states generated, M distinct states found."): it has no queue."""
"""The run continues from a checkpoint ("Recovery completed. N states examined. M states on queue.")."""

SEVERITY_ERROR = 1
SEVERITY_WARNING = 3
SEVERITY_STATE = 4


class Outcome(enum.Enum):
    OK = "ok"
    INVARIANT_VIOLATED = "invariant violated"
    PROPERTY_VIOLATED = "temporal property violated"
    """A liveness ``PROPERTY`` does not hold: the trace is a lasso (``TlcReport.cycle_from``)."""
    DEADLOCK = "deadlock"
    PARSE_ERROR = "parse/semantic error"
    TLC_ERROR = "TLC error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class TlcMessage:
    """One framed message (``code`` ``None`` for unframed text between messages)."""

    code: int | None
    severity: int
    body: str


@dataclass(frozen=True)
class SourceError:
    """A position TLC or SANY reported in a module: ``line``/``column`` are 1-based."""

    module: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Stats:
    generated: int | None = None
    distinct: int | None = None
    left_on_queue: int | None = None
    depth: int | None = None
    duration_ms: int | None = None


@dataclass(frozen=True)
class TlcReport:
    """What TLC said: the outcome, the counts, the error trace and every message."""

    outcome: Outcome
    stats: Stats
    version: str | None = None
    violated: str | None = None
    """The name of the violated invariant (or the assertion's text for a failed ``Assert``)."""
    error: str | None = None
    """The error text for parse, semantic and TLC errors."""
    source_errors: tuple[SourceError, ...] = ()
    trace: tuple[TlcTraceState, ...] = ()
    messages: tuple[TlcMessage, ...] = field(default=(), repr=False)
    tool_mode: bool = True
    cycle_from: int | None = None
    """For a temporal-property violation: the 1-based number of the trace state the behaviour goes back to
    forever (TLC's "Back to state N"; the last state itself when TLC says the behaviour stutters there)."""
    checkpoints: int = 0
    """How many checkpoints TLC completed during the run."""
    recovered: bool = False
    """The run continued from an earlier run's checkpoint (its counts include that run's states)."""
    depth_bounded: bool = False
    """A depth-first run to a bound (``-dfid``): states deeper than the bound were not checked."""


def split_messages(text: str) -> tuple[TlcMessage, ...]:
    """The framed messages of ``-tool`` output, with unframed text kept as ``code=None`` messages."""
    out: list[TlcMessage] = []
    loose: list[str] = []
    current: tuple[int, int, list[str]] | None = None
    for line in text.splitlines():
        start = START.match(line)
        if start is not None:
            if loose and "".join(loose).strip():
                out.append(TlcMessage(None, 0, "\n".join(loose)))
            loose = []
            current = (int(start.group(1)), int(start.group(2)), [])
            continue
        end = END.match(line)
        if end is not None and current is not None:
            out.append(TlcMessage(current[0], current[1], "\n".join(current[2])))
            current = None
            continue
        (current[2] if current is not None else loose).append(line)
    if current is not None:  # output cut off (e.g. killed on timeout): keep the partial message
        out.append(TlcMessage(current[0], current[1], "\n".join(current[2])))
    if loose and "".join(loose).strip():
        out.append(TlcMessage(None, 0, "\n".join(loose)))
    return tuple(out)


_STATS = re.compile(
    r"([\d,]+) states? generated(?: \([^)]*\))?, ([\d,]+) distinct states? found(?: \([^)]*\))?, "
    r"([\d,]+) states? left on queue"
)
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_PROGRESS_LEVEL = re.compile(r"^Progress\((\d+)\) at ", re.M)
_DFID_STATS = re.compile(r"^([\d,]+) states? generated, ([\d,]+) distinct states? found\.$", re.M)
_FINISHED = re.compile(r"Finished in (?:(\d+)ms|(\d+)s|(\d+)min (\d+)s|(\d+):(\d+):(\d+)|(\d+)h (\d+)min)")
_INVARIANT = re.compile(r"Invariant (\S+) is violated")
_PARSE_POS = re.compile(r"at line (\d+), column (\d+)")
_SEMANTIC_POS = re.compile(r"line (\d+), col(?:umn)? (\d+) to line \d+, col(?:umn)? \d+ of module (\w+)")
_PARSING_FILE = re.compile(r"^Parsing file .*?([A-Za-z_][A-Za-z0-9_]*)\.tla", re.M)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _duration_ms(text: str) -> int | None:
    m = _FINISHED.search(text)
    if m is None:
        return None
    g = m.groups()
    if g[0] is not None:
        return int(g[0])
    if g[1] is not None:
        return int(g[1]) * 1000
    if g[2] is not None:
        return (int(g[2]) * 60 + int(g[3])) * 1000
    if g[4] is not None:
        return ((int(g[4]) * 60 + int(g[5])) * 60 + int(g[6])) * 1000
    return (int(g[7]) * 3600 + int(g[8]) * 60) * 1000


def _stats(text: str, stats: Stats) -> Stats:
    # the last counts of the text: a plain-mode transcript holds every progress report before the final one
    found = list(_STATS.finditer(text))
    m = found[-1] if found else None
    if m is not None:
        stats = Stats(_int(m.group(1)), _int(m.group(2)), _int(m.group(3)), stats.depth, stats.duration_ms)
    levels = _PROGRESS_LEVEL.findall(text)
    if levels:  # the level a breadth-first search has reached, while it runs
        stats = replace(stats, depth=int(levels[-1]))
    d = _DEPTH.search(text)
    if d is not None:
        stats = Stats(
            stats.generated, stats.distinct, stats.left_on_queue, int(d.group(1)), stats.duration_ms
        )
    ms = _duration_ms(text)
    if ms is not None:
        stats = Stats(stats.generated, stats.distinct, stats.left_on_queue, stats.depth, ms)
    return stats


def _source_errors(text: str, default_module: str | None) -> tuple[SourceError, ...]:
    out: list[SourceError] = []
    parsing = _PARSING_FILE.findall(text)
    module = parsing[-1] if parsing else (default_module or "")
    for m in _PARSE_POS.finditer(text):
        line_end = text.find("\n", m.end())
        line_start = text.rfind("\n", 0, m.start()) + 1
        line = text[line_start:line_end].strip()
        if line.startswith("Module definition starting"):
            continue  # SANY's context for the error, not an error position
        prev_start = text.rfind("\n", 0, max(0, line_start - 1)) + 1
        prev = text[prev_start : max(prev_start, line_start - 1)].strip()
        message = f"{prev} {line}" if prev.startswith("Was expecting") else line
        out.append(SourceError(module, int(m.group(1)), int(m.group(2)), message))
    for m in _SEMANTIC_POS.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        out.append(
            SourceError(m.group(3), int(m.group(1)), int(m.group(2)), text[line_start:line_end].strip())
        )
    return tuple(out)


def parse_tool_output(text: str, module: str | None = None) -> TlcReport:
    """A ``-tool`` mode transcript → ``TlcReport``. ``module`` names the checked module (for error positions)."""
    messages = split_messages(text)
    stats = Stats()
    version: str | None = None
    outcome: Outcome | None = None
    violated: str | None = None
    errors: list[str] = []
    trace: list[TlcTraceState] = []
    cycle_from: int | None = None
    finished = False
    checkpoints = 0
    recovered = False
    depth_first = False
    dfid_done = False
    for msg in messages:
        if msg.code == VERSION:
            version = msg.body.strip()
        elif msg.code in (STATS, PROGRESS, DEPTH, FINISHED):
            stats = _stats(msg.body, stats)
            finished = finished or msg.code == FINISHED
        elif msg.code == SUCCESS:
            outcome = outcome or Outcome.OK
        elif msg.code in (INVARIANT_VIOLATED_BEHAVIOR, INVARIANT_VIOLATED_INITIAL):
            outcome = Outcome.INVARIANT_VIOLATED
            m = _INVARIANT.search(msg.body)
            violated = m.group(1) if m else msg.body.strip()
        elif msg.code == ACTION_PROPERTY_VIOLATED:
            outcome = Outcome.INVARIANT_VIOLATED
            violated = msg.body.strip()
        elif msg.code == TEMPORAL_PROPERTY_VIOLATED:
            outcome = Outcome.PROPERTY_VIOLATED
            violated = msg.body.strip()
        elif msg.code == BACK_TO_STATE:
            cycle_from = _back_to(msg.body)
        elif msg.code == CHECKPOINT_END:
            checkpoints += 1
        elif msg.code == RECOVER_END:
            recovered = True
        elif msg.code == DFS_MODE:
            depth_first = True
        elif msg.code == DFID_STATS:
            m = _DFID_STATS.search(msg.body)
            if m is not None:
                stats = replace(stats, generated=_int(m.group(1)), distinct=_int(m.group(2)))
                dfid_done = True
        elif msg.code == STUTTERING:
            cycle_from = len(trace)
        elif msg.code == ASSERT_FAILED:
            outcome = Outcome.INVARIANT_VIOLATED
            violated = _assertion_text(msg.body)
        elif msg.code == DEADLOCK:
            outcome = Outcome.DEADLOCK
        elif msg.code in (STATE_PRINT, STATE_PRINT_NO_ACTION):
            try:
                trace.append(parse_state_text(msg.body))
            except TraceFormatError as exc:
                errors.append(f"could not read error-trace state: {exc}")
        elif msg.code == PARSING_FAILED or (msg.code is None and _is_sany_error(msg.body)):
            outcome = Outcome.PARSE_ERROR
            errors.append(msg.body.strip())
        elif msg.severity == SEVERITY_ERROR and msg.code not in (BEHAVIOR_UP_TO_HERE, COUNTER_EXAMPLE):
            errors.append(msg.body.strip())
            if outcome is None:
                outcome = Outcome.TLC_ERROR
    if outcome is None and depth_first and dfid_done and finished and not errors:
        # TLC's depth-first search to its bound says no "No error has been found": its counts and its end are it
        outcome = Outcome.OK
    if outcome is None:
        outcome = Outcome.TLC_ERROR
        if not errors:
            errors.append("TLC ended without a result" + ("" if finished else " (its output stops early)"))
    outcome = _incomplete(outcome, stats, errors)
    error_text = "\n\n".join(errors) if errors else None
    source_errors = _source_errors(
        "\n".join(m.body for m in messages if m.code in (None, PARSING_FAILED)), module
    )
    if outcome is not Outcome.PARSE_ERROR:
        source_errors = tuple(e for e in _source_errors(error_text or "", module))
    return TlcReport(
        outcome,
        stats,
        version,
        violated,
        error_text,
        source_errors,
        tuple(trace),
        messages,
        True,
        cycle_from,
        checkpoints,
        recovered,
        depth_first,
    )


def _incomplete(outcome: Outcome, stats: Stats, errors: list[str]) -> Outcome:
    """ "No error has been found" with states still on TLC's queue is a search that was stopped, not a pass.

    TLC says so when it stops itself (``tlc2.TLC.stopAfter``, which a checkpointed run's ``--timeout`` uses):
    TLC 2.15 prints "Model checking completed. No error has been found." with thousands of states left on its
    queue and exits 0 (measured on the default 2-broker model: 13,873 distinct states, 6,948 on the queue)."""
    if outcome is not Outcome.OK or not stats.left_on_queue:
        return outcome
    errors.append(
        f"TLC stopped with {stats.left_on_queue:,} states left on its queue: the search did not end, "
        "and states beyond them were not checked"
    )
    return Outcome.TIMEOUT


_STUTTER = re.compile(r"^(?:State )?\d+: Stuttering", re.M)
_BACK = re.compile(r"(?:^(?:State )?(\d+): Back to state|^Back to state (\d+))", re.M)


def _back_to(body: str) -> int | None:
    """The state number of TLC's "N: Back to state: <action>" (``-tool``) or "Back to state N: …" (plain)."""
    m = _BACK.search(body.strip())
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


def _is_sany_error(text: str) -> bool:
    return "***Parse Error***" in text or "*** Errors:" in text


def _assertion_text(body: str) -> str:
    m = re.search(
        r'The first argument of Assert evaluated to FALSE; the second argument was:\s*"(.*)"', body, re.S
    )
    return m.group(1) if m else body.strip()


_PLAIN_STATE = re.compile(r"^State (\d+): ", re.M)


def parse_plain_output(text: str, module: str | None = None) -> TlcReport:
    """A plain-mode (no ``-tool``) transcript → ``TlcReport`` (the same summary, read from the prose)."""
    stats = _stats(text, Stats())
    version_m = re.search(r"^(TLC2 Version .*)$", text, re.M)
    outcome: Outcome
    violated: str | None = None
    error: str | None = None
    inv = _INVARIANT.search(text)
    cycle_from: int | None = None
    if "***Parse Error***" in text or "Parsing or semantic analysis failed" in text or "*** Errors:" in text:
        outcome = Outcome.PARSE_ERROR
        error = text[text.find("Parsing file") :].strip() if "Parsing file" in text else text.strip()
    elif inv is not None:
        outcome, violated = Outcome.INVARIANT_VIOLATED, inv.group(1)
    elif "Error: Temporal properties were violated." in text:
        outcome, violated = Outcome.PROPERTY_VIOLATED, "Temporal properties were violated."
        cycle_from = _back_to(text)
    elif "Error: Deadlock reached." in text:
        outcome = Outcome.DEADLOCK
    elif "Model checking completed. No error has been found." in text:
        outcome = Outcome.OK
    else:
        outcome = Outcome.TLC_ERROR
        errs = re.findall(r"^Error: (.*)$", text, re.M)
        error = "\n".join(errs) if errs else "TLC ended without a result"
    stopped: list[str] = []
    outcome = _incomplete(outcome, stats, stopped)
    if stopped:
        error = stopped[0]
    trace: list[TlcTraceState] = []
    starts = list(_PLAIN_STATE.finditer(text))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        chunk = text[m.start() : end]
        # the state ends at the first blank line
        blank = chunk.find("\n\n")
        chunk = chunk if blank < 0 else chunk[:blank]
        if chunk.rstrip().endswith(": Stuttering"):  # the lasso's end: the behaviour stays in the last state
            continue
        trace.append(parse_state_text(chunk))
    if outcome is Outcome.PROPERTY_VIOLATED and cycle_from is None and _STUTTER.search(text):
        cycle_from = len(trace)
    return TlcReport(
        outcome,
        stats,
        version_m.group(1) if version_m else None,
        violated,
        error,
        _source_errors(error or "", module) if error else (),
        tuple(trace),
        (TlcMessage(None, 0, text),),
        False,
        cycle_from,
    )


def parse_output(text: str, module: str | None = None) -> TlcReport:
    """Either mode, detected from the framing."""
    if any(START.match(line) for line in text.splitlines()[:50]):
        return parse_tool_output(text, module)
    return parse_plain_output(text, module)
