package kcspec.audit;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The audit's local engine (audit/local_engine.py): the reader of {@link LineParser} and the rules' pass of
 * {@link HistoryRules} in one plain JVM process, without a SparkContext, for inputs one machine handles.
 *
 * <p>Why: a Spark session's start alone costs about 10 JVM CPU s, more than three times a single-process
 * Python pass over a broker's folder of 876,000 lines; the reading, parsing and the rules themselves cost a
 * few. Nothing of the grammar or of the rules is written here: the same {@code FileReader} reads the files,
 * the same {@code Walk} walks each partition history (Spark's row classes carry the rows, as in a Spark
 * task), and what this class adds is what Spark did around them: keep the rows the pass reads
 * (replay.pass_rows), number the eras (replay.era_column), sort the rows as replay._walk does, and write
 * Parquet as Spark's writer does (the same parquet-mr, snappy, Spark's schema in the footer).
 *
 * <p>The Python side talks to it over standard input and output: each message is a list of strings, each
 * string written as its UTF-8 length (a big-endian int) and bytes, a list ending with the length -1. Commands:
 * {@code read} (parse every file; answers the statistics' cells), {@code pass} (the rules' pass with one
 * profile's configuration, or the findings and quarantined lines passed on alone; writes its rows as JSON
 * arrays, one a line, into a file; answers how many), {@code parquet} (JSON lines of given columns into a
 * Parquet folder) and {@code end}. It ends when its standard input closes. The Python side may send a command
 * and work on while it runs (local_engine.LocalJvm.send): after {@code read}'s answer the passed-on rows are
 * written, and the histories sorted for the rules ({@link #presort}), while it reads the cells; the findings
 * are written there while the rules walk.
 */
public final class LocalAudit {
  private LocalAudit() {}

  /** The rows the pass reads (role &gt; 0), each the reader's stored row with role and era appended. */
  private static final List<Object[]> kept = new ArrayList<>();

  /**
   * The kept rows by partition history, each history in the pass's order but for the era ({@link #presort}),
   * computed in the background once the cells are answered: while the Python side reads them.
   */
  private static java.util.concurrent.Future<List<List<Object[]>>> presorted;

  private static final java.util.concurrent.ExecutorService background =
      java.util.concurrent.Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "presort");
            t.setDaemon(true);
            return t;
          });

  private static String[] names;
  private static int[] ix;
  private static DataType[] types;

  public static void main(String[] args) throws Exception {
    DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
    // the answers go to the pipe whose descriptor is args[0] (local_engine.LocalJvm), never to standard
    // output: the JVM writes there by itself (-Xlog, -XX:+PrintFlagsFinal, a recording's notice), before
    // main runs and beside it, and a stray byte in the answers' framing would deadlock both processes.
    // Anything a library prints goes to stderr, as the JVM's own standard output does (both to the log).
    if (args.length != 2 || !args[0].matches("[0-9]+")) {
      throw new IllegalArgumentException(
          "usage: LocalAudit ANSWER_FD WORK_DIR (got " + java.util.Arrays.toString(args) + ")");
    }
    DataOutputStream out =
        new DataOutputStream(
            new BufferedOutputStream(new java.io.FileOutputStream("/dev/fd/" + args[0]), 1 << 16));
    System.setOut(System.err);
    java.nio.file.Path work = java.nio.file.Path.of(args[1]);
    Thread warm = new Thread(() -> warmParquet(work), "parquet-warm-up");
    warm.setDaemon(true);
    warm.setPriority(Thread.MIN_PRIORITY);
    warm.start();
    while (true) {
      List<String> m;
      try {
        m = receive(in);
      } catch (EOFException closed) {
        return; // the audit ended: so does this process
      }
      List<String> answer =
          switch (m.get(0)) {
            case "read" -> read(m);
            case "pass" -> pass(m);
            case "parquet" -> parquet(m);
            case "end" -> null;
            default -> throw new IllegalArgumentException("unknown command " + m.get(0));
          };
      if (answer == null) return;
      send(out, answer);
    }
  }

  static List<String> receive(DataInputStream in) throws IOException {
    List<String> m = new ArrayList<>();
    while (true) {
      int n = in.readInt();
      if (n < 0) return m;
      m.add(new String(in.readNBytes(n), StandardCharsets.UTF_8));
    }
  }

  static void send(DataOutputStream out, List<String> m) throws IOException {
    for (String s : m) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      out.writeInt(b.length);
      out.write(b);
    }
    out.writeInt(-1);
    out.flush();
  }

  /**
   * {@code read config listing fieldIndex transitionKinds deletionKinds cubeFields columns writeKinds
   * findingKinds roles}: every file read and parsed ({@code LineParser.readLocal}); the rows of the records
   * of {@code writeKinds} (role event), of {@code findingKinds} (role finding) and the quarantined lines (role
   * quarantined) kept, as replay.pass_rows keeps them; answers the cube's text. {@code columns}: the stored
   * row's "name type" pairs, then role's and era's.
   */
  static List<String> read(List<String> m) {
    String[] cols = m.get(7).split(",", -1);
    names = new String[cols.length];
    types = new DataType[cols.length];
    for (int j = 0; j < cols.length; j++) {
      String[] nt = cols[j].trim().split(" ", -1);
      names[j] = nt[0];
      types[j] =
          switch (nt[1]) {
            case "int" -> DataTypes.IntegerType;
            case "long" -> DataTypes.LongType;
            default -> DataTypes.StringType;
          };
    }
    ix = new int[HistoryRules.INPUT.length];
    List<String> named = Arrays.asList(names);
    DataType[] inputTypes = new DataType[ix.length];
    for (int j = 0; j < ix.length; j++) {
      ix[j] = named.indexOf(HistoryRules.INPUT[j]);
      if (ix[j] < 0) throw new IllegalArgumentException("no column " + HistoryRules.INPUT[j]);
      inputTypes[j] = types[ix[j]];
    }
    types = inputTypes;
    // the kinds and statuses as the reader's rows hold them: no row's text decoded to tell its role
    Set<UTF8String> writes = utf8(m.get(8));
    Set<UTF8String> finds = utf8(m.get(9));
    UTF8String recordStatus = UTF8String.fromString("record");
    UTF8String quarantinedStatus = UTF8String.fromString("quarantined");
    String[] roles = m.get(10).split(",", -1);
    int event = Integer.parseInt(roles[0]);
    int finding = Integer.parseInt(roles[1]);
    int quarantined = Integer.parseInt(roles[2]);
    int stored = names.length - 2;
    int status = named.indexOf("status");
    int kind = named.indexOf("kind");
    int text = named.indexOf("text");
    String[][] files = LineParser.listing(m.get(2));
    int[] fieldIndex = LineParser.fieldIndex(m.get(3));
    // the files in THREADS shares of about equal bytes, each read by its own reader into its own cube
    int threads = Math.max(1, Math.min(files.length, THREADS));
    List<List<String[]>> shares = new ArrayList<>();
    long[] bytes = new long[threads];
    for (int t = 0; t < threads; t++) shares.add(new ArrayList<>());
    Integer[] bySize = new Integer[files.length];
    long[] size = new long[files.length];
    for (int i = 0; i < files.length; i++) {
      bySize[i] = i;
      size[i] = new java.io.File(files[i][0]).length();
    }
    Arrays.sort(bySize, (a, b) -> Long.compare(size[b], size[a]));
    for (int i : bySize) {
      int least = 0;
      for (int t = 1; t < threads; t++) if (bytes[t] < bytes[least]) least = t;
      shares.get(least).add(files[i]);
      bytes[least] += size[i];
    }
    List<java.util.concurrent.Future<List<Object[]>>> parts = new ArrayList<>();
    List<LineParser.Cube> cubes = new ArrayList<>();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      for (List<String[]> share : shares) {
        LineParser.Cube mine = new LineParser.Cube(m.get(4), m.get(5), m.get(6));
        cubes.add(mine);
        String[][] these = share.toArray(new String[0][]);
        parts.add(
            pool.submit(
                () -> {
                  List<Object[]> out = new ArrayList<>();
                  HashMap<UTF8String, UTF8String> shared = new HashMap<>();
                  Iterator<InternalRow> rows = LineParser.readLocal(m.get(1), these, fieldIndex, mine);
                  while (rows.hasNext()) {
                    InternalRow r = rows.next();
                    UTF8String s = r.getUTF8String(status);
                    boolean isQuarantined = s.equals(quarantinedStatus);
                    int role = isQuarantined ? quarantined : 0;
                    if (s.equals(recordStatus)) {
                      UTF8String k = r.getUTF8String(kind);
                      role += (writes.contains(k) ? event : 0) + (finds.contains(k) ? finding : 0);
                    }
                    if (role == 0) continue;
                    Object[] row = Arrays.copyOf(((GenericInternalRow) r).values(), stored + 2);
                    // replay.pass_rows: the text of quarantined lines only
                    if (!isQuarantined) row[text] = null;
                    share(row, shared);
                    row[stored] = role;
                    out.add(row);
                  }
                  return out;
                }));
      }
      List<List<Object[]>> read = new ArrayList<>();
      for (java.util.concurrent.Future<List<Object[]>> part : parts) read.add(join(part));
      byFile(read, named.indexOf("fid"));
    } finally {
      pool.shutdownNow();
    }
    LineParser.Cube cube = cubes.get(0);
    for (LineParser.Cube other : cubes.subList(1, cubes.size())) cube.merge(other);
    presorted = background.submit(LocalAudit::presort);
    return List.of(cube.text());
  }

  /**
   * The rows of {@code parts} (each reader's, file after file) kept in the order of their file ids (the
   * listing's order), each file's in the order read: a stable counting sort by {@code fid} (column {@code
   * at}). Decision (measured on a folder of 5,000 rotated files): the readers take the
   * files by size, so a history's rows came in the order of the files' sizes and {@link #presort} sorted
   * them from scratch; in the listing's order, rotated files named by date or number hand it runs already
   * in order (a timestamp's order within a file is the log's), which its merge sort only joins.
   */
  private static void byFile(List<List<Object[]>> parts, int at) {
    int files = 0;
    for (List<Object[]> part : parts) for (Object[] row : part) files = Math.max(files, (Integer) row[at] + 1);
    int[] start = new int[files + 1];
    for (List<Object[]> part : parts) for (Object[] row : part) start[(Integer) row[at] + 1]++;
    for (int f = 0; f < files; f++) start[f + 1] += start[f];
    Object[][] rows = new Object[start[files]][];
    for (List<Object[]> part : parts) for (Object[] row : part) rows[start[(Integer) row[at]]++] = row;
    kept.clear();
    kept.addAll(Arrays.asList(rows));
  }

  /**
   * The kept rows by partition history (replay.HISTORY_KEYS; the histories in the order of a HashMap of their
   * keys filled in the kept rows' order), each history sorted by replay.HISTORY_ORDER but for its first key,
   * the era, which the eras' starts decide later: controller epoch, timestamp, file, line, nulls first. A
   * stable sort by era alone then gives the pass's order (replay._walk's sort) at the cost of a pass over
   * already sorted rows.
   */
  static List<List<Object[]>> presort() {
    HashMap<List<Object>, List<Object[]>> byHistory = new HashMap<>();
    for (Object[] row : kept) {
      List<Object> key = Arrays.asList(row[ix[0]], row[ix[1]], row[ix[2]]);
      byHistory.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
    }
    int oEpoch = ix[3];
    int oTs = ix[4];
    int oFid = ix[5];
    int oLine = ix[6];
    // each column compared as its type (a monomorphic comparison: the sort took a third of the pass through
    // Comparable.compareTo on boxed values)
    Comparator<Object[]> byOrder =
        (a, b) -> {
          int c = compareInt(a[oEpoch], b[oEpoch]);
          if (c == 0) c = compareLong(a[oTs], b[oTs]);
          if (c == 0) c = compareInt(a[oFid], b[oFid]);
          if (c == 0) c = compareLong(a[oLine], b[oLine]);
          return c;
        };
    List<List<Object[]>> histories = new ArrayList<>(byHistory.values());
    for (List<Object[]> h : histories) h.sort(byOrder);
    return histories;
  }

  /** The comma-separated names of {@code list} as UTF8Strings. */
  private static Set<UTF8String> utf8(String list) {
    Set<UTF8String> out = new HashSet<>();
    for (String name : list.split(",", -1)) out.add(UTF8String.fromString(name));
    return out;
  }

  /**
   * The short strings of a kept row (states, kinds, topics, ISR lists, statuses: a few distinct values
   * each) replaced by one shared copy per value: decision (measured on 838,000 kept rows of a folder of
   * 5,000 files) — each row held its own copies, and the young collections that copy the kept rows to the
   * old generation copied them all.
   */
  private static void share(Object[] row, HashMap<UTF8String, UTF8String> shared) {
    for (int j = 0; j < row.length; j++) {
      if (row[j] instanceof UTF8String u && u.numBytes() <= SHARED_BYTES) {
        UTF8String one = shared.get(u);
        if (one != null) row[j] = one;
        else if (shared.size() < SHARED_VALUES) shared.put(u, u);
      }
    }
  }

  /** The longest string {@link #share} shares, and how many distinct values one reader shares. */
  private static final int SHARED_BYTES = 64;

  private static final int SHARED_VALUES = 8192;

  /**
   * {@code pass config starts fids passthrough path roles}: replay.log_pass over the kept rows: {@code fids}
   * the files whose records the rules read (empty: all), {@code passthrough} "1" to pass findings and
   * quarantined lines on as well, "only" to pass them on alone (no record read by the rules: they need
   * neither the eras nor the histories' order, so the Python side asks for them before it knows those);
   * {@code starts} the eras' starts, "hid:ts,ts;…". Writes the pass's rows (replay.RESULT_SCHEMA) to {@code
   * path}; answers how many.
   */
  static List<String> pass(List<String> m) throws IOException {
    Map<Integer, long[]> starts = new HashMap<>();
    for (String h : m.get(2).split(";", -1)) {
      if (h.isEmpty()) continue;
      String[] p = h.split(":", -1);
      long[] ts = Arrays.stream(p[1].split(",", -1)).mapToLong(Long::parseLong).toArray();
      Arrays.sort(ts);
      starts.put(Integer.valueOf(p[0]), ts);
    }
    Set<Integer> fids = null;
    if (!m.get(3).isEmpty()) {
      fids = new HashSet<>();
      for (String f : m.get(3).split(",", -1)) fids.add(Integer.valueOf(f));
    }
    boolean only = m.get(4).equals("only");
    boolean passthrough = only || m.get(4).equals("1");
    String[] roles = m.get(6).split(",", -1);
    int event = Integer.parseInt(roles[0]);
    int others = Integer.parseInt(roles[1]) | Integer.parseInt(roles[2]);
    int role = ix[16];
    int era = ix[20];
    int hid = ix[0];
    int ts = ix[4];
    int fid = ix[5];
    // the rows by partition history (replay.HISTORY_KEYS), each history sorted by replay.HISTORY_ORDER with
    // nulls first, as replay._walk sorts them (the order of the histories themselves does not matter): the
    // presorted histories, each filtered, given its eras and sorted by era (stable: the rest of the order
    // is the presort's)
    List<List<Object[]>> histories = new ArrayList<>();
    for (List<Object[]> h : only ? List.of(kept) : join(presorted)) {
      List<Object[]> rows = new ArrayList<>(h.size());
      boolean eras = false;
      for (Object[] r : h) {
        Object[] row = r;
        int bits = (Integer) r[role];
        boolean isEvent =
            !only && (bits & event) != 0 && (fids == null || fids.contains((Integer) r[fid]));
        int now = (isEvent ? event : 0) + (passthrough ? bits & others : 0);
        if (now == 0) continue;
        if (now != bits) {
          row = r.clone();
          row[role] = now;
        }
        long[] mine = only ? null : starts.get((Integer) row[hid]);
        int reached = 0;
        if (mine != null) {
          long at = row[ts] == null ? -1 : (Long) row[ts];
          while (reached < mine.length && mine[reached] <= at) reached++;
        }
        row[era] = reached;
        eras |= reached > 0;
        rows.add(row);
      }
      if (eras) rows.sort((a, b) -> Integer.compare((Integer) a[era], (Integer) b[era]));
      if (!rows.isEmpty()) histories.add(rows);
    }
    // the histories in THREADS pieces of about equal rows, one Walk each
    histories.sort((a, b) -> Integer.compare(b.size(), a.size()));
    int threads = Math.max(1, Math.min(THREADS, histories.size()));
    List<List<List<Object[]>>> pieces = new ArrayList<>();
    long[] load = new long[threads];
    for (int t = 0; t < threads; t++) pieces.add(new ArrayList<>());
    for (List<Object[]> h : histories) {
      int least = 0;
      for (int t = 1; t < threads; t++) if (load[t] < load[least]) least = t;
      pieces.get(least).add(h);
      load[least] += h.size();
    }
    String config = m.get(1);
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(Math.max(1, pieces.size()));
    long n = 0;
    try (BufferedWriter w =
        Files.newBufferedWriter(java.nio.file.Path.of(m.get(5)), StandardCharsets.UTF_8)) {
      List<java.util.concurrent.Future<StringBuilder>> walked = new ArrayList<>();
      long[] counts = new long[pieces.size()];
      for (int p = 0; p < pieces.size(); p++) {
        List<List<Object[]>> piece = pieces.get(p);
        int which = p;
        walked.add(
            pool.submit(
                () -> {
                  Iterator<InternalRow> sorted =
                      piece.stream()
                          .flatMap(List::stream)
                          .map(r -> (InternalRow) new GenericInternalRow(r))
                          .iterator();
                  HistoryRules.Walk walk =
                      new HistoryRules.Walk(new HistoryRules.Config(config), ix, types, sorted);
                  StringBuilder b = new StringBuilder(1 << 16);
                  while (walk.hasNext()) {
                    InternalRow r = walk.next();
                    b.append('[');
                    for (int j = 0; j < r.numFields(); j++) {
                      if (j > 0) b.append(',');
                      json(b, r.isNullAt(j) ? null : ((GenericInternalRow) r).values()[j]);
                    }
                    b.append("]\n");
                    counts[which]++;
                  }
                  return b;
                }));
      }
      for (java.util.concurrent.Future<StringBuilder> piece : walked) w.append(join(piece));
      for (long c : counts) n += c;
    } finally {
      pool.shutdownNow();
    }
    return List.of(Long.toString(n));
  }

  /** The threads that read files, and that walk histories: the machine's processors, at most four. */
  static final int THREADS = Math.min(4, Runtime.getRuntime().availableProcessors());

  /** A task's result; its failure rethrown as it was (an error of the reader is the run's error). */
  static <T> T join(java.util.concurrent.Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) throw r;
      if (e.getCause() instanceof Error r) throw r;
      throw new IllegalStateException(e.getCause());
    }
  }

  /** Two Integer columns, nulls first (as replay._walk sorts). */
  private static int compareInt(Object a, Object b) {
    if (a == null) return b == null ? 0 : -1;
    if (b == null) return 1;
    return Integer.compare((Integer) a, (Integer) b);
  }

  /** Two Long columns, nulls first. */
  private static int compareLong(Object a, Object b) {
    if (a == null) return b == null ? 0 : -1;
    if (b == null) return 1;
    return Long.compare((Long) a, (Long) b);
  }

  /** {@code v} as JSON: null, a number, or a string (UTF8String or String) with JSON's escapes. */
  static void json(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Number) {
      b.append(v);
    } else {
      String s = v.toString();
      b.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"' -> b.append("\\\"");
          case '\\' -> b.append("\\\\");
          case '\n' -> b.append("\\n");
          case '\r' -> b.append("\\r");
          case '\t' -> b.append("\\t");
          default -> {
            if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
          }
        }
      }
      b.append('"');
    }
  }

  /**
   * One empty Parquet file written into a folder of the run's work folder ({@code work}, which the audit
   * removes however it ends), and the folder removed: Hadoop's file system, parquet-mr's writer and Snappy
   * loaded and initialised while the files are read, not when the first output is written. Decision
   * (measured on a folder of 5,000 files): the first {@code parquet} command took 1.1 s, the second 0.02.
   * Best effort: a failure here is left to the real write to report.
   */
  static void warmParquet(java.nio.file.Path work) {
    java.nio.file.Path dir = null;
    try {
      dir = Files.createTempDirectory(work, "parquet-warm-up-");
      java.nio.file.Path rows = Files.createFile(dir.resolve("rows.jsonl"));
      String out = dir.resolve("out").toString();
      parquet(List.of("parquet", rows.toString(), "n int, s string", "{}", "0", out));
    } catch (Throwable ignored) {
      // the real write reports its own failure
    } finally {
      if (dir != null) {
        try (java.util.stream.Stream<java.nio.file.Path> all = Files.walk(dir)) {
          all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | RuntimeException ignored) {
          // a temporary folder left behind
        }
      }
    }
  }

  /**
   * {@code parquet jsonl columns sparkSchema sparkVersion folder}: the rows of {@code jsonl} (one JSON object
   * a line, as report.json_line writes them) into {@code folder} as Spark writes a DataFrame of one
   * partition: one snappy part file and {@code _SUCCESS}; {@code columns} "name type" pairs (string, int,
   * long), every column optional; Spark's schema ({@code sparkSchema}, its JSON) and version in the footer's
   * metadata, as Spark's writer puts them. Answers how many rows.
   */
  static List<String> parquet(List<String> m) throws IOException {
    String[] cols = m.get(2).split(",", -1);
    String[] colNames = new String[cols.length];
    String[] colTypes = new String[cols.length];
    Types.MessageTypeBuilder schema = Types.buildMessage();
    for (int j = 0; j < cols.length; j++) {
      String[] nt = cols[j].trim().split(" ", -1);
      colNames[j] = nt[0];
      colTypes[j] = nt[1];
      switch (nt[1]) {
        case "int" -> schema.optional(PrimitiveTypeName.INT32).named(nt[0]);
        case "long" -> schema.optional(PrimitiveTypeName.INT64).named(nt[0]);
        default ->
            schema
                .optional(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named(nt[0]);
      }
    }
    MessageType type = schema.named("spark_schema");
    java.nio.file.Path folder = java.nio.file.Path.of(m.get(5));
    Files.createDirectories(folder);
    String part = "part-00000-" + UUID.randomUUID() + "-c000.snappy.parquet";
    Configuration conf = new Configuration();
    com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    SimpleGroupFactory groups = new SimpleGroupFactory(type);
    long n = 0;
    try (ParquetWriter<Group> w =
            ExampleParquetWriter.builder(
                    new org.apache.hadoop.fs.Path(folder.resolve(part).toUri().toString()))
                .withConf(conf)
                .withType(type)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                .withExtraMetaData(
                    Map.of(
                        "org.apache.spark.version",
                        m.get(4),
                        "org.apache.spark.sql.parquet.row.metadata",
                        m.get(3)))
                .build();
        BufferedReader lines = Files.newBufferedReader(java.nio.file.Path.of(m.get(1)))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        com.fasterxml.jackson.databind.JsonNode row = mapper.readTree(line);
        Group g = groups.newGroup();
        for (int j = 0; j < colNames.length; j++) {
          com.fasterxml.jackson.databind.JsonNode v = row.get(colNames[j]);
          if (v == null || v.isNull()) continue;
          switch (colTypes[j]) {
            case "int" -> g.add(j, v.intValue());
            case "long" -> g.add(j, v.longValue());
            default -> g.add(j, v.asText());
          }
        }
        w.write(g);
        n++;
      }
    }
    Files.write(folder.resolve("_SUCCESS"), new byte[0]);
    return List.of(Long.toString(n));
  }
}
