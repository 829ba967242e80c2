package kcspec.audit;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The harness of tests/integration/audit/test_jvm_hand_matchers.py: the audit's hand-written fast paths against
 * what they replace, on inputs the test writes. A test resource only: compiled by the test against the audit's
 * jar (in its package, for the package-private classes), never part of that jar.
 *
 * <ul>
 *   <li>{@code heads CASES LEADS}: {@link LineHeads} against java.util.regex with LineHeads' own regexes, as
 *       LineParser uses either (the default layout's head, split and tail; the [Controller id=] prefix's group,
 *       and whether it starts with each template lead). One input a line, every char other than printable ASCII
 *       (and the backslash) written {@code \}{@code uXXXX}, so lone surrogates and line terminators survive.
 *   <li>{@code lines STREAMS}: {@link Utf8Lines} against {@code BufferedReader(InputStreamReader(UTF_8))}. One
 *       stream a line: {@code BUFFER READS HEX}: Utf8Lines' buffer size, the sizes its stream's reads return at
 *       most (comma-separated, used in turn) and the stream's bytes.
 * </ul>
 *
 * Prints the first few mismatches (input, the reference's result, the hand path's), then one {@code SUMMARY}
 * line of counts.
 */
public final class HandMatchersCheck {
  private static final int SHOWN = 5;
  private static int mismatches;
  private static final StringBuilder report = new StringBuilder();

  private HandMatchersCheck() {}

  public static void main(String[] args) throws IOException {
    switch (args[0]) {
      case "heads" -> heads(Path.of(args[1]), Path.of(args[2]));
      case "lines" -> lines(Path.of(args[1]));
      default -> throw new IllegalArgumentException(args[0]);
    }
    System.out.print(report);
  }

  private static void heads(Path casesFile, Path leadsFile) throws IOException {
    List<String> cases = decodedLines(casesFile);
    List<String> leads = decodedLines(leadsFile);
    System.out.println("REGEXES\t" + escaped(LineHeads.BRACKET_REST) + "\t" + escaped(LineHeads.DEFAULT_HEAD)
        + "\t" + escaped(LineHeads.DEFAULT_TAIL));
    Pattern bracketRest = Pattern.compile(LineHeads.BRACKET_REST);
    Pattern head = Pattern.compile(LineHeads.DEFAULT_HEAD);
    Pattern tail = Pattern.compile(LineHeads.DEFAULT_TAIL);
    boolean[] plain = new boolean[leads.size()];
    for (int j = 0; j < plain.length; j++) plain[j] = LineHeads.plainLead(leads.get(j));
    long defaultMatches = 0, bracketMatches = 0, leadChecks = 0, leadHits = 0;
    for (int i = 0; i < cases.size(); i++) {
      String s = cases.get(i);

      // the default layout: LineParser.defaultLayout's regex path against LineHeads.defaultLayout
      Object[] want = new Object[5];
      boolean wantOk = LineParser.regexDefaultLayout(head, tail, s, want);
      Object[] got = new Object[5];
      boolean gotOk = LineHeads.defaultLayout(s, got);
      if (wantOk) defaultMatches++;
      if (wantOk != gotOk || !Arrays.equals(want, got)) {
        mismatch("default layout (DEFAULT_HEAD, split at the last \" (\", DEFAULT_TAIL)", i, quoted(s),
            wantOk ? fields(want) : "no match", gotOk ? fields(got) : "no match");
      }

      // BRACKET_REST's group 1
      Matcher m = bracketRest.matcher(s);
      String wantRest = m.find() ? m.group(1) : null;
      int from = LineHeads.bracketRestStart(s);
      String gotRest = from < 0 ? null : LineHeads.restAt(s, from);
      if (wantRest != null) bracketMatches++;
      if (!Objects.equals(wantRest, gotRest)) {
        mismatch("BRACKET_REST's group 1", i, quoted(s), wantRest == null ? "no match" : quoted(wantRest),
            gotRest == null ? "no match (start " + from + ")" : quoted(gotRest) + " (start " + from + ")");
      }

      // each lead, as LineParser.call tells a template's candidates by either path
      boolean bracket = s.startsWith("[Controller id=");
      String rest = bracket && wantRest != null ? wantRest : "";
      int restFrom = bracket ? from : -1;
      for (int j = 0; j < leads.size(); j++) {
        String lead = leads.get(j);
        boolean wantLead = bracket && rest.startsWith(lead);
        boolean gotLead = bracket && LineHeads.restStartsWith(s, restFrom, lead, plain[j]);
        leadChecks++;
        if (wantLead) leadHits++;
        if (wantLead != gotLead) {
          mismatch("group 1 starts with the lead " + quoted(lead) + " (plain " + plain[j] + ")", i, quoted(s),
              String.valueOf(wantLead), String.valueOf(gotLead));
        }
      }
    }
    System.out.printf("SUMMARY cases=%d leads=%d default_matches=%d bracket_matches=%d lead_checks=%d"
        + " lead_hits=%d mismatches=%d%n", cases.size(), leads.size(), defaultMatches, bracketMatches,
        leadChecks, leadHits, mismatches);
  }

