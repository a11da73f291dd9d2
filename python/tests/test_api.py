"""The functions' arguments, checks and results against the SQL functions'."""
import math
import uuid

import numpy as np
import psycopg
import pytest

import pgminhash
from pgminhash import ServerOnlyError, Signature

DOC = "The quick brown fox jumps over the lazy dog near the river bank"


def server_sig(conn, sql, params=()):
    return conn.execute(f"SELECT ({sql})::text", params).fetchone()[0]


def test_defaults_are_the_sql_functions(conn):
    assert str(pgminhash.minhash(DOC)) == server_sig(conn, "minhash(%s::text)", (DOC,))
    assert str(pgminhash.minhash(DOC, unit="char")) == server_sig(
        conn, "minhash(%s::text, 'char')", (DOC,))
    assert pgminhash.minhash(DOC).num_perm == 128
    assert pgminhash.minhash(DOC).seed == 1
    assert pgminhash.minhash(DOC).family == "native"
    assert pgminhash.minhash(DOC, k=5) == pgminhash.minhash(DOC)
    assert pgminhash.minhash(DOC, unit="char", k=9) == pgminhash.minhash(DOC, unit="char")
    assert pgminhash.shingles(DOC) == conn.execute(
        "SELECT minhash_shingles(%s::text)", (DOC,)).fetchone()[0]


# (python keywords, the SQL call's arguments after doc)
BAD_ARGS = [
    (dict(k=-1), "k => -1"),
    (dict(k=257), "k => 257"),
    (dict(unit="token"), "unit => 'token'"),
    (dict(num_perm=0), "num_perm => 0"),
    (dict(num_perm=1025), "num_perm => 1025"),
    (dict(family="datasketch", seed=-1), "family => 'datasketch', seed => -1"),
    (dict(family="datasketch", seed=1 << 32), "family => 'datasketch', seed => 4294967296"),
    (dict(bits=12), "bits => 12"),
    (dict(bits=64, family="oph"), "bits => 64, family => 'oph'"),
    (dict(ignore="accent"), "ignore => 'accent'"),
    (dict(ignore="accents punctuation"), "ignore => 'accents punctuation'"),
    (dict(ignore="accents,"), "ignore => 'accents,'"),
    (dict(ignore="é" * 30), "ignore => '" + "é" * 30 + "'"),
]


@pytest.mark.parametrize("kwargs,sql", BAD_ARGS, ids=[s for _, s in BAD_ARGS])
def test_bad_arguments_are_refused_as_the_server_refuses_them(conn, kwargs, sql):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as server:
        conn.execute(f"SELECT minhash(%s::text, {sql})", (DOC,))
    with pytest.raises(ValueError) as ours:
        pgminhash.minhash(DOC, **kwargs)
    assert str(ours.value).startswith(server.value.diag.message_primary)


