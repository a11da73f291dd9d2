#!/usr/bin/python3
"""Python signing throughput: pgminhash beside datasketch on the same documents.

    /usr/bin/python3 bench/python_signing.py [--datasketch DIR] [--repeat N] DOCS.tsv...

DOCS.tsv: minhash-gen's COPY files (id, cluster, body). DIR: a checkout of
datasketch (https://github.com/ekzhu/datasketch, not part of this
repository), run from source with Debian's python3-numpy and python3-scipy;
without it only pgminhash is measured. bench/python_signing.sh makes the
documents and runs this.

Every row signs every document of a file into a 128-value signature of word
5-shingles, in one thread; each figure is the best of --repeat rounds (a
round runs every row once, in turn). Times are the process's CPU time, so
the figures are per core and other work on the host does not stretch them
(the wall time of the same rounds is printed too); MB/s counts the
documents' UTF-8 bytes:

  pgminhash native            pgminhash.minhash(doc)
  pgminhash datasketch        pgminhash.minhash(doc, family='datasketch')
  datasketch, shingles given  MinHash.bulk over pgminhash.shingles(doc) encoded
                              to UTF-8 (shingling not timed: datasketch's own
                              cost alone)
  datasketch + re shingler    the same with a typical Python shingler:
                              re.findall(r'\\w+', doc.casefold()), 5 words
                              joined by a space (timed)

Before timing, the datasketch family's signatures are checked to equal
datasketch's on the same shingles, document by document.
"""
import argparse
import os
import platform
import re
import sys
import time

import numpy as np

import pgminhash

NUM_PERM = 128
K = 5


def read_docs(path):
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            body = line.rstrip("\n").split("\t", 2)[2]
            docs.append(re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(
                m.group(1), m.group(1)), body))
    return docs


def timed(fn):
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def regex_shingles(doc):
    words = re.findall(r"\w+", doc.casefold())
    if len(words) < K:
        return [" ".join(words).encode()] if words else []
    return [" ".join(words[i:i + K]).encode() for i in range(len(words) - K + 1)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasketch", help="a datasketch checkout")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    MinHash = None
    if args.datasketch:
        sys.path.insert(0, args.datasketch)
        from datasketch import MinHash  # noqa: N812

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    flags = open("/proc/cpuinfo").read()
    print(f"CPU: {cpu}, {os.cpu_count()} cores, AVX-512: {'avx512dq' in flags}, "
          f"AVX2: {'avx2' in flags}; Python {platform.python_version()}, NumPy {np.__version__}"
          + (f", datasketch from {args.datasketch}" if MinHash else ""))
    print(f"load average before: {os.getloadavg()[0]:.2f}")

    for path in args.files:
        docs = read_docs(path)
        mb = sum(len(d.encode()) for d in docs) / 1e6
        print(f"\n{os.path.basename(path)}: {len(docs)} documents, {mb:.1f} MB, "
              f"{mb * 1e6 / len(docs):.0f} bytes on average; best of {args.repeat} rounds")
        signers = [
            ("pgminhash native", lambda: [pgminhash.minhash(d) for d in docs]),
            ("pgminhash datasketch",
             lambda: [pgminhash.minhash(d, family="datasketch") for d in docs]),
        ]
        if MinHash:
            shingled = [[s.encode() for s in pgminhash.shingles(d)] for d in docs]
            theirs = MinHash.bulk(shingled, num_perm=NUM_PERM)
            for d, m in zip(docs, theirs):
                ours = pgminhash.minhash(d, family="datasketch", num_perm=NUM_PERM)
                if not np.array_equal(ours.values, m.hashvalues):
                    sys.exit(f"datasketch family differs from datasketch on {d[:60]!r}")
            print(f"datasketch family = datasketch.MinHash on the same shingles: "
                  f"{len(docs)}/{len(docs)} documents")
            signers += [
                ("datasketch, shingles given", lambda: MinHash.bulk(shingled, num_perm=NUM_PERM)),
                ("datasketch + re shingler", lambda: MinHash.bulk(
                    (regex_shingles(d) for d in docs), num_perm=NUM_PERM)),
            ]
        # rounds of every signer in turn, so a change of load touches all alike
        best = {name: (float("inf"), float("inf")) for name, _ in signers}
        for _ in range(args.repeat):
            for name, fn in signers:
                cpu, wall = timed(fn)
                best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
        rows = [(name, len(docs) / best[name][0], mb / best[name][0], mb / best[name][1])
                for name, _ in signers]
        base = rows[-1][1] if MinHash else None
        print("| signer | docs/s | MB/s |" + (" × datasketch + re |" if base else "")
              + " wall MB/s |")
        print("|---|---:|---:|" + ("---:|" if base else "") + "---:|")
        for name, docs_s, mb_s, wall_mb_s in rows:
            print(f"| {name} | {docs_s:,.0f} | {mb_s:.1f} |"
                  + (f" {docs_s / base:.1f} |" if base else "") + f" {wall_mb_s:.1f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
