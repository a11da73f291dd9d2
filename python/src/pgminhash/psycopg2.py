"""psycopg2: minhash values as Signatures (text format, psycopg2's only one).

    from pgminhash.psycopg2 import register_minhash
    register_minhash(conn)
    cur.execute("INSERT INTO docs (sig) VALUES (%s)", (pgminhash.minhash(body),))

Signatures are sent as typed literals ('1:[...]'::minhash), minhash and
minhash[] results are read as Signatures.
"""
import psycopg2
from psycopg2.extensions import (QuotedString, connection, cursor, new_array_type, new_type,
                                 register_adapter, register_type)

from .signature import Signature

__all__ = ["register_minhash"]


class SignatureAdapter:
    def __init__(self, sig):
        self._sig = sig

    def prepare(self, conn):
        self._conn = conn

    def getquoted(self):
        quoted = QuotedString(str(self._sig))
        if getattr(self, "_conn", None) is not None:
            quoted.prepare(self._conn)
        return quoted.getquoted() + b"::minhash"


def _cast_minhash(value, cur):
    return None if value is None else Signature.from_text(value)


def register_minhash(conn_or_curs, globally=False, arrays=True):
    """Registers the minhash types of the connection's database (found on its
    search path) on the connection or cursor, or everywhere with
    globally=True. The Signature adapter is always global (psycopg2's
    register_adapter has no scope)."""
    conn = conn_or_curs if isinstance(conn_or_curs, connection) else conn_or_curs.connection
    scope = None if globally else conn_or_curs
    with conn.cursor(cursor_factory=cursor) as cur:
        cur.execute("SELECT to_regtype('minhash')::oid, to_regtype('minhash[]')::oid")
        oid, array_oid = cur.fetchone()
    if oid is None:
        raise psycopg2.ProgrammingError("minhash type not found in the database (CREATE EXTENSION "
                                        "minhash, or put its schema on the search_path)")
    minhash = new_type((oid,), "MINHASH", _cast_minhash)
    register_type(minhash, scope)
    if arrays and array_oid is not None:
        register_type(new_array_type((array_oid,), "MINHASHARRAY", minhash), scope)
    register_adapter(Signature, SignatureAdapter)
