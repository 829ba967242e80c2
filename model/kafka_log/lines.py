"""The line grammar of Kafka's controller logs (semantics §10, real-log FORMATS.md) as data.

One set of regular expressions serves two parsers: the JVM line parser (``LineParser.java``, through
``jvm_parser.grammar_config``) evaluates them with ``java.util.regex`` and ``reference_parser`` evaluates them with Python's ``re`` (the
oracle of the tests). Every expression therefore uses only the common subset of the two dialects:
numbered groups, non-capturing groups, character classes, ``\\d``/``\\S``, lazy quantifiers, ``^``/``$``.

A physical line is one of
* a **record**: it matches a ``Layout`` (timestamp, level, message, logger); its message is then
  matched against the ``TEMPLATES`` (first match wins) or falls into a generic family;
* a **continuation** of the record before it (stack-trace frames, exception headers, ``Caused by:``,
  ``... n more``) or a **blank** line;
* **quarantined**: anything else, kept with file, line number and a reason (``QUARANTINE_REASONS``).

Every template names, per capture group, the field of the uniform record schema (``INT_FIELDS``,
``STR_FIELDS``) it fills. Lists (ISR, replicas) are kept as text and normalised to ``1,2,3``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcspec.spec.vocabulary import PartitionState, ReplicaState

# ------------------------------------------------------------------------------------------ layouts

LEVELS = "TRACE|DEBUG|INFO|WARN|ERROR|FATAL"
TS = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}"
LOGGER = r"([A-Za-z0-9_.$]+)(?::\d+)?"


TS_ANY = r"\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{3})?"
"""Timestamps of the layouts other than Kafka's own: ``-`` or ``/`` between date parts, milliseconds optional."""

LAYOUT_ROLES = ("ts", "level", "logger", "message")

UNDATED = "undated"
"""The name every layout without a timestamp starts with: what marks a record without a timestamp in the parse
(its ``layout``; its ``ts`` is null)."""


@dataclass(frozen=True)
class Layout:
    """A line layout: ``regex`` (anchored with ``^``/``$``) and, per capture group, the part of the record it holds
    (``groups``: ``ts``, ``level``, ``logger``, ``message``; a layout without a level has no ``level`` group).
    ``wraps``: the layout ends with the logger, so a record cut over several physical lines is recognisable
    (its first line starts like a record and does not end like one)."""

    name: str
    regex: str
    groups: tuple[str, ...]
    description: str
    head: str = ""
    """A regex for the start of a record in this layout (up to the message): a line matching it and not
    ``regex`` may be the first piece of a wrapped record."""

    def __post_init__(self) -> None:
        if not (self.regex.startswith("^") and self.regex.endswith("$")):
            raise ValueError(f"layout {self.name}: the regex must match the whole line (^…$)")
        if sorted(self.groups) != sorted(set(self.groups)) or not set(self.groups) <= set(LAYOUT_ROLES):
            raise ValueError(f"layout {self.name}: bad group roles {self.groups}")
        if "message" not in self.groups:
            raise ValueError(f"layout {self.name}: a layout has a message")
        if self.undated and (self.head or not self.name.startswith(UNDATED)):
            raise ValueError(
                f"layout {self.name}: a layout without a timestamp is named {UNDATED}… and not wrapped"
            )

    @property
    def undated(self) -> bool:
        """The layout has no timestamp (``UNDATED``): its records take their order from their file position."""
        return "ts" not in self.groups

    def group(self, role: str) -> int:
        """The number of the group holding ``role`` (0 when the layout has none)."""
        return self.groups.index(role) + 1 if role in self.groups else 0

    @property
    def prefixed(self) -> str:
        """``regex`` after any prefix of at most ``PREFIX_MAX`` characters (group 1), the layout's groups from 2."""
        return PREFIX_REGEX + self.regex[1:]


PREFIX_MAX = 200
PREFIX_REGEX = rf"^(.{{1,{PREFIX_MAX}}}?)"
"""What a container runtime or log shipper puts before a record (docker-compose ``kafka_1  | ``, ``kubectl logs
--prefix`` ``[pod/kafka-0/kafka] ``, a journald/syslog header, …): any text, found by where a record of a known
layout starts, never by its own shape. The layout's name then carries ``PREFIXED``."""
PREFIXED = "+prefix"


DEFAULT_HEAD_REGEX = rf"^\[{TS}\] +(?:{LEVELS}) +"
"""The fixed-width head of a ``kafka-default`` line: ``[`` timestamp (23 characters) ``] `` level and a space."""
LOGGER_TAIL_REGEX = r"^[A-Za-z0-9_.$]+(?::\d+)?\)$"
"""What follows the last `` (`` of a ``kafka-default`` line: the logger, an optional ``:line``, ``)``. The logger
cannot contain ``(``, so the greedy message group of the layout ends exactly at the last `` (``: the JVM line
parser (``jvm_parser``) splits a line there and checks only its short head and tail with these two regexes."""

