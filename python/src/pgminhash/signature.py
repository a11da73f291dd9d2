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
    ``minhash_seed()`` returns it), ``family`` the hash family's name.
    ``str(sig)`` is the SQL text form, ``bytes(sig)`` the binary (send) form;
    ``Signature.from_text`` and ``Signature.from_binary`` read them back.
    """

    __slots__ = ("_family", "_seed", "_values")

    def __init__(self, values, seed=1, family="native"):
        """A signature from values computed elsewhere, as
        ``minhash_from_array(values, family, seed)`` makes one: 1 to 1024
        integers, each 0 to 4294967295."""
        family = _options.family_number(family)
        seed = _options.seed_of(seed, family)
        array = np.asarray(values)
        if array.ndim != 1 or not _core.MIN_NUM_PERM <= array.size <= _core.MAX_NUM_PERM:
            raise ValueError(f"a signature has {_core.MIN_NUM_PERM} to {_core.MAX_NUM_PERM} "
                             "values, in one dimension")
        if array.dtype.kind not in "iu" and not (
                array.dtype == object and all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in array)):
            raise TypeError(f"signature values must be integers, not {array.dtype}")
        if array.dtype.kind != "u" or array.dtype.itemsize > 4:
            if array.min() < 0 or array.max() > _core.EMPTY_VALUE:
                raise ValueError("signature values must be between 0 and 4294967295")
        self._family = family
        self._seed = seed
        self._values = _frozen(np.array(array, dtype=np.uint32))

    @classmethod
    def _of(cls, family, seed, values):
        # from the core: already checked
        sig = cls.__new__(cls)
        sig._family = family
        sig._seed = _signed(seed)
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

    def __str__(self):
        return _core.format_text(self._family, self._seed & _UINT64, self._values)

    def __bytes__(self):
        return _core.encode_binary(self._family, self._seed & _UINT64, self._values)

    @classmethod
    def from_text(cls, text):
        """Parses the text form ``[family:]seed:[v1,...,vk]`` (str or bytes)
        as the server's input function does; ValueError with its message."""
        if isinstance(text, (bytearray, memoryview)):
            text = bytes(text)
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"the text form is a str, not {type(text).__name__}")
        return cls._of(*_core.parse_text(text))

    @classmethod
    def from_binary(cls, data):
        """Parses the binary form (what the server's send function writes,
        binary COPY and the binary protocol carry); ValueError as the server's
        receive function would refuse it."""
        return cls._of(*_core.decode_binary(data))

    def __repr__(self):
        return f"Signature.from_text({str(self)!r})"

    def __eq__(self, other):
        if not isinstance(other, Signature):
            return NotImplemented
        return (self._family == other._family and self._seed == other._seed
                and np.array_equal(self._values, other._values))

    def __hash__(self):
        return hash((self._family, self._seed, self._values.tobytes()))

    def __reduce__(self):
        # pickling (multiprocessing, Spark, Ray) through the binary form
        return (Signature.from_binary, (bytes(self),))

    def _check_compatible(self, other):
        # the server's minhash_check_compatible, in its order and words
        if not isinstance(other, Signature):
            raise TypeError(f"expected a Signature, not {type(other).__name__}")
        if self._family != other._family:
            raise ValueError(f"minhash signatures have different hash families: the first is a "
                             f"{self.family} signature, the second a {other.family} signature")
        if self.num_perm != other.num_perm:
            raise ValueError(f"minhash signatures have different num_perm: the first has "
                             f"num_perm {self.num_perm}, the second {other.num_perm}")
        if self._seed != other._seed:
            raise ValueError(f"minhash signatures have different seeds: the first has seed "
                             f"{self._seed}, the second {other._seed}")

    def jaccard(self, other):
        """The estimated Jaccard similarity, as ``jaccard(minhash, minhash)``."""
        self._check_compatible(other)
        return _core.jaccard_estimate(self._values, other._values)

    def __or__(self, other):
        """The signature of the union, as ``a | b`` (``minhash_merge``)."""
        if not isinstance(other, Signature):
            return NotImplemented
        self._check_compatible(other)
        return Signature._of(self._family, self._seed, _core.merge(self._values, other._values))

    def cardinality(self):
        """The estimated number of distinct elements, as ``minhash_cardinality``."""
        return _core.cardinality(self._values)
