"""Set elements as the server identifies them (src/pg/element.cpp).

The core binding reads str (UTF-8, as text[]), bytes and bytearray (as
bytea[]: the binary send form of bytea is its bytes), bool ("t"/"f", as
boolean[] prints) and int (decimal, as smallint[], integer[] and bigint[]
print: 42 and "42" are the same element) itself. The types below come here:
NumPy's scalars and arrays, floats (float8[] and real[] are identified by
their binary send form, IEEE 754 big-endian), memoryview (bytea) and
uuid.UUID (uuid[] prints the canonical lower-case form). Anything else is
refused rather than guessed: the server would identify it by a form this
package cannot know (a composite's hash function, a date's send form).
"""
import numbers
import struct
import uuid

import numpy as np


def element_bytes(x):
    """The bytes the server hashes for element x (called for the types the
    binding does not read itself)."""
    if isinstance(x, np.bool_):
        return b"t" if x else b"f"
    if isinstance(x, numbers.Integral):  # NumPy's integers
        return str(int(x)).encode()
    if isinstance(x, np.float32):
        return struct.pack(">f", x)
    if isinstance(x, float):  # also np.float64
        return struct.pack(">d", x)
    if isinstance(x, memoryview):
        return x.tobytes()
    if isinstance(x, uuid.UUID):
        return str(x).encode()
    raise TypeError(
        f"cannot use {type(x).__name__} as a set element: pgminhash identifies str, int, bool, "
        "bytes, float and uuid.UUID elements as the server identifies text[], bigint[], "
        "boolean[], bytea[], float8[] and uuid[] elements; convert others to str as the server "
        "prints them")


def elements_of(elements, call="minhash"):
    """elements as something the binding iterates quickly: NumPy arrays are
    read as their flat list of elements (as the server reads a
    multi-dimensional array), as Python scalars where that keeps the type's
    form. call names the function in messages (minhash, jaccard)."""
    if isinstance(elements, (str, bytes, bytearray, memoryview)):
        if call == "jaccard":
            raise TypeError(
                f"jaccard() of a {type(elements).__name__}: it compares two Signatures or two "
                "sets (iterables of elements); sign documents first: "
                "jaccard(minhash(a), minhash(b))")
        raise TypeError(
            f"minhash() of a {type(elements).__name__}: a document is a str, a set an iterable "
            "of elements (wrap one bytes element in a list; decode bytes to sign it as text)")
    takes = ("two Signatures or two sets (iterables of elements)" if call == "jaccard"
             else "a document (a str) or a set (an iterable of elements)")
    if elements is None:
        # SQL's functions are strict (NULL in, NULL out); here None is an error
        raise TypeError(f"{call}() takes {takes}, not None (skip None values: in SQL, "
                        f"{call} of NULL is NULL)")
    try:
        iter(elements)
    except TypeError:
        raise TypeError(f"{call}() takes {takes}, not {type(elements).__name__}") from None
    if isinstance(elements, np.ndarray):
        flat = elements.ravel()
        # float32 stays float32 (real[]); tolist() would make it a float8
        return flat if flat.dtype == np.float32 else flat.tolist()
    return elements
