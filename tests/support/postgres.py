"""A throwaway PostgreSQL for a test session: real server, loopback TCP, deleted afterwards.

Prefers the machine's PostgreSQL binaries (`pg_config --bindir`); falls back to the Postgres 16
bundled in the `pgserver` wheel. Set `TEST_POSTGRES_BINDIR` to force a particular bindir.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from tests.support.ports import free_port, log_tail

# Durability is worthless for a throwaway cluster; turning it off makes CREATE DATABASE and
# migrations several times faster on the 2-core CI machine.
_FAST_CONF = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{sockdir}'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
"""


def find_bindir() -> Path:
    """The Postgres server bindir: env override, then the system's, then pgserver's."""
    override = os.environ.get("TEST_POSTGRES_BINDIR", "").strip()
    if override:
        return Path(override)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        bindir = Path(out.stdout.strip())
        if out.returncode == 0 and (bindir / "initdb").exists():
            return bindir
    # Fallback: the wheel-bundled Postgres 16. Found without importing pgserver, whose import
    # creates lock files under $XDG_RUNTIME_DIR as a side effect.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("no Postgres: install postgresql (pg_config) or the pgserver package")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _run_as_user() -> str | None:
    """initdb refuses root, so as root we run the server as `postgres` (or pgserver's user)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
        return "postgres"
    except KeyError:
        from pgserver.utils import ensure_user_exists

        ensure_user_exists("pgserver")
        return "pgserver"


class PostgresServer:
    """One Postgres cluster in a temp dir, superuser `test`/`test`, database `test`."""

    user = "test"
    password = "test"
    dbname = "test"

    def __init__(self, bindir: Path | None = None, port: int | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.port = port or free_port()
        self.run_as = _run_as_user()
        self.root = Path(tempfile.mkdtemp(prefix="lma-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._destroyed = False

    @property
    def url(self) -> str:
        """URL of the session's default database."""
        return self.url_for(self.dbname)

    def url_for(self, dbname: str) -> str:
        """URL of database `dbname` on this server."""
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{dbname}"

    def _cmd(self, *args: str) -> list[str]:
        prefix = ["runuser", "-u", self.run_as, "--"] if self.run_as else []
        return [*prefix, str(self.bindir / args[0]), *args[1:]]

    def _run(self, *args: str) -> None:
        done = subprocess.run(self._cmd(*args), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{args[0]} failed ({done.returncode}): {done.stderr}\n{log_tail(self.log)}"
            )

    def init(self) -> None:
        """initdb into the temp dir, owned by the run-as user, with fast settings."""
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.run_as:
            entry = pwd.getpwnam(self.run_as)
            for path in (self.root, pwfile):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C",
            "--no-sync",
        )  # fmt: skip
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(_FAST_CONF.format(port=self.port, sockdir=self.root))

    def start(self) -> None:
        """Start (or restart after `stop`) and wait until it accepts connections."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server ("database down"); `mode="immediate"` is a crash-like stop."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def is_running(self) -> bool:
        """True when the postmaster is up."""
        done = subprocess.run(self._cmd("pg_ctl", "-D", str(self.data), "status"), check=False,
                              capture_output=True)  # fmt: skip
        return done.returncode == 0

    def create_database(self, name: str | None = None, template: str = "template1") -> str:
        """Create a fresh database (copied from `template`) and return its URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        query = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template)
        )
        with psycopg.connect(self.url_for("postgres"), autocommit=True) as conn:
            conn.execute(query)
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, closing any sessions still connected to it."""
        query = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        with psycopg.connect(self.url_for("postgres"), autocommit=True) as conn:
            conn.execute(query)

    def destroy(self) -> None:
        """Stop the server (if up) and delete its files. Safe to call twice."""
        if self._destroyed:
            return
        self._destroyed = True
        if (self.data / "postmaster.pid").exists():
            subprocess.run(self._cmd("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w",
                                     "stop"), capture_output=True, check=False)  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PostgresServer:
    """initdb + start a new cluster and its `test` database; it is destroyed at exit at latest."""
    server = PostgresServer()
    atexit.register(server.destroy)
    try:
        server.init()
        server.start()
        server.create_database(server.dbname)
    except BaseException:
        server.destroy()
        raise
    return server
