-- The rows of the side-by-side comparisons (bench/experiments/compare_1_0.sh,
-- bench/experiments/compare_builds.sh, bench/experiments/build_callgrind.sh): :rows / 10 clusters of
-- 10 variants of a 100-element set; variant m replaces 3m of its cluster's
-- elements, so its Jaccard similarity to variant 0 is (100 - 3m) / (100 + 3m)
-- (docs/lsh.md). Run with psql -v rows=N.
CREATE EXTENSION minhash;
CREATE TABLE d (id int PRIMARY KEY, c int, m int, sig minhash);
INSERT INTO d SELECT c * 16 + m, c, m,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(m * 3 + 1, 100) j)
               || ARRAY(SELECT -(c * 1000 + m * 50 + j) FROM generate_series(1, m * 3) j))
FROM generate_series(1, :rows / 10) c, generate_series(0, 9) m;
