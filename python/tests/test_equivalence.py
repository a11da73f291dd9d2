"""pgminhash computes what the server computes: on 1,000 documents covering
every class of text the normalizer handles (corpus.py), str(minhash(doc, ...))
equals minhash(doc, ...)::text for each family (native, datasketch, oph),
width (bits 32, 16, 8), several units, k, num_perm and seeds, and with
accents, punctuation or both ignored; shingles() equals minhash_shingles();
and the same for 1,000 sets of text and 1,000 sets of bigints."""
import pytest

import pgminhash

from . import corpus

# (family, unit, k, num_perm, seed)
TEXT_CONFIGS = [
    ("native", "word", 0, 128, 1),
    ("native", "word", 1, 64, -7),
    ("native", "word", 3, 16, (1 << 63) - 1),
    ("native", "char", 0, 128, 1),
    ("native", "char", 4, 32, 42),
    ("native", "char", 1, 8, -(1 << 63)),
    ("native", "char_nospace", 0, 128, 1),
    ("native", "char_nospace", 2, 256, 3),
    ("datasketch", "word", 0, 128, 1),
    ("datasketch", "word", 2, 16, 0),
    ("datasketch", "char", 0, 64, 4294967295),
    ("datasketch", "char", 1, 16, 7),
    ("datasketch", "char_nospace", 0, 128, 1),
    ("datasketch", "char_nospace", 3, 32, 99),
    ("oph", "word", 0, 128, 1),
    ("oph", "word", 1, 64, -7),
    ("oph", "char", 0, 256, 42),
    ("oph", "char_nospace", 2, 8, 3),
]

# (ignore, bits, family, unit, k, num_perm, seed): the options SQL gained
# after the package was first written, alone and together
OPTION_CONFIGS = [
    ("accents", 32, "native", "word", 0, 128, 1),
    ("punctuation", 32, "native", "word", 0, 128, 1),
    ("accents, punctuation", 32, "native", "word", 2, 64, 5),
    ("accents", 32, "native", "char", 0, 128, 1),
    ("punctuation", 32, "datasketch", "char_nospace", 3, 32, 9),
    ("accents,punctuation", 32, "oph", "word", 0, 128, 1),
    ("", 16, "native", "word", 0, 128, 1),
    ("", 8, "native", "char", 4, 64, -3),
    ("", 16, "datasketch", "word", 0, 128, 1),
    ("", 16, "oph", "word", 0, 128, 1),
    ("", 8, "oph", "char", 0, 32, 77),
    ("accents, punctuation", 16, "oph", "word", 0, 128, 1),
    ("accents", 8, "datasketch", "char", 0, 16, 2),
]

# (family, num_perm, seed, bits)
SET_CONFIGS = [
    ("native", 128, 1, 32),
    ("native", 32, -123456789, 32),
    ("datasketch", 128, 1, 32),
    ("datasketch", 16, 4294967295, 32),
    ("oph", 128, 1, 32),
    ("oph", 16, 5, 32),
    ("native", 128, 1, 16),
    ("datasketch", 64, 3, 8),
    ("oph", 128, 1, 16),
]


@pytest.fixture(scope="module")
def server(dbname):
    """A connection with the corpus loaded into temporary tables."""
    import psycopg

    with psycopg.connect(dbname=dbname, autocommit=True) as c:
        c.execute("CREATE TEMP TABLE docs (i int PRIMARY KEY, d text)")
        c.execute("CREATE TEMP TABLE tsets (i int PRIMARY KEY, e text[])")
        c.execute("CREATE TEMP TABLE isets (i int PRIMARY KEY, e bigint[])")
        with c.cursor() as cur:
            with cur.copy("COPY docs (i, d) FROM STDIN") as copy:
                for i, d in enumerate(corpus.documents()):
                    copy.write_row((i, d))
            cur.executemany("INSERT INTO tsets VALUES (%s, %s::text[])",
                            list(enumerate(corpus.text_sets())))
            cur.executemany("INSERT INTO isets VALUES (%s, %s::bigint[])",
                            list(enumerate(corpus.int_sets())))
        yield c