def test_other_bad_arguments():
    with pytest.raises(ValueError, match='unknown minhash hash family "murmur" '
                                         r'\(valid families are "native", "datasketch" and "oph"\)'):
        pgminhash.minhash(DOC, family="murmur")
    with pytest.raises(ValueError, match="out of range for type bigint"):
        pgminhash.minhash(DOC, seed=1 << 63)
    with pytest.raises(TypeError, match="num_perm must be an integer"):
        pgminhash.minhash(DOC, num_perm=12.0)
    # also after the same arguments as plain ints were used (and remembered)
    pgminhash.minhash(DOC, k=1, num_perm=1)
    with pytest.raises(TypeError, match="k must be an integer"):
        pgminhash.minhash(DOC, k=True, num_perm=1)
    with pytest.raises(TypeError, match="num_perm must be an integer"):
        pgminhash.minhash(DOC, k=1, num_perm=1.0)
    with pytest.raises(TypeError):
        pgminhash.minhash(DOC, "char")  # keywords only, so the SQL's order cannot mislead
    with pytest.raises(TypeError, match="apply to a document"):
        pgminhash.minhash(["a"], unit="char")
    with pytest.raises(TypeError, match="apply to a document"):
        pgminhash.minhash(["a"], ignore="accents")
    with pytest.raises(TypeError, match="ignore must be a str"):
        pgminhash.minhash(DOC, ignore=1)
    with pytest.raises(TypeError, match="unit must be a str, not list"):
        pgminhash.minhash(DOC, unit=["word"])
    with pytest.raises(TypeError, match="family must be a str, not dict"):
        pgminhash.minhash(DOC, family={"native": 1})
    with pytest.raises(TypeError, match="bits must be an integer"):
        pgminhash.minhash(DOC, bits="16")
    with pytest.raises(TypeError, match="a document is a str"):
        pgminhash.minhash(b"bytes")
    with pytest.raises(TypeError, match="cannot use dict as a set element"):
        pgminhash.minhash([{}])
    # what is neither a document nor a set is named, not pybind11's signature dump
    for value, name in ((None, "None"), (5, "int")):
        with pytest.raises(TypeError, match=rf"^minhash\(\) takes a document .*, not {name}"):
            pgminhash.minhash(value)
        with pytest.raises(TypeError, match=rf"^jaccard\(\) takes two Signatures .*, not {name}"):
            pgminhash.jaccard(value, ["a"])
    with pytest.raises(TypeError, match=r"^jaccard\(\) of a str: it compares two Signatures"):
        pgminhash.jaccard("a b c", "a b d")
    with pytest.raises(UnicodeEncodeError):
        pgminhash.minhash("lone \ud800 surrogate")
    # the same wherever a str reaches the core
    with pytest.raises(UnicodeEncodeError):
        pgminhash.minhash(DOC, ignore="accents,\ud800")
    with pytest.raises(UnicodeEncodeError):
        pgminhash.Signature.from_text("1:[1]\ud800")


def test_ignore_takes_the_servers_list_or_names(conn):
    doc = "L'été — déjà « fini » ! Don't re-send the e-mail."
    server = server_sig(conn, "minhash(%s::text, ignore => 'accents, punctuation')", (doc,))
    for ignore in ("accents, punctuation", "punctuation,accents", ("accents", "punctuation"),
                   ["punctuation", "accents", "accents"]):
        assert str(pgminhash.minhash(doc, ignore=ignore)) == server
    assert pgminhash.minhash(doc, ignore="") == pgminhash.minhash(doc, ignore=()) == \
        pgminhash.minhash(doc)
    assert pgminhash.shingles(doc, k=1, ignore=["punctuation"]) == conn.execute(
        "SELECT minhash_shingles(%s::text, 1, ignore => 'punctuation')", (doc,)).fetchone()[0]
    assert pgminhash.shingles(doc, k=1, ignore="accents,punctuation") == [
        "lete", "deja", "fini", "dont", "resend", "the", "email"]


def test_text_search_configurations_are_the_servers():
    with pytest.raises(ServerOnlyError, match="text search"):
        pgminhash.minhash(DOC, config="english")
    with pytest.raises(ServerOnlyError):
        pgminhash.shingles(DOC, config="english")
    assert issubclass(ServerOnlyError, NotImplementedError)


def test_element_types_are_identified_as_the_server_identifies_them(conn):
    cases = [
        ([True, False, None], "ARRAY[true, false, NULL]::boolean[]"),
        ([b"\x00\xff", bytearray(b"ab"), memoryview(b"")], "ARRAY['\\x00ff', 'ab', '']::bytea[]"),
        ([1.5, -0.0, float("inf"), float("nan")],
         "ARRAY[1.5, '-0', 'Infinity', 'NaN']::float8[]"),
        ([np.float32(1.5), np.float32(-2.25)], "ARRAY[1.5, -2.25]::real[]"),
        ([uuid.UUID("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11")],
         "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']::uuid[]"),
        (np.array([[1, 2], [3, 4]], dtype=np.int16), "ARRAY[[1, 2], [3, 4]]::smallint[]"),
        (np.array([1, 2, 3], dtype=np.uint64), "ARRAY[1, 2, 3]::bigint[]"),
        (np.array([True, False]), "ARRAY[true, false]"),
        (np.array(["a", "b"]), "ARRAY['a', 'b']"),
        ((x for x in ["a", "b", "a"]), "ARRAY['a', 'b']"),
        ({"x", "y"}, "ARRAY['x', 'y']"),
    ]
    for elements, array in cases:
        for family in ("native", "datasketch"):
            ours = str(pgminhash.minhash(elements, family=family, num_perm=16))
            if not isinstance(elements, type(x for x in ())):
                assert ours == server_sig(
                    conn, f"minhash({array}, family => %s::minhash_family, num_perm => 16)",
                    (family,)), array
    assert str(pgminhash.minhash(x for x in ["a", "b", "a"])) == server_sig(
        conn, "minhash(ARRAY['a', 'b'])")


