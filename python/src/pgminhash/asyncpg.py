"""asyncpg: minhash values as Signatures, in the binary format.

    from pgminhash.asyncpg import register_minhash
    await register_minhash(conn)        # or as a pool's init= callback
    await conn.execute("INSERT INTO docs (sig) VALUES ($1)", pgminhash.minhash(body))

asyncpg knows each parameter's type from the server, so no cast is needed.
A parameter may also be the text form ('1:[...]').
"""
from .signature import Signature

__all__ = ["register_minhash"]


def _encode(value):
    if isinstance(value, str):
        value = Signature.from_text(value)
    if not isinstance(value, Signature):
        raise TypeError(f"a minhash parameter is a Signature, not {type(value).__name__}")
    return bytes(value)


async def register_minhash(conn, schema=None):
    """Registers the Signature codec on a connection. schema: where the
    extension lives; by default the schema of the minhash type found on the
    search path."""
    if schema is None:
        schema = await conn.fetchval(
            "SELECT n.nspname FROM pg_catalog.pg_type t"
            " JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace"
            " WHERE t.oid = pg_catalog.to_regtype('minhash')")
        if schema is None:
            raise ValueError("minhash type not found in the database (CREATE EXTENSION minhash, "
                             "or put its schema on the search_path)")
    await conn.set_type_codec("minhash", schema=schema, encoder=_encode,
                              decoder=Signature.from_binary, format="binary")
