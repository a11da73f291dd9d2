"""The datasketch family against datasketch itself: the signatures
tests/vectors/datasketch.tsv holds were computed by datasketch's MinHash
(tests/vectors/gen_datasketch.py), over lists of strings encoded as UTF-8.
pgminhash signs the same lists as sets of text and must give the same
values, for every num_perm and seed there (up to 4294967295); the documents'
word shingles are such lists too (bench/python_signing.py checks that on
12,000 documents with datasketch at hand)."""
import json
import pathlib

import pgminhash

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors" / "datasketch.tsv"


def test_signatures_equal_datasketchs():
    rows = [line.split("\t") for line in VECTORS.read_text(encoding="utf-8").splitlines()
            if line.startswith("sig\t")]
    assert len(rows) == 80
    for _, num_perm, seed, name, elements, values in rows:
        sig = pgminhash.minhash(json.loads(elements), family="datasketch",
                                num_perm=int(num_perm), seed=int(seed))
        assert sig.values.tolist() == json.loads(values), (num_perm, seed, name)