LAYOUTS: tuple[Layout, ...] = (
    Layout(
        "kafka-default",
        rf"^\[({TS})\] +({LEVELS}) +(.*) \({LOGGER}\)$",
        ("ts", "level", "message", "logger"),
        "Kafka's config/log4j.properties `[%d] %p %m (%c)%n` (§10.1); `(%c:%L)` and a padded level (`%-5p`, "
        "`%5p`) accepted",
        rf"^\[{TS}\] +(?:{LEVELS}) +",
    ),
    Layout(
        "strimzi",
        rf"^({TS}) +({LEVELS}) +(.*) \({LOGGER}\) \[[^\]]*\]$",
        ("ts", "level", "message", "logger"),
        "Strimzi `%d %p %m (%c) [%t]%n` (level padded or not)",
        rf"^{TS} +(?:{LEVELS}) +",
    ),
    Layout(
        "logger-dash",
        rf"^\[?({TS_ANY})\]? +({LEVELS}) +([A-Za-z0-9_.$]+)(?::\d+)? - (.*)$",
        ("ts", "level", "logger", "message"),
        "`%d %p %c:%L - %m%n` (3.x CI builds), with or without brackets and milliseconds, level padded or not",
    ),
    Layout(
        "linkedin",
        r"^(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \[([A-Za-z0-9_.$]+)\] (.*)$",
        ("ts", "logger", "message"),
        "LinkedIn's fork `yyyy/MM/dd HH:mm:ss.SSS [Class] %m` (no level)",
    ),
    Layout(
        UNDATED,
        rf"^({LEVELS}) +(.*) \({LOGGER}\)$",
        ("level", "message", "logger"),
        "a record without its timestamp, `%p %m (%c)` (pasted from a terminal, or a `%d`-less console pattern)",
    ),
    Layout(
        UNDATED + "-message",
        rf"^(?:({LEVELS}) +)?(\[(?:Kafka)?Controller id=\d+(?: epoch=\d+)?\] .*)$",
        ("level", "message"),
        "a controller's message alone (`[Controller id=1 epoch=3] …`, `[KafkaController id=1] …`), with or "
        "without its level, pasted without timestamp and logger",
    ),
)
"""Decision: the layouts without a timestamp (``Layout.undated``) come last and are tried only on a line no dated
layout matches, whole and never behind a line prefix (a prefixed record is found at its date). Such a record
has no ``ts``: it is never given one. The audit orders a history's records by controller epoch, then
timestamp (nulls first), then file and line, so records without a timestamp keep their order of position in
their file; in a file that mixes them with dated records they come before the dated records of their controller
epoch. The rules that compare times (a write after a newer controller's first act, an election during a topic's
deletion) pass over them; the report names the files that hold them (``pipeline``'s notes)."""

WRAP_MAX = 8
"""A wrapped record is re-joined from at most this many physical lines (terminal-wrapped logs)."""


_KAFKA_TS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}")
"""Kafka's own timestamp, ASCII digits only (``str.isdigit`` also takes other scripts' digits)."""


def normalise_ts(ts: str) -> str:
    """Any layout's timestamp as Kafka's ``yyyy-MM-dd HH:mm:ss,SSS`` (``000`` for missing milliseconds)."""
    if _KAFKA_TS.fullmatch(ts):  # already so (most are): its digits give it back as it is
        return ts
    d = "".join(c for c in ts if c.isdigit())
    d = (d + "000")[:17]
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]},{d[14:17]}"


DATE_REGEX = r"\d{4}([-/])\d{2}\1\d{2}"
"""A date ``yyyy-MM-dd`` or ``yyyy/MM/dd``: every layout's timestamp starts with one, so a line without it is no
record (prefixed or not) and starts none — the parsers skip their prefix search on such lines (stack frames)."""

SHIPPER_PREFIX = r"(?:[^\t]{0,200}?(?:\| |\] |: ))?"
"""An optional line prefix before a continuation or blank line: any text up to a ``| ``, ``] `` or ``: ``
(what the prefixes of ``PREFIX_REGEX`` end with), so prefixed stack traces stay attached to their record."""

CONTINUATION_BODY = (
    r"\s+\S.*|Caused by: .*|\s*\.\.\. \d+ more\s*|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"
    r"(?:Exception|Error|Throwable)[\w$]*(?:: .*|:)?"
)
"""What a continuation line is once its line prefix (if any) is set aside (``CONTINUATION_REGEX``)."""
CONTINUATION_REGEX = rf"^{SHIPPER_PREFIX}(?:{CONTINUATION_BODY})$"
"""A line that can continue the record above it: an indented stack frame (``\\tat …``), an exception
header (``kafka.common.StateChangeFailedException: …``), ``Caused by: …`` or ``... 22 more``, after an optional
line prefix (``SHIPPER_PREFIX``)."""

