-- minhash 1.0 -> 1.1 (ALTER EXTENSION minhash UPDATE TO '1.1').
-- Every change to an SQL object in src/sql/ since 1.0 is repeated here, so that an
-- updated install equals a fresh 1.1 install (tests check this).

\echo Use "ALTER EXTENSION minhash UPDATE TO '1.1'" to load this file. \quit
