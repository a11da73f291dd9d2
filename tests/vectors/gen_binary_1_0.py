#!/usr/bin/python3
"""A COPY BINARY file holding minhash values in the 1.0 binary form, as 1.0's
minhash_send wrote them (src/pg/type_io.cpp of 1.0: uint8 version 1, uint8
flags 0, uint16 num_perm, int64 seed, num_perm x uint32, network order).

    /usr/bin/python3 tests/vectors/gen_binary_1_0.py > tests/vectors/minhash-1.0.copy
    /usr/bin/python3 tests/vectors/gen_binary_1_0.py 3 > tests/vectors/minhash-badflags.copy

Rows: (id int4, sig minhash). With an argument, one row whose flags byte is
that number (3: a family that does not exist; 2 was one until the oph family).
"""
import struct
import sys

ROWS = [(1, 1, [12, 34, 56]), (2, -42, [0, 4294967295]), (3, 7, [5])]
FLAGS = 0
if len(sys.argv) > 1:
    FLAGS = int(sys.argv[1])
    ROWS = ROWS[:1]

out = bytearray(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
for rid, seed, values in ROWS:
    sig = struct.pack(">BBHq", 1, FLAGS, len(values), seed) + b"".join(struct.pack(">I", v) for v in values)
    out += struct.pack(">h", 2)
    out += struct.pack(">ii", 4, rid)
    out += struct.pack(">i", len(sig)) + sig
out += struct.pack(">h", -1)
sys.stdout.buffer.write(bytes(out))
