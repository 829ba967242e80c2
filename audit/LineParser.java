package kcspec.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.CompressionCodecFactory;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.AccumulatorV2;
import org.apache.spark.util.SerializableConfiguration;

/**
 * The audit's line parser as one JVM function: the grammar of model/kafka_log/lines.py, given to the
 * constructor as data (see jvm_parser.py), evaluated with the same rules as the Spark-expression parser of
 * spark_job.parse_kafka. One physical line in, one row out: layout, ts, level, logger, message, kind,
 * template, reason, the fields of lines.ALL_FIELDS, status.
 */
public final class LineParser implements UDF1<String, Row> {
  private static final long serialVersionUID = 1L;
  private static final String RECORDS = "\u0003";
  private static final String UNITS = "\u0002";
  private static final int HEAD = 8;

  private final String config;
  private transient Grammar grammar;

  public LineParser(String config) {
    this.config = config;
  }

  /** The parse of the string column {@code text} as a column of type {@code type} (jvm_parser.result_schema). */
  public static Column parse(String config, DataType type, Column text) {
    return functions.udf(new LineParser(config), type).apply(text);
  }

  /** The compiled grammar (patterns are not serialisable: compiled once per JVM instance of this object). */
  private static final class Grammar {
    String sep;
    String stateChangeLogger;
    int nLayouts;
    String[] layoutNames;
    Pattern[] layouts;
    /** A line prefix is 1 to prefixMax characters (lines.PREFIX_MAX). */
    int prefixMax;
    /** Per layout, the group of ts, level, logger, message (lines.LAYOUT_ROLES; 0: none). */
    int[][] roles;
    /** Per layout, the start of a record that may be wrapped (lines.Layout.head), or null. */
    Pattern[] heads;
    Pattern[] prefixedHeads;
    String prefixed;
    int wrapMax;
    String wrapped;
    /** lines.BLANK_REGEX and lines.CONTINUATION_REGEX (matched as Spark's rlike matches: find). */
    Pattern blank;
    Pattern continuation;
    /** lines.CONTINUATION_BODY alone: a continuation line without a line prefix (most are). */
    Pattern bareContinuation;
    Pattern bracketRest;
    /** bracketRest, defaultHead and defaultTail are the regexes {@link LineHeads} matches by hand. */
    boolean handBracketRest;
    boolean handDefault;
    Pattern controllerSide;
    Pattern legacySide;
    Pattern controllerIdPrefix;
    Pattern brokerIdPrefix;
    Pattern defaultHead;
    /** lines.CONTAINER_PREFIX_REGEX. */
    Pattern containerPrefix;
    Pattern defaultTail;
    int nFields;
    boolean[] isInt;
    boolean[] isList;
    int controllerField = -1;
    int brokerField = -1;
    int nTemplates;
    String[] name;
    String[] kind;
    Pattern[] regex;
    int[] prefix;
    String[] lead;
    /** Per template, its lead is plain ({@link LineHeads#plainLead}). */
    boolean[] plainLead;
    String[] start;
    int[][] groupField;
    boolean[][] has;

    Grammar(String config) {
      String[] records = config.split(RECORDS, -1);
      String[] head = records[0].split(UNITS, -1);
      sep = head[0];
      stateChangeLogger = head[1];
      bracketRest = Pattern.compile(head[2]);
      handBracketRest = head[2].equals(LineHeads.BRACKET_REST);
      controllerSide = Pattern.compile(head[3]);
      legacySide = Pattern.compile(head[4]);
      controllerIdPrefix = Pattern.compile(head[5]);
      brokerIdPrefix = Pattern.compile(head[6]);
      defaultHead = Pattern.compile(head[7]);
      defaultTail = Pattern.compile(head[8]);
      handDefault = head[7].equals(LineHeads.DEFAULT_HEAD) && head[8].equals(LineHeads.DEFAULT_TAIL);
      String prefixRegex = head[9];
      prefixed = head[10];
      wrapMax = Integer.parseInt(head[11]);
      wrapped = head[12];
      prefixMax = Integer.parseInt(head[13]);
      blank = Pattern.compile(head[14]);
      continuation = Pattern.compile(head[15]);
      bareContinuation = Pattern.compile(head[16]);
      containerPrefix = Pattern.compile(head[17]);
      nLayouts = (head.length - 18) / 4;
      layoutNames = new String[nLayouts];
      layouts = new Pattern[nLayouts];
      roles = new int[nLayouts][];
      heads = new Pattern[nLayouts];
      prefixedHeads = new Pattern[nLayouts];
      for (int i = 0; i < nLayouts; i++) {
        int b = 18 + 4 * i;
        layoutNames[i] = head[b];
        layouts[i] = Pattern.compile(head[b + 1]);
        String[] r = head[b + 2].split(",", -1);
        roles[i] = new int[r.length];
        for (int j = 0; j < r.length; j++) roles[i][j] = Integer.parseInt(r[j]);
        if (!head[b + 3].isEmpty()) {
          heads[i] = Pattern.compile(head[b + 3]);
          prefixedHeads[i] = Pattern.compile(prefixRegex + head[b + 3].substring(1));
        }
      }
      String[] fields = records[1].split(UNITS, -1);
      nFields = fields.length;
      isInt = new boolean[nFields];
      isList = new boolean[nFields];
      for (int j = 0; j < nFields; j++) {
        String[] nt = fields[j].split(":", -1);
        isInt[j] = nt[1].equals("i");
        isList[j] = nt[1].equals("l");
        if (nt[0].equals("controller_id")) controllerField = j;
        if (nt[0].equals("broker")) brokerField = j;
      }
      nTemplates = records.length - 2;
      name = new String[nTemplates];
      kind = new String[nTemplates];
      regex = new Pattern[nTemplates];
      prefix = new int[nTemplates];
      lead = new String[nTemplates];
      plainLead = new boolean[nTemplates];
      start = new String[nTemplates];
      groupField = new int[nTemplates][];
      has = new boolean[nTemplates][nFields];
      for (int i = 0; i < nTemplates; i++) {
        String[] t = records[i + 2].split(UNITS, -1);
        name[i] = t[0];
        kind[i] = t[1];
        regex[i] = Pattern.compile(t[2]);
        prefix[i] = t[3].equals("bracket") ? 1 : t[3].equals("old") ? 2 : 0;
        lead[i] = t[4];
        plainLead[i] = LineHeads.plainLead(t[4]);
        start[i] = t[5];
        String[] gf = t[6].isEmpty() ? new String[0] : t[6].split(",", -1);
        groupField[i] = new int[gf.length];
        for (int g = 0; g < gf.length; g++) {
          groupField[i][g] = Integer.parseInt(gf[g]);
          has[i][groupField[i][g]] = true;
        }
      }
    }
  }

