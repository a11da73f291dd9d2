"""pgminhash: the minhash PostgreSQL extension's signatures in Python.

The signatures are computed by the extension's own core library (compiled
into pgminhash._core), so ``str(pgminhash.minhash(doc))`` is what the server's
``minhash(doc)::text`` is, for every family, unit and k. The functions take
the SQL functions' arguments, with the same names, defaults and checks:

    minhash(doc, unit='word', k=0, num_perm=128, seed=1, family='native',
            bits=32, ignore=None)
    minhash(elements, num_perm=128, seed=1, family='native', bits=32)
    shingles(doc, k=0, unit='word', ignore=None)    # minhash_shingles
    jaccard(a, b)                               # of two signatures, or two sets
    lsh_params(threshold, num_perm=128, fp_weight=0.5, fn_weight=0.5)

Adapters: pgminhash.psycopg, .psycopg2, .asyncpg, .sqlalchemy, .django.
"""
from collections import namedtuple

from . import _core, _elements, _options
from ._options import BITS, FAMILIES, UNITS, ServerOnlyError
from .signature import Signature

__all__ = ["minhash", "shingles", "jaccard", "lsh_params", "Signature", "LshParams",
           "ServerOnlyError", "FAMILIES", "UNITS", "BITS"]

LshParams = namedtuple("LshParams", ["bands", "rows", "false_positive", "false_negative"])


def minhash(doc, /, *, unit="word", k=0, num_perm=_core.DEFAULT_NUM_PERM,
            seed=_core.DEFAULT_SEED, family="native", bits=32, ignore=None, config=None):
    """The signature of a document (a str) or of a set (any other iterable).

    A document is shingled as ``minhash(doc, unit, k, num_perm, seed)`` and
    ``minhash(doc, family => ...)`` do it: ``unit`` is 'word', 'char' or
    'char_nospace', ``k`` the shingle size (0: 5 words or 9 characters);
    ``ignore`` leaves characters out first, as ``minhash(doc, ignore =>
    'accents, punctuation')`` does ('accents', 'punctuation', both, or a
    list of those names).

    A set is signed as ``minhash(anyarray, ...)`` signs an array: None
    elements are skipped, repeats count once; str elements are text, int
    elements integers (42 and '42' are the same element), bytes bytea, bool
    boolean, float float8, uuid.UUID uuid. NumPy arrays are read flat.

    ``family`` is 'native', 'datasketch' or 'oph'; ``bits`` (32, 16 or 8)
    the bits kept of each value, as ``minhash(..., bits => 16)``: a compact
    signature. ``config`` (words from a text search configuration) exists
    only in the server: ServerOnlyError.
    """
    if isinstance(doc, str):
        if config is not None:
            _options.no_config(config, "minhash(doc)")
        shingle, sign, family_number, seed_bits, width = _options.text_specs(
            unit, k, num_perm, seed, family, bits, ignore)
        values = _core.sign_text(doc, shingle, sign)
        if width != 32:
            values = _core.narrow(family_number, seed_bits, values, width)
        return Signature._of(family_number, seed_bits, values, width)
    if unit != "word" or k != 0 or ignore is not None or config is not None:
        raise TypeError("unit, k, ignore and config apply to a document (a str); "
                        "minhash(elements) takes num_perm, seed, family and bits")
    sign = _options.sign_spec(num_perm, seed, family)
    width = _options.bits_of(bits)
    values = _core.sign_elements(_elements.elements_of(doc), sign, _elements.element_bytes)
    if width != 32:
        values = _core.narrow(sign.family, sign.seed, values, width)
    return Signature._of(sign.family, sign.seed, values, width)


def shingles(doc, /, *, k=0, unit="word", ignore=None, config=None):
    """The distinct shingles of a document in order of first appearance, as
    ``minhash_shingles(doc, k, unit)`` (and ``minhash_shingles(doc, k,
    ignore => ...)``): what ``minhash(doc)`` hashes."""
    if not isinstance(doc, str):
        raise TypeError(f"shingles() takes a document as a str, not {type(doc).__name__}")
    _options.no_config(config, "shingles(doc)")
    return _core.shingles(doc, _options.shingle_spec(unit, k, ignore))


def jaccard(a, b, /):
    """The Jaccard similarity: estimated from two Signatures (as
    ``jaccard(minhash, minhash)``), or exact for two sets of elements (as
    ``jaccard(anyarray, anyarray)``: None skipped, repeats once, two empty
    sets 1.0)."""
    if isinstance(a, Signature) or isinstance(b, Signature):
        if not isinstance(a, Signature):
            raise TypeError(f"jaccard() of a {type(a).__name__} and a Signature")
        return a.jaccard(b)
    return _core.jaccard_exact(_elements.elements_of(a, "jaccard"),
                               _elements.elements_of(b, "jaccard"),
                               _elements.element_bytes)


def lsh_params(threshold, num_perm=_core.DEFAULT_NUM_PERM, fp_weight=0.5, fn_weight=0.5):
    """LSH bands and rows for a similarity threshold, as ``minhash_lsh_params``:
    those minimising the weighted false-positive and false-negative areas."""
    return LshParams(*_core.lsh_params(*_options.lsh_arguments(threshold, num_perm,
                                                               fp_weight, fn_weight)))
