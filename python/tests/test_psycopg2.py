"""pgminhash.psycopg2: Signatures through psycopg2."""
import psycopg2
import pytest

import pgminhash
from pgminhash import Signature
from pgminhash.psycopg2 import register_minhash

from . import similar_docs


@pytest.fixture
def db(dbname):
    c = psycopg2.connect(dbname=dbname)
    c.autocommit = True
    register_minhash(c)
    with c.cursor() as cur:
        cur.execute("SET enable_seqscan = off")
        cur.execute("DROP TABLE IF EXISTS pg2_docs")
        cur.execute("CREATE TABLE pg2_docs (id int PRIMARY KEY, body text, sig minhash)")
        cur.execute("CREATE INDEX pg2_docs_lsh ON pg2_docs USING lsh (sig)")
    yield c
    c.close()


def test_round_trip_similar_and_nearest(db):
    sigs = similar_docs.signatures()
    with db.cursor() as cur:
        cur.executemany("INSERT INTO pg2_docs VALUES (%s, %s, %s)",
                        [(i, body, sigs[i]) for i, body in similar_docs.documents()])
        cur.execute("SELECT id, sig, minhash(body) FROM pg2_docs ORDER BY id")
        rows = cur.fetchall()
        assert len(rows) == len(sigs)
        assert all(isinstance(s, Signature) and s == sigs[i] == m for i, s, m in rows)

        cur.execute("SELECT array_agg(sig ORDER BY id) FROM pg2_docs WHERE id <= 2")
        assert cur.fetchone()[0] == [sigs[1], sigs[2]]

        q = pgminhash.minhash(dict(similar_docs.documents())[7])
        cur.execute("EXPLAIN SELECT id FROM pg2_docs WHERE sig %% %s", (q,))
        assert "pg2_docs_lsh" in "\n".join(r[0] for r in cur.fetchall())
        cur.execute("SELECT id FROM pg2_docs WHERE sig %% %s", (q,))
        assert {r[0] for r in cur.fetchall()} == similar_docs.similar_to(sigs, q) == {7, 8, 9}
        cur.execute("SELECT sig <%%> %s, id FROM pg2_docs ORDER BY sig <%%> %s LIMIT 3", (q, q))
        assert sorted(cur.fetchall()) == similar_docs.nearest(sigs, q, 3)


def test_compact_and_oph_signatures(db):
    sigs = [pgminhash.minhash("a compact signature", bits=16),
            pgminhash.minhash("a compact signature", bits=8, family="oph", num_perm=32),
            pgminhash.minhash("an oph sketch", family="oph", num_perm=8)]
    with db.cursor() as cur:
        cur.execute("SELECT %s, %s, %s, minhash('a compact signature'::text, bits => 16)", sigs)
        assert cur.fetchone() == (*sigs, sigs[0])
        cur.execute("SELECT ARRAY[%s, %s]", (sigs[0], sigs[0]))
        assert cur.fetchone()[0] == [sigs[0], sigs[0]]


def test_datasketch_signatures(db):
    sig = pgminhash.minhash(["a", "b"], family="datasketch", num_perm=4, seed=9)
    with db.cursor() as cur:
        cur.execute("SELECT %s, minhash(ARRAY['a', 'b'], family => 'datasketch', num_perm => 4,"
                    " seed => 9)", (sig,))
        assert cur.fetchone() == (sig, sig)
