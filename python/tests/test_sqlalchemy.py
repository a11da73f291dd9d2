"""pgminhash.sqlalchemy: the Minhash column type, its operators and LshIndex
(SQLAlchemy 1.4 as Debian ships it, over psycopg2)."""
import os

import pytest
import sqlalchemy
from sqlalchemy import Column, Integer, MetaData, Table, Text, func, select, text

import pgminhash
from pgminhash import Signature
from pgminhash.sqlalchemy import LshIndex, Minhash

from . import similar_docs


@pytest.fixture
def engine(dbname):
    engine = sqlalchemy.create_engine(
        "postgresql+psycopg2://", future=True,
        connect_args=dict(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                          user=os.environ.get("PGUSER"), dbname=dbname))
    yield engine
    engine.dispose()


@pytest.fixture
def docs(engine):
    metadata = MetaData()
    table = Table("sa_docs", metadata, Column("id", Integer, primary_key=True),
                  Column("body", Text), Column("sig", Minhash(128)))
    LshIndex("sa_docs_lsh", table.c.sig, threshold=0.5, fastupdate=False)
    metadata.drop_all(engine)
    metadata.create_all(engine)
    yield table
    metadata.drop_all(engine)


def test_ddl(engine, docs):
    with engine.connect() as c:
        coltype = c.execute(text("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                                 " WHERE attrelid = 'sa_docs'::regclass AND attname = 'sig'"))
        assert coltype.scalar() == "minhash(128)"
        indexdef = c.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = 'sa_docs_lsh'"))
        assert indexdef.scalar() == ("CREATE INDEX sa_docs_lsh ON public.sa_docs USING lsh (sig)"
                                     " WITH (threshold='0.5', fastupdate=off)")
    # reflection knows the type
    reflected = Table("sa_docs", MetaData(), autoload_with=engine)
    assert isinstance(reflected.c.sig.type, Minhash)


def test_compact_signatures(engine):
    metadata = MetaData()
    table = Table("sa_compact", metadata, Column("id", Integer, primary_key=True),
                  Column("sig", Minhash(64, bits=16)))
    metadata.drop_all(engine)
    metadata.create_all(engine)
    try:
        sigs = {i: pgminhash.minhash(b, num_perm=64, bits=16)
                for i, b in similar_docs.documents()[:20]}
        with engine.begin() as c:
            coltype = c.execute(text("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                                     " WHERE attrelid = 'sa_compact'::regclass"
                                     " AND attname = 'sig'")).scalar()
            assert coltype == "minhash(64,16)"
            c.execute(table.insert(), [dict(id=i, sig=s) for i, s in sigs.items()])
            rows = dict(c.execute(select(table.c.id, table.c.sig)).all())
            assert rows == sigs and all(s.bits == 16 for s in rows.values())
            assert c.execute(select(table.c.sig.jaccard(sigs[1])).where(table.c.id == 2)).scalar() \
                == sigs[2].jaccard(sigs[1])
            # parameters are cast to the column's type, minhash(64, 16): an
            # explicit cast, which narrows a 32-bit signature as the server
            # narrows (so a 32-bit query signature compares with the column)
            c.execute(table.insert(), [dict(id=99, sig=pgminhash.minhash("x y", num_perm=64))])
            assert c.execute(select(table.c.sig).where(table.c.id == 99)).scalar() == \
                pgminhash.minhash("x y", num_perm=64, bits=16)
            q = pgminhash.minhash(dict(similar_docs.documents())[3], num_perm=64)
            assert c.execute(select(table.c.sig.jaccard(q)).where(table.c.id == 3)).scalar() == 1.0
    finally:
        metadata.drop_all(engine)
    with pytest.raises(ValueError, match="bits needs num_perm"):
        Minhash(bits=16)


def test_compact_columns_are_reflected(engine):
    # format_type() writes minhash(64,16), which SQLAlchemy's PostgreSQL
    # dialect alone reads as one number (and fails on)
    with engine.begin() as c:
        c.execute(text("CREATE TABLE sa_reflect (a minhash(64,16), b minhash(16,8)[],"
                       " c minhash(32), d minhash, e minhash(8,32))"))
    try:
        reflected = Table("sa_reflect", MetaData(), autoload_with=engine)
        types = {col.name: col.type for col in reflected.c}
        assert {name: (t.num_perm, t.bits) for name, t in types.items() if name != "b"} == {
            "a": (64, 16), "c": (32, None), "d": (None, None), "e": (8, None)}
        assert isinstance(types["b"], sqlalchemy.ARRAY)
        assert (types["b"].item_type.num_perm, types["b"].item_type.bits) == (16, 8)
        # the reflected types make the same columns
        with engine.begin() as c:
            c.execute(text("DROP TABLE sa_reflect"))
        reflected.create(engine)
        with engine.connect() as c:
            coltypes = c.execute(text(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = 'sa_reflect'::regclass AND attnum > 0")).all()
        assert dict(coltypes) == {"a": "minhash(64,16)", "b": "minhash(16,8)[]",
                                  "c": "minhash(32)", "d": "minhash", "e": "minhash(8)"}
    finally:
        with engine.begin() as c:
            c.execute(text("DROP TABLE IF EXISTS sa_reflect"))


def test_round_trip_similar_and_nearest(engine, docs):
    sigs = similar_docs.signatures()
    with engine.begin() as c:
        c.execute(text("SET LOCAL enable_seqscan = off"))
        c.execute(docs.insert(), [dict(id=i, body=b, sig=sigs[i])
                                  for i, b in similar_docs.documents()])
        rows = c.execute(select(docs.c.id, docs.c.sig,
                                func.minhash(docs.c.body, type_=Minhash)).order_by(docs.c.id)).all()
        assert len(rows) == len(sigs)
        assert all(isinstance(s, Signature) and s == sigs[i] == m for i, s, m in rows)

        q = pgminhash.minhash(dict(similar_docs.documents())[52])
        similar = select(docs.c.id).where(docs.c.sig.similar(q))
        literal = similar.compile(engine, compile_kwargs={"literal_binds": True})
        # compiled for psycopg2's format style: %% in the text is the operator %
        plan = c.exec_driver_sql("EXPLAIN " + str(literal)).all()
        assert "sa_docs_lsh" in "\n".join(r[0] for r in plan)
        assert set(c.execute(similar).scalars()) == similar_docs.similar_to(sigs, q) == {
            52, 53, 54}

        distance = docs.c.sig.jaccard_distance(q)
        nearest = c.execute(select(distance, docs.c.id).order_by(distance).limit(3)).all()
        assert sorted(tuple(r) for r in nearest) == similar_docs.nearest(sigs, q, 3)

        estimate = c.execute(select(docs.c.sig.jaccard(q)).where(docs.c.id == 53)).scalar()
        assert estimate == sigs[53].jaccard(q)
        # a Signature's text form is accepted as a parameter too
        assert c.execute(select(docs.c.id).where(docs.c.sig == str(sigs[9]))).scalar() == 9


def test_literal_binds_render_only_signatures(engine, docs):
    # a str parameter compiled with literal_binds is parsed, not pasted into
    # the SQL: text that is not a signature cannot end the quoted literal
    sig = pgminhash.minhash("a b c d e f")
    for value in (sig, str(sig)):
        stmt = select(docs.c.id).where(docs.c.sig == value)
        literal = str(stmt.compile(engine, compile_kwargs={"literal_binds": True}))
        assert f"CAST('{sig}'::minhash AS MINHASH(128))" in literal
    injected = select(docs.c.id).where(docs.c.sig == "1:[1]'; DROP TABLE sa_docs; --")
    with pytest.raises(sqlalchemy.exc.CompileError) as refused:
        injected.compile(engine, compile_kwargs={"literal_binds": True})
    assert "invalid input syntax for type minhash" in str(refused.value.__cause__)


def test_minhash_arrays_with_the_psycopg2_adapter_registered(dbname):
    # docs/python.md: ARRAY(Minhash) over psycopg2 with register_minhash on connect
    from pgminhash.psycopg2 import register_minhash

    engine = sqlalchemy.create_engine(
        "postgresql+psycopg2://", future=True,
        connect_args=dict(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                          user=os.environ.get("PGUSER"), dbname=dbname))
    sqlalchemy.event.listen(engine, "connect", lambda conn, _: register_minhash(conn))
    metadata = MetaData()
    table = Table("sa_arrays", metadata, Column("id", Integer, primary_key=True),
                  Column("sigs", sqlalchemy.ARRAY(Minhash)))
    metadata.create_all(engine)
    try:
        sigs = [pgminhash.minhash("a b c", num_perm=4), None,
                pgminhash.minhash("x", family="oph", bits=8, num_perm=4)]
        with engine.begin() as c:
            c.execute(table.insert(), [dict(id=1, sigs=sigs)])
            assert c.execute(select(table.c.sigs)).scalar() == sigs
    finally:
        metadata.drop_all(engine)
        engine.dispose()
