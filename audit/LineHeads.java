package kcspec.audit;

/**
 * Three of {@link LineParser}'s regexes matched by hand, with the regexes' results: the kafka-default layout's
 * head and tail (jvm_parser.DEFAULT_HEAD, DEFAULT_TAIL) and the {@code [Controller id=…]} prefix of a message
 * (jvm_parser.BRACKET_REST). The regexes stay the grammar: the parser uses these only when the grammar it is
 * given holds exactly the regex each implements ({@link #BRACKET_REST}, {@link #DEFAULT_HEAD}, {@link
 * #DEFAULT_TAIL}), and the regex otherwise.
 *
 * <p>Why: they run on nearly every line, and Java's regex engine, compiled by C1 in the local engine's short
 * JVM, spent 18 % of that JVM's samples on them (measured on a folder of 5,000 rotated files: the default
 * head and tail 9 %, the prefix's 64 characters, one code point at a time, 9 %). Each is one pass over the
 * characters here.
 *
 * <p>Each follows its regex's backtracking exactly: {@code \d} is an ASCII digit (no UNICODE_CHARACTER_CLASS),
 * {@code .} any code point but a line terminator; no greedy run here can give back a character to let the
 * rest match, since what follows each run cannot match a character of the run.
 */
final class LineHeads {
  private LineHeads() {}

  /** The regex {@link #bracketRestStart} and {@link #restStartsWith} implement. */
  static final String BRACKET_REST = "^\\[Controller id=\\d+(?: epoch=\\d+)?\\] (.{0,64})";

  /** The regex {@link #defaultLayout}'s head implements (group 1 the timestamp, group 2 the level). */
  static final String DEFAULT_HEAD =
      "^\\[(\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2},\\d{3})\\] +(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +";

  /** The regex {@link #defaultLayout}'s tail implements, matched whole (group 1 the logger). */
  static final String DEFAULT_TAIL = "([A-Za-z0-9_.$]+)(?::\\d+)?\\)";

  private static final String[] LEVELS = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};

  /** DEFAULT_HEAD's timestamp group, character by character: d a digit, anything else itself. */
  private static final String TS = "dddd-dd-dd dd:dd:dd,ddd";

  private static final String CONTROLLER = "[Controller id=";

  /** Where group 1 of BRACKET_REST found in {@code msg} starts, or -1 when it does not match. */
  static int bracketRestStart(String msg) {
    if (!msg.startsWith(CONTROLLER)) return -1;
    int at = digits(msg, CONTROLLER.length());
    if (at == CONTROLLER.length()) return -1;
    if (msg.startsWith(" epoch=", at)) {
      int epoch = digits(msg, at + 7);
      if (epoch > at + 7 && msg.startsWith("] ", epoch)) at = epoch;
    }
    return msg.startsWith("] ", at) ? at + 2 : -1;
  }

  /**
   * Whether group 1 of BRACKET_REST (it starts at {@code from}, {@link #bracketRestStart}; "" when -1) starts
   * with {@code lead}. A {@code plain} lead ({@link #plainLead}) is looked for in {@code msg} itself: the group
   * starts with it exactly when {@code msg} holds it at {@code from}, since its characters are code points of
   * their own and no line terminator, at most 64 of them, all of which the group's {@code .{0,64}} takes.
   * Decision (measured as above): the group's text, made for every message, was 5 % of the samples.
   */
  static boolean restStartsWith(String msg, int from, String lead, boolean plain) {
    if (from < 0) return lead.isEmpty();
    return plain ? msg.startsWith(lead, from) : restAt(msg, from).startsWith(lead);
  }

  /** Whether every character of {@code lead} is printable ASCII, and it has at most 64. */
  static boolean plainLead(String lead) {
    if (lead.length() > 64) return false;
    for (int i = 0; i < lead.length(); i++) {
      if (lead.charAt(i) < 0x20 || lead.charAt(i) > 0x7e) return false;
    }
    return true;
  }

  /** Group 1 of BRACKET_REST, which starts at {@code from}: at most 64 code points, up to a line terminator. */
  static String restAt(String msg, int from) {
    int end = from;
    for (int n = 0; n < 64 && end < msg.length(); n++) {
      int c = msg.codePointAt(end);
      if (c == '\n' || c == '\r' || (c | 1) == '\u2029' || c == '\u0085') break;
      end += Character.charCount(c);
    }
    return msg.substring(from, end);
  }

  /**
   * LineParser.defaultLayout with DEFAULT_HEAD at the start of {@code text}, then the split at the last " ("
   * after it, then DEFAULT_TAIL matching the whole rest: fills out[1..4] (timestamp, level, logger, message);
   * false when the line does not match.
   */
  static boolean defaultLayout(String text, Object[] out) {
    int n = text.length();
    int ts = TS.length();
    if (n < ts + 4 || text.charAt(0) != '[') return false;
    for (int i = 0; i < ts; i++) {
      char c = text.charAt(i + 1);
      char t = TS.charAt(i);
      if (t == 'd' ? c < '0' || c > '9' : c != t) return false;
    }
    if (text.charAt(ts + 1) != ']' || text.charAt(ts + 2) != ' ') return false;
    int at = spaces(text, ts + 2);
    String level = null;
    for (String l : LEVELS) {
      if (text.startsWith(l, at)) {
        level = l;
        break;
      }
    }
    if (level == null || at + level.length() >= n || text.charAt(at + level.length()) != ' ') return false;
    int headEnd = spaces(text, at + level.length());
    int split = text.lastIndexOf(" (");
    if (split < headEnd) return false;
    int loggerEnd = loggerEnd(text, split + 2);
    if (loggerEnd < 0) return false;
    out[1] = text.substring(1, ts + 1);
    out[2] = level;
    out[3] = text.substring(split + 2, loggerEnd);
    out[4] = text.substring(headEnd, split);
    return true;
  }

  /** Where DEFAULT_TAIL's group 1 ends when the regex matches all of {@code text} from {@code from}, else -1. */
  private static int loggerEnd(String text, int from) {
    int n = text.length();
    int at = from;
    while (at < n && isLoggerChar(text.charAt(at))) at++;
    if (at == from) return -1;
    int end = at;
    if (at < n && text.charAt(at) == ':') {
      int d = digits(text, at + 1);
      if (d > at + 1) at = d;
    }
    return at == n - 1 && text.charAt(at) == ')' ? end : -1;
  }

  private static boolean isLoggerChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '_'
        || c == '.'
        || c == '$';
  }

  /** The end of the run of ASCII digits at {@code from}. */
  private static int digits(String s, int from) {
    int at = from;
    while (at < s.length() && s.charAt(at) >= '0' && s.charAt(at) <= '9') at++;
    return at;
  }

  /** The end of the run of spaces at {@code from}. */
  private static int spaces(String s, int from) {
    int at = from;
    while (at < s.length() && s.charAt(at) == ' ') at++;
    return at;
  }
}
