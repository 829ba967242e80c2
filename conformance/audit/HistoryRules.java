package kcspec.audit;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * The audit's history rules (replay.history_rules) in one pass over each sorted partition history.
 *
 * <p>Why: each rule compares a record with an earlier one of the same partition history, and each used to
 * be a Spark window with its own shuffle and sort. Here the records of both rules are shuffled once by
 * (hid, topic, partition) and sorted once within the partitions, each group's rows by (controller_epoch,
 * ts, fid, line) (replay.history_rules does both); this class walks each group in that order and
 * evaluates both rules:
 *
 * <ul>
 *   <li>the leader-epoch rule (§11 I6): the previous write is the previous row that is a write (an Online
 *       transition with a leader epoch, or an ISR removal): the writes' own order is exactly (controller
 *       epoch, ts, fid, line), the old window's;
 *   <li>the tracked-state rules (§2.3): the previous transition of an element (machine, replica) in the
 *       same controller epoch is the last earlier transition row with the same (machine, replica,
 *       controller_epoch): one small map per group. Within one controller epoch the sort's order is (ts,
 *       fid, line), the old window's (nulls first in both).
 * </ul>
 *
 * <p>Nothing of the spec is restated here: the valid-previous tables, the legacy state names, the states
 * reachable through transitions an INFO log hides, the kinds and state names the rules look at, and the
 * rules' codes, sections and texts arrive from Python in one string (replay.history_config). The rules'
 * conditions and message words are written here only. Nulls behave as in the Spark expressions the pass
 * replaced: a comparison with a null holds for no rule, a message with a null part is null.
 *
 * <p>Decision (measured): a Dataset operation over rows (lazy, planned with the query) rather than a pass
 * over the sorted query's internal rows: that needs the query's RDD, which adaptive execution computes as
 * soon as it is asked for (the shuffle ran while the audit's query was being built), and it was not faster
 * on 10 M lines.
 *
 * <p>The leader-epoch message ends with " at "; replay.history_rules appends the earlier write's file name
 * and line (the file names live in the Python driver).
 */
public final class HistoryRules {
  private HistoryRules() {}

  static final String RECORDS = "\u0003";
  static final String UNITS = "\u0002";

  /** Input columns, looked up by name in the sorted Dataset's schema. */
  static final String[] INPUT = {
    "hid",
    "topic",
    "partition",
    "controller_epoch",
    "ts",
    "fid",
    "line",
    "kind",
    "replica",
    "controller_id",
    "from_state",
    "to_state",
    "leader_epoch"
  };

  /**
   * The violations of the history rules over {@code sorted} (the rows of replay.history_rows, partitioned by
   * (hid, topic, partition) and sorted as the class comment says), as a Dataset of {@code schema}
   * (replay.LOG_VIOLATION_COLUMNS); {@code config} is replay.history_config.
   */
  public static Dataset<Row> apply(Dataset<Row> sorted, String config, StructType schema) {
    StructType in = sorted.schema();
    int[] index = new int[INPUT.length];
    for (int j = 0; j < INPUT.length; j++) index[j] = in.fieldIndex(INPUT[j]);
    MapPartitionsFunction<Row, Row> pass = rows -> new Walk(new Config(config), index, rows);
    return sorted.mapPartitions(pass, Encoders.row(schema));
  }

  /** The spec's data and the rules' names, read from replay.history_config's string. */
  static final class Config {
    final Map<String, String> legacy = new HashMap<>();
    final Map<String, List<String>> replicaValid = new HashMap<>();
    final Map<String, List<String>> partitionValid = new HashMap<>();
    final Map<String, List<String>> replicaHidden = new HashMap<>();
    final Map<String, List<String>> partitionHidden = new HashMap<>();
    final Map<String, String[]> names = new HashMap<>();

    Config(String text) {
      for (String record : text.split(RECORDS, -1)) {
        String[] u = record.split(UNITS, -1);
        switch (u[0]) {
          case "legacy" -> legacy.put(u[1], u[2]);
          case "valid" -> table(u[1], replicaValid, partitionValid).put(u[2], rest(u, 3));
          case "hidden" -> table(u[1], replicaHidden, partitionHidden).put(u[2], rest(u, 3));
          default -> names.put(u[0], Arrays.copyOfRange(u, 1, u.length));
        }
      }
    }

    private static Map<String, List<String>> table(
        String machine, Map<String, List<String>> replica, Map<String, List<String>> partition) {
      return switch (machine) {
        case "replica" -> replica;
        case "partition" -> partition;
        default -> throw new IllegalArgumentException("unknown machine " + machine);
      };
    }

    private static List<String> rest(String[] u, int from) {
      return List.of(Arrays.copyOfRange(u, from, u.length));
    }

    String[] get(String key) {
      String[] v = names.get(key);
      if (v == null) throw new IllegalArgumentException("history config lacks " + key);
      return v;
    }
  }

  /** A rule's code, section and the text its messages start with ("text: "). */
  record Rule(String code, String section, String lead) {
    static Rule of(String[] u) {
      return new Rule(u[0], u[1], u[2] + ": ");
    }
  }

  /** An element of a partition history in one controller epoch: the machine and the replica (if any). */
  record Element(boolean replica, Integer id, Integer controllerEpoch) {}

  /** The earlier record a rule compares a row with: its value (state or leader epoch) and where it is. */
  record Earlier<V>(V value, Integer fid, Long line) {}

  /** The fields of one row the rules read. */
  record Fields(
      Integer ce,
      Long ts,
      Integer fid,
      Long line,
      String kind,
      Integer replica,
      Integer controllerId,
      String from,
      String to,
      Integer leaderEpoch) {}

  /** The pass over one partition of sorted rows; violations come out as they are found. */
  static final class Walk implements Iterator<Row> {
    private final int[] ix;
    private final Iterator<Row> rows;
    private final Config c;
    private final String replicaKind;
    private final String partitionKind;
    private final String isrRemovalKind;
    private final String onlineState;
    private final String newState;
    private final String replicaMachine;
    private final String partitionMachine;
    private final Rule fromTracked;
    private final Rule mismatch;
    private final Rule epochRule;
    private final ArrayDeque<Row> ready = new ArrayDeque<>();

    // the group (hid, topic, partition) being walked, and what its rules remember
    private boolean started;
    private Integer hid;
    private String topic;
    private Integer partition;
    private final HashMap<Element, Earlier<String>> tracked = new HashMap<>();
    private Earlier<Integer> lastWrite;

    Walk(Config c, int[] ix, Iterator<Row> rows) {
      this.c = c;
      this.ix = ix;
      this.rows = rows;
      String[] kinds = c.get("kinds");
      replicaKind = kinds[0];
      partitionKind = kinds[1];
      isrRemovalKind = kinds[2];
      String[] states = c.get("states");
      onlineState = states[0];
      newState = states[1];
      String[] machines = c.get("machines");
      replicaMachine = machines[0];
      partitionMachine = machines[1];
      fromTracked = Rule.of(c.get("rule-from-tracked"));
      mismatch = Rule.of(c.get("rule-mismatch"));
      epochRule = Rule.of(c.get("rule-epoch"));
    }

    @Override
    public boolean hasNext() {
      while (ready.isEmpty() && rows.hasNext()) visit(rows.next());
      return !ready.isEmpty();
    }

    @Override
    public Row next() {
      if (!hasNext()) throw new NoSuchElementException();
      return ready.poll();
    }

    @SuppressWarnings("unchecked")
    private <T> T at(Row r, int j) {
      return (T) r.get(ix[j]);
    }

    private String norm(String state) {
      return state == null ? null : c.legacy.getOrDefault(state, state);
    }

    /** One row: a new group resets what the rules remember; then each rule that reads the row. */
    private void visit(Row r) {
      Integer h = at(r, 0);
      String t = at(r, 1);
      Integer p = at(r, 2);
      if (!started || !Objects.equals(h, hid) || !Objects.equals(p, partition) || !Objects.equals(t, topic)) {
        started = true;
        hid = h;
        topic = t;
        partition = p;
        tracked.clear();
        lastWrite = null;
      }
      Fields row =
          new Fields(at(r, 3), at(r, 4), at(r, 5), at(r, 6), at(r, 7), at(r, 8), at(r, 9), at(r, 10),
              at(r, 11), at(r, 12));
      boolean isReplica = replicaKind.equals(row.kind());
      boolean isPartition = partitionKind.equals(row.kind());
      boolean isRemoval = isrRemovalKind.equals(row.kind());
      if (isReplica || isPartition) trackedRules(row, isReplica);
      if ((isPartition && onlineState.equals(row.to()) && row.leaderEpoch() != null) || isRemoval)
        epochRule(row, isRemoval);
    }

    /**
     * §2.3: the tracked previous state (the target of the element's previous logged transition in this
     * controller epoch) against the transition's target and logged previous state. States are normalised
     * (legacy names) as replay._normalised did: the tracked state once, the row's states twice
     * (_machine_states normalised the already normalised rows again). A difference that transitions an
     * INFO log does not show explain (the hidden reach of the tracked state) is not reported.
     */
    private void trackedRules(Fields row, boolean isReplica) {
      String from1 = norm(row.from());
      String to1 = norm(row.to());
      Earlier<String> before =
          tracked.put(new Element(isReplica, row.replica(), row.ce()), new Earlier<>(to1, row.fid(), row.line()));
      if (before == null || before.value() == null) return;
      String was = before.value();
      String from = norm(from1);
      String to = norm(to1);
      List<String> valid = (isReplica ? c.replicaValid : c.partitionValid).get(to);
      List<String> hidden = (isReplica ? c.replicaHidden : c.partitionHidden).getOrDefault(was, List.of());
      String machine = isReplica ? replicaMachine : partitionMachine;
      String element = isReplica ? cat("replica ", row.replica(), " of ", tp()) : cat("partition ", tp());
      if (valid != null
          && !was.equals(from == null ? "" : from)
          && !valid.contains(was)
          && valid.stream().noneMatch(hidden::contains)) {
        String message =
            cat(
                fromTracked.lead(),
                element,
                " was last left in ",
                was,
                ", cannot go to ",
                to,
                " (valid previous states: ",
                String.join(",", valid),
                ")");
        emit(row, fromTracked, message, machine, before);
      }
      if (from != null && !was.equals(from) && !hidden.contains(from)) {
        String message =
            cat(
                mismatch.lead(),
                element,
                " logged from ",
                from,
                " but its previous transition in this controller epoch left it in ",
                was);
        emit(row, mismatch, message, machine, before);
      }
    }

    /**
     * §11 I6 (the decisions of replay's module comment): a write's leader epoch must exceed the previous
     * write's, except for a transition from NewPartition as logged (a new history) and an ISR removal that
     * repeats the previous epoch (§4.3 steps 3c and 4: a restatement of a partition that was not written).
     */
    private void epochRule(Fields row, boolean isRemoval) {
      Earlier<Integer> before = lastWrite;
      lastWrite = new Earlier<>(row.leaderEpoch(), row.fid(), row.line());
      if (before == null || before.value() == null || row.leaderEpoch() == null) return;
      int epoch = row.leaderEpoch();
      int previous = before.value();
      if (newState.equals(row.from()) || epoch > previous || (isRemoval && epoch == previous)) return;
      String message =
          cat(
              epochRule.lead(),
              "partition ",
              tp(),
              " written with leader epoch ",
              epoch,
              " after leader epoch ",
              previous,
              " at ");
      emit(row, epochRule, message, partitionMachine, before);
    }

    private String tp() {
      return cat(topic, "-", partition);
    }

    private void emit(Fields row, Rule rule, String message, String machine, Earlier<?> before) {
      ready.add(
          RowFactory.create(
              row.fid(),
              row.line(),
              row.ts(),
              rule.code(),
              rule.section(),
              message,
              machine,
              topic,
              partition,
              row.replica(),
              row.controllerId(),
              row.ce(),
              before.fid(),
              before.line()));
    }
  }

  /** The parts' text joined, or null if a part is null (Spark's concat). */
  static String cat(Object... parts) {
    StringBuilder b = new StringBuilder();
    for (Object p : parts) {
      if (p == null) return null;
      b.append(p);
    }
    return b.toString();
  }
}
