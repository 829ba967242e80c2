"""Options and errors shared by the ``kcspec`` commands, declared once.

``--profile`` always offers the profiles the spec defines (``spec/profiles.py``), so a new profile appears in
every command at once; ``--seed``, ``--out`` and ``--tla2tools`` read the same everywhere. ``usage_error``
(a wrong command line: click prints ``Error: …`` with the command's usage line) and ``fail`` (bad input or a
missing dependency: one line ``error: …``) are the two ways a command stops with exit 2 (DESIGN.md's exit
codes), both click exceptions.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import click

from kcspec.model import interrupts
from kcspec.spec.profiles import DEFAULT_PROFILE, PROFILES

F = TypeVar("F", bound=Callable[..., Any])


def profile_names() -> list[str]:
    """The profiles the spec defines, sorted."""
    return sorted(PROFILES)


def profile(*, multiple: bool = False, optional: bool = False, help: str | None = None) -> Callable[[F], F]:
    """``--profile``: one profile (default: the spec's default profile; with ``optional``, ``None``) or, with
    ``multiple``, any number (stored as ``profiles``; none given means every profile)."""
    if optional:
        return click.option("--profile", type=click.Choice(profile_names()), default=None, help=help)
    if multiple:
        return click.option(
            "--profile",
            "profiles",
            multiple=True,
            type=click.Choice(profile_names()),
            help=help or "Profile(s) to check (repeatable; default: all).",
        )
    return click.option(
        "--profile",
        type=click.Choice(profile_names()),
        default=DEFAULT_PROFILE,
        show_default=True,
        help=help or "Semantics profile.",
    )


def seed(
    *, default: int | None = None, help: str = "Seed (printed; pass it back to reproduce)."
) -> Callable[[F], F]:
    """``--seed``: every random choice takes it, and it is printed so a run can be repeated."""
    return click.option("--seed", type=int, default=default, show_default=default is not None, help=help)


def out_dir(
    *,
    default: str = "kcspec-out",
    help: str = "Where counterexamples and reports are written.",
    name: str = "out",
) -> Callable[[F], F]:
    """``--out DIRECTORY`` (a ``Path``, passed to the command as ``name``)."""
    return click.option(
        "--out",
        name,
        type=click.Path(file_okay=False, path_type=Path),
        default=Path(default),
        show_default=True,
        help=help,
        callback=output_dir,
    )


def report_file(flag: str, name: str, *, help: str) -> Callable[[F], F]:
    """A report written to a file (``--json FILE``, ``--junit FILE``, ``--html FILE``): a ``Path`` passed as
    ``name`` (``None`` when not given), checked as an output before the command runs."""
    return click.option(
        flag, name, type=click.Path(dir_okay=False, path_type=Path), callback=output_file, help=help
    )


def tla2tools(*, help: str = "Path to tla2tools.jar (or set TLA2TOOLS_JAR).") -> Callable[[F], F]:
    """``--tla2tools FILE`` (a string; ``TLA2TOOLS_JAR`` when not given): where TLC is."""
    return click.option("--tla2tools", type=click.Path(dir_okay=False), envvar="TLA2TOOLS_JAR", help=help)


HANDLING = "kcspec.interrupts"
"""The key of ``click.Context.meta`` under which the command group puts the run's ``interrupts.Handling``."""


def interrupt_handling() -> interrupts.Handling:
    """How the running command handles an interrupt (``interrupts.COMMAND_LINE`` in the console script's own
    process, ``interrupts.LIBRARY`` when a command is run in-process by another program)."""
    ctx = click.get_current_context(silent=True)
    found = ctx.meta.get(HANDLING) if ctx is not None else None
    return found if isinstance(found, interrupts.Handling) else interrupts.LIBRARY


def usage_error(message: str) -> NoReturn:
    """Stop the command with ``Error: message`` after its usage line, and exit 2: the command line is wrong."""
    raise click.UsageError(message)


class InputError(click.ClickException):
    """Bad input or a missing dependency, the command line itself being fine: one line ``error: …`` on stderr
    (never wrapped, no usage line) and exit 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def fail(message: str) -> NoReturn:
    """Stop the command with ``error: message`` on one line and exit 2 (``InputError``)."""
    raise InputError(message)


OUTPUTS: set[Path] = set()
"""Every output path given on the command line of this process (``output_dir`` / ``output_file``): an
``OSError`` on a path under one of them is reported by the command group as "cannot write PATH"."""


def _unwritable(path: Path, *, directory: bool) -> str | None:
    """Why ``path`` cannot be written (as a folder with ``directory``, else as a file), or ``None``.

    Checked by doing, not by permission bits (root passes ``os.access`` everywhere, even in ``/proc``): the
    nearest existing ancestor must be a folder in which a file can be created (a probe file, removed at
    once); no folder is created here, so a command stopped later leaves nothing behind."""
    existing = path
    while not existing.exists() and not existing.is_symlink():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing == path and path.exists():
        if directory and not path.is_dir():
            return "it is a file, not a folder"
        if not directory and path.is_dir():
            return "it is a folder"
        if not directory:
            return None if os.access(path, os.W_OK) else os.strerror(errno.EACCES)
        probe_in = path
    else:
        if not existing.is_dir():
            return f"{existing} is a file, not a folder"
        probe_in = existing
    try:
        fd, probe = tempfile.mkstemp(dir=probe_in, prefix=".kcspec-probe-")
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(probe)
    return None


def _output_callback(*, directory: bool) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return value
        path = Path(value)
        # A default is checked only when written to: a read-only working folder does not stop a command
        # that writes nothing there (the group's OSError report covers the write itself).
        if ctx.get_parameter_source(param.name or "") is not click.core.ParameterSource.DEFAULT:
            why = _unwritable(path, directory=directory)
            if why is not None:
                raise click.BadParameter(f"cannot write {path}: {why}", ctx=ctx, param=param)
        OUTPUTS.add(path.absolute())
        return value

    return check


output_dir = _output_callback(directory=True)
"""Option callback of an output folder: one that cannot be created or written is a usage error (exit 2) before
the command does any work."""

output_file = _output_callback(directory=False)
"""Option callback of an output file: its folder must exist or be creatable, and writable."""


def is_output(filename: str | os.PathLike[str]) -> bool:
    """Whether ``filename`` is an output given on the command line or lies under one."""
    path = Path(filename).absolute()
    return any(path == out or out in path.parents for out in OUTPUTS)


OWNED_MARKER = ".kcspec-output"
"""The file by which kcspec marks an output folder it made (``claimed_dir``); it also holds the lock of the run
writing there."""
LOCK = ".kcspec-lock"
"""The lock of a run writing into a folder kcspec did not make (``--overwrite``), removed when the run ends."""


def overwrite_option(flag: str) -> Callable[[F], F]:
    """``--overwrite``: write into a non-empty ``flag`` folder that kcspec did not make (its files are kept)."""
    return click.option(
        "--overwrite",
        is_flag=True,
        help=f"Write into a non-empty {flag} folder that kcspec did not make (files already there are kept).",
    )


@contextlib.contextmanager
def claimed_dir(path: Path, *, flag: str, overwrite: bool = False) -> Iterator[Path]:
    """``path`` as the output folder of this run, for the length of the block: one run's output, never mixed
    with another's.

    * A new or empty folder is made and marked (``OWNED_MARKER``) as kcspec's.
    * A folder kcspec made before (marked) holds a previous run's output: it is emptied first, so that no file
      of that run is left beside this run's (a 3-broker log set after a 5-broker one keeps no ``broker-4/``).
    * A non-empty folder kcspec did not make is refused (exit 2), unless ``overwrite``: its files are not
      kcspec's to delete.
    * The marker is locked while the run writes: a second run into the same folder at the same time stops
      with exit 2 instead of mixing its files with the first one's.

    Decision: emptying a folder kcspec made is what makes two successive runs not mix; a user who wants to
    keep a run's output chooses another folder."""
    if path.exists() and not path.is_dir():
        fail(f"{flag} {path}: it is a file, not a folder")
    marker = path / OWNED_MARKER
    try:
        path.mkdir(parents=True, exist_ok=True)
        owned = marker.exists()
        foreign = [p for p in path.iterdir() if p.name not in (OWNED_MARKER, LOCK)] if not owned else []
        if foreign and not overwrite:
            fail(
                f"{flag} {path} is not empty and kcspec did not make it ({len(foreign)} entries, e.g. "
                f"{foreign[0].name}); choose a new or empty folder, or pass --overwrite"
            )
        # a folder kcspec did not make is never marked as kcspec's (its files would be emptied by the next run)
        lock = path / LOCK if foreign else marker
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another kcspec run"
            fail(f"{flag} {path}: {holder} is writing there now; wait for it or choose another folder")
        if owned:
            for entry in path.iterdir():
                if entry.name == OWNED_MARKER:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"kcspec run {os.getpid()} ({' '.join(sys.argv[1:3])})\n".encode(), 0)
        yield path
    finally:
        if lock.name == LOCK:
            with contextlib.suppress(OSError):
                lock.unlink()
        os.close(fd)  # releases the lock
