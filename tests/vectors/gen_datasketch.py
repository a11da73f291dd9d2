#!/usr/bin/python3
"""Test vectors for the datasketch family, computed by datasketch itself.

    /usr/bin/python3 tests/vectors/gen_datasketch.py /path/to/datasketch-checkout \
        > tests/vectors/datasketch.tsv

The first argument is a checkout of https://github.com/ekzhu/datasketch (not
part of this repository); it needs Debian's python3-numpy and python3-scipy.

Each line: num_perm, seed, a document name, its shingles (JSON array of
strings, each hashed as its UTF-8 bytes, as minhash(text[]) and the shingles
of minhash(text, family => 'datasketch') are) and datasketch's hashvalues
(JSON array). Also emits the permutations (a, b) of a few seeds, to test the
MT19937 + legacy randint reimplementation on its own.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
from datasketch import MinHash  # noqa: E402

DOCS = {
    "empty": [],
    "one": ["hello"],
    "words": ["the quick brown fox jumps", "quick brown fox jumps over",
              "brown fox jumps over the", "fox jumps over the lazy", "jumps over the lazy dog"],
    "nonascii": ["straße", "σοφια", "日本語のテキスト", "naïve café", "emoji 🙂 here", ""],
    "numbers": [str(i) for i in range(200)],
}
KS = [1, 16, 128, 256]
SEEDS = [0, 1, 42, 4294967295]

for k in KS:
    for seed in SEEDS:
        for name, shingles in DOCS.items():
            m = MinHash(num_perm=k, seed=seed)
            for s in shingles:
                m.update(s.encode("utf-8"))
            print("sig\t%d\t%d\t%s\t%s\t%s" % (
                k, seed, name, json.dumps(shingles, ensure_ascii=False),
                json.dumps([int(v) for v in m.hashvalues])))
for seed in SEEDS:
    m = MinHash(num_perm=4, seed=seed)
    a, b = m.permutations
    print("perm\t%d\t%s\t%s" % (seed, json.dumps([int(v) for v in a]),
                                json.dumps([int(v) for v in b])))