  private Grammar grammar() {
    if (grammar == null) grammar = new Grammar(config);
    return grammar;
  }

  /**
   * ts (normalised, lines.normalise_ts), level, logger, message from layout {@code i}'s groups, after
   * {@code shift} prefix groups. Java's $ may leave a final terminator: it belongs to the layout's last group.
   */
  private static void fromLayout(Grammar k, int i, int shift, Matcher m, String text, Object[] out) {
    int[] r = k.roles[i];
    int last = 0;
    for (int g : r) last = Math.max(last, g);
    String[] part = new String[4];
    for (int j = 0; j < 4; j++) {
      if (r[j] == 0) continue;
      part[j] = m.group(r[j] + shift);
      if (r[j] == last && m.end() < text.length()) part[j] = part[j] + text.substring(m.end());
    }
    out[1] = part[0] == null ? null : normaliseTs(part[0]); // lines.UNDATED: no timestamp, never one made up
    out[2] = part[1];
    out[3] = part[2] == null ? "" : part[2];
    out[4] = part[3];
  }

  /** lines.normalise_ts: any layout's timestamp as yyyy-MM-dd HH:mm:ss,SSS (000 for missing milliseconds). */
  static String normaliseTs(String ts) {
    StringBuilder d = new StringBuilder(17);
    for (int i = 0, n = ts.length(); i < n && d.length() < 17; i++) {
      char c = ts.charAt(i);
      if (c >= '0' && c <= '9') d.append(c);
    }
    while (d.length() < 17) d.append('0');
    return d.substring(0, 4) + "-" + d.substring(4, 6) + "-" + d.substring(6, 8) + " " + d.substring(8, 10)
        + ":" + d.substring(10, 12) + ":" + d.substring(12, 14) + "," + d.substring(14, 17);
  }

  /**
   * Whether {@code s} holds a date yyyy-MM-dd or yyyy/MM/dd (lines.DATE_REGEX): every layout's timestamp starts
   * with one, so a line without is no record, prefixed or not, and starts none (one scan, no regex).
   */
  static boolean hasDate(String s) {
    return nextDate(s, 0) >= 0;
  }

  /** The first index at or after {@code from} where a date yyyy-MM-dd or yyyy/MM/dd starts, or -1. */
  static int nextDate(String s, int from) {
    for (int i = from, n = s.length(); i + 10 <= n; i++) {
      char c = s.charAt(i + 4);
      if ((c == '-' || c == '/') && s.charAt(i + 7) == c && digits(s, i, 4) && digits(s, i + 5, 2)
          && digits(s, i + 8, 2)) {
        return i;
      }
    }
    return -1;
  }

  private static boolean digits(String s, int from, int count) {
    for (int i = from; i < from + count; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') return false;
    }
    return true;
  }

  /** reference_parser.starts_record: the line starts like a record of a layout that ends with its logger. */
  static boolean startsRecord(Grammar k, String text) {
    if (!hasDate(text)) return false;
    for (int i = 0; i < k.nLayouts; i++) {
      if (k.heads[i] == null) continue;
      if (k.heads[i].matcher(text).find() || k.prefixedHeads[i].matcher(text).find()) return true;
    }
    return false;
  }

