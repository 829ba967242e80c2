package kcspec.audit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's local file system ({@code file:}, with its checksums) that sets a file's permissions through
 * {@link Files#setPosixFilePermissions} instead of a {@code chmod} process: a local session's file system
 * (session.py, {@code spark.hadoop.fs.file.impl}).
 *
 * <p>Why: without Hadoop's native library (pyspark ships none) {@link RawLocalFileSystem#setPermission} runs
 * {@code chmod} in a new process, and Spark's writers set the permissions of every folder and file they
 * create, the checksum files too: about 90 processes per task's output. The rules' pass writes its results
 * from 47 tasks on 10 M lines: about 4,300 {@code chmod} processes, measured (a 47-task write of 470,000 small
 * rows: 2.7 s, against 0.6 s to a no-op sink). The modes set are the same; with the native library, or for a
 * mode a POSIX permission set cannot hold (the sticky bit), Hadoop's own way is kept.
 */
public final class LocalFiles extends LocalFileSystem {
  public LocalFiles() {
    super(new Raw());
  }

  /** The raw local file system underneath, with {@link #setPermission} in the JVM. */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      if (NativeIO.isAvailable() || permission.getStickyBit()) {
        super.setPermission(p, permission);
        return;
      }
      Set<PosixFilePermission> mode = EnumSet.noneOf(PosixFilePermission.class);
      add(mode, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_EXECUTE);
      add(mode, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE);
      add(mode, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);
      Files.setPosixFilePermissions(pathToFile(p).toPath(), mode);
    }

    private static void add(
        Set<PosixFilePermission> mode,
        FsAction action,
        PosixFilePermission read,
        PosixFilePermission write,
        PosixFilePermission execute) {
      if (action.implies(FsAction.READ)) mode.add(read);
      if (action.implies(FsAction.WRITE)) mode.add(write);
      if (action.implies(FsAction.EXECUTE)) mode.add(execute);
    }
  }
}