BLANK_REGEX = r"^\s*$|^[^\t]{0,200}?(?:\||\]:?)\s*$"
"""An empty line, or one that holds only a line prefix (``kafka_1  |``)."""

# ------------------------------------------------------------------------------------------ fields

INT_FIELDS: tuple[str, ...] = (
    "controller_id",
    "controller_epoch",
    "replica",
    "partition",
    "leader",
    "leader_epoch",
    "zk_version",
    "lisr_controller_epoch",
    "broker",
    "count",
    "count2",
    "zk_epoch_version",
)
STR_FIELDS: tuple[str, ...] = (
    "topic",
    "from_state",
    "to_state",
    "isr",
    "replicas",
    "brokers",
    "topics",
    "detail",
)
LIST_FIELDS: frozenset[str] = frozenset({"isr", "replicas"})
"""Comma-separated id lists; an empty list is the empty string, never null (``ISR:,`` is meaningful)."""
ALL_FIELDS: tuple[str, ...] = INT_FIELDS + STR_FIELDS

STATE_CHANGE_LOGGER = "state.change.logger"

# ------------------------------------------------------------------------------------------ pieces

RS = "(" + "|".join(s.name for s in ReplicaState) + ")"
PS = "(" + "|".join(s.name for s in PartitionState) + ")"
TP = r"([A-Za-z0-9._-]+)-(\d+)"
OLD_TP = r"\[([A-Za-z0-9._-]+),(\d+)\]"
IDS = r"([\d,]*)"
SET = r"((?:Hash)?Set\([\d, ]*\))"
NEW = r"^\[Controller id=(\d+) epoch=(\d+)\] "
OLD = r"^Controller (\d+) epoch (\d+) "
CTRL = r"^\[Controller id=(\d+)\] "
LISR = r"\(Leader:(-?\d+),ISR:([\d,]*),LeaderEpoch:(-?\d+),(?:ZkVersion:(-?\d+),)?ControllerEpoch:(-?\d+)\)"
LISR_F = ("leader", "isr", "leader_epoch", "zk_version", "lisr_controller_epoch")
LAI = (
    r"LeaderAndIsr\(leader=(-?\d+), leaderEpoch=(-?\d+), isr=List\(([\d, ]*)\), "
    r"(?:leaderRecoveryState=\w+, )?(?:zkVersion|partitionEpoch)=(-?\d+)\)"
)
LAI_F = ("leader", "leader_epoch", "isr", "zk_version")
PSTATE = (
    r"\w*PartitionState\((?:topicName='[^']*', partitionIndex=\d+, )?controllerEpoch=(-?\d+), "
    r"leader=(-?\d+), leaderEpoch=(-?\d+), isr=\[?([\d, ]*)\]?, (?:zkVersion|partitionEpoch)=(-?\d+), "
    r"replicas=\[?([\d, ]*)\]?(?:, [^()]*)?\)"
)
PSTATE_F = ("lisr_controller_epoch", "leader", "leader_epoch", "isr", "zk_version", "replicas")
NE = ("controller_id", "controller_epoch")
TPF = ("topic", "partition")

LEGACY_STATE_NAMES: dict[str, str] = {
    "NotExists": PartitionState.NonExistentPartition.name,
    "New": PartitionState.NewPartition.name,
}
"""0.8.1 partition-state names in ``changed partition … state from NotExists to New`` (FORMATS.md §1)."""


@dataclass(frozen=True)
class Template:
    """One message template: ``kind`` says what the record means, ``marker`` is a literal every matching
    message contains (a cheap pre-filter), ``fields`` names the field each capture group fills."""

    name: str
    kind: str
    marker: str
    regex: str
    fields: tuple[str, ...]
    seen_in: str

    def __post_init__(self) -> None:
        if not (self.regex.startswith("^") and self.regex.endswith("$")):
            raise ValueError(f"template {self.name}: the regex must match the whole message (^…$)")
        for f in self.fields:
            if f not in ALL_FIELDS:
                raise ValueError(f"template {self.name}: unknown field {f!r}")


def _t(name: str, kind: str, marker: str, regex: str, fields: tuple[str, ...], seen_in: str) -> Template:
    return Template(name, kind, marker, regex, fields, seen_in)


