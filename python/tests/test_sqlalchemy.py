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
