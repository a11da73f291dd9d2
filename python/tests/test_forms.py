"""The text and binary forms: what Signature writes the server reads back
unchanged, what the server writes Signature reads, and both refuse the same
malformed input with the same message."""
import pickle

import numpy as np
import psycopg
import pytest
from psycopg.adapt import Dumper
from psycopg.pq import Format

import pgminhash
from pgminhash import Signature

SIGNATURES = [
    pgminhash.minhash("The quick brown fox jumps over the lazy dog"),
    pgminhash.minhash("Straße ﬁ İ", unit="char", num_perm=1, seed=-(1 << 63)),
    pgminhash.minhash("", num_perm=1024, seed=(1 << 63) - 1),
    pgminhash.minhash("x", family="datasketch", num_perm=7, seed=4294967295),
    pgminhash.minhash([1, 2, 3], family="datasketch", seed=0),
    Signature([0, 4294967295, 12345], seed=-1),
    pgminhash.minhash("The quick brown fox jumps over the lazy dog", family="oph"),
    pgminhash.minhash("a b", family="oph", num_perm=16, seed=-3),  # empty bins, undensified
    pgminhash.minhash("The quick brown fox jumps over the lazy dog", bits=16),
    pgminhash.minhash("The quick brown fox", family="oph", bits=8, num_perm=32, seed=(1 << 63) - 1),
    pgminhash.minhash(["x", "y"], family="datasketch", bits=16, num_perm=5, seed=7),
    Signature([0, 65535, 12], seed=2, family="oph", bits=16),
    Signature([255, 0], bits=8),
]


class RawBinary(bytes):
    """Bytes sent to the server as a binary minhash parameter."""


def raw_dumper(oid):
    class RawDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj):
            return bytes(obj)

    RawDumper.oid = oid
    return RawDumper


@pytest.fixture
def raw(conn):
    oid = conn.execute("SELECT 'minhash'::regtype::oid").fetchone()[0]
    conn.adapters.register_dumper(RawBinary, raw_dumper(oid))
    return conn


@pytest.mark.parametrize("sig", SIGNATURES, ids=range(len(SIGNATURES)))
def test_text_form_is_the_servers(conn, sig):
    text, family, seed, num_perm, bits, values = conn.execute(
        "SELECT s::text, minhash_family(s)::text, minhash_seed(s), minhash_num_perm(s),"
        " minhash_bits(s), minhash_to_array(s) FROM (SELECT %s::minhash AS s) t",
        (str(sig),)).fetchone()
    assert text == str(sig)
    assert (family, seed, num_perm, bits) == (sig.family, sig.seed, sig.num_perm, sig.bits)
    assert values == sig.values.tolist()
    assert Signature.from_text(text) == sig


@pytest.mark.parametrize("sig", SIGNATURES, ids=range(len(SIGNATURES)))
def test_binary_form_is_the_servers(raw, sig):
    # the server's send function, as bytea, and its receive function
    sent, text = raw.execute("SELECT minhash_send(s), s::text FROM (SELECT %s::minhash AS s) t",
                             (str(sig),)).fetchone()
    assert sent == bytes(sig)
    assert Signature.from_binary(sent) == sig
    assert raw.execute("SELECT %s::text", (RawBinary(bytes(sig)),)).fetchone()[0] == text


def test_from_text_accepts_what_the_server_accepts(conn):
    for text in (" 7 : [ 1 , 2 ] ", "native:1:[5]", " datasketch : 42 :[0]", "+3:[4294967295]",
                 "-9223372036854775808:[0]", "oph:1:[5]", "bits16:1:[65535]", "bits32:1:[7]",
                 " oph : bits8 : -7 : [ 255, 0 ] ", "native:bits16:2:[1]"):
        server = conn.execute("SELECT %s::minhash::text", (text,)).fetchone()[0]
        assert str(Signature.from_text(text)) == server
        assert str(Signature.from_text(text.encode())) == server