  private static Integer toInt(String s) {
    try {
      return Integer.valueOf(s.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * Whether {@code s} holds a character that ends a line for Java's regex {@code .} and {@code $}: one {@code
   * indexOf} per such character, each a loop over the string's bytes (one that cannot be in a Latin-1 string
   * costs nothing there). Decision (measured on the lines of a folder of 5,000 files): a loop of {@code
   * charAt} over every line was 5 % of the local engine's JVM samples; the {@code indexOf}s take a third of
   * its time compiled by C2 (a vector scan) and 90 % of it by C1.
   */
  private static boolean hasTerminator(String s) {
    return s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0 || hasOtherTerminator(s);
  }

  /**
   * {@link #hasTerminator} for a line as {@code BufferedReader.readLine} gives it, or such lines joined: it
   * ends at {@code \n} and {@code \r}, so neither is in it. Decision (measured as above): two of the three
   * scans of a Latin-1 line (one that cannot hold U+2028 or U+2029 answers at once) saved per line read.
   */
  private static boolean hasOtherTerminator(String s) {
    return s.indexOf('\u0085') >= 0 || s.indexOf('\u2028') >= 0 || s.indexOf('\u2029') >= 0;
  }

  /**
   * The kafka-default layout without its whole-line regex, for a line with no line terminator inside: the
   * head regex, then the split at the last " (" (the logger cannot hold "("), then the tail regex — the same
   * match as the layout regex (lines.LOGGER_TAIL_REGEX). Fills out[1..4]; false when the line does not match.
   */
  private static boolean defaultLayout(Grammar k, String text, Object[] out) {
    if (k.handDefault) return LineHeads.defaultLayout(text, out);
    return regexDefaultLayout(k.defaultHead, k.defaultTail, text, out);
  }

  /** {@link #defaultLayout} by the grammar's regexes {@code head} and {@code tail} (what LineHeads replaces). */
  static boolean regexDefaultLayout(Pattern head, Pattern tail, String text, Object[] out) {
    Matcher h = head.matcher(text);
    if (!h.lookingAt()) return false;
    int split = text.lastIndexOf(" (");
    if (split < h.end()) return false;
    Matcher t = tail.matcher(text).region(split + 2, text.length());
    if (!t.matches()) return false;
    out[1] = h.group(1);
    out[2] = h.group(2);
    out[3] = t.group(1);
    out[4] = text.substring(h.end(), split);
    return true;
  }

  @Override
  public Row call(String text) {
    Grammar k = grammar();
    Object[] out = new Object[HEAD + k.nFields + 1];
    parseInto(k, text, out, false);
    return RowFactory.create(out);
  }

  /**
   * The parse of one line into {@code out} (HEAD columns, the fields, status), as {@link #call} returns it;
   * {@code read}: {@code text} is a line as {@code BufferedReader.readLine} gives it, or such lines joined (no
   * {@code \n} or {@code \r} in it).
   */
  private static void parseInto(Grammar k, String text, Object[] out, boolean read) {
    int status = HEAD + k.nFields;
    int layout = -1;
    boolean viaPrefix = false;
    boolean plain =
        text != null
            && text.startsWith("[")
            && !(read ? hasOtherTerminator(text) : hasTerminator(text));
    if (plain && defaultLayout(k, text, out)) layout = 0;
    if (layout < 0 && text != null && !text.isEmpty()) {
      char c0 = text.charAt(0);
      boolean anchored = c0 == '[' || (c0 >= '0' && c0 <= '9');
      boolean dated = hasDate(text); // no date: no layout matches, prefixed or not
      for (int i = 0; dated && anchored && i < k.nLayouts && layout < 0; i++) {
        if (i == 0 && plain) continue; // defaultLayout is this layout's match
        if (k.roles[i][0] == 0) continue; // undated: tried last
        Matcher m = k.layouts[i].matcher(text);
        if (m.find()) {
          layout = i;
          fromLayout(k, i, 0, m, text, out);
        }
      }
      // lines.Layout.prefixed without its regex scan: a record starts at a date, or at the "[" before one,
      // so the layouts are tried (in order, each at its leftmost start) only there, 1..prefixMax characters in
      for (int i = 0; dated && i < k.nLayouts && layout < 0; i++) {
        if (k.roles[i][0] == 0) continue; // undated: never behind a prefix
        for (int at = nextDate(text, 0); at >= 0 && layout < 0 && at <= k.prefixMax + 1; at = nextDate(text, at + 1)) {
          for (int start = at > 0 && text.charAt(at - 1) == '[' ? at - 1 : at; start <= at; start++) {
            if (start < 1 || start > k.prefixMax) continue;
            Matcher m = k.layouts[i].matcher(text).region(start, text.length());
            if (m.lookingAt()) {
              layout = i;
              viaPrefix = true;
              fromLayout(k, i, 0, m, text, out);
              break;
            }
          }
        }
      }
    }
    // lines.UNDATED: the layouts without a timestamp, whole line only, when no dated layout matched
    for (int i = 0; text != null && !text.isEmpty() && i < k.nLayouts && layout < 0; i++) {
      if (k.roles[i][0] != 0) continue;
      Matcher m = k.layouts[i].matcher(text);
      if (m.find()) {
        layout = i;
        viaPrefix = false;
        fromLayout(k, i, 0, m, text, out);
      }
    }
    if (layout < 0) {
      out[status] = "nolayout";
      return;
    }
    out[0] = viaPrefix ? k.layoutNames[layout] + k.prefixed : k.layoutNames[layout];
    String msg = (String) out[4];
    String logger = (String) out[3];

    boolean bracket = msg.startsWith("[Controller id=");
    boolean old = msg.startsWith("Controller ");
    // BRACKET_REST's group: "" when it does not match; by hand, where the group starts (-1: no match)
    String rest = "";
    int restFrom = -1;
    if (bracket && k.handBracketRest) {
      restFrom = LineHeads.bracketRestStart(msg);
    } else if (bracket) {
      Matcher r = k.bracketRest.matcher(msg);
      if (r.find()) rest = r.group(1);
    }
    int tid = -1;
    Matcher tm = null;
    for (int i = 0; i < k.nTemplates; i++) {
      boolean candidate;
      if (k.prefix[i] == 1 && k.handBracketRest) {
        candidate = bracket && LineHeads.restStartsWith(msg, restFrom, k.lead[i], k.plainLead[i]);
      } else if (k.prefix[i] == 1) {
        candidate = bracket && rest.startsWith(k.lead[i]);
      }
      else if (k.prefix[i] == 2) candidate = old && msg.contains(k.lead[i]);
      else candidate = msg.startsWith(k.start[i]);
      if (!candidate) continue;
      Matcher x = k.regex[i].matcher(msg);
      if (x.find()) {
        tid = i;
        tm = x;
        break;
      }
    }
    String[] raw = null;
    boolean sepBad = false;
    if (tid >= 0) {
      raw = new String[k.nFields];
      int[] gf = k.groupField[tid];
      for (int g = 0; g < gf.length; g++) {
        String v = tm.group(g + 1);
        if (v == null) v = "";
        if (v.contains(k.sep)) sepBad = true;
        int f = gf[g];
        raw[f] = raw[f] == null ? v : raw[f] + v;
      }
    }
    boolean generic = tid < 0;
    if (sepBad) tid = -1;
    boolean controllerSide = false;
    String cp = "";
    String bp = "";
    if (generic) {
      if (logger.equals(k.stateChangeLogger) && (bracket || old)) {
        controllerSide = k.controllerSide.matcher(msg).find();
      }
      if (msg.startsWith("[")) {
        Matcher x = k.controllerIdPrefix.matcher(msg);
        if (x.find() && x.group(1) != null) cp = x.group(1);
      }
      if (msg.startsWith("[Broker id=") || msg.startsWith("Broker ")) {
        Matcher x = k.brokerIdPrefix.matcher(msg);
        if (x.find()) {
          String a = x.group(1);
          String b = x.group(2);
          bp = (a == null ? "" : a) + (b == null ? "" : b);
        }
      }
    }
    if (sepBad) {
      out[7] = "separator-character";
    } else if (tid >= 0) {
      out[5] = k.kind[tid];
      out[6] = k.name[tid];
    } else if (controllerSide) {
      out[7] = k.legacySide.matcher(msg).find() ? "legacy-state-change" : "unknown-state-change";
    } else if (!cp.isEmpty()) {
      out[5] = "controller_message";
    } else if (!bp.isEmpty()) {
      out[5] = "broker_message";
    } else {
      out[5] = "other_message";
    }
    for (int j = 0; j < k.nFields; j++) {
      String v = null;
      if (tid >= 0) {
        String r = raw[j];
        if (k.isList[j]) {
          if (k.has[tid][j]) v = r == null ? "" : r.replace(" ", "");
        } else if (r != null && !r.isEmpty()) {
          v = r;
        }
      }
      if (v == null && j == k.controllerField && !cp.isEmpty()) v = cp;
      if (v == null && j == k.brokerField && !bp.isEmpty()) v = bp;
      out[HEAD + j] = v != null && k.isInt[j] ? toInt(v) : v;
    }
    out[status] = controllerSide || sepBad ? "quarantined" : "record";
  }

  /**
   * The stored parse of whole files, read here rather than by Spark's text source: one row per physical line
   * with the file's id, its history's id and the line number (1-based, counted while reading: no row ids
   * and no per-split line counts), then status, reason, the timestamp as the long yyyyMMddHHmmssSSS, kind,
   * the fields named by {@code fieldIndex} (indexes into lines.ALL_FIELDS, as typed in {@code schema}) and
   * the text of lines that are not records, then the layout (lines.LAYOUTS, +prefix), the owner (the record
   * line a continuation or blank line belongs to) and the exception (a record's first continuation line).
   * Statuses are final (record, continuation, blank, quarantined): continuation lines are resolved while
   * each file is read in order, as reference_parser.parse_lines does. Lines end at \n, \r or \r\n, as
   * for Spark's text source;
   * files are opened through Hadoop's file systems (a local file directly, without the checksum file
   * Hadoop's local file system looks for, and with buffers no larger than the file: a folder of thousands of
   * small rotated files paid both per file) and decompressed by what their first bytes say
   * ({@link #compression}), and read as UTF-8 or UTF-16 ({@link #charset}).
   * {@code files} holds "file id,history id,length:path" per file (the length in chars); one task reads
   * whole files. A file that cannot be read on (a truncated or corrupt .gz, a file named .gz that is not
   * gzip, an I/O error) ends with one quarantined line that names the error; the audit goes on.
   */
  public static Dataset<Row> readStored(
      SparkSession spark,
      String config,
      String files,
      String fieldIndex,
      StructType schema,
      int slices,
      Cube cube) {
    String[][] recs = listing(files);
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < recs.length; i++) ids.add(i);
    SerializableConfiguration conf = new SerializableConfiguration(spark.sessionState().newHadoopConf());
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    FileReader reader = new FileReader(config, recs, fieldIndex(fieldIndex), conf, cube);
    int n = Math.max(1, Math.min(slices, recs.length));
    RDD<InternalRow> rows = jsc.parallelize(ids, n).mapPartitions(reader).rdd();
    return spark.internalCreateDataFrame(rows, schema, false);
  }

