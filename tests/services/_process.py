"""What every test server shares: ports, paths, a child process with a log, bounded waits.

Each server runs as a child process in its own temporary directory with its output in
a log file there, so that when one fails to come up the error can name the file to
read. Every wait is bounded in time: a server that hangs fails the run instead of
hanging it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

LOOPBACK = "127.0.0.1"


class ServiceError(RuntimeError):
    """A server could not be provisioned, started or loaded."""


class NotProvisionedError(ServiceError):
    """A server's binaries are missing; `how` tells the reader how to get them."""

    def __init__(self, what: str, how: str = "run tests/services/provision.sh") -> None:
        super().__init__(f"{what} is not installed: {how}")
        self.how = how


def cache_dir() -> Path:
    """Where provision.sh keeps downloads and builds (TRIAGE_CACHE overrides)."""
    env = os.environ.get("TRIAGE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "triage"


def progress(message: str) -> None:
    """Progress for humans on stderr: pytest shows it with -s, and it never mixes with data."""
    print(f"[services] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    """A TCP port that is free on loopback now (the kernel picks it, so runs don't collide)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def require_executable(path_or_name: str, what: str) -> str:
    """Resolve an executable or raise NotProvisionedError naming the component."""
    found = shutil.which(path_or_name)
    if found is None:
        raise NotProvisionedError(what)
    return found


def make_workdir(prefix: str) -> Path:
    """A fresh temporary directory for one server's data, config and log."""
    return Path(tempfile.mkdtemp(prefix=f"triage-{prefix}-"))


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    proc: ManagedProcess | None = None,
    interval: float = 0.2,
) -> None:
    """Poll `check` until it returns True, the process dies, or `timeout` seconds pass.

    `check` may raise: that counts as "not yet". The error names the log file, which
    is where the reason is.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServiceError(
                f"{what}: process exited with code {proc.poll()} before it was ready; "
                f"see {proc.log_path}\n{proc.log_tail()}"
            )
        try:
            if check():
                return
        except Exception as exc:  # not ready yet: connection refused, 503, ...
            last_error = exc
        time.sleep(interval)
    where = f"; see {proc.log_path}\n{proc.log_tail()}" if proc is not None else ""
    raise ServiceError(f"{what}: not ready after {timeout:.0f}s (last error: {last_error}){where}")


class ManagedProcess:
    """A child process whose stdout and stderr go to a log file, stopped by signal.

    The child gets its own process group so that stopping it also stops anything it
    started, and nothing else.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        user: str | None = None,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> None:
        self.name = name
        self.stop_signal = stop_signal
        self.argv = list(argv)
        self.log_path = log_path
        self.started_at = time.monotonic()
        command = self.argv
        if user is not None:
            # PostgreSQL refuses to run as root: drop to an unprivileged user.
            command = ["runuser", "-u", user, "--", *self.argv]
        self._log = log_path.open("ab")
        self._proc = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def poll(self) -> int | None:
        return self._proc.poll()

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the log, to put into an error message."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line[:300] for line in text[-lines:])

    def rss_bytes(self) -> int:
        """Resident memory of the process (and of its group's main child, if wrapped)."""
        total = 0
        for pid in _group_pids(self._proc.pid):
            with contextlib.suppress(OSError, ValueError):
                fields = Path(f"/proc/{pid}/statm").read_text().split()
                total += int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
        return total

    def stop(self, timeout: float = 20.0) -> None:
        """Signal the group (SIGTERM unless told), wait `timeout` seconds, then SIGKILL it."""
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, self.stop_signal)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                progress(f"{self.name} did not stop in {timeout:.0f}s; killing it")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=10)
        self._log.close()


def _group_pids(pgid: int) -> list[int]:
    """Processes of one process group (the child and what it runs, e.g. under runuser)."""
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid:
                pids.append(int(entry.name))
    return pids


class Server:
    """Base of the test servers: a work directory, child processes, start and stop.

    Use as a context manager, or call start() and stop(). `startup_seconds` is how
    long start() took, and rss_bytes() the memory of the children, for the report.
    """

    name = "server"

    @classmethod
    def check_installed(cls) -> None:
        """Raise NotProvisionedError if the binaries are missing (cheap, no side effect)."""

    def __init__(self) -> None:
        self.workdir = make_workdir(self.name)
        self.processes: list[ManagedProcess] = []
        self.startup_seconds = 0.0

    def start(self) -> None:
        """Start the server and return once it answers; raise ServiceError otherwise."""
        began = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.stop(remove_workdir=False)
            raise
        self.startup_seconds = time.monotonic() - began
        progress(f"{self.name} ready in {self.startup_seconds:.1f}s ({self.workdir})")

    def _start(self) -> None:
        raise NotImplementedError

    def spawn(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        user: str | None = None,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> ManagedProcess:
        """Start one child process with its log in the work directory."""
        proc = ManagedProcess(
            name,
            argv,
            self.workdir / f"{name}.log",
            env=env,
            cwd=self.workdir,
            user=user,
            stop_signal=stop_signal,
        )
        self.processes.append(proc)
        return proc

    def rss_bytes(self) -> int:
        return sum(p.rss_bytes() for p in self.processes)

    def stop(self, *, remove_workdir: bool = True) -> None:
        """Stop the children in reverse order; keep the work directory if asked or failed."""
        while self.processes:
            self.processes.pop().stop()
        if remove_workdir and os.environ.get("TRIAGE_KEEP_WORKDIR") != "1":
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
