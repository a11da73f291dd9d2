"""pgminhash.psycopg: Signatures through psycopg 3, text and binary."""
import asyncio

import psycopg
import pytest

import pgminhash
from pgminhash import Signature
from pgminhash.psycopg import register_minhash, register_minhash_async

from . import similar_docs


@pytest.fixture
def db(dbname):
    with psycopg.connect(dbname=dbname, autocommit=True) as c:
        register_minhash(c)
        c.execute("SET enable_seqscan = off")  # the small table's queries go through the index
        c.execute("DROP TABLE IF EXISTS pg3_docs")
        c.execute("CREATE TABLE pg3_docs (id int PRIMARY KEY, body text, sig minhash(128))")
        c.execute("CREATE INDEX pg3_docs_lsh ON pg3_docs USING lsh (sig)")
        yield c


@pytest.mark.parametrize("placeholder", ["%s", "%t", "%b"])
def test_write_and_read(db, placeholder):
    sigs = similar_docs.signatures()
    with db.cursor() as cur:
        cur.executemany(f"INSERT INTO pg3_docs VALUES (%s, %s, {placeholder})",
                        [(i, body, sigs[i]) for i, body in similar_docs.documents()])
    for binary in (False, True):
        rows = db.execute("SELECT id, sig, minhash(body) FROM pg3_docs ORDER BY id",
                          binary=binary).fetchall()
        assert len(rows) == len(sigs)
        for i, stored, computed in rows:
            assert isinstance(stored, Signature) and isinstance(computed, Signature)
            assert stored == sigs[i] == computed
    # arrays of signatures, both ways
    arr = db.execute("SELECT array_agg(sig ORDER BY id) FROM pg3_docs WHERE id <= 3").fetchone()[0]
    assert arr == [sigs[1], sigs[2], sigs[3]]
    assert db.execute("SELECT %s::minhash[] = (SELECT array_agg(sig ORDER BY id) FROM pg3_docs"
                      " WHERE id <= 3)", ([sigs[1], sigs[2], sigs[3]],)).fetchone()[0]


@pytest.mark.parametrize("placeholder", ["%s", "%b"])
def test_similar_and_nearest_through_the_index(db, placeholder):
    sigs = similar_docs.signatures()
    with db.cursor() as cur:
        cur.executemany("INSERT INTO pg3_docs VALUES (%s, %s, %s)",
                        [(i, body, sigs[i]) for i, body in similar_docs.documents()])
    q = pgminhash.minhash(dict(similar_docs.documents())[31])
    similar = f"SELECT id FROM pg3_docs WHERE sig %% {placeholder}"
    plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + similar, (q,)))
    assert "pg3_docs_lsh" in plan
    assert {r[0] for r in db.execute(similar, (q,))} == similar_docs.similar_to(sigs, q) == {
        31, 32, 33}
    nearest = (f"SELECT sig <%%> {placeholder}, id FROM pg3_docs ORDER BY sig <%%> {placeholder}"
               " LIMIT 3")
    plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + nearest, (q, q)))
    assert "pg3_docs_lsh" in plan
    rows = db.execute(nearest, (q, q)).fetchall()
    expected = similar_docs.nearest(sigs, q, 3)
    assert sorted(rows) == expected
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)


@pytest.mark.parametrize("placeholder", ["%s", "%t", "%b"])
def test_compact_and_oph_signatures_round_trip(db, placeholder):
    db.execute("DROP TABLE IF EXISTS pg3_compact")
    db.execute("CREATE TABLE pg3_compact (id int PRIMARY KEY, body text, s16 minhash(128, 16),"
               " s8 minhash(128, 8), oph minhash)")
    docs = similar_docs.documents()[:30]
    rows = [(i, b, pgminhash.minhash(b, bits=16), pgminhash.minhash(b, bits=8, family="oph"),
             pgminhash.minhash(b, family="oph")) for i, b in docs]
    with db.cursor() as cur:
        cur.executemany(f"INSERT INTO pg3_compact VALUES (%s, %s, {placeholder}, {placeholder},"
                        f" {placeholder})", rows)
    for binary in (False, True):
        got = db.execute("SELECT id, body, s16, s8, oph, minhash(body, bits => 16),"
                         " minhash(body, bits => 8, family => 'oph') FROM pg3_compact ORDER BY id",
                         binary=binary).fetchall()
        assert [r[:5] for r in got] == rows
        assert all(r[5] == r[2] and r[6] == r[3] for r in got)
        assert {(r[2].bits, r[3].bits, r[4].bits, r[4].family) for r in got} == {
            (16, 8, 32, "oph")}
    # the server's estimates of what was stored are ours
    a, b = rows[0][2], rows[1][2]
    assert db.execute(f"SELECT jaccard({placeholder}, {placeholder})", (a, b)).fetchone()[0] == \
        a.jaccard(b)


def test_unregistered_connections_see_text(dbname):
    with psycopg.connect(dbname=dbname) as c:
        assert c.execute("SELECT minhash('a b'::text, num_perm => 2)").fetchone()[0] == \
            str(pgminhash.minhash("a b", num_perm=2))


def test_async_connection(dbname):
    async def run():
        async with await psycopg.AsyncConnection.connect(dbname=dbname) as c:
            await register_minhash_async(c)
            sig = pgminhash.minhash("an async document", family="datasketch", seed=3)
            cur = await c.execute("SELECT %s::minhash, minhash('an async document'::text,"
                                  " family => 'datasketch', seed => 3)", (sig,))
            return sig, await cur.fetchone()

    sig, row = asyncio.run(run())
    assert row == (sig, sig)


def test_missing_extension_is_a_clear_error(dbname):
    with psycopg.connect(dbname=dbname) as c:
        c.execute("CREATE SCHEMA IF NOT EXISTS empty")
        c.execute("SET search_path = empty")
        with pytest.raises(psycopg.ProgrammingError, match="minhash type not found"):
            register_minhash(c)