  /**
   * The rows of {@link #readStored} for {@code files} ({path, fid, hid} each, as {@link #listing} gives them)
   * read in this thread, in order, without Spark (the local engine, {@link LocalAudit}): the same reader over
   * every file in turn, counting into {@code cube}.
   */
  static Iterator<InternalRow> readLocal(String config, String[][] files, int[] fieldIndex, Cube cube) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < files.length; i++) ids.add(i);
    SerializableConfiguration conf =
        new SerializableConfiguration(new org.apache.hadoop.conf.Configuration());
    return new FileReader(config, files, fieldIndex, conf, cube).call(ids.iterator());
  }

  /** "fid,hid,length:path" per file (the length in chars) as {path, fid, hid} per file. */
  static String[][] listing(String files) {
    List<String[]> recs = new ArrayList<>();
    for (int at = 0; at < files.length(); ) {
      int colon = files.indexOf(':', at);
      String[] head = files.substring(at, colon).split(",", -1);
      int end = colon + 1 + Integer.parseInt(head[2]);
      recs.add(new String[] {files.substring(colon + 1, end), head[0], head[1]});
      at = end;
    }
    return recs.toArray(new String[0][]);
  }

  static int[] fieldIndex(String fieldIndex) {
    String[] fi = fieldIndex.split(",", -1);
    int[] index = new int[fi.length];
    for (int j = 0; j < fi.length; j++) index[j] = Integer.parseInt(fi[j]);
    return index;
  }

  /** How many names one reader keeps the UTF-8 of (FileReader's {@code named}): far more than there are. */
  private static final int NAMES = 4096;

  /** Quarantine reasons of the line that stands for the unreadable rest of a file (jvm_parser.BROKEN_REASONS). */
  static final String BROKEN_COMPRESSED = "corrupt-compressed-file";

  static final String BROKEN_FILE = "unreadable-file";

  /**
   * A stream that ends where the stream it reads breaks, remembering why ({@code failed}) and whether the
   * last byte it gave ended a line: the reader above it keeps every complete line decoded before the error
   * (a reader's buffer would otherwise lose up to its size of them with the exception).
   */
  private static final class Guard extends java.io.FilterInputStream {
    Exception failed;
    boolean atLineStart = true;

    Guard(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      if (failed != null) return -1;
      try {
        int b = in.read();
        if (b >= 0) atLineStart = b == '\n' || b == '\r';
        return b;
      } catch (IOException | RuntimeException e) {
        failed = e;
        return -1;
      } catch (LinkageError | OutOfMemoryError e) {
        failed = new IOException(e);
        return -1;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (failed != null) return -1;
      try {
        int n = in.read(b, off, len);
        if (n > 0) atLineStart = b[off + n - 1] == '\n' || b[off + n - 1] == '\r';
        return n;
      } catch (IOException | RuntimeException e) {
        failed = e;
        return -1;
      } catch (LinkageError | OutOfMemoryError e) {
        failed = new IOException(e);
        return -1;
      }
    }
  }

  /** The first {@code n} bytes of {@code in} (fewer at its end), left unread. */
  static byte[] peek(java.io.BufferedInputStream in, int n) throws IOException {
    in.mark(n);
    byte[] b = new byte[n];
    int got = 0;
    while (got < n) {
      int r = in.read(b, got, n - got);
      if (r < 0) break;
      got += r;
    }
    in.reset();
    return java.util.Arrays.copyOf(b, got);
  }

  /**
   * The compression a file's first bytes say (its magic number), or null for none: gzip, bzip2, xz, lz4
   * (the frame format of the lz4 tool), zstd. Decision: a file's name does not decide (a .lz4 written by
   * the lz4 tool is no Hadoop-lz4 block stream, whose codec read its frame header as a block length and ran
   * out of memory; a .log may be gzipped); what no decoder here knows is read as text.
   */
  static String compression(byte[] m) {
    if (starts(m, 0x1f, 0x8b)) return "gzip";
    if (starts(m, 'B', 'Z', 'h')) return "bzip2";
    if (starts(m, 0xfd, '7', 'z', 'X', 'Z', 0x00)) return "xz";
    if (starts(m, 0x04, 0x22, 0x4d, 0x18)) return "lz4";
    if (starts(m, 0x28, 0xb5, 0x2f, 0xfd)) return "zstd";
    return null;
  }

  private static boolean starts(byte[] m, int... magic) {
    if (m.length < magic.length) return false;
    for (int i = 0; i < magic.length; i++) if ((m[i] & 0xff) != magic[i]) return false;
    return true;
  }

  /** {@code raw} decompressed by {@code codec} (compression's name; null: as it is). */
  static InputStream decompressed(String codec, InputStream raw, SerializableConfiguration conf)
      throws IOException {
    if (codec == null) return raw;
    return switch (codec) {
      case "gzip" -> {
        CompressionCodec gz = new CompressionCodecFactory(conf.value()).getCodecByName("gzip");
        yield gz.createInputStream(raw);
      }
      case "bzip2" ->
          new org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream(raw, true);
      case "xz" -> new org.tukaani.xz.XZInputStream(raw);
      case "lz4" -> new net.jpountz.lz4.LZ4FrameInputStream(raw);
      case "zstd" -> new com.github.luben.zstd.ZstdInputStream(raw);
      default -> throw new IOException("unknown compression " + codec);
    };
  }

  /**
   * The text encoding of a (decompressed) file, from its first bytes: UTF-16 by its byte-order mark or by
   * the zero bytes of ASCII text in it (little or big endian), else UTF-8 (a UTF-8 byte-order mark is
   * skipped). Decision: Kafka writes UTF-8; a UTF-16 file is a log saved by another tool (a Windows editor,
   * PowerShell's redirection), and its lines are the same records.
   */
  static java.nio.charset.Charset charset(java.io.BufferedInputStream in) throws IOException {
    byte[] m = peek(in, 4);
    if (starts(m, 0xff, 0xfe) || starts(m, 0xfe, 0xff)) return StandardCharsets.UTF_16;
    if (m.length >= 4 && m[0] != 0 && m[1] == 0 && m[2] != 0 && m[3] == 0) return StandardCharsets.UTF_16LE;
    if (m.length >= 4 && m[0] == 0 && m[1] != 0 && m[2] == 0 && m[3] != 0) return StandardCharsets.UTF_16BE;
    if (starts(m, 0xef, 0xbb, 0xbf)) in.skip(3);
    return StandardCharsets.UTF_8;
  }

  /** The task side of {@link #readStored}: reads its files line by line and parses each line. */
  private static final class FileReader implements FlatMapFunction<Iterator<Integer>, InternalRow> {
    private static final long serialVersionUID = 1L;
    private final String config;
    private final String[][] files;
    private final int[] index;
    private final SerializableConfiguration conf;
    private final Cube cube;

    FileReader(String config, String[][] files, int[] index, SerializableConfiguration conf, Cube cube) {
      this.config = config;
      this.files = files;
      this.index = index;
      this.conf = conf;
      this.cube = cube;
    }

    @Override
    public Iterator<InternalRow> call(Iterator<Integer> ids) {
      Grammar k = new Grammar(config);
      return new Iterator<InternalRow>() {
        LineSource in;
        Guard guard;
        String ahead;
        boolean primed;
        boolean compressed;
        int fid;
        int hid;
        long line;
        String next;
        String brokenReason;
        final Object[] out = new Object[HEAD + k.nFields + 1];
        final Object[] joinedOut = new Object[HEAD + k.nFields + 1];
        final HashMap<Cube.Key, long[]> cells = new HashMap<>();
        /** Lines read ahead to re-join a wrapped record: {text, broken reason, fid, hid, line, wrapped}. */
        final java.util.ArrayDeque<Object[]> ahead2 = new java.util.ArrayDeque<>();
        /** The read-ahead reached the end (the cells were added then): the rows still queued add theirs. */
        boolean exhausted;
        /** The width file {@code wrapFid} was wrapped at (a re-joined record's first line), 0: not known. */
        int wrapWidth;
        int wrapFid = -1;
        /** The length of the line before, in file {@code prevFid}. */
        int prevLen = -1;
        int prevFid = -1;

        /** The next physical line as {text, broken reason, fid, hid, line, wrapped}, or null at the end. */
        private Object[] take() {
          if (!ahead2.isEmpty()) return ahead2.poll();
          if (next == null && !advance()) return null;
          Object[] e = {next, brokenReason, fid, hid, line, Boolean.FALSE};
          next = null;
          brokenReason = null;
          return e;
        }

        /**
         * reference_parser.parse_lines with join_wrapped: a line with no layout that starts like a record is
         * re-joined with up to wrapMax - 1 following lines of its file; when the joined text parses, it is
         * the record (its parse in {@code out}) and those lines are marked wrapped.
         */
        private void joinWrapped(Object[] first) {
          String text = (String) first[0];
          if (!startsRecord(k, text)) return;
          StringBuilder joined = new StringBuilder(text);
          for (int extra = 1; extra < k.wrapMax; extra++) {
            while (ahead2.size() < extra) {
              if (next == null && !advance()) {
                exhausted = true;
                return;
              }
              ahead2.add(new Object[] {next, brokenReason, fid, hid, line, Boolean.FALSE});
              next = null;
              brokenReason = null;
            }
            Object[] e = (Object[]) ahead2.toArray()[extra - 1];
            if (e[1] != null || !e[2].equals(first[2])) return;
            String piece = (String) e[0];
            java.util.Arrays.fill(joinedOut, null);
            parseInto(k, piece, joinedOut, true);
            if (!"nolayout".equals(joinedOut[HEAD + k.nFields]) || startsRecord(k, piece)) return;
            joined.append(piece);
            java.util.Arrays.fill(joinedOut, null);
            parseInto(k, joined.toString(), joinedOut, true);
            if (!"nolayout".equals(joinedOut[HEAD + k.nFields])) {
              System.arraycopy(joinedOut, 0, out, 0, out.length);
              wrapWidth = text.length();
              wrapFid = (Integer) first[2];
              int j = 0;
              for (Object[] x : ahead2) if (j++ < extra) x[5] = Boolean.TRUE;
              return;
            }
          }
        }

        /**
         * The file stops being readable here (a truncated or corrupt compressed stream, a file that is not
         * in the format its name says, an I/O error): the lines read so far stand, the rest of the file
         * (from the line cut off by the error, if any, else the next line number) is one quarantined line
         * whose text says why, and reading goes on with the next file.
         */
        private boolean broke(Exception e) {
          brokenReason = compressed ? BROKEN_COMPRESSED : BROKEN_FILE;
          next = "unreadable from this line on: " + e;
          line++;
          try {
            if (in != null) in.close();
          } catch (IOException | RuntimeException ignored) {
            // the stream is already broken; closing it is best effort
          }
          in = null;
          return true;
        }

        private boolean advance() {
          while (true) {
            if (in != null) {
              // one line of lookahead: when the stream breaks, the line before the end it reports may be cut
              String current;
              try {
                current = primed ? ahead : in.readLine();
                ahead = current == null ? null : in.readLine();
                primed = true;
              } catch (IOException | RuntimeException | LinkageError | OutOfMemoryError e) {
                return broke(e instanceof Exception x ? x : new IOException(e));
              }
              if (current == null) {
                if (guard.failed != null) return broke(guard.failed);
                try {
                  in.close();
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
                in = null;
                continue;
              }
              if (ahead == null && guard.failed != null && !guard.atLineStart) {
                return broke(guard.failed); // current is the line the error cut off
              }
              next = current;
              line++;
              return true;
            }
            if (!ids.hasNext()) {
              cube.addCounted(cells);
              cells.clear();
              return false;
            }
            String[] f = files[ids.next()];
            fid = Integer.parseInt(f[1]);
            hid = Integer.parseInt(f[2]);
            line = 0;
            compressed = false;
            primed = false;
            ahead = null;
            try {
              int buffer = 1 << 16;
              InputStream opened;
              java.io.File file = f[0].startsWith("/") ? new java.io.File(f[0]) : null;
              FileSystem fs = null;
              if (file == null) {
                Path path = new Path(f[0]);
                fs = path.getFileSystem(conf.value());
                if (fs instanceof org.apache.hadoop.fs.LocalFileSystem local) file = local.pathToFile(path);
              }
              if (file != null) {
                // a local file read as it is: no checksum file looked for, buffers no larger than the file,
                // and a plain path without Hadoop's file systems at all (loading them costs about a second)
                buffer = (int) Math.max(1 << 12, Math.min(1 << 16, file.length() + 1));
                opened = new java.io.FileInputStream(file);
              } else {
                opened = fs.open(new Path(f[0]));
              }
              java.io.BufferedInputStream raw = new java.io.BufferedInputStream(opened, buffer);
              String codec = compression(peek(raw, 6));
              compressed = codec != null;
              guard = new Guard(decompressed(codec, raw, conf));
              java.io.BufferedInputStream text = new java.io.BufferedInputStream(guard, buffer);
              java.nio.charset.Charset cs = charset(text);
              // an uncompressed UTF-8 file's lines read as bytes (Utf8Lines: the same lines); a compressed
              // stream keeps the reader whose reads salvage what a broken one gives up to its break
              in =
                  codec == null && cs == StandardCharsets.UTF_8
                      ? new Utf8Lines(text, buffer)
                      : LineSource.of(new BufferedReader(new InputStreamReader(text, cs), buffer));
            } catch (IOException | RuntimeException | LinkageError | OutOfMemoryError e) {
              return broke(e instanceof Exception x ? x : new IOException(e));
            }
          }
        }

        /**
         * The UTF-8 of the statuses, reasons, kinds and layouts (a few dozen distinct names, each the grammar's
         * or this class's own string), made once each, not once a line.
         */
        final HashMap<String, UTF8String> names = new HashMap<>();

        private UTF8String named(Object s) {
          if (s == null) return null;
          UTF8String u = names.get(s);
          if (u == null) {
            u = UTF8String.fromString((String) s);
            if (names.size() < NAMES) names.put((String) s, u);
          }
          return u;
        }

        /** Rows resolved and ready to be returned, in order. */
        final java.util.ArrayDeque<InternalRow> ready = new java.util.ArrayDeque<>();
        /**
         * The line number of the record the current run of continuation and blank lines belongs to (the
         * record just above the run), 0: none; in file {@code ownerFid}.
         */
        long owner;
        int ownerFid = -1;
        /** A line of file {@code ownerFid} other than a blank or an orphan continuation has been read. */
        boolean begun;
        /** That record's row, held back until the line after it says whether an exception follows it. */
        Object[] held;

        @Override
        public boolean hasNext() {
          while (ready.isEmpty()) {
            if (ahead2.isEmpty() && next == null && !advance()) {
              release();
              return !ready.isEmpty();
            }
            step();
          }
          return true;
        }

        @Override
        public InternalRow next() {
          if (!hasNext()) throw new NoSuchElementException();
          return ready.poll();
        }

        /** The held record, with the exception found for it (if any), is ready. */
        private void release() {
          if (held != null) {
            ready.add(new GenericInternalRow(held));
            held = null;
          }
        }

        /**
         * Reads, parses and resolves the next physical line: reference_parser.parse_lines's statuses.
         * A line with no layout is blank (lines.BLANK_REGEX), a continuation of the record above its run
         * (lines.CONTINUATION_REGEX, or the rest of a wrapped line) or, with no record above the run,
         * quarantined as an orphan continuation; any other line with no layout is quarantined and ends the
         * run. A record's first continuation line is its exception (the row carries it), so nothing later
         * has to join continuation lines back to their record.
         */
        private void step() {
          Object[] e = take();
          String text = (String) e[0];
          java.util.Arrays.fill(out, null);
          if (e[1] != null) {
            out[HEAD + k.nFields] = "quarantined";
            out[7] = e[1];
          } else if ((Boolean) e[5]) {
            out[HEAD + k.nFields] = "nolayout";
            out[7] = k.wrapped;
          } else {
            parseInto(k, text, out, true);
            if ("nolayout".equals(out[HEAD + k.nFields])) {
              // the rest of a line of the width the file is wrapped at (a wrapped stack frame) is attached
              // like it; a line that starts a record is tried as a wrapped record first
              int f = (Integer) e[2];
              boolean tail = wrapWidth > 0 && wrapFid == f && prevFid == f && prevLen == wrapWidth;
              joinWrapped(e);
              if (tail && "nolayout".equals(out[HEAD + k.nFields])) out[7] = k.wrapped;
            }
          }
          prevLen = text.length();
          prevFid = (Integer) e[2];
          int fid = (Integer) e[2];
          long number = (Long) e[4];
          if (fid != ownerFid) {
            release();
            owner = 0;
            ownerFid = fid;
            begun = false;
          }
          String status = (String) out[HEAD + k.nFields];
          String reason = (String) out[7];
          Long ownerOf = null;
          boolean attachesException = false;
          if ("nolayout".equals(status)) {
            if (blankLine(k, text)) {
              status = "blank";
              reason = null;
              ownerOf = owner == 0 ? null : owner;
            } else if (k.wrapped.equals(reason) || continuationLine(k, text)) {
              if (owner == 0) {
                status = "quarantined";
                // lines.ORPHAN_AT_START: nothing but blank and continuation lines before it in its file
                reason = begun ? "orphan-continuation" : "orphan-at-start";
              } else {
                status = "continuation";
                reason = null;
                ownerOf = owner;
                attachesException = held != null;
              }
            } else {
              status = "quarantined";
              // lines.OUT_OF_SCOPE: another container's line of a multiplexed stream
              reason = k.containerPrefix.matcher(text).lookingAt() ? "out-of-scope" : "no-layout";
            }
          }
          if (!"blank".equals(status)
              && !"continuation".equals(status)
              && !"orphan-continuation".equals(reason)
              && !"orphan-at-start".equals(reason)) begun = true;
          if (!"blank".equals(status) && !"continuation".equals(status)) {
            release();
            owner = "record".equals(status) ? number : 0;
          }
          Object[] row = new Object[11 + index.length];
          row[0] = e[2];
          row[1] = e[3];
          row[2] = e[4];
          row[3] = named(status);
          row[4] = named(reason);
          row[5] = out[1] == null ? null : tsKey((String) out[1]);
          row[6] = named(out[5]);
          for (int j = 0; j < index.length; j++) {
            Object v = out[HEAD + index[j]];
            row[7 + j] = v instanceof String ? UTF8String.fromString((String) v) : v;
          }
          row[7 + index.length] = status.equals("record") ? null : UTF8String.fromString(text);
          row[8 + index.length] = named(out[0]);
          row[9 + index.length] = ownerOf;
          cube.count(cells, fid, status, out, (Long) row[5], (Long) row[2]);
          if (exhausted && ahead2.isEmpty()) {
            cube.addCounted(cells);
            cells.clear();
          }
          if ("record".equals(status)) {
            held = row;
            return;
          }
          if (attachesException) {
            held[10 + index.length] = UTF8String.fromString(text);
            release();
          }
          ready.add(new GenericInternalRow(row));
        }
      };
    }
  }

  /**
   * The statistics' aggregation (stats.line_cube) computed while reading: lines per (file id, status, kind,
   * controller id, broker, controller epoch, from and to state of a transition kind, topics and timestamp of
   * a topic deletion queued or completed, a record's layout) with the first and last timestamp. Each task counts into its own map and adds it
   * when it has read its files; the key is the fields written with their lengths ("-" for null).
   */
  public static final class Cube extends AccumulatorV2<HashMap<String, long[]>, HashMap<String, long[]>> {
    private static final long serialVersionUID = 1L;
    private final String[] transitionKinds;
    private final String[] deletionKinds;
    private final int[] keyFields;
    private HashMap<String, long[]> cells = new HashMap<>();

    /** {@code keyFields}: indexes into lines.ALL_FIELDS of controller_id, broker, controller_epoch,
     * from_state, to_state, topics; {@code deletionKinds}: the kinds whose records are counted with their
     * topics and timestamp (a topic's deletion queued and completed). */
    public Cube(String transitionKinds, String deletionKinds, String keyFields) {
      this.transitionKinds = transitionKinds.split(",", -1);
      this.deletionKinds = deletionKinds.split(",", -1);
      String[] f = keyFields.split(",", -1);
      this.keyFields = new int[f.length];
      for (int i = 0; i < f.length; i++) this.keyFields[i] = Integer.parseInt(f[i]);
    }

    private static void put(StringBuilder b, String s) {
      if (s == null) {
        b.append('-');
      } else {
        b.append(s.length()).append(':').append(s);
      }
    }

    /**
     * Leads a plain cell's text and ends each of its parts ({@link Key#text}); {@link #NULL} is a null value
     * there. A value holding either, or a line feed, makes its cell's text length-prefixed instead.
     */
    static final char SEP = '\u0001';

    static final char NULL = '\u0002';

    private static boolean plain(String s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c == SEP || c == NULL || c == '\n') return false;
      }
      return true;
    }

    /**
     * A cell's key as {@link #count} finds it, its values as the line's parse holds them; {@link #text} is the
     * accumulator's key. Decision (measured on the local engine's reader, a folder of 5,000 files): the key's
     * text, built and hashed for every line read, was 8 % of the JVM's samples; a reader now counts by these,
     * and each distinct key is written once, when the reader adds its cells ({@link #addCounted}).
     */
    static final class Key {
      private final int fid;
      private final Object[] values;
      private final int hash;

      Key(int fid, Object[] values) {
        this.fid = fid;
        this.values = values;
        this.hash = 31 * fid + Arrays.hashCode(values);
      }

      @Override
      public int hashCode() {
        return hash;
      }

      @Override
      public boolean equals(Object o) {
        return o instanceof Key k && k.fid == fid && Arrays.equals(k.values, values);
      }

      /**
       * The key's text. Plain: {@link #SEP}, the file id, then each value ({@link #NULL} for null), each part
       * followed by {@link #SEP}. Decision (measured on 10 M lines, 119,000 cells): the driver reads this by
       * splitting each line at {@link #SEP}, where reading every value by its length cost it about a second
       * while the JVM waited for the rules' pass to start. A value that holds {@link #SEP}, {@link #NULL} or a
       * line feed (a log's junk in a record's field) makes the cell's text length-prefixed instead: the file
       * id and ",", then each value with its length ("-" for null).
       */
      String text() {
        String[] s = new String[values.length];
        boolean plain = true;
        for (int i = 0; i < values.length; i++) {
          s[i] = values[i] == null ? null : values[i].toString();
          plain &= s[i] == null || plain(s[i]);
        }
        StringBuilder b = new StringBuilder(64);
        if (plain) {
          b.append(SEP).append(fid).append(SEP);
          for (String x : s) {
            if (x == null) b.append(NULL);
            else b.append(x);
            b.append(SEP);
          }
        } else {
          b.append(fid).append(',');
          for (String x : s) put(b, x);
        }
        return b.toString();
      }
    }

    void count(HashMap<Key, long[]> local, int fid, String status, Object[] out, Long ts, Long line) {
      String kind = (String) out[5];
      boolean transition = false;
      for (String t : transitionKinds) transition |= t.equals(kind);
      boolean record = status.equals("record");
      boolean deletion = false;
      for (String d : deletionKinds) deletion |= record && d.equals(kind);
      Key key =
          new Key(
              fid,
              new Object[] {
                status,
                kind,
                out[HEAD + keyFields[0]],
                out[HEAD + keyFields[1]],
                out[HEAD + keyFields[2]],
                transition ? out[HEAD + keyFields[3]] : null,
                transition ? out[HEAD + keyFields[4]] : null,
                deletion ? out[HEAD + keyFields[5]] : null,
                deletion ? ts : null,
                record ? out[0] : null
              });
      long[] c = local.get(key);
      if (c == null) {
        c = new long[] {0, Long.MAX_VALUE, Long.MIN_VALUE, -1};
        local.put(key, c);
      }
      c[0]++;
      if (ts != null) {
        earliest(c, ts, line == null ? -1 : line);
        c[2] = Math.max(c[2], ts);
      }
    }

    @Override
    public String toString() {
      return "LineParser.Cube(" + cells.size() + " cells)";
    }

    @Override
    public boolean isZero() {
      return cells.isEmpty();
    }

    @Override
    public Cube copy() {
      Cube c = copyAndReset();
      c.merge(this);
      return c;
    }

    @Override
    public Cube copyAndReset() {
      return new Cube(this);
    }

    private Cube(Cube other) {
      this.transitionKinds = other.transitionKinds;
      this.deletionKinds = other.deletionKinds;
      this.keyFields = other.keyFields;
    }

    @Override
    public void reset() {
      cells = new HashMap<>();
    }

    /**
     * A reader's cells, counted by {@link Key}, into these: each by its key's text, as {@link #add} adds. Two
     * keys of the same text (values equal as text, not as objects) add up there.
     */
    void addCounted(HashMap<Key, long[]> v) {
      HashMap<String, long[]> byText = new HashMap<>();
      for (java.util.Map.Entry<Key, long[]> e : v.entrySet()) {
        String key = e.getKey().text();
        long[] x = e.getValue();
        long[] mine = byText.get(key);
        if (mine == null) {
          byText.put(key, x.clone());
        } else {
          mine[0] += x[0];
          if (x[1] != Long.MAX_VALUE) earliest(mine, x[1], x[3]);
          mine[2] = Math.max(mine[2], x[2]);
        }
      }
      add(byText);
    }

    @Override
    public void add(HashMap<String, long[]> v) {
      for (java.util.Map.Entry<String, long[]> e : v.entrySet()) {
        long[] mine = cells.get(e.getKey());
        long[] x = e.getValue();
        if (mine == null) {
          cells.put(e.getKey(), x.clone());
        } else {
          mine[0] += x[0];
          if (x[1] != Long.MAX_VALUE) earliest(mine, x[1], x[3]);
          mine[2] = Math.max(mine[2], x[2]);
        }
      }
    }

    /**
     * A task's cells into these: each replaces the cell of its key. Decision: the reader runs in a shuffle's
     * map stage (replay.shuffled), whose re-run tasks (a lost executor's, a speculative copy) report their
     * accumulators again; a cell's key holds its file id and a task reads whole files, so the tasks' keys are
     * disjoint and a re-run reports the same cells: replacing counts each file once where adding would count
     * it twice.
     */
    @Override
    public void merge(AccumulatorV2<HashMap<String, long[]>, HashMap<String, long[]>> other) {
      for (java.util.Map.Entry<String, long[]> e : other.value().entrySet()) {
        cells.put(e.getKey(), e.getValue().clone());
      }
    }

    @Override
    public HashMap<String, long[]> value() {
      return cells;
    }

    /**
     * A cell's first timestamp and the line it is on: the least (timestamp, line), so that the line is the
     * same whatever order the lines were counted in (stats.line_cube takes the same least pair).
     */
    private static void earliest(long[] c, long ts, long line) {
      if (ts < c[1] || (ts == c[1] && line < c[3])) {
        c[1] = ts;
        c[3] = line;
      }
    }

    /**
     * The cells as text: per cell its key ({@link Key#text}), then "lines,first,last,line of first" (the last
     * three empty for no timestamp), then "\n"; the length-prefixed cells first, so that the plain ones, which
     * hold no line feed, can be split into lines (stats.cells_from_text).
     */
    public String text() {
      StringBuilder b = new StringBuilder();
      for (boolean plain : new boolean[] {false, true}) {
        for (java.util.Map.Entry<String, long[]> e : cells.entrySet()) {
          if ((e.getKey().charAt(0) == SEP) != plain) continue;
          long[] c = e.getValue();
          b.append(e.getKey()).append(c[0]).append(',');
          if (c[1] != Long.MAX_VALUE) b.append(c[1]).append(',').append(c[2]).append(',').append(c[3]);
          else b.append(",,");
          b.append('\n');
        }
      }
      return b.toString();
    }

    /** A new cube registered with {@code spark}'s context. */
    public static Cube register(
        SparkSession spark, String transitionKinds, String deletionKinds, String keyFields) {
      Cube c = new Cube(transitionKinds, deletionKinds, keyFields);
      // unnamed: Spark's status listener would render a named accumulator's value at every update
      spark.sparkContext().register(c);
      return c;
    }
  }

  /**
   * lines.BLANK_REGEX, found as Spark's rlike finds it, tried only where it can match: the regex matches a line
   * that is whitespace, or that ends with "|", "]" or "]:" before trailing whitespace (and before one final
   * line terminator, where Java's $ also matches). Its lazy prefix would otherwise be tried at up to 200
   * positions of every stack-trace line.
   */
  static boolean blankLine(Grammar k, String text) {
    int end = text.length();
    if (end > 0 && isFinalTerminator(text.charAt(end - 1))) end--;
    while (end > 0 && isSpace(text.charAt(end - 1))) end--;
    if (end > 0) {
      char last = text.charAt(end - 1);
      if (last != '|' && last != ']' && last != ':') return false;
    }
    return k.blank.matcher(text).find();
  }

  /**
   * lines.CONTINUATION_REGEX, found as Spark's rlike finds it: the line without a prefix is tried first
   * (lines.CONTINUATION_BODY), since the whole regex tries its optional line prefix at every position first.
   */
  static boolean continuationLine(Grammar k, String text) {
    return k.bareContinuation.matcher(text).find() || k.continuation.matcher(text).find();
  }

  /** Java regex \s (without UNICODE_CHARACTER_CLASS). */
  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
  }

  /** A line terminator before which Java's $ matches at the end of the input (besides \n and \r). */
  private static boolean isFinalTerminator(char c) {
    return c == '\u0085' || c == '\u2028' || c == '\u2029';
  }

  /** lines.TS (yyyy-MM-dd HH:mm:ss,SSS, ASCII digits) as the long yyyyMMddHHmmssSSS (same order). */
  static long tsKey(String ts) {
    long v = 0;
    for (int i = 0, n = ts.length(); i < n; i++) {
      char c = ts.charAt(i);
      if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
    }
    return v;
  }
}
