"""A real, throwaway PostgreSQL (Debian's ``initdb`` + ``pg_ctl``) on a loopback port, and a fresh
database in it per test, for the history and the API key store."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.engine import make_url


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Yield ``postgresql+asyncpg://hymt@127.0.0.1:PORT/postgres`` (the form HYMT_DATABASE_URL
    takes) once the cluster accepts connections; stop and delete it afterwards."""
    from tests.support.ports import free_port

    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed: run scripts/setup.sh --test")
    root = Path(tempfile.mkdtemp(prefix="hymt-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
    port = free_port()
    data, log = root / "data", root / "log"

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=120)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "hymt", "--auth=trust", "-E", "UTF8")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o",
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1", "start")
        try:
            yield f"postgresql+asyncpg://hymt@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def libpq(url: str) -> str:
    """*url* (a SQLAlchemy URL such as HYMT_DATABASE_URL's asyncpg one) as psycopg and libpq
    take it, for a test that looks at the tables directly."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def fresh_database(url: str) -> str:
    """A new, empty database on the server at *url*; its URL, in *url*'s form (driver kept)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return make_url(url).set(database=name).render_as_string(hide_password=False)
