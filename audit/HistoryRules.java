package kcspec.audit;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.spark.Dependency;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The audit's rules over Kafka log records (replay.log_rules) in one pass over each sorted partition history.
 *
 * <p>Why: the history rules compare a record with an earlier one of the same partition history, and each
 * used to be a Spark window with its own shuffle and sort; the rules about one record were a scan of their
 * own with two joins. Here the controller's records are shuffled once by (hid, topic, partition) and sorted
 * once within the partitions, each group's rows by (controller_epoch, ts, fid, line) (replay.history_rules
 * does both); this class walks each group in that order, evaluates the rules about the record on every row
 * ({@code rowRules}: the fence and deletion data they look up arrive with the configuration), and the
 * history rules on the rows they read:
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
 * reachable through transitions an INFO log hides, the kinds and state names the rules look at, the
 * rules' codes, sections and texts, when each controller epoch was fenced and when each topic was queued
 * for deletion arrive from Python in one string (replay.history_config). The rules'
 * conditions and message words are written here only. Nulls behave as in the Spark expressions the pass
 * replaced: a comparison with a null holds for no rule, a message with a null part is null.
 *
 * <p>Decision (measured): a pass over the sorted query's internal rows, each column read by its type, the few
 * distinct names (topics, kinds, states, ISR lists) decoded once each: on 10 M lines the pass took 20.2 JVM
 * CPU s against 23.0-23.3 as a Dataset operation over rows (every column of every row decoded into a Java
 * object, through Spark's generic getter). The audit runs it over {@link #materialized} rows: the shuffle is
 * computed first (the logs read and parsed on the way), so the fence and deletion data the reader counted
 * reach the configuration, and the findings and quarantined lines that crossed the same shuffle are passed
 * on as they came ({@code passOn}), each once: the parse is stored nowhere.
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
    "leader_epoch",
    "leader",
    "isr",
    "exception",
    "role",
    "broker",
    "text",
    "reason",
    "era"
  };

  /**
   * {@code shuffled} (a repartitioned Dataset) as a Dataset over its computed shuffle: the shuffle's map stage
   * (and everything before it: the read and parse of the logs) has run when this returns, so what the
   * reader counted on the way is known before the rules' pass is planned, and every later query of the
   * returned Dataset reads the shuffle's files instead of computing them again.
   *
   * <p>Adaptive execution runs the map stages as soon as the query's RDD is asked for; without it (a small
   * input's session) the shuffle dependencies in the RDD's lineage are submitted here. A map stage whose
   * output exists completes at once.
   */
  public static Dataset<Row> materialized(Dataset<Row> shuffled) throws SparkException {
    RDD<InternalRow> rdd = shuffled.queryExecution().toRdd();
    runShuffles(rdd);
    return shuffled.sparkSession().internalCreateDataFrame(rdd, shuffled.schema(), false);
  }

  private static void runShuffles(RDD<?> rdd) throws SparkException {
    for (Dependency<?> d : CollectionConverters.asJava(rdd.dependencies())) {
      if (d instanceof ShuffleDependency<?, ?, ?> s) rdd.sparkContext().submitMapStage(s).get();
      else runShuffles(d.rdd());
    }
  }

  /**
   * The violations of the history rules over {@code sorted} (the rows of replay.history_rows, partitioned by
   * (hid, topic, partition) and sorted as the class comment says), as a Dataset of {@code schema}
   * (replay.LOG_VIOLATION_COLUMNS); {@code config} is replay.history_config.
   */
  public static Dataset<Row> apply(Dataset<Row> sorted, String config, StructType schema) {
    StructType in = sorted.schema();
    int[] index = new int[INPUT.length];
    DataType[] types = new DataType[INPUT.length];
    for (int j = 0; j < INPUT.length; j++) {
      index[j] = in.fieldIndex(INPUT[j]);
      types[j] = in.fields()[index[j]].dataType();
    }
    RDD<InternalRow> rows = sorted.queryExecution().toRdd();
    RDD<InternalRow> found = rows.toJavaRDD().mapPartitions(new Pass(config, index, types)).rdd();
    return sorted.sparkSession().internalCreateDataFrame(found, schema, false);
  }

  /** The task side of {@link #apply}: a {@link Walk} over each partition's sorted rows. */
  static final class Pass implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
    private static final long serialVersionUID = 1L;
    private final String config;
    private final int[] index;
    private final DataType[] types;

    Pass(String config, int[] index, DataType[] types) {
      this.config = config;
      this.index = index;
      this.types = types;
    }

    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
      return new Walk(configOf(config), index, types, rows);
    }

    /**
     * The last config read in this JVM, with its text: a pass's tasks (one per shuffle partition, about 40 on
     * 10 M lines) share one {@link Config} (read-only once made) instead of each parsing the text again.
     */
    private static volatile Object[] lastConfig;

    static Config configOf(String text) {
      Object[] last = lastConfig;
      if (last != null && last[0].equals(text)) return (Config) last[1];
      Config made = new Config(text);
      lastConfig = new Object[] {text, made};
      return made;
    }
  }

  /** The spec's data and the rules' names, read from replay.history_config's string. */
  static final class Config {
    final Map<String, String> legacy = new HashMap<>();
    final Map<String, List<String>> replicaValid = new HashMap<>();
    final Map<String, List<String>> partitionValid = new HashMap<>();
    final Map<String, List<String>> replicaHidden = new HashMap<>();
    final Map<String, List<String>> partitionHidden = new HashMap<>();
    final Map<String, String[]> names = new HashMap<>();
    /**
     * (history id, era, controller epoch) → {when a newer epoch first acted (ts key), its text, that epoch,
     * the file id and line of that first act (null when unknown)}.
     */
    final Map<List<Integer>, Object[]> fences = new HashMap<>();
    /** (history id, controller epoch) of the logs at TRACE: no transition of theirs is hidden. */
    final java.util.Set<List<Integer>> traced = new java.util.HashSet<>();
    /** (history id, topic) → its deletion intervals: {queued (ts key), completed (ts key) or null, text}. */
    final Map<List<Object>, List<Object[]>> deletions = new HashMap<>();

    Config(String text) {
      for (String record : text.split(RECORDS, -1)) {
        String[] u = record.split(UNITS, -1);
        switch (u[0]) {
          case "legacy" -> legacy.put(u[1], u[2]);
          case "valid" -> table(u[1], replicaValid, partitionValid).put(u[2], rest(u, 3));
          case "hidden" -> table(u[1], replicaHidden, partitionHidden).put(u[2], rest(u, 3));
          case "fence" ->
              fences.put(
                  List.of(Integer.valueOf(u[1]), Integer.valueOf(u[2]), Integer.valueOf(u[3])),
                  new Object[] {
                    Long.valueOf(u[4]),
                    u[5],
                    Integer.valueOf(u[6]),
                    u[7].isEmpty() ? null : Integer.valueOf(u[7]),
                    u[8].isEmpty() ? null : Long.valueOf(u[8])
                  });
          case "traced" -> traced.add(List.of(Integer.valueOf(u[1]), Integer.valueOf(u[2])));
          case "deletion" ->
              deletions
                  .computeIfAbsent(List.of(Integer.valueOf(u[1]), u[2]), k -> new java.util.ArrayList<>())
                  .add(new Object[] {Long.valueOf(u[3]), u[4].isEmpty() ? null : Long.valueOf(u[4]), u[5]});
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

  /** A name's bytes as a row holds them (a copy of its own) and its text. */
  record Named(UTF8String bytes, String text) {}

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
      Integer leaderEpoch,
      Integer leader,
      String isr,
      String exception) {}

  /** The pass over one partition of sorted rows; violations come out as they are found. */
  static final class Walk implements Iterator<InternalRow> {
    private final int[] ix;
    private final DataType[] types;
    /** How each input column is read: {@code INT}, {@code LONG}, {@code STRING} or by its type. */
    private final int[] getters;
    private final Iterator<InternalRow> rows;
    /** The texts of the few values a column of names holds (topics, kinds, states), decoded once each. */
    private final HashMap<UTF8String, Named> names = new HashMap<>();
    /**
     * Per input column, the last {@code RECENT} names read there: a row mostly holds a topic, kind, state or
     * ISR one of the rows just before held, found again by comparing bytes (lengths first), without hashing
     * them for {@code names}.
     */
    private final Named[][] recent = new Named[INPUT.length][RECENT];
    /** Per input column, where in {@code recent} the next name not found there goes. */
    private final int[] nextRecent = new int[INPUT.length];
    /** The fence (replay.fence_records) of the last (hid, era, controller epoch) looked up, and that key. */
    private Object[] fence;
    private Integer fenceHid;
    private Integer fenceEra;
    private Integer fenceCe;
    private boolean fenceKnown;
    /** Whether the last (hid, controller epoch) looked up is at TRACE, and that key. */
    private boolean traced;
    private Integer tracedHid;
    private Integer tracedCe;
    private boolean tracedKnown;
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
    private final Rule invalid;
    private final Rule notInIsr;
    private final Rule emptyIsr;
    private final Rule stale;
    private final Rule deleting;
    private final Rule rejected;
    private final Rule listDiffers;
    private final List<String> replicaMachineKinds;
    private final List<String> partitionMachineKinds;
    private final List<String> transitionKinds;
    private final List<String> leaderIsrKinds;
    private final List<String> writeKinds;
    private final List<String> failedKinds;
    private final String electionKind;
    private final String electionTarget;
    private final List<String> electionSources;
    private final int leaderDuringDelete;
    private final java.util.regex.Pattern printedList;
    private final String profileName;
    private final int eventRole;
    private final int findingRole;
    private final int quarantinedRole;
    private final String violationOut;
    private final String findingOut;
    private final String quarantinedOut;
    private final ArrayDeque<InternalRow> ready = new ArrayDeque<>();

    // the group (hid, topic, partition) being walked, and what its rules remember
    private boolean started;
    private Integer hid;
    private String topic;
    private Integer partition;
    private Integer era;
    private final HashMap<Element, Earlier<String>> tracked = new HashMap<>();
    private Earlier<Integer> lastWrite;

    Walk(Config c, int[] ix, DataType[] types, Iterator<InternalRow> rows) {
      this.c = c;
      this.ix = ix;
      this.types = types;
      getters = new int[types.length];
      for (int j = 0; j < types.length; j++) {
        DataType t = types[j];
        getters[j] =
            t instanceof org.apache.spark.sql.types.IntegerType
                ? INT
                : t instanceof org.apache.spark.sql.types.LongType
                    ? LONG
                    : t instanceof org.apache.spark.sql.types.StringType ? STRING : OTHER;
      }
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
      invalid = Rule.of(c.get("rule-invalid"));
      notInIsr = Rule.of(c.get("rule-not-in-isr"));
      emptyIsr = Rule.of(c.get("rule-empty-isr"));
      stale = Rule.of(c.get("rule-stale"));
      deleting = Rule.of(c.get("rule-deleting"));
      rejected = Rule.of(c.get("rule-rejected"));
      listDiffers = Rule.of(c.get("rule-list-differs"));
      replicaMachineKinds = List.of(c.get("replica-machine-kinds"));
      partitionMachineKinds = List.of(c.get("partition-machine-kinds"));
      transitionKinds = List.of(c.get("transition-kinds"));
      leaderIsrKinds = List.of(c.get("leader-isr-kinds"));
      writeKinds = List.of(c.get("write-kinds"));
      failedKinds = List.of(c.get("failed-kinds"));
      String[] election = c.get("election");
      electionKind = election[0];
      electionTarget = election[1];
      electionSources = List.of(Arrays.copyOfRange(election, 2, election.length));
      leaderDuringDelete = Integer.parseInt(c.get("leader-during-delete")[0]);
      printedList = java.util.regex.Pattern.compile(c.get("printed-list")[0]);
      profileName = c.get("profile")[0];
      String[] roles = c.get("roles");
      eventRole = Integer.parseInt(roles[0]);
      findingRole = Integer.parseInt(roles[1]);
      quarantinedRole = Integer.parseInt(roles[2]);
      String[] outputs = c.get("outputs");
      violationOut = outputs[0];
      findingOut = outputs[1];
      quarantinedOut = outputs[2];
    }

    @Override
    public boolean hasNext() {
      while (ready.isEmpty() && rows.hasNext()) visit(rows.next());
      return !ready.isEmpty();
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) throw new NoSuchElementException();
      return ready.poll();
    }

    /** Input column {@code j} (of {@code INPUT}) of {@code r} as Spark holds it (a string as UTF8String). */
    private Object raw(InternalRow r, int j) {
      int i = ix[j];
      // the local engine's rows: what each getter below returns of one, boxed, is its value as it holds it
      if (r instanceof org.apache.spark.sql.catalyst.expressions.GenericInternalRow g) return g.values()[i];
      if (r.isNullAt(i)) return null;
      return switch (getters[j]) {
        case INT -> r.getInt(i);
        case LONG -> r.getLong(i);
        case STRING -> r.getUTF8String(i);
        default -> r.get(i, types[j]);
      };
    }

    /** Input column {@code j} of {@code r} as a Java value (a string as a String). */
    @SuppressWarnings("unchecked")
    private <T> T at(InternalRow r, int j) {
      Object v = raw(r, j);
      if (!(v instanceof UTF8String u)) return (T) v;
      if (j != 1 && j != 7 && j != 10 && j != 11 && j != 14) return (T) u.toString();
      Named[] seen = recent[j];
      for (Named k : seen) {
        if (k == null) break;
        if (k.bytes().equals(u)) return (T) k.text();
      }
      Named n = names.get(u);
      if (n == null) {
        n = new Named(u.clone(), u.toString()); // the row's bytes are reused for the next row
        if (names.size() < NAMES) names.put(n.bytes(), n);
      }
      seen[nextRecent[j]] = n;
      nextRecent[j] = (nextRecent[j] + 1) % RECENT;
      return (T) n.text();
    }

    /** Input column {@code j} of {@code r}, kept beyond the row (its bytes are reused for the next row). */
    private Object copy(InternalRow r, int j) {
      Object v = raw(r, j);
      return v instanceof UTF8String u ? u.clone() : v;
    }

    private String norm(String state) {
      return state == null ? null : c.legacy.getOrDefault(state, state);
    }

    /**
     * One row: a finding or a quarantined line goes out as it came in; a record the rules read (a row without
     * a role is one) starts a new group if its group differs (what the rules remember is reset), then each
     * rule that reads it runs.
     */
    private void visit(InternalRow r) {
      Integer role = at(r, 16);
      int bits = role == null ? eventRole : role;
      if ((bits & (findingRole | quarantinedRole)) != 0) passOn(r, (bits & findingRole) != 0);
      if ((bits & eventRole) == 0) return;
      Integer h = at(r, 0);
      String t = at(r, 1);
      Integer p = at(r, 2);
      Integer e = at(r, 20);
      if (!started
          || !Objects.equals(h, hid)
          || !Objects.equals(p, partition)
          || !Objects.equals(t, topic)
          || !Objects.equals(e, era)) {
        // a new group, or a new era of its history (eras.py): nothing of the earlier rows is compared with
        started = true;
        hid = h;
        topic = t;
        partition = p;
        era = e;
        tracked.clear();
        lastWrite = null;
      }
      Fields row =
          new Fields(at(r, 3), at(r, 4), at(r, 5), at(r, 6), at(r, 7), at(r, 8), at(r, 9), at(r, 10),
              at(r, 11), at(r, 12), at(r, 13), at(r, 14), at(r, 15));
      rowRules(row);
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
      boolean atTrace = tracedAt(row.ce());
      List<String> hidden =
          atTrace
              ? List.of()
              : (isReplica ? c.replicaHidden : c.partitionHidden).getOrDefault(was, List.of());
      String machine = isReplica ? replicaMachine : partitionMachine;
      if (valid != null
          && !was.equals(from == null ? "" : from)
          && !valid.contains(was)
          && valid.stream().noneMatch(hidden::contains)) {
        String message =
            cat(
                fromTracked.lead(),
                element(isReplica, row),
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
                element(isReplica, row),
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

    /**
     * The rules about one record (replay.log_rules' "row rules" and "failure rules"): a transition not
     * valid from its logged previous state (§2.1/§2.2, I20), a leader outside a logged ISR (§11 I1), an
     * empty ISR (§11 I3; leader -2, UpdateMetadata for a topic being deleted, §3.2, is exempt), a write by a
     * controller after a newer one acted (§9, I8: ``fence``), an election of a partition whose topic is
     * queued for deletion (§11 I13: ``deletion``; New → Online is no election), and a failed transition
     * against the valid previous states Kafka printed in the exception after it (§2.3 step 4, §10.3). States
     * of a machine's records are normalised (legacy names) once, as replay._machine_states did; the
     * deletion rule reads them as logged.
     */
    private void rowRules(Fields row) {
      String kind = row.kind();
      boolean ofReplica = replicaMachineKinds.contains(kind);
      boolean ofPartition = partitionMachineKinds.contains(kind);
      String machine = ofReplica ? replicaMachine : ofPartition ? partitionMachine : null;
      String from = machine == null ? row.from() : norm(row.from());
      String to = machine == null ? row.to() : norm(row.to());
      List<String> valid =
          ofReplica ? c.replicaValid.get(to) : ofPartition ? c.partitionValid.get(to) : null;
      // the texts only a violation's message reads are made when one is found
      if (transitionKinds.contains(kind) && from != null && valid != null && !valid.contains(from)) {
        String message =
            cat(
                invalid.lead(),
                element(ofReplica, row),
                " from ",
                from,
                " to ",
                to,
                " (valid previous states: ",
                String.join(",", valid),
                ")");
        emit(row, invalid, message, machine, null);
      }
      if (leaderIsrKinds.contains(kind) && row.isr() != null && row.leader() != null) {
        int leader = row.leader();
        if (leader >= 0 && Boolean.FALSE.equals(isrHolds(row.isr(), leader))) {
          emit(row, notInIsr, cat(notInIsr.lead(), leaderState(row)), partitionMachine, null);
        }
        if (leader != leaderDuringDelete && row.isr().isEmpty()) {
          emit(row, emptyIsr, cat(emptyIsr.lead(), leaderState(row)), partitionMachine, null);
        }
      }
      Object[] fence = writeKinds.contains(kind) ? fenceOf(row.ce()) : null;
      if (fence != null && row.ts() != null && row.ts() > (Long) fence[0]) {
        String message =
            cat(
                stale.lead(),
                kind,
                " by controller ",
                row.controllerId(),
                " with epoch ",
                row.ce(),
                " after controller epoch ",
                fence[2],
                " acted at ",
                fence[1]);
        // the line compared with: the newer epoch's first act (its file and line, when the reader knew them)
        Earlier<Integer> newer =
            fence[3] == null
                ? null
                : new Earlier<>((Integer) fence[2], (Integer) fence[3], (Long) fence[4]);
        emit(row, stale, message, null, newer);
      }
      if (electionKind.equals(kind)
          && electionTarget.equals(row.to())
          && electionSources.contains(row.from())
          && row.ts() != null
          && hid != null
          && topic != null) {
        List<Object[]> intervals = c.deletions.get(List.of(hid, topic));
        if (intervals != null) {
          for (Object[] iv : intervals) {
            long q = (Long) iv[0];
            Long d = (Long) iv[1];
            if (row.ts() > q && (d == null || row.ts() < d)) {
              String message =
                  cat(
                      deleting.lead(),
                      "partition ",
                      tp(),
                      " moved ",
                      row.from(),
                      " → ",
                      electionTarget,
                      " while topic ",
                      topic,
                      " was queued for deletion (since ",
                      iv[2],
                      ")");
              emit(row, deleting, message, partitionMachine, null);
            }
          }
        }
      }
      if (failedKinds.contains(kind)) {
        String printed = "";
        if (row.exception() != null) {
          java.util.regex.Matcher m = printedList.matcher(row.exception());
          if (m.find()) printed = m.group(1) == null ? "" : m.group(1);
        }
        if (!printed.isEmpty() && valid != null && from != null && valid.contains(from)) {
          String message =
              cat(
                  rejected.lead(),
                  element(ofReplica, row),
                  " from ",
                  from,
                  " to ",
                  to,
                  " was rejected; the spec's valid previous states are ",
                  String.join(",", valid));
          emit(row, rejected, message, machine, null);
        }
        String validList = valid == null ? "" : String.join(",", valid);
        if (!printed.isEmpty() && !printed.equals(validList)) {
          String message =
              cat(
                  listDiffers.lead(),
                  "Kafka printed ",
                  printed,
                  " for target ",
                  to,
                  ", profile " + profileName + " has ",
                  validList);
          emit(row, listDiffers, message, machine, null);
        }
      }
    }

    /** How a message names the row's element: "replica R of T-P" or "partition T-P". */
    private String element(boolean ofReplica, Fields row) {
      return ofReplica ? cat("replica ", row.replica(), " of ", tp()) : cat("partition ", tp());
    }

    /** How the leader and ISR rules' messages show a row: partition, leader, ISR, leader epoch, kind. */
    private String leaderState(Fields row) {
      return cat(
          "partition ",
          tp(),
          ": leader ",
          row.leader(),
          ", ISR [",
          row.isr(),
          "], leader epoch ",
          row.leaderEpoch() == null ? "?" : row.leaderEpoch(),
          " (",
          row.kind(),
          ")");
    }

    /**
     * Whether the group's history logs at TRACE in controller epoch {@code ce} (replay.traced_epochs); the last
     * answer is kept, as {@code fenceOf}'s.
     */
    private boolean tracedAt(Integer ce) {
      if (hid == null || ce == null) return false;
      if (!tracedKnown || !hid.equals(tracedHid) || !ce.equals(tracedCe)) {
        traced = c.traced.contains(List.of(hid, ce));
        tracedHid = hid;
        tracedCe = ce;
        tracedKnown = true;
      }
      return traced;
    }

    /**
     * The fence of the group's history and era at controller epoch {@code ce} (replay.fence_records), or
     * null; the last one looked up is kept, since a group's rows mostly share their controller epoch.
     */
    private Object[] fenceOf(Integer ce) {
      if (hid == null || ce == null || era == null) return null;
      if (!fenceKnown || !hid.equals(fenceHid) || !era.equals(fenceEra) || !ce.equals(fenceCe)) {
        fence = c.fences.get(List.of(hid, era, ce));
        fenceHid = hid;
        fenceEra = era;
        fenceCe = ce;
        fenceKnown = true;
      }
      return fence;
    }

    /**
     * Whether the logged ISR (comma-separated broker ids; "" is empty) holds {@code leader}, as Spark's
     * array_contains over the ISR cast to ints: true if it does, null if it does not but holds an entry
     * that is no number, false otherwise.
     */
    static Boolean isrHolds(String isr, int leader) {
      if (isr.isEmpty()) return Boolean.FALSE;
      boolean unknown = false;
      for (String part : isr.split(",", -1)) {
        Integer id = toInt(part);
        if (id == null) unknown = true;
        else if (id == leader) return Boolean.TRUE;
      }
      return unknown ? null : Boolean.FALSE;
    }

    private static Integer toInt(String s) {
      try {
        return Integer.valueOf(s.trim());
      } catch (NumberFormatException e) {
        return null;
      }
    }

    private String tp() {
      return cat(topic, "-", partition);
    }

    private void emit(Fields row, Rule rule, String message, String machine, Earlier<?> before) {
      ready.add(
          out(
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
              before == null ? null : before.fid(),
              before == null ? null : before.line(),
              violationOut,
              null,
              null,
              null,
              null,
              null,
              null,
              null));
    }

    /**
     * A finding or a quarantined line, as the pass read it (no rule, no message, no earlier line); a
     * finding keeps its logged from- and to-state (its severity depends on them: findings.severity_of).
     */
    private void passOn(InternalRow r, boolean finding) {
      ready.add(
          out(
              copy(r, 5),
              copy(r, 6),
              copy(r, 4),
              null,
              null,
              null,
              null,
              copy(r, 1),
              copy(r, 2),
              copy(r, 8),
              copy(r, 9),
              copy(r, 3),
              null,
              null,
              finding ? findingOut : quarantinedOut,
              copy(r, 7),
              copy(r, 17),
              copy(r, 15),
              copy(r, 18),
              copy(r, 19),
              copy(r, 10),
              copy(r, 11)));
    }
  }

  static final int INT = 0;
  static final int LONG = 1;
  static final int STRING = 2;
  static final int OTHER = 3;

  /** How many of the names last read in a column a pass compares a name with before it hashes it. */
  static final int RECENT = 8;

  /** How many distinct names a pass remembers the text of (beyond them, each is decoded where read). */
  static final int NAMES = 4096;

  /** An output row of {@code values} (a String as Spark's UTF8String). */
  static InternalRow out(Object... values) {
    for (int i = 0; i < values.length; i++) {
      if (values[i] instanceof String s) values[i] = UTF8String.fromString(s);
    }
    return new GenericInternalRow(values);
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
