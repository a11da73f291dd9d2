-- Progress of minhash_similar_pairs and minhash_clusters at DEBUG1: a line at
-- every tenth of the walk (band keys are uniform hashes walked in order, so
-- the share of the key space passed is the share of the walk done) and a
-- summary of the walk's counters. On deterministic data these lines are
-- deterministic (the NOTICE every 10 s carries no fixed content and does not
-- occur in a run this short).

-- 2000 distinct rows and 20 planted duplicates of rows 1..20: the index has
-- 30 bands x 2020 entries, many leaves, so every tenth is passed
CREATE TABLE pprog (id int PRIMARY KEY, sig minhash);
INSERT INTO pprog SELECT g, minhash(ARRAY[g, g + 100000, g + 200000]) FROM generate_series(1, 2000) g;
INSERT INTO pprog SELECT 5000 + g, minhash(ARRAY[g, g + 100000, g + 200000]) FROM generate_series(1, 20) g;
CREATE INDEX pprog_idx ON pprog USING lsh (sig);

SET work_mem = '4MB';
SET client_min_messages = debug1;
SELECT count(*) FROM minhash_similar_pairs('pprog_idx', 'id');
SELECT count(*) FROM minhash_clusters('pprog_idx', 'id');
RESET client_min_messages;

-- an index nothing was ever inserted into is not walked: no lines
CREATE TABLE pprog_empty (id int, sig minhash);
CREATE INDEX pprog_empty_idx ON pprog_empty USING lsh (sig);
SET client_min_messages = debug1;
SELECT count(*) FROM minhash_similar_pairs('pprog_empty_idx', 'id');
RESET client_min_messages;
RESET work_mem;
DROP TABLE pprog, pprog_empty;
