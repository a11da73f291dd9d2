"""SQLAlchemy (1.4 and later): a Minhash column type, its operators, and an
lsh index.

    from pgminhash.sqlalchemy import Minhash, LshIndex
    docs = Table("docs", metadata, Column("id", Integer, primary_key=True),
                 Column("sig", Minhash(128)))
    LshIndex("docs_sig_lsh", docs.c.sig, threshold=0.5)

    q = pgminhash.minhash(body)
    select(docs.c.id).where(docs.c.sig.similar(q))                  # sig % q
    select(docs.c.id).order_by(docs.c.sig.jaccard_distance(q)).limit(10)   # sig <%> q

Parameters are Signatures (or their text form) and are cast to minhash;
results are Signatures.
"""
import re

from sqlalchemy import Index, bindparam, cast, func
from sqlalchemy.sql.expression import ClauseElement
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql.base import PGDialect, ischema_names
from sqlalchemy.types import Boolean, Float, UserDefinedType

from ._options import type_name
from .signature import Signature

__all__ = ["Minhash", "LshIndex"]


def _to_db(value):
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, Signature):
        raise TypeError(f"a minhash value is a Signature, not {type(value).__name__}")
    return str(value)


def _from_db(value):
    if value is None or isinstance(value, Signature):
        return value  # a driver with pgminhash's adapter registered made it already
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Signature.from_binary(value)
    return Signature.from_text(value)


class Minhash(UserDefinedType):
    """The minhash type; Minhash(k) is minhash(k), signatures of num_perm k,
    and Minhash(k, bits=16) minhash(k, 16), compact signatures."""

    cache_ok = True

    def __init__(self, num_perm=None, bits=None):
        super().__init__()
        self.num_perm = num_perm
        self.bits = bits
        self._spec = type_name(num_perm, bits).upper()

    def get_col_spec(self, **kw):
        return self._spec

    def bind_processor(self, dialect):
        return _to_db

    def bind_expression(self, bindvalue):
        # a typed parameter: operators and functions resolve without guessing
        return cast(bindvalue, self)

    def literal_processor(self, dialect):
        def process(value):
            # parsed, so a str rendered into the SQL is a signature's text
            # form (digits and tags), never arbitrary text
            if isinstance(value, str):
                value = Signature.from_text(value)
            return "'%s'::minhash" % _to_db(value)
        return process

    def result_processor(self, dialect, coltype):
        return _from_db

    class comparator_factory(UserDefinedType.Comparator):
        def similar(self, other):
            """sig % other: estimated Jaccard similarity at least
            minhash.similarity_threshold (an lsh index scan)."""
            return self.op("%", return_type=Boolean)(other)

        def jaccard_distance(self, other):
            """sig <%> other: 1 - estimated Jaccard, for ORDER BY ... LIMIT
            (an lsh index scan)."""
            return self.op("<%>", return_type=Float)(other)

        def jaccard(self, other):
            """jaccard(sig, other): the estimated Jaccard similarity."""
            if not isinstance(other, ClauseElement) and not hasattr(other, "__clause_element__"):
                other = bindparam(None, other, type_=self.type)
            return func.jaccard(self.expr, other, type_=Float)


def _reflected_minhash(num_perm=None, bits=None):
    # SQLAlchemy 2.0's PostgreSQL dialect reads minhash(128,16) as (128, "16"):
    # the first typmod number as an integer, the rest as text
    return Minhash(num_perm, bits=None if bits is None else int(bits))


# the type's name when a table is reflected
ischema_names["minhash"] = _reflected_minhash

# format_type() of a compact column, minhash(128,16), maybe schema-qualified
# or an array
_COMPACT_FORMAT = re.compile(r'((?:"[^"]*"|[^"(]*)\.)?minhash\((\d+),(\d+)\)((?:\[\])*)')


def _reflecting_compact_columns(get_column_info):
    # PostgreSQL's dialect reads the typmod of any type but numeric as one
    # number, and fails on minhash(128,16) with int("128,16"): the column is
    # reflected as minhash(128), then given its bits.
    def reflect(self, name, format_type, *args, **kw):
        compact = _COMPACT_FORMAT.fullmatch(format_type or "")
        if compact is None:
            return get_column_info(self, name, format_type, *args, **kw)
        schema, num_perm, bits, brackets = compact.groups()
        info = get_column_info(self, name, f"{schema or ''}minhash({num_perm}){brackets}",
                               *args, **kw)
        coltype = info["type"]
        if isinstance(coltype, ARRAY) and isinstance(coltype.item_type, Minhash):
            info["type"] = ARRAY(Minhash(int(num_perm), bits=int(bits)))
        elif isinstance(coltype, Minhash):
            info["type"] = Minhash(int(num_perm), bits=int(bits))
        return info
    return reflect


# SQLAlchemy 1.4's PostgreSQL dialect (2.0 reflects types elsewhere)
if hasattr(PGDialect, "_get_column_info"):
    PGDialect._get_column_info = _reflecting_compact_columns(PGDialect._get_column_info)

_LSH_OPTIONS = ("threshold", "bands", "rows", "fp_weight", "fn_weight", "fastupdate",
                "pending_list_limit", "fillfactor")


class LshIndex(Index):
    """Index(name, *expressions, postgresql_using='lsh', postgresql_with=...)
    with the lsh index's options as keywords (docs/lsh.md): threshold, bands,
    rows, fp_weight, fn_weight, fastupdate, pending_list_limit, fillfactor."""

    def __init__(self, name, *expressions, **kw):
        options = {key: kw.pop(key) for key in _LSH_OPTIONS if kw.get(key) is not None}
        for key in _LSH_OPTIONS:
            kw.pop(key, None)
        kw["postgresql_using"] = "lsh"
        if options:
            kw["postgresql_with"] = {key: _option_text(value) for key, value in options.items()}
        super().__init__(name, *expressions, **kw)


def _option_text(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
