"""The suite runs against a real PostgreSQL cluster with the minhash extension
installed: scripts/pytest.sh starts a scratch one and sets PGHOST, PGPORT,
PGUSER and PGDATABASE. Each run creates its own database (dropped at the
end) with CREATE EXTENSION minhash."""
import os

import psycopg
import pytest


def pytest_report_header(config):
    import pgminhash

    return f"pgminhash from {os.path.dirname(pgminhash.__file__)}"


def pytest_configure(config):
    missing = [v for v in ("PGHOST", "PGPORT") if not os.environ.get(v)]
    if missing:
        raise pytest.UsageError(
            f"{', '.join(missing)} not set: run the suite with scripts/pytest.sh (it starts a "
            "cluster with the extension installed) or point PG* at one")


@pytest.fixture(scope="session")
def dbname():
    name = f"pgminhash_test_{os.getpid()}"
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(dbname=name, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION minhash")
        yield name
    finally:
        with psycopg.connect(autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def conn(dbname):
    """A psycopg 3 connection without pgminhash's adapters (values as the
    server's text), autocommit."""
    with psycopg.connect(dbname=dbname, autocommit=True) as c:
        yield c
