"""Signature: a value of the SQL type minhash."""
import numpy as np

from . import _core, _options

_UINT64 = 0xFFFFFFFFFFFFFFFF


def _signed(seed):
    # the seed as minhash_seed() and the text form show it: a signed 64-bit integer
    return seed - (1 << 64) if seed > _options.INT64_MAX else seed


def _frozen(values):
    values.setflags(write=False)
    return values


class Signature:
    """A MinHash signature, the value of a ``minhash`` column.

    ``values`` is a read-only NumPy ``uint32`` array (copy it to change it),
    ``num_perm`` its length, ``seed`` the seed as a signed 64-bit integer (as
    ``minhash_seed()`` returns it), ``family`` the hash family's name,
    ``bits`` the bits kept of each value (32, or 16 or 8 for a compact
    signature, whose values are below 2**bits). The values are the stored
    ones, as the text form and ``minhash_to_array`` show them: for the oph
    family at 32 bits the undensified sketch (empty bins 4294967295).
    ``str(sig)`` is the SQL text form, ``bytes(sig)`` the binary (send) form;
    ``Signature.from_text`` and ``Signature.from_binary`` read them back.
    """

    __slots__ = ("_family", "_seed", "_values", "_bits")

    def __init__(self, values, seed=1, family="native", bits=32):
        """A signature from values computed elsewhere, as
        ``minhash_from_array(values, family, seed, bits)`` makes one: 1 to
        1024 integers, each 0 to 2**bits - 1."""
        family = _options.family_number(family)
        seed = _options.seed_of(seed, family)
        bits = _options.bits_of(bits)
        array = np.asarray(values)
        if array.ndim == 0:
            # NumPy makes a 0-d object array of a generator, set or str
            raise TypeError("signature values are a sequence of integers (a list, tuple, range "
                            f"or NumPy array), not {type(values).__name__}")
        if array.ndim != 1 or not _core.MIN_NUM_PERM <= array.size <= _core.MAX_NUM_PERM:
            raise ValueError(f"a signature has {_core.MIN_NUM_PERM} to {_core.MAX_NUM_PERM} "
                             "values, in one dimension")
        if array.dtype.kind not in "iu" and not (
                array.dtype == object and all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in array)):
            raise TypeError(f"signature values must be integers, not {array.dtype}")
        limit = (1 << bits) - 1
        if array.dtype.kind != "u" or array.dtype.itemsize * 8 > bits:
            if array.min() < 0 or array.max() > limit:
                raise ValueError(f"signature values must be between 0 and {limit}"
                                 f" (unsigned {bits}-bit integers)")
        self._family = family
        self._seed = seed
        self._bits = bits
        self._values = _frozen(np.array(array, dtype=np.uint32))

    @classmethod
    def _of(cls, family, seed, values, bits=32):
        # from the core: already checked
        sig = cls.__new__(cls)
        sig._family = family
        sig._seed = _signed(seed)
        sig._bits = bits
        sig._values = _frozen(values)
        return sig

    @property
    def values(self):
        return self._values

    @property
    def num_perm(self):
        return self._values.size

    @property
    def seed(self):
        return self._seed

    @property
    def family(self):
        return _options.FAMILIES[self._family]

    @property
    def bits(self):
        return self._bits

    def __str__(self):
        return _core.format_text(self._family, self._bits, self._seed & _UINT64, self._values)

    def __bytes__(self):
        return _core.encode_binary(self._family, self._bits, self._seed & _UINT64, self._values)

    @classmethod
    def from_text(cls, text):
        """Parses the text form ``[family:][bitsN:]seed:[v1,...,vk]`` (str or
        bytes) as the server's input function does; ValueError with its
        message."""
        if isinstance(text, (bytearray, memoryview)):
            text = bytes(text)
        if isinstance(text, str):
            text = text.encode()  # a lone surrogate: UnicodeEncodeError, as for documents
        elif not isinstance(text, bytes):
            raise TypeError(f"the text form is a str, not {type(text).__name__}")
        family, bits, seed, values = _core.parse_text(text)
        return cls._of(family, seed, values, bits)

    @classmethod
    def from_binary(cls, data):
        """Parses the binary form (what the server's send function writes,
        binary COPY and the binary protocol carry); ValueError as the server's
        receive function would refuse it."""
        family, bits, seed, values = _core.decode_binary(data)
        return cls._of(family, seed, values, bits)

    def __repr__(self):
        return f"Signature.from_text({str(self)!r})"

    def __eq__(self, other):
        if not isinstance(other, Signature):
            return NotImplemented
        return (self._family == other._family and self._seed == other._seed
                and self._bits == other._bits and np.array_equal(self._values, other._values))

    def __hash__(self):
        return hash((self._family, self._seed, self._bits, self._values.tobytes()))

    def __reduce__(self):
        # pickling (multiprocessing, Spark, Ray) through the binary form
        return (Signature.from_binary, (bytes(self),))

    def _check_compatible(self, other):
        # the server's minhash_check_compatible, in its order and words
        if not isinstance(other, Signature):
            raise TypeError(f"expected a Signature, not {type(other).__name__}")
        if self._family != other._family:
            raise ValueError(f"minhash signatures have different hash families: the first is a "
                             f"signature of the {self.family} family, the second of the "
                             f"{other.family} family")
        if self.num_perm != other.num_perm:
            raise ValueError(f"minhash signatures have different num_perm: the first has "
                             f"num_perm {self.num_perm}, the second {other.num_perm}")
        if self._seed != other._seed:
            raise ValueError(f"minhash signatures have different seeds: the first has seed "
                             f"{self._seed}, the second {other._seed}")
        if self._bits != other._bits:
            raise ValueError(f"minhash signatures have different widths: the first keeps "
                             f"{self._bits} bits of each value, the second {other._bits}")

    def jaccard(self, other):
        """The estimated Jaccard similarity, as ``jaccard(minhash, minhash)``:
        the share of equal values (an oph sketch densified first), corrected
        for values of a compact signature that agree by chance (the b-bit
        estimator, clamped to [0, 1])."""
        self._check_compatible(other)
        return _core.jaccard_estimate(self._family, self._bits, self._seed & _UINT64,
                                      self._values, other._values)

    def __or__(self, other):
        """The signature of the union, as ``a | b`` (``minhash_merge``); not
        of compact signatures, whose low bits do not merge."""
        if not isinstance(other, Signature):
            return NotImplemented
        self._check_compatible(other)
        if self._bits != 32:
            raise ValueError(f"| cannot merge {self._bits}-bit minhash signatures: the union of "
                             "two sets needs the whole 32-bit minima")
        return Signature._of(self._family, self._seed, _core.merge(self._values, other._values))

    def cardinality(self):
        """The estimated number of distinct elements, as ``minhash_cardinality``
        (32-bit signatures only)."""
        if self._bits != 32:
            raise ValueError("minhash_cardinality needs 32-bit signature values: this signature "
                             f"keeps the low {self._bits} bits of each value")
        return _core.cardinality(self._family, self._values)
