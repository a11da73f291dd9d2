-- Memory bounded by work_mem: a band group of many identical rows at the
-- smallest work_mem (64kB). The group's 1100 row ids (4.4 kB) are more than a
-- sixteenth of work_mem holds (1024 ids), so each group spills its ids to a
-- tuplesort: the DEBUG1 summary counts the spilled groups. Signatures are
-- compared chunk against chunk, so the m (m - 1) / 2 pairs cost time, not
-- memory; the count is exact.
-- (The peak memory of the backend during such a walk is measured in the TAP
-- test tests/t/070_pairs_concurrency.pl.)

CREATE TABLE pmem (id int PRIMARY KEY, sig minhash);
INSERT INTO pmem SELECT g, minhash('one text for all the rows'::text) FROM generate_series(1, 1100) g;
CREATE INDEX pmem_idx ON pmem USING lsh (sig);

SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs, count(*) = 1100 * 1099 / 2 AS all_pairs,
       count(DISTINCT key_a) AS keys_a, min(similarity), max(similarity)
FROM minhash_similar_pairs('pmem_idx', 'id');
RESET client_min_messages;
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters, min(cluster_id)
FROM minhash_clusters('pmem_idx', 'id');

-- the same at a work_mem that holds the group: nothing spills, same count
SET work_mem = '4MB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs FROM minhash_similar_pairs('pmem_idx', 'id');
RESET client_min_messages;
RESET work_mem;
DROP TABLE pmem;
