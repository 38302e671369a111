"""A PostgreSQL primary with hot standbys, owned by the tests: started from the installed
binaries (`initdb`, `pg_basebackup -R`, `pg_ctl`) on free loopback ports in a temporary
folder, and stopped and removed at the end. Run as the `postgres` OS user (through
`runuser`) when the tests run as root, since the server refuses to run as root.

`Cluster.start(standbys=2, synchronous=False)` returns a running cluster; `url(db)`
is a store URL naming its standbys as replicas.
"""

from __future__ import annotations

import functools
import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg


@functools.cache
def _bindir() -> Path:
    """The folder of the installed server binaries (pg_config's, else the newest)."""
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        folder = Path(out.stdout.strip())
        if (folder / "initdb").exists():
            return folder
    # Debian's layout, one folder per major version: the newest first
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True,
                            key=lambda p: [int(x) for x in re.findall(r"\d+", p)]):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError("no PostgreSQL server binaries (initdb) found: install postgresql")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One server of the cluster: its data folder and port."""

    name: str
    data: Path
    port: int

    def dsn(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])


@dataclass
class Cluster:
    """A primary and its standbys; see the module docstring."""

    root: Path
    primary: Server
    standbys: list[Server] = field(default_factory=list)

    # -- running the binaries as the server's OS user ---------------------------------
    @staticmethod
    def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(_bindir() / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    @classmethod
    def start(cls, standbys: int = 2, *, synchronous: bool = False) -> Cluster:
        """Create and start a primary and `standbys` streaming hot standbys. With
        `synchronous`, the first standby is synchronous and commits wait for it to
        apply (`synchronous_commit = remote_apply`)."""
        root = Path(tempfile.mkdtemp(prefix="loomdb-cluster-"))
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(root, user.pw_uid, user.pw_gid)
        root.chmod(0o755)
        primary = Server("primary", root / "primary", _free_port())
        cluster = cls(root, primary)
        try:
            cls._run("initdb", "-D", str(primary.data), "-U", "postgres", "--auth=trust",
                     "-E", "UTF8", "--no-sync")
            settings = [
                f"port = {primary.port}", "listen_addresses = '127.0.0.1'",
                f"unix_socket_directories = '{root}'", "wal_level = replica",
                "max_wal_senders = 10", "hot_standby = on", "shared_buffers = 32MB",
                "max_connections = 60", "hot_standby_feedback = on", "jit = off",
                "wal_receiver_status_interval = 1s", "fsync = off", "full_page_writes = off",
            ]
            if synchronous:
                settings += ["synchronous_standby_names = 'FIRST 1 (standby1)'",
                             "synchronous_commit = remote_apply"]
            with (primary.data / "postgresql.conf").open("a") as conf:
                conf.write("\n".join(settings) + "\n")
            cluster._ctl(primary, "start")
            for i in range(1, standbys + 1):
                cluster.add_standby(f"standby{i}")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def add_standby(self, name: str) -> Server:
        server = Server(name, self.root / name, _free_port())
        self._run("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U",
                  "postgres", "-D", str(server.data), "-R", "-X", "stream", "--no-sync")
        with (server.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"port = {server.port}\ncluster_name = '{name}'\n")
        self._ctl(server, "start")
        self.standbys.append(server)
        return server

    def _ctl(self, server: Server, action: str) -> None:
        # pg_ctl waits until the server has done it (-w): a promotion ends recovery with
        # a checkpoint, which on two cores busy with the rest of the suite's disk writes
        # took over a minute once; the bound is for a server that never gets there
        self._run("pg_ctl", "-D", str(server.data), "-w", "-t", "300", "-l",
                  str(self.root / f"{server.name}.log"), action)

    # -- what tests use ------------------------------------------------------------------
    def url(self, db: str, standbys: list[Server] | None = None, **options: object) -> str:
        """A store URL on the primary naming `standbys` (default all) as replicas."""
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in
                         (self.standbys if standbys is None else standbys))
        query = "&".join([f"replicas={hosts}", *(f"{k}={v}" for k, v in options.items())])
        return f"{self.primary.dsn(db)}?{query}"

    def create_database(self, name: str) -> None:
        """Create a database on the primary and wait until every standby has it."""
        with psycopg.connect(self.primary.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
        self.wait_replayed()

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.primary.dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def wait_replayed(self, timeout: float = 30.0) -> None:
        """Until every running standby has replayed the primary's current WAL position."""
        with psycopg.connect(self.primary.dsn(), autocommit=True) as conn:
            target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
        for server in self.standbys:
            self.wait_standby(server, str(target), timeout)

    @staticmethod
    def wait_standby(server: Server, target: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            while not conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                   (target,)).fetchone()[0]:  # type: ignore[index]
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{server.name} did not replay {target}")
                time.sleep(0.01)

    def kill(self, server: Server) -> None:
        """SIGKILL the server's postmaster (its backends exit on their own)."""
        os.kill(server.pid(), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                psycopg.connect(server.dsn(), connect_timeout=1).close()
            except psycopg.OperationalError:
                return
            time.sleep(0.05)

    @staticmethod
    def wait_accepting(server: Server, timeout: float = 60.0) -> None:
        """Until the server accepts connections (after a crash restart, say)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(server.dsn(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def promote(self, server: Server) -> None:
        self._ctl(server, "promote")

    def start_server(self, server: Server) -> None:
        """Start a stopped or killed server; after a SIGKILL its old backends may hold
        the shared memory a little longer, so the start is retried for a while."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self._ctl(server, "start")
                return
            except subprocess.CalledProcessError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """Stop every server still running (immediate) and remove the folder."""
        for server in [*self.standbys, self.primary]:
            if (server.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(server.data), "-m", "immediate", "-w",
                          "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)
