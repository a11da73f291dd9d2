#!/usr/bin/env python3
"""Documents of 2-4 KB of real English prose, for the signing benchmark.

    python3 bench/real_text_docs.py --out docs.tsv [--rows N] [--seed S] DIR...

Reads the HTML and plain-text files under each DIR (sorted, so the output is
a function of the files and the seed), keeps their text (the contents of
script and style elements dropped, block elements ended by a paragraph break,
entities decoded, runs of blanks made one space), and packs whole paragraphs
into documents of a size drawn uniformly from 2,048 to 4,096 bytes; a
paragraph longer than that is cut at a space. Writes at most N documents as
COPY text rows "id, 0, body", the layout of minhash-gen docs (id, cluster,
body), so bench/signing_compare.sh loads either.

The synthetic documents of minhash-gen draw words from an invented
vocabulary; PostgreSQL's stored size and lz4's ratio on them (about 0.82)
differ from English text's (about 0.6), and with them how many rows TOAST
moves out of line. The Debian packages postgresql-doc-15 and python3.11-doc
(/usr/share/doc/postgresql-doc-15/html, /usr/share/doc/python3.11/html) are
English prose of a fixed version, on any Debian machine.
"""
import argparse
import html
import os
import random
import re
import sys

BLOCK_END = re.compile(r"</(p|div|li|dd|dt|h[1-6]|pre|tr|table|section|blockquote)\s*>|<br\s*/?>", re.I)
DROPPED = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)
TAG = re.compile(r"<[^>]*>")
BLANKS = re.compile(r"[ \t\r\f\v\u00a0]+")


def paragraphs(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith((".html", ".htm")):
        text = DROPPED.sub(" ", text)
        text = BLOCK_END.sub("\n\n", text)
        text = html.unescape(TAG.sub(" ", text))
    for block in re.split(r"\n\s*\n", text):
        para = " ".join(BLANKS.sub(" ", line).strip() for line in block.splitlines()).strip()
        if para:
            yield para


def pieces(para, limit):
    """para in pieces of at most limit bytes, cut at spaces."""
    while len(para.encode()) > limit:
        cut = para.encode()[:limit].decode(errors="ignore").rfind(" ")
        if cut <= 0:
            break
        yield para[:cut]
        para = para[cut + 1:]
    yield para


def documents(dirs, rng):
    target = rng.randint(2048, 4096)
    doc = []
    size = 0
    for top in dirs:
        for root, subdirs, files in os.walk(top):
            subdirs.sort()
            for name in sorted(files):
                if not name.endswith((".html", ".htm", ".txt")):
                    continue
                for para in paragraphs(os.path.join(root, name)):
                    for piece in pieces(para, 4096):
                        n = len(piece.encode()) + 2
                        if size + n > target and size >= 2048:
                            yield "\n\n".join(doc)
                            target = rng.randint(2048, 4096)
                            doc, size = [], 0
                        if size + n <= 4096:
                            doc.append(piece)
                            size += n


def copy_text(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    for d in args.dirs:
        if not os.path.isdir(d):
            sys.exit(f"real_text_docs.py: {d} is not a directory (apt-get install postgresql-doc-15 python3.11-doc)")
    rng = random.Random(args.seed)
    n = 0
    total = 0
    with open(args.out, "w", encoding="utf-8") as out:
        for doc in documents(args.dirs, rng):
            if n == args.rows:
                break
            n += 1
            total += len(doc.encode())
            out.write(f"{n}\t0\t{copy_text(doc)}\n")
    print(f"{n} documents, {total} bytes", file=sys.stderr)
    if n < args.rows:
        sys.exit(f"real_text_docs.py: only {n} documents of 2-4 KB in {' '.join(args.dirs)}")


if __name__ == "__main__":
    main()
