"""The exact command line of a TLC run: ``java -XX:+UseParallelGC [options] [-Xmx…] -cp tla2tools.jar tlc2.TLC -tool
…`` (options: ``KCSPEC_TLC_JAVA_OPTIONS``, ``locate.JAVA_OPTIONS_ENV``)."""

from __future__ import annotations

from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import Toolchain

TLC_MAIN = "tlc2.TLC"


def tlc_argv(args: TlcArgs, tools: Toolchain, *, metadir: str | None = None) -> list[str]:
    """The argv (module and config by file name: the run's working directory is the module's folder).

    Only options every supported TLC (2.15 and later, ``locate.MINIMUM_VERSION``) accepts, except ``-dumpTrace``,
    which is passed only to a TLC whose version is known to support it."""
    argv = [str(tools.java), "-XX:+UseParallelGC", *tools.java_options]
    if args.heap_mb is not None:
        argv.append(f"-Xmx{args.heap_mb}m")
    if args.checkpoint_ms is not None:
        # TLC's checkpoint interval in milliseconds (``-checkpoint`` takes whole minutes)
        argv.append(f"-Dtlc2.TLCGlobals.chkpt={args.checkpoint_ms}")
    if args.stop_after_s is not None:
        argv.append(f"-Dtlc2.TLC.stopAfter={args.stop_after_s}")
    argv += ["-cp", str(tools.jar), TLC_MAIN, "-tool", "-cleanup"]
    argv += ["-workers", "auto" if args.workers == 0 else str(args.workers)]
    argv += ["-config", args.config_path.name]
    argv += ["-fp", str(args.fingerprint), "-seed", str(args.seed)]
    if args.depth is not None:
        # -dfid runs depth-first iterative deepening up to the bound; breadth-first TLC has no depth bound.
        argv += ["-dfid", str(args.depth)]
    if not args.check_deadlock:
        argv.append("-deadlock")
    if args.liveness_at_end:
        argv += ["-lncheck", "final"]
    if args.dump_trace_json is not None and tools.version is not None and tools.version.supports_dump_trace:
        # TLC 2.15 rejects -dumpTrace; without it the counterexample is read from the -tool output
        argv += ["-dumpTrace", "json", str(args.dump_trace_json)]
    if args.dump_states is not None:
        # TLC adds ".dump" to a file name without it; the name is given with it, so TLC writes exactly there.
        dump = str(args.dump_states)
        argv += ["-dump", dump if dump.endswith(".dump") else dump + ".dump"]
    if args.recover is not None:
        # TLC continues in the recovered run's folder and writes its next checkpoints there
        argv += ["-recover", str(args.recover)]
    elif args.metadir is not None:
        argv += ["-metadir", str(args.metadir)]
    elif metadir is not None:
        argv += ["-metadir", metadir]
    argv += list(args.extra)
    argv.append(args.module.name)
    return argv