BAD_TEXT = ["", "1", "1:", "1:[", "1:[]", "1:[1,]", "1:[1 2]", "1:[4294967296]", "1:[-1]",
            "1:[1] x", "x:[1]", "murmur:1:[1]", "datasketch:-1:[1]", "datasketch:4294967296:[1]",
            "9223372036854775808:[1]", "1:[" + ",".join(["1"] * 1025) + "]",
            "Ⓒ" * 40 + ":[1]", "bits16:1:[65536]", "oph:bits8:1:[1,256]", "bits12:1:[1]",
            "bits16:oph:1:[1]", "bits16:1:[]", "oph:oph:1:[1]", "bits8:bits16:1:[1]"]


@pytest.mark.parametrize("text", BAD_TEXT, ids=range(len(BAD_TEXT)))
def test_from_text_refuses_what_the_server_refuses(conn, text):
    with pytest.raises(psycopg.errors.InvalidTextRepresentation) as server:
        conn.execute("SELECT %s::minhash", (text,))
    with pytest.raises(ValueError) as ours:
        Signature.from_text(text)
    diag = server.value.diag
    assert str(ours.value) == f"{diag.message_primary}: {diag.message_detail}"


def test_from_text_shows_bytes_that_are_not_utf8_and_nul():
    # the server's input is text in the database encoding; bytes given to
    # from_text may be anything, and the message still shows them
    prefix = 'invalid input syntax for type minhash: "'
    with pytest.raises(ValueError) as refused:
        Signature.from_text(b"\xff\xfe:[1]")
    assert str(refused.value) == \
        prefix + '\\xff\\xfe:[1]": Expected a signed 64-bit integer seed at the start.'
    with pytest.raises(ValueError) as refused:
        Signature.from_text(b"x" * 63 + b"\xc3")
    assert str(refused.value) == prefix + "x" * 63 + \
        '\\xc3": Expected a signed 64-bit integer seed at the start.'
    with pytest.raises(ValueError) as refused:
        Signature.from_text("1:[1]\x00")
    assert str(refused.value) == prefix + '1:[1]\x00": Unexpected text after "]".'


def binary(version=1, flags=0, num_perm=2, seed=1, values=(1, 2), extra=b"", size=4):
    return (bytes([version, flags]) + num_perm.to_bytes(2, "big") + seed.to_bytes(8, "big")
            + b"".join(v.to_bytes(size, "big") for v in values) + extra)


# flags: family in bits 0-3 (0..2), width in bits 4-5 (0..2: 32, 16, 8 bits), 6-7 reserved
BAD_BINARY = [b"", b"\x01\x00\x00", binary(version=2), binary(flags=3), binary(flags=0x10),
              binary(flags=0x30), binary(flags=0x40), binary(flags=0x12, size=1),
              binary(num_perm=0, values=()), binary(num_perm=1025, values=()),
              binary(num_perm=3), binary(extra=b"\x00"), binary(flags=1, seed=1 << 32),
              binary(flags=0x21, seed=(1 << 64) - 1, size=1)]


@pytest.mark.parametrize("data", BAD_BINARY, ids=range(len(BAD_BINARY)))
def test_from_binary_refuses_what_the_server_refuses(raw, data):
    with pytest.raises(psycopg.errors.InvalidBinaryRepresentation) as server:
        raw.execute("SELECT %s::text", (RawBinary(data),))
    with pytest.raises(ValueError) as ours:
        Signature.from_binary(data)
    assert str(ours.value) == server.value.diag.message_primary


@pytest.mark.parametrize("sig", SIGNATURES[:3] + SIGNATURES[-2:], ids=range(5))
def test_from_binary_reads_strided_buffers_in_their_order(sig):
    # a view that is not contiguous is read as its bytes in order, not as
    # the memory from its first byte on (which a reversed view ends before)
    data = bytes(sig)
    interleaved = bytes(b for byte in data for b in (byte, 0xAA))
    assert Signature.from_binary(memoryview(interleaved)[::2]) == sig
    assert Signature.from_binary(np.frombuffer(interleaved, dtype=np.uint8)[::2]) == sig
    assert Signature.from_binary(memoryview(data[::-1])[::-1]) == sig