def test_jaccard_of_signatures_is_the_servers(conn):
    a = pgminhash.minhash(DOC)
    b = pgminhash.minhash(DOC.replace("bank", "bend"))
    server = conn.execute("SELECT jaccard(%s::minhash, %s::minhash), %s::minhash <%%> %s::minhash",
                          (str(a), str(b), str(a), str(b))).fetchone()
    assert pgminhash.jaccard(a, b) == a.jaccard(b) == server[0]
    assert 1 - a.jaccard(b) == server[1]
    assert 0 < a.jaccard(b) < 1
    assert a.jaccard(a) == 1.0


def test_jaccard_of_compact_and_oph_signatures_is_the_servers(conn):
    other = DOC.replace("bank", "bend").replace("lazy", "busy")
    for family, bits in (("native", 16), ("native", 8), ("oph", 32), ("oph", 16),
                         ("datasketch", 8)):
        a = pgminhash.minhash(DOC, family=family, bits=bits, num_perm=256)
        b = pgminhash.minhash(other, family=family, bits=bits, num_perm=256)
        server = conn.execute("SELECT jaccard(%s::minhash, %s::minhash), %s::minhash <%%> %s::minhash",
                              (str(a), str(b), str(a), str(b))).fetchone()
        assert a.jaccard(b) == pgminhash.jaccard(a, b) == server[0], (family, bits)
        assert 1 - a.jaccard(b) == server[1]
        assert 0 < a.jaccard(b) < 1 and a.jaccard(a) == 1.0
    # oph: compared densified; its stored sketch of a short text has empty bins
    a = pgminhash.minhash("a b c d e f", family="oph", num_perm=64)
    assert (a.values == 4294967295).any()
    assert conn.execute("SELECT jaccard(%s::minhash, %s::minhash)",
                        (str(a), str(a))).fetchone()[0] == a.jaccard(a) == 1.0


def test_compact_signatures_are_narrowed_as_the_server_narrows(conn):
    for family in ("native", "oph", "datasketch"):
        full = pgminhash.minhash(DOC, family=family)
        for bits in (16, 8):
            narrowed = conn.execute(f"SELECT (%s::minhash::minhash(128, {bits}))::text",
                                    (str(full),)).fetchone()[0]
            sig = pgminhash.minhash(DOC, family=family, bits=bits)
            assert str(sig) == narrowed
            assert sig.bits == bits and sig.values.dtype.name == "uint32"
            assert int(sig.values.max()) < 1 << bits
    assert pgminhash.minhash(DOC).bits == 32


def test_incompatible_signatures_are_refused_as_the_server_refuses_them(conn):
    a = pgminhash.minhash(DOC)
    for other in (pgminhash.minhash(DOC, num_perm=64), pgminhash.minhash(DOC, seed=2),
                  pgminhash.minhash(DOC, family="datasketch"), pgminhash.minhash(DOC, bits=16)):
        with pytest.raises(psycopg.errors.InvalidParameterValue) as server:
            conn.execute("SELECT jaccard(%s::minhash, %s::minhash)", (str(a), str(other)))
        with pytest.raises(ValueError) as ours:
            a.jaccard(other)
        diag = server.value.diag
        # the server's message, its detail with a colon
        assert str(ours.value) == f"{diag.message_primary}: " + \
            diag.message_detail[0].lower() + diag.message_detail[1:-1]
        with pytest.raises(ValueError):
            a | other
    with pytest.raises(TypeError):
        pgminhash.jaccard(a, "1:[1]")