  private static void lines(Path streamsFile) throws IOException {
    long streams = 0, lines = 0, crlfSplits = 0, sequenceSplits = 0;
    for (String spec : Files.readAllLines(streamsFile, StandardCharsets.US_ASCII)) {
      String[] parts = spec.split(" ", -1);
      int buffer = Integer.parseInt(parts[0]);
      int[] reads = Arrays.stream(parts[1].split(",")).mapToInt(Integer::parseInt).toArray();
      byte[] data = hexBytes(parts[2]);
      List<String> want = new ArrayList<>();
      try (BufferedReader r =
          new BufferedReader(new InputStreamReader(new ByteArrayInputStream(data), StandardCharsets.UTF_8))) {
        for (String l = r.readLine(); l != null; l = r.readLine()) want.add(l);
      }
      Chunks chunks = new Chunks(data, reads);
      List<String> got = new ArrayList<>();
      Utf8Lines u = new Utf8Lines(chunks, buffer);
      String l;
      while ((l = u.readLine()) != null) got.add(l);
      boolean nullAgain = u.readLine() == null;
      u.close();
      if (!nullAgain) got.add("(readLine gave a line after its null)");
      streams++;
      lines += want.size();
      crlfSplits += chunks.crlfSplits;
      sequenceSplits += chunks.sequenceSplits;
      if (!want.equals(got)) {
        int k = 0;
        while (k < want.size() && k < got.size() && want.get(k).equals(got.get(k))) k++;
        mismatch("lines of the stream (buffer " + buffer + ", reads of at most " + parts[1]
            + " bytes; first differing line: " + k + ")", (int) streams - 1, hexShown(data),
            quotedLines(want), quotedLines(got));
      }
    }
    System.out.printf("SUMMARY streams=%d lines=%d crlf_splits=%d sequence_splits=%d mismatches=%d%n", streams,
        lines, crlfSplits, sequenceSplits, mismatches);
  }

  /**
   * {@code data}, each read returning at most the next of {@code reads} bytes; counts the reads that end
   * between a {@code \r} and its {@code \n}, or inside a multi-byte sequence.
   */
  private static final class Chunks extends InputStream {
    private final byte[] data;
    private final int[] reads;
    private int pos;
    private int turn;
    long crlfSplits;
    long sequenceSplits;

    Chunks(byte[] data, int[] reads) {
      this.data = data;
      this.reads = reads;
    }

    @Override
    public int read() {
      return pos < data.length ? data[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) return 0;
      if (pos >= data.length) return -1;
      int n = Math.min(Math.min(len, reads[turn++ % reads.length]), data.length - pos);
      System.arraycopy(data, pos, b, off, n);
      pos += n;
      if (pos < data.length) {
        if (data[pos - 1] == '\r' && data[pos] == '\n') crlfSplits++;
        if (data[pos - 1] < 0 && (data[pos] & 0xc0) == 0x80) sequenceSplits++;
      }
      return n;
    }
  }

  private static void mismatch(String what, int index, String input, String want, String got) {
    if (mismatches++ >= SHOWN) return;
    report.append("MISMATCH ").append(what).append(", input #").append(index).append('\n');
    report.append("  input: ").append(input).append('\n');
    report.append("  reference: ").append(want).append('\n');
    report.append("  hand path: ").append(got).append('\n');
  }

  private static List<String> decodedLines(Path file) throws IOException {
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) out.add(unescaped(line));
    return out;
  }

  /** The file's escapes undone: every {@code \}{@code uXXXX} is that UTF-16 unit. */
  private static String unescaped(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 5 < s.length() && s.charAt(i + 1) == 'u') {
        b.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
        i += 5;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** {@code s} with every char other than printable ASCII (and the backslash) as {@code \}{@code uXXXX}. */
  static String escaped(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f && c != '\\') b.append(c);
      else b.append(String.format("\\u%04x", (int) c));
    }
    return b.toString();
  }

  private static String quoted(String s) {
    return '"' + escaped(s) + '"';
  }

  private static String fields(Object[] out) {
    return "ts " + quoted((String) out[1]) + ", level " + quoted((String) out[2]) + ", logger "
        + quoted((String) out[3]) + ", message " + quoted((String) out[4]);
  }

  private static String quotedLines(List<String> lines) {
    StringBuilder b = new StringBuilder().append(lines.size()).append(" lines [");
    for (int i = 0; i < lines.size(); i++) b.append(i == 0 ? "" : ", ").append(quoted(lines.get(i)));
    return b.append(']').toString();
  }

  private static byte[] hexBytes(String hex) {
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    return out;
  }

  /** The bytes as hex, at most 600 of them. */
  private static String hexShown(byte[] data) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < Math.min(data.length, 600); i++) b.append(String.format("%02x", data[i] & 0xff));
    if (data.length > 600) b.append("... (").append(data.length).append(" bytes)");
    return b.toString();
  }
}
