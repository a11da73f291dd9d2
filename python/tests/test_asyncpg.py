"""pgminhash.asyncpg: Signatures through asyncpg's binary protocol."""
import asyncio
import os

import asyncpg
import pytest

import pgminhash
from pgminhash import Signature
from pgminhash.asyncpg import register_minhash

from . import similar_docs


def run(dbname, body):
    async def main():
        conn = await asyncpg.connect(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                                     user=os.environ.get("PGUSER"), database=dbname)
        try:
            await register_minhash(conn)
            return await body(conn)
        finally:
            await conn.close()
    return asyncio.run(main())


def test_round_trip_similar_and_nearest(dbname):
    sigs = similar_docs.signatures()
    docs = similar_docs.documents()
    q = pgminhash.minhash(dict(docs)[100])

    async def body(conn):
        await conn.execute("SET enable_seqscan = off")
        await conn.execute("DROP TABLE IF EXISTS apg_docs")
        await conn.execute("CREATE TABLE apg_docs (id int PRIMARY KEY, body text, sig minhash)")
        await conn.execute("CREATE INDEX apg_docs_lsh ON apg_docs USING lsh (sig)")
        await conn.executemany("INSERT INTO apg_docs VALUES ($1, $2, $3)",
                               [(i, b, sigs[i]) for i, b in docs])
        rows = await conn.fetch("SELECT id, sig, minhash(body) FROM apg_docs ORDER BY id")
        plan = await conn.fetch("EXPLAIN SELECT id FROM apg_docs WHERE sig % $1", q)
        similar = await conn.fetch("SELECT id FROM apg_docs WHERE sig % $1", q)
        nearest = await conn.fetch(
            "SELECT sig <%> $1, id FROM apg_docs ORDER BY sig <%> $1 LIMIT 3", q)
        text = await conn.fetchval("SELECT $1::minhash", str(q))
        return rows, plan, similar, nearest, text

    rows, plan, similar, nearest, text = run(dbname, body)
    assert len(rows) == len(sigs)
    assert all(isinstance(r["sig"], Signature) and r["sig"] == sigs[r["id"]] == r[2]
               for r in rows)
    assert "apg_docs_lsh" in "\n".join(r[0] for r in plan)
    assert {r["id"] for r in similar} == similar_docs.similar_to(sigs, q) == {100, 101, 102}
    assert sorted(tuple(r) for r in nearest) == similar_docs.nearest(sigs, q, 3)
    assert text == q


def test_compact_and_oph_signatures_round_trip(dbname):
    sigs = [pgminhash.minhash(b, bits=bits, family=family)
            for _, b in similar_docs.documents()[:10]
            for bits, family in ((16, "native"), (8, "oph"), (32, "oph"))]

    async def body(conn):
        back = [await conn.fetchval("SELECT $1::minhash", s) for s in sigs]
        server = await conn.fetchval("SELECT minhash('a b c d e f'::text, bits => 8,"
                                     " family => 'oph', num_perm => 16)")
        estimate = await conn.fetchval("SELECT jaccard($1::minhash, $2::minhash)", sigs[0], sigs[3])
        return back, server, estimate

    back, server, estimate = run(dbname, body)
    assert back == sigs and [s.bits for s in back] == [16, 8, 32] * 10
    assert server == pgminhash.minhash("a b c d e f", bits=8, family="oph", num_perm=16)
    assert estimate == sigs[0].jaccard(sigs[3])


def test_server_signatures_and_bad_parameters(dbname):
    async def body(conn):
        return await conn.fetchval("SELECT minhash(ARRAY[1, 2, 3], num_perm => 8)")

    assert run(dbname, body) == pgminhash.minhash([1, 2, 3], num_perm=8)

    async def wrong_type(conn):
        await conn.fetchval("SELECT $1::minhash", 42)

    with pytest.raises(asyncpg.DataError, match="a Signature, not int"):
        run(dbname, wrong_type)
