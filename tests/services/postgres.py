"""A real PostgreSQL server on loopback, in a cluster of its own.

Debian's `postgresql` package brings the binaries; we never touch its system cluster.
initdb makes a throwaway cluster in the work directory and pg_ctl-style start runs it
on a free loopback port, with trust authentication for loopback and its own socket
directory. PostgreSQL refuses to run as root, so under root the cluster belongs to the
`postgres` user that the package creates.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from pathlib import Path

from ._process import LOOPBACK, NotProvisionedError, Server, ServiceError, free_port, wait_until

DATABASE = "triage"
USER = "triage"


def _pg_bindir() -> Path:
    """The newest Debian PostgreSQL bin directory (/usr/lib/postgresql/<major>/bin)."""
    override = os.environ.get("TRIAGE_PG_BINDIR")
    if override:
        return Path(override)
    root = Path("/usr/lib/postgresql")
    majors = sorted(
        (p for p in root.glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not majors:
        raise NotProvisionedError("PostgreSQL (Debian package postgresql)")
    return majors[-1]


class PostgresServer(Server):
    """PostgreSQL with database `triage` owned by superuser `triage`, no password."""

    name = "postgres"

    @classmethod
    def check_installed(cls) -> None:
        """Raise NotProvisionedError unless initdb is there (and, under root, a postgres user)."""
        _pg_bindir()
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError as exc:
                raise NotProvisionedError("the postgres user (Debian package postgresql)") from exc

    def __init__(self, *, start_timeout: float = 60.0) -> None:
        self.check_installed()
        self.bindir = _pg_bindir()
        # PostgreSQL refuses to run as root: under root, the cluster is the postgres user's.
        self.run_as: str | None = "postgres" if os.geteuid() == 0 else None
        super().__init__()
        if self.run_as:
            shutil.chown(self.workdir, user=self.run_as, group=self.run_as)
        self.start_timeout = start_timeout
        self.port = 0
        self.data_dir = self.workdir / "data"
        self.socket_dir = self.workdir / "socket"

    @property
    def dsn(self) -> str:
        """A libpq URL for psycopg, asyncpg and psql alike."""
        return f"postgresql://{USER}@{LOOPBACK}:{self.port}/{DATABASE}"

    def _run(self, argv: list[str], timeout: float = 120.0) -> str:
        command = ["runuser", "-u", self.run_as, "--", *argv] if self.run_as else argv
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False, cwd=self.workdir
        )
        if result.returncode != 0:
            raise ServiceError(
                f"{argv[0]} failed ({result.returncode}): {result.stderr or result.stdout}"
            )
        return result.stdout

    def _start(self) -> None:
        self._run(
            [
                str(self.bindir / "initdb"),
                "--pgdata",
                str(self.data_dir),
                "--username",
                USER,
                "--auth",
                "trust",
                "--encoding",
                "UTF8",
                "--locale",
                "C",
                "--no-sync",
            ]
        )
        self.socket_dir.mkdir()
        if self.run_as:
            shutil.chown(self.socket_dir, user=self.run_as, group=self.run_as)
        self.port = free_port()
        proc = self.spawn(
            "postgres",
            [
                str(self.bindir / "postgres"),
                "-D",
                str(self.data_dir),
                "-p",
                str(self.port),
                "-h",
                LOOPBACK,
                "-k",
                str(self.socket_dir),
                # A test database: durability is not what is tested, speed is.
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=50",
            ],
            user=self.run_as,
            # SIGINT is PostgreSQL's fast shutdown: SIGTERM would wait for clients to leave.
            stop_signal=signal.SIGINT,
        )
        wait_until(self._accepting, timeout=self.start_timeout, what="postgres", proc=proc)
        self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")

    def _accepting(self) -> bool:
        result = subprocess.run(
            [str(self.bindir / "pg_isready"), "-h", LOOPBACK, "-p", str(self.port), "-t", "2"],
            capture_output=True,
            timeout=10,
            check=False,
        )
        return result.returncode == 0

    def psql(self, sql: str, *, database: str = DATABASE) -> str:
        """Run SQL with psql over TCP; returns unaligned, tuples-only output."""
        psql = shutil.which("psql") or str(self.bindir / "psql")
        result = subprocess.run(
            [
                psql,
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                LOOPBACK,
                "-p",
                str(self.port),
                "-U",
                USER,
                "-d",
                database,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise ServiceError(f"psql failed: {result.stderr}")
        return result.stdout.strip()