TEMPLATES: tuple[Template, ...] = (
    # ---- state.change.logger, controller side, 1.0+ (§10.3, §10.4) ------------------------------------
    _t(
        "replica-transition",
        "replica_transition",
        "Changed state of replica",
        NEW + rf"Changed state of replica (\d+) for partition {TP} from {RS} to {RS}$",
        (*NE, "replica", *TPF, "from_state", "to_state"),
        "1.0-3.x TRACE",
    ),
    _t(
        "replica-transition-failed",
        "replica_transition_failed",
        "initiated state change of replica",
        NEW + rf"Controller \d+ epoch \d+ initiated state change of replica (\d+) for partition {TP} "
        rf"from {RS} to {RS} failed$",
        (*NE, "replica", *TPF, "from_state", "to_state"),
        "1.0-3.x ERROR",
    ),
    _t(
        "isr-removal",
        "isr_removal",
        "after removing replica",
        NEW + rf"Partition {TP} state changed to {LISR} after removing replica (\d+) from the ISR as part "
        r"of transition to OfflineReplica$",
        (*NE, *TPF, *LISR_F, "replica"),
        "2.x-3.x INFO (2.8 profile)",
    ),
    _t(
        "partition-new",
        "partition_transition",
        "to NewPartition with assigned replicas",
        NEW + rf"Changed partition {TP} state from {PS} to (NewPartition) with assigned replicas {IDS}$",
        (*NE, *TPF, "from_state", "to_state", "replicas"),
        "1.0-2.5 TRACE, 2.6+ INFO",
    ),
    _t(
        "partition-online",
        "partition_transition",
        "to OnlinePartition with state",
        NEW + rf"Changed partition {TP} from {PS} to (OnlinePartition) with state {LAI}$",
        (*NE, *TPF, "from_state", "to_state", *LAI_F),
        "1.1-2.5 TRACE, 2.6+ INFO",
    ),
    _t(
        "partition-online-leader",
        "partition_transition",
        "to OnlinePartition with leader",
        NEW + rf"Changed partition {TP} from {PS} to (OnlinePartition) with leader (-?\d+)$",
        (*NE, *TPF, "from_state", "to_state", "leader"),
        "1.0 TRACE",
    ),
    _t(
        "partition-transition",
        "partition_transition",
        "Changed partition",
        NEW + rf"Changed partition {TP} state from {PS} to {PS}$",
        (*NE, *TPF, "from_state", "to_state"),
        "1.0-3.x TRACE",
    ),
    _t(
        "partition-transition-failed",
        "partition_transition_failed",
        "failed to change state for partition",
        NEW + rf"Controller \d+ epoch \d+ failed to change state for partition {TP} from {PS} to {PS}$",
        (*NE, *TPF, "from_state", "to_state"),
        "1.0-3.x ERROR",
    ),
    _t(
        "lair-sent",
        "lair_sent",
        "LeaderAndIsr request",
        NEW + rf"Sending (become-leader|become-follower) LeaderAndIsr request {PSTATE} to broker (\d+) "
        rf"for partition {TP}$",
        (*NE, "detail", *PSTATE_F, "broker", *TPF),
        "1.0-3.x TRACE",
    ),
    _t(
        "umr-sent",
        "umr_sent",
        "Sending UpdateMetadata request",
        NEW + rf"Sending UpdateMetadata request {PSTATE} to brokers? {SET} for partition {TP}$",
        (*NE, *PSTATE_F, "brokers", *TPF),
        "1.0-2.5 TRACE",
    ),
    _t(
        "stop-replica-sent",
        "stop_replica_sent",
        "Sending StopReplica request",
        NEW + rf"Sending StopReplica request (.*) to broker (\d+) for partition {TP}$",
        (*NE, "detail", "broker", *TPF),
        "2.6+ TRACE",
    ),
    _t(
        "lair-summary",
        "request_summary",
        "become-follower partitions",
        NEW + r"Sending LeaderAndIsr request to broker (\d+) with (\d+) become-leader and (\d+) "
        r"become-follower partitions$",
        (*NE, "broker", "count", "count2"),
        "2.6+ INFO",
    ),
    _t(
        "umr-summary",
        "request_summary",
        "Sending UpdateMetadata request to brokers",
        NEW + rf"Sending UpdateMetadata request to brokers {SET} for (\d+) partitions$",
        (*NE, "brokers", "count"),
        "2.6+ INFO",
    ),
    _t(
        "stop-replica-summary",
        "request_summary",
        "Sending StopReplica request",
        NEW
        + r"Sending StopReplica request (?:\(delete = (true|false)\) )?for (\d+) replicas to broker (\d+)$",
        (*NE, "detail", "count", "broker"),
        "2.6+ INFO",
    ),
    _t(
        "response-received",
        "response_received",
        "Received response",
        NEW + r"Received response (.*) for (?:request \w+ with correlation id \d+ sent to|a request sent to) "
        r"broker (.*)$",
        (*NE, "detail", "brokers"),
        "1.0-3.x TRACE",
    ),
    _t(
        "reassign-lair-sent",
        "reassign_lair_sent",
        "for partition being reassigned",
        NEW + rf"Sent LeaderAndIsr request {LISR} with new (?:replica assignment ReplicaAssignment\(.*\)|"
        rf"assigned replica list [\d,]*) to leader (-?\d+) for partition being reassigned {TP}$",
        (*NE, *LISR_F, "broker", *TPF),
        "1.1 TRACE, 2.4+ INFO",
    ),
    _t(
        "reassign-lair-failed",
        "reassign_lair_failed",
        "to leader for partition being reassigned",
        NEW + rf"Failed to send LeaderAndIsr request with new (.*) to leader for partition being "
        rf"reassigned {TP}$",
        (*NE, "detail", *TPF),
        "1.1-3.x ERROR",
    ),
    _t(
        "response-error",
        "response_error",
        "response",
        CTRL + r"Received error (?:(\w+) )?in (?:LeaderAndIsr|UpdateMetadata) response .* from broker (\d+)$",
        ("controller_id", "detail", "broker"),
        "1.1-3.x ERROR",
    ),
    _t(
        "replicas-marked-offline",
        "replicas_marked_offline",
        "Mark replicas",
        CTRL + r"Mark replicas (.*) on broker (\d+) as offline$",
        ("controller_id", "detail", "broker"),
        "2.x INFO",
    ),
    # ---- state.change.logger, controller side, 0.8.1 – 0.11 (FORMATS.md §1, §2, §9) ---------------------
    _t(
        "legacy-replica-transition",
        "replica_transition",
        "changed state of replica",
        OLD + rf"changed state of replica (\d+) for partition {OLD_TP} from {RS} to {RS}$",
        (*NE, "replica", *TPF, "from_state", "to_state"),
        "0.8.2-0.11 TRACE",
    ),
    _t(
        "legacy-replica-transition-no-from",
        "replica_transition",
        "changed state of replica",
        OLD + rf"changed state of replica (\d+) for partition {OLD_TP} to {RS}$",
        (*NE, "replica", *TPF, "to_state"),
        "0.8.1 TRACE",
    ),
    _t(
        "legacy-replica-transition-failed",
        "replica_transition_failed",
        "initiated state change of replica",
        OLD + rf"initiated state change of replica (\d+) for partition {OLD_TP} from {RS} to {RS} failed$",
        (*NE, "replica", *TPF, "from_state", "to_state"),
        "0.8-0.11 ERROR",
    ),
    _t(
        "legacy-partition-new",
        "partition_transition",
        "with assigned replicas",
        OLD + rf"changed partition {OLD_TP} state from (NotExists|NonExistentPartition) to "
        rf"(New|NewPartition) with assigned replicas {IDS}$",
        (*NE, *TPF, "from_state", "to_state", "replicas"),
        "0.8.1-0.11 TRACE",
    ),
    _t(
        "legacy-partition-online",
        "partition_transition",
        "to OnlinePartition with leader",
        OLD + rf"changed partition {OLD_TP} from {PS} to (OnlinePartition) with leader (-?\d+)$",
        (*NE, *TPF, "from_state", "to_state", "leader"),
        "0.8.1-0.10.2 TRACE",
    ),
    _t(
        "legacy-partition-transition",
        "partition_transition",
        "changed partition",
        OLD + rf"changed partition {OLD_TP} state from {PS} to {PS}$",
        (*NE, *TPF, "from_state", "to_state"),
        "0.9 TRACE",
    ),
    _t(
        "legacy-partition-transition-failed",
        "partition_transition_failed",
        "initiated state change for partition",
        OLD + rf"initiated state change for partition {OLD_TP} from {PS} to {PS} failed$",
        (*NE, *TPF, "from_state", "to_state"),
        "0.8.1-0.10.2 ERROR",
    ),
    _t(
        "legacy-lair-sent",
        "lair_sent",
        "LeaderAndIsr request",
        OLD
        + rf"sending (become-leader|become-follower) LeaderAndIsr request {LISR}(?: with correlationId \d+)? "
        rf"to broker (\d+) for partition {OLD_TP}$",
        (*NE, "detail", *LISR_F, "broker", *TPF),
        "0.8.1-0.10.2 TRACE",
    ),
    _t(
        "legacy-umr-sent",
        "umr_sent",
        "sending UpdateMetadata request",
        OLD
        + rf"sending UpdateMetadata request {LISR}(?: with correlationId \d+)? to brokers? (\S+|Set\([\d, ]*\)) "
        rf"for partition (?:{OLD_TP}|{TP})$",
        (*NE, *LISR_F, "brokers", *TPF, *TPF),
        "0.8.1-0.10.2 TRACE",
    ),
    _t(
        "legacy-election-started",
        "election_started",
        "started leader election for partition",
        OLD + rf"started leader election for partition {OLD_TP}$",
        (*NE, *TPF),
        "0.8.1-0.10.2 TRACE",
    ),
    _t(
        "legacy-leader-elected",
        "leader_elected",
        "for Offline partition",
        OLD + rf"elected leader (-?\d+) for Offline partition {OLD_TP}$",
        (*NE, "leader", *TPF),
        "0.8.1-0.10.2 TRACE",
    ),
    _t(
        "legacy-election-failed",
        "election_failed",
        "encountered error while electing leader",
        OLD + rf"encountered error while electing leader for partition {OLD_TP} due to: (.*)$",
        (*NE, *TPF, "detail"),
        "0.10.2 ERROR",
    ),
    _t(
        "legacy-lair-ignored",
        "lair_ignored",
        "ignoring LeaderAndIsr request from controller",
        r"^Broker (\d+) ignoring LeaderAndIsr request from controller (\d+) with correlation id \d+ epoch (\d+) "
        rf"for partition {OLD_TP} since its associated leader epoch (-?\d+) (is old\. .*|is not higher than .*)$",
        ("broker", "controller_id", "controller_epoch", *TPF, "leader_epoch", "detail"),
        "0.9-0.10.2 WARN",
    ),
    _t(
        "lair-ignored",
        "lair_ignored",
        "Ignoring LeaderAndIsr request from controller",
        r"^\[Broker id=(\d+)\] Ignoring LeaderAndIsr request from controller (\d+) with correlation id \d+ "
        rf"epoch (\d+) for partition {TP} since its associated leader epoch (-?\d+) (is .*)$",
        ("broker", "controller_id", "controller_epoch", *TPF, "leader_epoch", "detail"),
        "1.0-3.x WARN",
    ),
    _t(
        "lair-stale-controller",
        "lair_ignored",
        "since its controller epoch",
        r"^\[Broker id=(\d+)\] Ignoring LeaderAndIsr request from controller (\d+) with correlation id \d+ since "
        r"its controller epoch (\d+) is old\. (.*)$",
        ("broker", "controller_id", "controller_epoch", "detail"),
        "1.0-3.x WARN",
    ),
    _t(
        "legacy-lair-stale-controller",
        "lair_ignored",
        "since its controller epoch",
        r"^Broker (\d+) ignoring LeaderAndIsr request from controller (\d+) with correlation id \d+ since "
        r"its controller epoch (\d+) is old\. (.*)$",
        ("broker", "controller_id", "controller_epoch", "detail"),
        "0.9-0.11 WARN",
    ),
    _t(
        "stop-replica-stale-controller",
        "stale_controller_request",
        "Ignoring StopReplica request from controller",
        r"^\[Broker id=(\d+)\] Ignoring StopReplica request from controller (\d+) with correlation id \d+ since "
        r"its controller epoch (\d+) is old\. (.*)$",
        ("broker", "controller_id", "controller_epoch", "detail"),
        "2.x-3.x WARN (ReplicaManager.stopReplicas)",
    ),
    _t(
        "update-metadata-stale-controller",
        "stale_controller_request",
        "from an old controller",
        r"^\[Broker id=(\d+)\] Received update metadata request with correlation id \d+ from an old controller "
        r"(\d+) with epoch (\d+)\. (.*)$",
        ("broker", "controller_id", "controller_epoch", "detail"),
        "1.1-3.x WARN (ReplicaManager.maybeUpdateMetadataCache)",
    ),
    _t(
        "isr-update-fenced",
        "isr_update_fenced",
        "not equal to that in zookeeper",
        rf"^\[Partition {TP} broker=(\d+)\] Cached zkVersion \[?(-?\d+)\]? not equal to that in zookeeper, skip "
        r"updating ISR$",
        (*TPF, "broker", "zk_version"),
        "1.0-2.6 INFO (kafka.cluster.Partition, server.log)",
    ),
    _t(
        "legacy-isr-update-fenced",
        "isr_update_fenced",
        "not equal to that in zookeeper",
        rf"^Partition {OLD_TP} on broker (\d+): Cached zkVersion \[(-?\d+)\] not equal to that in zookeeper, skip "
        r"updating ISR$",
        (*TPF, "broker", "zk_version"),
        "0.8.1-0.11 INFO (kafka.cluster.Partition, server.log)",
    ),
    _t(
        "follower-unavailable-leader",
        "become_follower_failed",
        "but cannot become follower since the new leader",
        r"^\[Broker id=(\d+)\] Received LeaderAndIsrRequest with correlation id \d+ from controller (\d+) epoch "
        rf"(\d+) for partition {TP}(?: \(last update controller epoch \d+\))? but cannot become follower since "
        r"the new leader (-?\d+) is unavailable\.$",
        ("broker", "controller_id", "controller_epoch", *TPF, "leader"),
        "2.x-3.x ERROR",
    ),
    _t(
        "legacy-follower-unavailable-leader",
        "become_follower_failed",
        "but cannot become follower since the new leader",
        r"^Broker (\d+) received LeaderAndIsrRequest with correlation id \d+ from controller (\d+) epoch (\d+) "
        rf"for partition (?:{OLD_TP}|{TP}) but cannot become follower since the new leader (-?\d+) is "
        r"unavailable\.$",
        ("broker", "controller_id", "controller_epoch", *TPF, *TPF, "leader"),
        "0.10.2 ERROR",
    ),
    _t(
        "legacy-response-received",
        "response_received",
        "received response",
        OLD + r"received response (.*) for a request sent to broker (.*)$",
        (*NE, "detail", "brokers"),
        "0.8.1-0.10.2 TRACE",
    ),
    # ---- controller.log (§10.5) ---------------------------------------------------------------------------
    _t(
        "controller-elected",
        "controller_elected",
        "successfully elected as the controller",
        CTRL + r"\d+ successfully elected as the controller(?:\. Epoch incremented to (\d+) and epoch zk "
        r"version is now (\d+))?$",
        ("controller_id", "controller_epoch", "zk_epoch_version"),
        "1.1-3.x INFO",
    ),
    _t(
        "epoch-incremented",
        "controller_elected",
        "Epoch incremented to",
        CTRL + r"Epoch incremented to (\d+)$",
        ("controller_id", "controller_epoch"),
        "1.1 INFO",
    ),
    _t(
        "controller-moved",
        "controller_moved",
        "Controller moved to another broker when processing",
        CTRL + r"Controller moved to another broker when processing (.*)\.$",
        ("controller_id", "detail"),
        '2.2-3.x ZooKeeper mode INFO, followed by the ControllerMovedException (e.g. "Controller epoch zkVersion '
        "check fails. Expected zkVersion = <v>\": a write whose check of the controller epoch znode's version "
        "ZooKeeper rejected with BADVERSION)",
    ),
    _t(
        "controller-ready",
        "controller_ready",
        "Ready to serve as the new controller",
        CTRL + r"Ready to serve as the new controller with epoch (\d+)$",
        ("controller_id", "controller_epoch"),
        "2.x-3.x INFO",
    ),
    _t(
        "controller-resigned", "resigned", "Resigned", CTRL + r"Resigned$", ("controller_id",), "1.1-3.x INFO"
    ),
    _t(
        "deletion-starting",
        "topic_deletion_queued",
        "Starting topic deletion for topics",
        CTRL + r"Starting topic deletion for topics (.*)$",
        ("controller_id", "topics"),
        "2.4-3.x INFO",
    ),
    _t(
        "deletion-handling",
        "topic_deletion_queued",
        "Handling deletion for topics",
        r"^\[Topic Deletion Manager (\d+)\],? Handling deletion for topics (.*)$",
        ("controller_id", "topics"),
        "1.1-3.x INFO",
    ),
    _t(
        "deletion-completed",
        "topic_deletion_completed",
        "successfully completed",
        r"^\[Topic Deletion Manager (\d+)\],? Deletion of topic (\S+) successfully completed$",
        ("controller_id", "topics"),
        "1.1-3.x INFO",
    ),
    _t(
        "unclean-election",
        "unclean_election",
        "There's potential data loss",
        rf"^\[OfflinePartitionLeaderSelector\]: No broker in ISR is alive for {OLD_TP}\. Elect leader (-?\d+) "
        rf"from live brokers {IDS}\. There's potential data loss\.$",
        (*TPF, "leader", "replicas"),
        "0.9-0.10.2 WARN",
    ),
    _t(
        "invoking-state-change",
        "state_machine_bulk",
        "Invoking state change to",
        r"^\[(?:Replica|Partition)StateMachine controllerId=(\d+)\] Invoking state change to (\w+) for "
        r"(?:replicas|partitions) (.*)$",
        ("controller_id", "to_state", "detail"),
        "1.0 INFO",
    ),
)