def column(server, sql, params=()):
    return [r[0] for r in server.execute(sql, params).fetchall()]


def mismatches(inputs, ours, theirs):
    bad = [(x, a, b) for x, a, b in zip(inputs, ours, theirs) if a != b]
    return [f"{x!r}: python {a!r}, server {b!r}" for x, a, b in bad[:5]] + (
        [f"... {len(bad)} in all"] if len(bad) > 5 else [])


def test_the_corpus_reaches_the_server_unchanged(server):
    docs = corpus.documents()
    assert len(docs) == 1000
    assert column(server, "SELECT d FROM docs ORDER BY i") == docs
    assert column(server, "SELECT e FROM tsets ORDER BY i") == corpus.text_sets()
    assert column(server, "SELECT e FROM isets ORDER BY i") == corpus.int_sets()


def test_every_class_is_in_the_corpus():
    text = "".join(corpus.documents())
    for name, fragments in corpus.FRAGMENTS.items():
        assert any(f in text for f in fragments), name


def test_default_signatures(server):
    docs = corpus.documents()
    theirs = column(server, "SELECT minhash(d)::text FROM docs ORDER BY i")
    ours = [str(pgminhash.minhash(d)) for d in docs]
    assert not mismatches(docs, ours, theirs)
    # and not trivially: the corpus gives many distinct signatures
    assert len(set(ours)) > 750


@pytest.mark.parametrize("family,unit,k,num_perm,seed", TEXT_CONFIGS)
def test_text_signatures(server, family, unit, k, num_perm, seed):
    docs = corpus.documents()
    theirs = column(server, "SELECT minhash(d, family => %s::minhash_family, unit => %s, k => %s,"
                            " num_perm => %s, seed => %s)::text FROM docs ORDER BY i",
                    (family, unit, k, num_perm, seed))
    ours = [str(pgminhash.minhash(d, family=family, unit=unit, k=k, num_perm=num_perm,
                                  seed=seed)) for d in docs]
    assert not mismatches(docs, ours, theirs)


@pytest.mark.parametrize("ignore,bits,family,unit,k,num_perm,seed", OPTION_CONFIGS)
def test_signatures_with_options(server, ignore, bits, family, unit, k, num_perm, seed):
    docs = corpus.documents()
    theirs = column(server, "SELECT minhash(d, ignore => %s, bits => %s, family => %s::minhash_family,"
                            " unit => %s, k => %s, num_perm => %s, seed => %s)::text"
                            " FROM docs ORDER BY i", (ignore, bits, family, unit, k, num_perm, seed))
    ours = [pgminhash.minhash(d, ignore=ignore, bits=bits, family=family, unit=unit, k=k,
                              num_perm=num_perm, seed=seed) for d in docs]
    assert not mismatches(docs, [str(s) for s in ours], theirs)
    assert all(s.bits == bits and s.family == family for s in ours)
    # the options change what is signed: not the plain signatures
    if ignore:
        plain = [str(pgminhash.minhash(d, bits=bits, family=family, unit=unit, k=k,
                                       num_perm=num_perm, seed=seed)) for d in docs]
        assert sum(a != b for a, b in zip(plain, theirs)) > 300


