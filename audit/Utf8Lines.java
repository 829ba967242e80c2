package kcspec.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The lines of a UTF-8 stream as {@code new BufferedReader(new InputStreamReader(in, UTF_8)).readLine()} gives
 * them, read as bytes: a line ends at {@code \n}, {@code \r} or {@code \r\n}, the last one may end with the
 * stream, and malformed input reads as U+FFFD, as that reader's decoder replaces it.
 *
 * <p>Why: {@link LineParser}'s reader of uncompressed files. The reader above decodes every byte into a char,
 * and {@code readLine} compacts each line's chars back into a Latin-1 string: 13 % of the local engine's JVM
 * samples on a folder of 5,000 rotated files. Here a line of ASCII bytes (nearly all) is copied once into its
 * string; any other line is decoded from its bytes and its terminator's, which gives the chars the stream's
 * decoder gives there: a terminator's byte is ASCII, never part of a sequence, and UTF-8's decoder takes no
 * ASCII byte into a malformed sequence, so its state begins anew after it.
 */
final class Utf8Lines implements LineSource {
  private final InputStream in;
  private byte[] buf;
  private int pos;
  private int lim;
  private boolean ended;
  /** The last line ended with {@code \r}: a {@code \n} right after it belongs to it. */
  private boolean skipLf;

  private final CharsetDecoder decoder =
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPLACE)
          .onUnmappableCharacter(CodingErrorAction.REPLACE);

  /** {@code size}: the buffer's (it grows for a longer line), as the stream's own: its reads go straight through. */
  Utf8Lines(InputStream in, int size) {
    this.in = in;
    this.buf = new byte[Math.max(16, size)];
  }

  /** The next line without its terminator, or null at the end of the stream. */
  @Override
  public String readLine() throws IOException {
    if (skipLf) {
      if (pos == lim && !more()) return null;
      if (buf[pos] == '\n') pos++;
      skipLf = false;
    }
    int at = pos;
    boolean ascii = true;
    while (true) {
      for (; at < lim; at++) {
        byte b = buf[at];
        if (b > '\r') continue;
        if (b < 0) {
          ascii = false;
        } else if (b == '\n' || b == '\r') {
          String line = ascii ? latin1(pos, at) : decoded(pos, at + 1, true);
          skipLf = b == '\r';
          pos = at + 1;
          return line;
        }
      }
      int scanned = at - pos;
      if (!more()) {
        if (pos == lim) return null;
        String line = ascii ? latin1(pos, lim) : decoded(pos, lim, false);
        pos = lim;
        return line;
      }
      at = pos + scanned;
    }
  }

  /** More bytes after those not yet taken (moved to the buffer's start first); false at the stream's end. */
  private boolean more() throws IOException {
    if (ended) return false;
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos);
      lim -= pos;
      pos = 0;
    }
    if (lim == buf.length) buf = java.util.Arrays.copyOf(buf, buf.length * 2);
    int n = in.read(buf, lim, buf.length - lim);
    if (n < 0) {
      ended = true;
      return false;
    }
    lim += n;
    return true;
  }

  private String latin1(int from, int to) {
    return new String(buf, from, to - from, StandardCharsets.ISO_8859_1);
  }

  /** Bytes {@code from..to} decoded; {@code terminated}: the last is the line's terminator, left out. */
  private String decoded(int from, int to, boolean terminated) throws CharacterCodingException {
    String s = decoder.decode(ByteBuffer.wrap(buf, from, to - from)).toString();
    return terminated ? s.substring(0, s.length() - 1) : s;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}

/**
 * What {@link LineParser}'s reader takes a file's lines from: a {@link BufferedReader} (any charset), or
 * {@link Utf8Lines}.
 */
interface LineSource {
  String readLine() throws IOException;

  void close() throws IOException;

  static LineSource of(BufferedReader reader) {
    return new LineSource() {
      @Override
      public String readLine() throws IOException {
        return reader.readLine();
      }

      @Override
      public void close() throws IOException {
        reader.close();
      }
    };
  }
}