TEMPLATE_INDEX: dict[str, int] = {t.name: i for i, t in enumerate(TEMPLATES)}

# ------------------------------------------------------------------------------------------ dispatch keys

PREFIXES: dict[str, tuple[str, str]] = {
    "new": (NEW, "[Controller id="),
    "ctrl": (CTRL, "[Controller id="),
    "old": (OLD, "Controller "),
}
"""Message prefixes shared by many templates: name → (regex, the literal every matching message starts with)."""

_META = set("()[]{}.*+?|^$")
_QUANTIFIERS = set("?*+{")


def literal_start(regex: str) -> str:
    """The literal text every match of an anchored ``regex`` starts with (up to its first regex construct)."""
    out: list[str] = []
    i = 1 if regex.startswith("^") else 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            if i + 1 >= len(regex) or regex[i + 1].isalnum():
                break  # a class such as \d or \S
            lit, step = regex[i + 1], 2
        elif c in _META:
            break
        else:
            lit, step = c, 1
        if i + step < len(regex) and regex[i + step] in _QUANTIFIERS:
            break  # the character is optional or repeated
        out.append(lit)
        i += step
    return "".join(out)


@dataclass(frozen=True)
class DispatchKey:
    """Necessary conditions of a template match that cost no regex: the message starts with ``start``; for a
    template behind a shared prefix (``prefix`` of ``PREFIXES``) the rest of the message — after the first
    ``] `` for the bracketed prefixes — starts with ``lead`` (``old``: contains it); it contains ``marker``."""

    template: str
    start: str
    prefix: str | None
    lead: str
    marker: str