@pytest.mark.parametrize("bits", [16, 8])
@pytest.mark.parametrize("family", ["native", "datasketch", "oph"])
def test_jaccard_of_compact_signatures(server, family, bits):
    # each document against its first three quarters: estimates spread over [0, 1]
    theirs = column(server, "SELECT jaccard(minhash(d, family => %s::minhash_family, bits => %s),"
                            " minhash(left(d, length(d) * 3 / 4), family => %s::minhash_family,"
                            " bits => %s)) FROM docs ORDER BY i", (family, bits, family, bits))
    docs = corpus.documents()
    pairs = [(pgminhash.minhash(d, family=family, bits=bits),
              pgminhash.minhash(d[:len(d) * 3 // 4], family=family, bits=bits)) for d in docs]
    ours = [a.jaccard(b) for a, b in pairs]
    assert ours == theirs
    # the b-bit estimator, not the raw share of equal values (which chance
    # agreement of the low bits inflates)
    raw = [float((a.values == b.values).mean()) for a, b in pairs]
    assert all(o <= r for o, r in zip(ours, raw))
    assert sum(o < r for o, r in zip(ours, raw)) > 300


@pytest.mark.parametrize("ignore,unit,k", [("accents", "word", 0), ("punctuation", "word", 1),
                                           ("accents, punctuation", "char", 0),
                                           ("punctuation", "char_nospace", 3)])
def test_shingles_with_ignore(server, ignore, unit, k):
    docs = corpus.documents()
    theirs = column(server, "SELECT minhash_shingles(d, %s, ignore => %s, unit => %s)"
                            " FROM docs ORDER BY i", (k, ignore, unit))
    ours = [pgminhash.shingles(d, k=k, unit=unit, ignore=ignore) for d in docs]
    assert not mismatches(docs, ours, theirs)
    assert sum(len(s) for s in ours) > 5000


@pytest.mark.parametrize("unit,k", [("word", 0), ("word", 2), ("char", 0), ("char", 3),
                                    ("char_nospace", 0)])
def test_shingles(server, unit, k):
    docs = corpus.documents()
    theirs = column(server, "SELECT minhash_shingles(d, %s, %s) FROM docs ORDER BY i", (k, unit))
    ours = [pgminhash.shingles(d, k=k, unit=unit) for d in docs]
    assert not mismatches(docs, ours, theirs)
    assert sum(len(s) for s in ours) > 10000


@pytest.mark.parametrize("family,num_perm,seed,bits", SET_CONFIGS)
def test_text_array_signatures(server, family, num_perm, seed, bits):
    sets = corpus.text_sets()
    theirs = column(server, "SELECT minhash(e, bits => %s, family => %s::minhash_family,"
                            " num_perm => %s, seed => %s)::text FROM tsets ORDER BY i",
                    (bits, family, num_perm, seed))
    ours = [str(pgminhash.minhash(s, family=family, num_perm=num_perm, seed=seed, bits=bits))
            for s in sets]
    assert not mismatches(sets, ours, theirs)


@pytest.mark.parametrize("family,num_perm,seed,bits", SET_CONFIGS)
def test_integer_array_signatures(server, family, num_perm, seed, bits):
    sets = corpus.int_sets()
    theirs = column(server, "SELECT minhash(e, bits => %s, family => %s::minhash_family,"
                            " num_perm => %s, seed => %s)::text FROM isets ORDER BY i",
                    (bits, family, num_perm, seed))
    ours = [str(pgminhash.minhash(s, family=family, num_perm=num_perm, seed=seed, bits=bits))
            for s in sets]
    assert not mismatches(sets, ours, theirs)


def test_narrower_integers_and_text_are_the_same_elements(server):
    # integer[] and smallint[] print as bigint[] does; 42 and '42' are one element
    sets = corpus.int_sets()
    small = [i for i, s in enumerate(sets) if all(x is None or abs(x) < 30000 for x in s)]
    assert len(small) > 50
    ours = [str(pgminhash.minhash(sets[i])) for i in small]
    for sql_type in ("integer[]", "smallint[]", "text[]"):
        theirs = column(server, f"SELECT minhash(e::{sql_type})::text FROM isets"
                                " WHERE i = ANY(%s) ORDER BY i", (small,))
        assert not mismatches([sets[i] for i in small], ours, theirs), sql_type


def test_exact_jaccard_of_sets(server):
    sets = corpus.text_sets()[:200]
    theirs = column(server, "SELECT jaccard(a.e, b.e) FROM tsets a"
                            " JOIN tsets b ON b.i = (a.i + 1) %% 200 WHERE a.i < 200 ORDER BY a.i")
    ours = [pgminhash.jaccard(a, b) for a, b in zip(sets, sets[1:] + sets[:1])]
    assert ours == theirs
    assert len(set(ours)) > 5
