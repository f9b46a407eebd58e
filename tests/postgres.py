"""A throw-away PostgreSQL server for the store tests (Debian's ``postgresql`` package, which ``make test``
installs when it is missing).

:class:`PostgresServer` creates a cluster in a temporary folder with ``initdb``, starts it with ``pg_ctl`` on
a free loopback port (sockets in the same folder), and stops and deletes it afterwards. PostgreSQL refuses
to run as root, so as root every server command runs as the ``postgres`` user (``nobody`` where Debian's
user is missing) through ``runuser``. Durability is off (``fsync``, ``synchronous_commit``): the cluster
lives for one test session.

Any failure raises :class:`PostgresUnavailable` with the server's log; the fixtures turn it into a test
failure, never a skip.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

__all__ = ["PostgresServer", "PostgresUnavailable", "find_bindir"]

DEBIAN_BINDIRS = "/usr/lib/postgresql/*/bin"


class PostgresUnavailable(RuntimeError):
    """The test server could not be created or started (the message carries the reason and the log)."""


def find_bindir() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: Debian's newest ``/usr/lib/postgresql/N/bin``, else the PATH."""
    candidates = sorted(glob.glob(DEBIAN_BINDIRS), key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    for folder in reversed(candidates):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(os.path.realpath(initdb)).parent
    raise PostgresUnavailable("PostgreSQL is not installed (no initdb / pg_ctl): run `make test`, which installs "
                              "Debian's postgresql package, or `apt-get install postgresql`")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_user() -> str | None:
    """Who runs the server: None (this user) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise PostgresUnavailable("running as root, and neither a 'postgres' nor a 'nobody' user exists to run the server")


class PostgresServer:
    """``with PostgresServer() as pg: pg.url("mydb")`` — a running server; ``create_database()`` gives a fresh one."""

    superuser = "navigo"

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.user = _server_user()
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="navigo-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.started = False

    # --- commands ---
    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.root,
                                  env={**os.environ, "LC_ALL": "C", "LANG": "C"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"{' '.join(cmd)} failed: {exc}\n{self.log_text()}") from exc
        if done.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}\n"
                                      f"{self.log_text()}")
        return done

    def log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]
        except OSError:
            return ""

    # --- lifecycle ---
    def start(self) -> PostgresServer:
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o700)
        self._run("initdb", "-D", str(self.data), "-U", self.superuser, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        for attempt in range(5):  # a free port can be taken between the check and the start
            self.port = _free_port()
            options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100 "
                       "-c shared_buffers=32MB")
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60",
                          "start")
                self.started = True
                return self
            except PostgresUnavailable:
                if attempt == 4:
                    raise
                time.sleep(0.2)
        return self

    def stop(self) -> None:
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")
        finally:
            self.started = False
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- databases ---
    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None, template: str | None = None) -> str:
        """A new database, empty, or a copy of the database ``template`` (which nobody may be connected to);
        returns its SQLAlchemy URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=self.superuser, dbname="postgres",
                             autocommit=True, connect_timeout=10) as conn:
            copy = f' TEMPLATE "{template}"' if template else ""
            # FILE_COPY (PostgreSQL 15+) copies the small template's files instead of WAL-logging every block:
            # about three times faster, and a test session creates one database per store test.
            strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
            conn.execute(f'CREATE DATABASE "{name}"{copy}{strategy}')
        return self.url(name)
