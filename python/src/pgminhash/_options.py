"""The arguments of minhash(), minhash_shingles() and minhash_lsh_params(),
checked as the server checks them, with the server's messages.

Each public keyword has one check here; the checked values become the core's
specs (_core.ShingleSpec, _core.SignSpec), kept for recent combinations so a
loop over documents derives the permutations once, as the server caches them
per query. A new option (bits, another family, a normalisation setting) is a
keyword in __init__.py, a check here and a field of the spec in _core.cpp.
"""
import math
import numbers
from functools import lru_cache

from . import _core

UNITS = _core.UNITS
FAMILIES = _core.FAMILIES
BITS = _core.BITS  # (32, 16, 8): the widths a signature can keep
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


class ServerOnlyError(NotImplementedError):
    """A feature of the SQL function that needs the PostgreSQL server."""


def integer(name, value):
    # SQL's integer arguments take no booleans, and no fractions
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    return int(value)


def number(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return float(value)


def unit_number(unit):
    if not isinstance(unit, str):
        raise TypeError(f"unit must be a str, not {type(unit).__name__}")
    if unit not in UNITS:
        raise ValueError(f'unknown shingle unit "{unit}" '
                         '(valid units are "word", "char" and "char_nospace")')
    return UNITS.index(unit)


def shingle_size(k):
    k = integer("k", k)
    if k < 0 or k > _core.MAX_SHINGLE_SIZE:
        raise ValueError(f"shingle size k must be between 1 and {_core.MAX_SHINGLE_SIZE}, not {k} "
                         f"(k = 0 selects the default: {_core.default_k(0)} words or "
                         f"{_core.default_k(1)} characters)")
    return k


def num_perm_of(num_perm):
    num_perm = integer("num_perm", num_perm)
    if num_perm < _core.MIN_NUM_PERM or num_perm > _core.MAX_NUM_PERM:
        raise ValueError(f"num_perm must be between {_core.MIN_NUM_PERM} and "
                         f"{_core.MAX_NUM_PERM}, not {num_perm}")
    return num_perm


def bits_of(bits):
    # the SQL argument is a bigint; the server's minhash_width_arg
    bits = integer("bits", bits)
    if bits not in BITS:
        raise ValueError(f"bits must be 8, 16 or 32, not {bits} "
                         "(a signature keeps the low 8, 16 or 32 bits of each value)")
    return bits


def type_name(num_perm, bits=None):
    """The SQL type of a column: minhash, minhash(k) or minhash(k,bits)."""
    if num_perm is None:
        if bits is not None and bits_of(bits) != 32:
            raise ValueError("bits needs num_perm: the type is minhash(num_perm, bits)")
        return "minhash"
    k = num_perm_of(num_perm)
    b = 32 if bits is None else bits_of(bits)
    return f"minhash({k})" if b == 32 else f"minhash({k},{b})"


def ignore_flags(ignore):
    """ignore => '...' as the core's flags: None or '' (nothing), a str as the
    SQL argument takes it ('accents, punctuation'), or an iterable of names."""
    if ignore is None:
        return 0
    if not isinstance(ignore, str):
        if isinstance(ignore, (bytes, bytearray)) or not hasattr(ignore, "__iter__"):
            raise TypeError(f"ignore must be a str or an iterable of str, "
                            f"not {type(ignore).__name__}")
        names = list(ignore)
        if not all(isinstance(n, str) for n in names):
            raise TypeError("ignore must be a str or an iterable of str")
        ignore = ",".join(names)
    return _core.parse_ignore(ignore.encode())  # a lone surrogate: UnicodeEncodeError


def family_number(family):
    if not isinstance(family, str):
        raise TypeError(f"family must be a str, not {type(family).__name__}")
    if family not in FAMILIES:
        quoted = [f'"{f}"' for f in FAMILIES]
        names = ", ".join(quoted[:-1]) + " and " + quoted[-1]
        raise ValueError(f'unknown minhash hash family "{family}" (valid families are {names})')
    return FAMILIES.index(family)


def seed_of(seed, family):
    # the SQL argument is a bigint; the datasketch family seeds NumPy's RandomState
    seed = integer("seed", seed)
    if seed < INT64_MIN or seed > INT64_MAX:
        raise ValueError(f"seed {seed} is out of range for type bigint")
    if FAMILIES[family] == "datasketch" and not 0 <= seed <= _core.MAX_DATASKETCH_SEED:
        raise ValueError(f"seed {seed} is out of range for the datasketch family "
                         f"(datasketch seeds NumPy's RandomState, which takes 0 to "
                         f"{_core.MAX_DATASKETCH_SEED})")
    return seed


def no_config(config, call):
    if config is not None:
        raise ServerOnlyError(
            f"{call} with config uses PostgreSQL's text search (its parser, dictionaries and "
            "stop words), which exists only in the server: compute it there, e.g. "
            "SELECT minhash(%s::text, config => 'english')")


@lru_cache(maxsize=64)
def _shingle_spec(unit, k, ignore):
    return _core.ShingleSpec(unit, k, ignore)


@lru_cache(maxsize=64)
def _sign_spec(family, num_perm, seed):
    return _core.SignSpec(family, num_perm, seed & 0xFFFFFFFFFFFFFFFF)


def shingle_spec(unit, k, ignore=None):
    """The core's spec for unit, k (0: the unit's default) and ignore."""
    return _shingle_spec(unit_number(unit), shingle_size(k), ignore_flags(ignore))


def sign_spec(num_perm, seed, family):
    """The core's spec for a family, num_perm and seed."""
    family = family_number(family)
    return _sign_spec(family, num_perm_of(num_perm), seed_of(seed, family))


# The specs of recent document signings by their arguments exactly as
# given: a loop over documents with the same keywords pays one dict lookup,
# not the checks (a few microseconds, as much as signing a short document).
# Only plain int and str arguments are remembered, so a value that merely
# compares equal (True for 1, 1.0) still goes through the checks.
_text_specs = {}


def text_specs(unit, k, num_perm, seed, family, bits, ignore):
    """(shingle spec, sign spec, family number, seed as unsigned, bits) for minhash(doc)."""
    key = (unit, k, num_perm, seed, family, bits, ignore)
    # checked before the lookup too: a list or dict argument is not hashable
    plain = (type(k) is int and type(num_perm) is int and type(seed) is int
             and type(bits) is int and type(unit) is str and type(family) is str
             and (ignore is None or type(ignore) is str))
    specs = _text_specs.get(key) if plain else None
    if specs is not None:
        return specs
    sign = sign_spec(num_perm, seed, family)
    # the family and seed as Python ints, read once rather than per signature
    specs = (shingle_spec(unit, k, ignore), sign, sign.family, sign.seed, bits_of(bits))
    if plain:
        if len(_text_specs) >= 256:
            _text_specs.clear()
        _text_specs[key] = specs
    return specs


def _g(x):
    # printf's %g as PostgreSQL's snprintf writes it
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return f"{x:g}"


def lsh_arguments(threshold, num_perm, fp_weight, fn_weight):
    threshold = number("threshold", threshold)
    if math.isnan(threshold) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {_g(threshold)}")
    num_perm = num_perm_of(num_perm)
    weights = []
    for name, w in (("fp_weight", fp_weight), ("fn_weight", fn_weight)):
        w = number(name, w)
        if not math.isfinite(w) or w < 0.0:
            raise ValueError(f"{name} must be a finite number not less than 0, not {_g(w)}")
        weights.append(w)
    if weights == [0.0, 0.0]:
        raise ValueError("fp_weight and fn_weight must not both be 0")
    return threshold, num_perm, weights[0], weights[1]