def test_merge_and_cardinality_are_the_servers(conn):
    a = pgminhash.minhash(list(range(0, 3000)))
    b = pgminhash.minhash(list(range(2000, 5000)))
    merged, card = conn.execute("SELECT (%s::minhash | %s::minhash)::text,"
                                " minhash_cardinality(%s::minhash | %s::minhash)",
                                (str(a), str(b), str(a), str(b))).fetchone()
    assert str(a | b) == merged
    assert a | b == pgminhash.minhash(list(range(5000)))
    assert (a | b).cardinality() == card
    assert 4000 < card < 6000
    assert pgminhash.minhash([]).cardinality() == 0
    # oph: sketches merge exactly, and have their own estimator
    a = pgminhash.minhash(list(range(0, 3000)), family="oph")
    b = pgminhash.minhash(list(range(2000, 5000)), family="oph")
    merged, card = conn.execute("SELECT (%s::minhash | %s::minhash)::text,"
                                " minhash_cardinality(%s::minhash | %s::minhash)",
                                (str(a), str(b), str(a), str(b))).fetchone()
    assert str(a | b) == merged and a | b == pgminhash.minhash(list(range(5000)), family="oph")
    assert (a | b).cardinality() == card
    assert 4000 < card < 6000
    # compact signatures do neither, in the server or here
    c = pgminhash.minhash(list(range(10)), bits=16)
    for sql in ("SELECT %s::minhash | %s::minhash", "SELECT minhash_cardinality(%s::minhash)"):
        with pytest.raises(psycopg.errors.InvalidParameterValue) as server:
            conn.execute(sql, (str(c), str(c))[:sql.count("%s")])
        with pytest.raises(ValueError) as ours:
            (c | c) if "|" in sql else c.cardinality()
        assert str(ours.value).startswith(server.value.diag.message_primary)


@pytest.mark.parametrize("args", [(0.5,), (0.8, 256), (0.3, 64, 0.9, 0.1), (1.0, 1), (0.0, 1024)])
def test_lsh_params_are_the_servers(conn, args):
    names = ["threshold", "num_perm", "fp_weight", "fn_weight"][:len(args)]
    sql = ", ".join(f"{n} => %s" for n in names)
    server = conn.execute(f"SELECT * FROM minhash_lsh_params({sql})", args).fetchone()
    ours = pgminhash.lsh_params(*args)
    assert tuple(ours) == server
    assert ours.bands * ours.rows <= (args[1] if len(args) > 1 else 128)


BAD_LSH_ARGS = [((1.5,), "1.5"), ((math.nan,), "'NaN'"), ((0.5, 0), "0.5, 0"),
                ((0.5, 128, -1.0), "0.5, 128, -1"), ((0.5, 128, math.inf), "0.5, 128, 'Infinity'"),
                ((0.5, 128, 0, 0), "0.5, 128, 0, 0")]


@pytest.mark.parametrize("args,sql", BAD_LSH_ARGS, ids=[s for _, s in BAD_LSH_ARGS])
def test_lsh_params_refuses_what_the_server_refuses(conn, args, sql):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as server:
        conn.execute(f"SELECT * FROM minhash_lsh_params({sql})")
    with pytest.raises(ValueError) as ours:
        pgminhash.lsh_params(*args)
    assert str(ours.value) == server.value.diag.message_primary


def test_signing_a_document_lets_other_threads_run():
    # While one thread signs a large document (datasketch family: SHA-1 per
    # shingle, a few tenths of a second), the main thread keeps running:
    # the binding releases the GIL around the core. Holding it, the main
    # thread could run only before the call started.
    import threading
    import time

    # a document that takes long enough to sign on this machine, whatever its speed
    words = 250_000
    while True:
        doc = " ".join(f"w{i}" for i in range(words))
        t0 = time.perf_counter()
        pgminhash.minhash(doc, family="datasketch", num_perm=16)
        if time.perf_counter() - t0 > 0.4 or words >= 16_000_000:
            break
        words *= 2
    window = {}

    def sign():
        window["start"] = time.perf_counter()
        pgminhash.minhash(doc, family="datasketch", num_perm=16)
        window["end"] = time.perf_counter()

    ticks = []
    signer = threading.Thread(target=sign)
    signer.start()
    while signer.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    signer.join()
    start, end = window["start"], window["end"]
    assert end - start > 0.15, "the document signed too fast to tell"
    inside = [t for t in ticks if start + 0.1 < t < end - 0.02]
    assert inside, f"no tick of the main thread during {end - start:.2f} s of signing"
