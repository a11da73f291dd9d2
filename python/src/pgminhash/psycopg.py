"""psycopg 3: minhash values as Signatures, in text and binary format.

    from pgminhash.psycopg import register_minhash
    register_minhash(conn)              # or await register_minhash_async(aconn)
    conn.execute("INSERT INTO docs (sig) VALUES (%s)", (pgminhash.minhash(body),))
    sig = conn.execute("SELECT sig FROM docs").fetchone()[0]      # a Signature

Signatures are sent with the minhash type's OID (so ``sig %% %s`` needs no
cast) as text (``%s``, ``%t``) or binary (``%b``); results in either format
(``binary=True``) are read as Signatures, and so are minhash[] arrays.
"""
from psycopg import ProgrammingError
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from .signature import Signature

__all__ = ["register_minhash", "register_minhash_async"]


class MinhashDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj):
        return str(obj).encode()


class MinhashBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj):
        return bytes(obj)


class MinhashLoader(Loader):
    format = Format.TEXT

    def load(self, data):
        return Signature.from_text(bytes(data))


class MinhashBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data):
        return Signature.from_binary(data)


def register_minhash_info(context, info):
    """Registers the adapters for a fetched TypeInfo of minhash."""
    if info is None:
        raise ProgrammingError("minhash type not found in the database "
                               "(CREATE EXTENSION minhash, or put its schema on the search_path)")
    info.register(context)  # minhash[] arrays
    adapters = context.adapters
    # subclasses that carry the OID, so parameters are sent as minhash
    adapters.register_dumper(Signature, type("MinhashTextDumper", (MinhashDumper,),
                                             {"oid": info.oid}))
    adapters.register_dumper(Signature, type("MinhashBinDumper", (MinhashBinaryDumper,),
                                             {"oid": info.oid}))
    adapters.register_loader(info.oid, MinhashLoader)
    adapters.register_loader(info.oid, MinhashBinaryLoader)


def register_minhash(context):
    """Registers Signature adapters on a Connection or Cursor (or their async
    kinds' sync counterparts): the minhash type is looked up on the search
    path."""
    register_minhash_info(context, TypeInfo.fetch(context, "minhash"))


async def register_minhash_async(context):
    """register_minhash for an AsyncConnection."""
    register_minhash_info(context, await TypeInfo.fetch(context, "minhash"))