def dispatch_key(template: Template) -> DispatchKey:
    for name, (regex, start) in PREFIXES.items():
        if template.regex.startswith(regex):
            return DispatchKey(
                template.name, start, name, literal_start(template.regex[len(regex) :]), template.marker
            )
    start = literal_start(template.regex)
    if not start:
        raise ValueError(f"template {template.name}: its regex starts with no literal text")
    return DispatchKey(template.name, start, None, "", template.marker)


DISPATCH: tuple[DispatchKey, ...] = tuple(dispatch_key(t) for t in TEMPLATES)

# ------------------------------------------------------------------------------------------ generic families

CONTROLLER_SIDE_STATE_CHANGE = r"^(?:\[Controller id=\d+(?: epoch=\d+)?\] |Controller \d+ epoch \d+ )"
"""A state.change.logger message written by a controller; it must match a template or is quarantined."""
LEGACY_CONTROLLER_SIDE = r"^Controller \d+ epoch \d+ "

CONTROLLER_ID_PREFIX = (
    r"^\[(?:Controller id=|ReplicaStateMachine controllerId=|PartitionStateMachine controllerId=|"
    r"Topic Deletion Manager |RequestSendThread controllerId=|ControllerEventThread controllerId=|"
    r"Controller |Partition state machine on Controller |Replica state machine on controller |"
    r"TopicChangeListener on Controller )(\d+)"
)
BROKER_ID_PREFIX = r"^(?:\[Broker id=(\d+)\]|Broker (\d+) )"