@pytest.mark.parametrize("data", ["1:[1]", None, 5], ids=["str", "None", "int"])
def test_from_binary_names_what_it_was_given(data):
    with pytest.raises(TypeError, match=f"the binary form is a bytes-like object, not "
                                        f"{type(data).__name__}"):
        Signature.from_binary(data)


def test_binary_forms_of_every_width_are_read(raw):
    # the server reads what binary() writes for each width, and so do we
    for flags, size, values in ((0x10, 2, (65535, 3)), (0x22, 1, (255, 0)), (0x02, 4, (7, 9))):
        data = binary(flags=flags, values=values, size=size)
        text = raw.execute("SELECT %s::text", (RawBinary(data),)).fetchone()[0]
        sig = Signature.from_binary(data)
        assert str(sig) == text and bytes(sig) == data


def test_signature_from_values_is_minhash_from_array(conn):
    cases = [([1, 2, 3], 1, "native", 32), (np.arange(5, dtype=np.int64), -5, "native", 32),
             ([4294967295], 4294967295, "datasketch", 32), ([65535, 0, 9], 3, "oph", 16),
             (np.array([255, 1], dtype=np.uint8), 1, "native", 8)]
    for values, seed, family, bits in cases:
        server = conn.execute(
            "SELECT minhash_from_array(%s::bigint[], %s::minhash_family, %s, %s)::text",
            ([int(v) for v in values], family, seed, bits)).fetchone()[0]
        assert str(Signature(values, seed=seed, family=family, bits=bits)) == server
    for values, bits in (([65536], 16), ([256], 8)):
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("SELECT minhash_from_array(%s::bigint[], 'native', 1, %s)", (values, bits))
        with pytest.raises(ValueError):
            Signature(values, bits=bits)
    with pytest.raises(ValueError, match="bits must be 8, 16 or 32"):
        Signature([1], bits=12)
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conn.execute("SELECT minhash_from_array(ARRAY[-1]::bigint[])")
    with pytest.raises(ValueError):
        Signature([-1])
    with pytest.raises(ValueError):
        Signature([1 << 32])
    with pytest.raises(ValueError):
        Signature([])
    with pytest.raises(TypeError):
        Signature([1.5])
    # not a sequence: named, not reported as a signature of no values
    for values, name in (((v for v in (1, 2)), "generator"), ({1, 2}, "set"), ("12", "str"),
                         (5, "int")):
        with pytest.raises(TypeError, match=f"a sequence of integers .*, not {name}$"):
            Signature(values)
    with pytest.raises(ValueError):
        Signature([1], family="datasketch", seed=-1)


def test_values_are_a_read_only_copy():
    source = np.array([1, 2, 3], dtype=np.uint32)
    sig = Signature(source)
    source[0] = 9
    assert sig.values.tolist() == [1, 2, 3]
    assert sig.values.dtype == np.uint32
    with pytest.raises(ValueError):
        sig.values[0] = 5


def test_equality_hashing_and_pickling():
    a = pgminhash.minhash("one two three four five six")
    assert a == pgminhash.minhash("ONE two three, four five six!")
    assert a != pgminhash.minhash("one two three four five six", seed=2)
    assert a != pgminhash.minhash("one two three four five six", family="datasketch")
    assert a != Signature(a.values, seed=2)
    assert len({a, pgminhash.minhash("one two three four five six"), Signature(a.values)}) == 1
    small = Signature([1, 2, 3])
    assert small != Signature([1, 2, 3], bits=16) != Signature([1, 2, 3], bits=8)
    assert len({small, Signature([1, 2, 3], bits=16), Signature([1, 2, 3], bits=8)}) == 3
    compact = pgminhash.minhash("one two three four five six", family="oph", bits=8)
    assert pickle.loads(pickle.dumps(compact)) == compact
    assert eval(repr(compact), {"Signature": Signature}) == compact
    assert pickle.loads(pickle.dumps(a)) == a
    assert eval(repr(a), {"Signature": Signature}) == a
