-- btree and hash operator classes: exact equality and a total order, for
-- GROUP BY, DISTINCT, UNIQUE, ORDER BY, merge and hash joins.

CREATE TEMP TABLE sigs (id int, sig minhash);
INSERT INTO sigs
SELECT i, minhash(ARRAY[i % 5, i % 5 + 1], num_perm => 8) FROM generate_series(1, 50) i;
INSERT INTO sigs VALUES
  (101, minhash(ARRAY[0, 1], num_perm => 8, seed => 2)),           -- other seed
  (102, minhash(ARRAY[0, 1], num_perm => 4)),                      -- other k
  (103, minhash(ARRAY[0, 1], family => 'datasketch', num_perm => 8)), -- other family
  (104, NULL);

-- the default opclasses exist
SELECT opcname, amname, opcdefault FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE opcintype = 'minhash'::regtype ORDER BY amname;

-- DISTINCT and GROUP BY, sorted and hashed: signatures built differently are different groups
SET enable_hashagg = off;
SELECT count(DISTINCT sig) FROM sigs;
SELECT count(*) AS groups FROM (SELECT sig FROM sigs GROUP BY sig) g;
EXPLAIN (COSTS OFF) SELECT sig, count(*) FROM sigs GROUP BY sig;
RESET enable_hashagg;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT sig, count(*) FROM sigs GROUP BY sig;
SELECT count(*) AS groups, sum(n) AS rows FROM (SELECT sig, count(*) AS n FROM sigs GROUP BY sig) g;
RESET enable_sort;

-- the order is total and consistent with =; comparisons never fail on mixed signatures
SELECT a.id, b.id,
       minhash_cmp(a.sig, b.sig) AS cmp, a.sig < b.sig AS lt, a.sig <= b.sig AS le,
       a.sig = b.sig AS eq, a.sig >= b.sig AS ge, a.sig > b.sig AS gt, a.sig <> b.sig AS ne
FROM sigs a, sigs b WHERE a.id IN (1, 6, 101, 102, 103) AND b.id IN (1, 101, 102, 103) ORDER BY 1, 2;
SELECT count(*) AS antisymmetry_violations FROM sigs a, sigs b
WHERE minhash_cmp(a.sig, b.sig) <> -minhash_cmp(b.sig, a.sig);
SELECT count(*) AS hash_violations FROM sigs a, sigs b
WHERE a.sig = b.sig AND (minhash_hash(a.sig) <> minhash_hash(b.sig)
                         OR minhash_hash_extended(a.sig, 7) <> minhash_hash_extended(b.sig, 7));
SELECT minhash_hash_extended(sig, 0) = minhash_hash_extended(sig, 1) AS seed_matters FROM sigs WHERE id = 1;

-- UNIQUE (btree) rejects an exact duplicate, accepts the same values under another seed
CREATE TEMP TABLE uniq (sig minhash UNIQUE);
INSERT INTO uniq VALUES ('1:[1,2]'), ('2:[1,2]'), ('datasketch:1:[1,2]'), ('1:[1,2,3]');
INSERT INTO uniq VALUES ('1:[1,2]');
\echo :LAST_ERROR_SQLSTATE
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM uniq WHERE sig = '2:[1,2]';
SELECT * FROM uniq WHERE sig = '2:[1,2]';
SELECT * FROM uniq WHERE sig >= '1:[1,2]' ORDER BY sig;
RESET enable_seqscan;

-- hash index
CREATE INDEX sigs_hash ON sigs USING hash (sig);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM sigs WHERE sig = minhash(ARRAY[2, 3], num_perm => 8);
SELECT id FROM sigs WHERE sig = minhash(ARRAY[2, 3], num_perm => 8) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- hash and merge joins on exact equality
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sigs a JOIN sigs b ON a.sig = b.sig;
SELECT count(*) FROM sigs a JOIN sigs b ON a.sig = b.sig;
RESET enable_mergejoin;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sigs a JOIN sigs b ON a.sig = b.sig;
SELECT count(*) FROM sigs a JOIN sigs b ON a.sig = b.sig;
RESET enable_hashjoin;
RESET enable_nestloop;

-- = is hashable and mergeable
SELECT oprcanhash, oprcanmerge FROM pg_operator
WHERE oprname = '=' AND oprleft = 'minhash'::regtype AND oprright = 'minhash'::regtype;