GENERIC_KINDS = ("controller_message", "broker_message", "other_message")
"""Records whose layout was recognised but whose message is not interpreted by the audit."""

QUARANTINE_REASONS: dict[str, str] = {
    "no-layout": "not a log4j record (no timestamp/level/logger layout) and not a continuation of one",
    "orphan-continuation": "a stack-trace/continuation line whose record is missing or quarantined",
    "out-of-scope": "a line of another container or program in a multiplexed stream (behind a docker-compose "
    "or kubectl prefix, in no log4j layout): not Kafka's, counted apart, not against --max-quarantine",
    "orphan-at-start": "a stack-trace/continuation line before the first record of its file (an excerpt or a "
    "rotated file that starts inside a stack trace): not counted against --max-quarantine",
    "unknown-state-change": "state-change line written by a controller that matches no template of §10",
    "legacy-state-change": "state-change line of a Kafka < 1.0 controller whose format has no template",
    "bad-trace-line": "not a valid canonical-JSON trace line",
    "separator-character": "a field of a template match holds U+0001, the separator the JVM line parser renders "
    "fields with",
}

OUT_OF_SCOPE = "out-of-scope"
CONTAINER_PREFIX_REGEX = r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,100} *\| |\[pod/[^\]/]+/[^\]]+\] )"
"""The prefix a container runtime puts before each line of a multiplexed stream (docker-compose
``kafka_1        | ``, ``kubectl logs --prefix`` ``[pod/kafka-0/kafka] ``). Decision: such a line in no log4j layout
is another container's (ZooKeeper's, a client's) or a program's own output beside Kafka's log: out of the
audit's scope, counted apart (``OUT_OF_SCOPE``), never bad input."""
ORPHAN_AT_START = "orphan-at-start"
ORPHAN_REASONS = ("orphan-continuation", ORPHAN_AT_START)
"""Quarantine reasons of continuation lines without their record; those at the start of a file are no fault
of the input (the file was cut there), so they do not count against ``--max-quarantine`` (``verdict.judge``)."""
EXCUSED_REASONS = (ORPHAN_AT_START, OUT_OF_SCOPE)
"""Quarantine reasons that do not count against ``--max-quarantine``."""

SEPARATOR = "\u0001"
"""Joins rendered regex groups on the JVM; a template match with it inside a field is quarantined."""

RECORD_KINDS_WITH_MACHINE: dict[str, str] = {
    "replica_transition": "replica",
    "replica_transition_failed": "replica",
    "partition_transition": "partition",
    "partition_transition_failed": "partition",
}


def normalise_list(text: str) -> str:
    """``1, 2`` / ``1,2`` / `` `` → ``1,2`` / ``1,2`` / ``""`` (the normal form of ``LIST_FIELDS``)."""
    return text.replace(" ", "")
