-- The minhash tour that `make demo` runs (scripts/demo.sh starts the cluster
-- and passes :load_script, which loads /usr/share/doc/*/copyright into table
-- copyright and /usr/share/common-licenses/* into table licence).
-- Statements are echoed (ECHO queries) only where they are the point.
\set ON_ERROR_STOP 1
\pset footer off
\pset null '(null)'
\set ECHO none

\echo
\echo '==== 1. Install the extension ===='
\set ECHO queries
CREATE EXTENSION minhash;
\set ECHO none
\echo

\echo '==== 2. Shingles: the sets that are compared ===='
\echo '-- word shingles (default: 5 consecutive words, Unicode case-folded, punctuation dropped)'
\set ECHO queries
SELECT n, shingle
FROM unnest(minhash_shingles('The quick brown fox jumps over the lazy dog.'))
     WITH ORDINALITY AS s(shingle, n);
\echo '-- character shingles of 4 characters'
SELECT minhash_shingles('Hello,   World', 4, 'char');
\set ECHO none

\echo '==== 3. Signatures: num_perm minima of hashed shingles, compared position by position ===='
\set ECHO queries
SELECT minhash('The quick brown fox jumps over the lazy dog.', num_perm => 8);
SELECT jaccard(minhash(ARRAY['apple', 'pear', 'plum', 'fig']),
               minhash(ARRAY['apple', 'pear', 'plum', 'kiwi'])) AS estimate,
       jaccard(ARRAY['apple', 'pear', 'plum', 'fig'],
               ARRAY['apple', 'pear', 'plum', 'kiwi']) AS exact;
\set ECHO none

\echo '==== 4. Real text: the licences of the Debian packages on this machine ===='
CREATE TABLE copyright (pkg text PRIMARY KEY, body text NOT NULL);
CREATE TABLE licence (name text PRIMARY KEY, body text NOT NULL);
\i :load_script
\echo '-- one row per distinct text, with its signature (128 permutations, 5-word shingles)'
\timing on
\set ECHO queries
CREATE TABLE texts AS
SELECT min(pkg) || CASE WHEN count(*) > 1 THEN format(' (+%s)', count(*) - 1) ELSE '' END AS label,
       body, minhash(body) AS sig
FROM copyright GROUP BY body;
\set ECHO none
\timing off
SELECT (SELECT count(*) FROM copyright) AS "/usr/share/doc/*/copyright",
       (SELECT count(*) FROM texts) AS "distinct texts",
       (SELECT pg_size_pretty(sum(octet_length(body))) FROM copyright) AS size,
       (SELECT count(*) FROM licence) AS "/usr/share/common-licenses";

\echo '==== 5. The reference licences, estimated vs exact Jaccard ===='
\set ECHO queries
SELECT a.name AS licence_a, b.name AS licence_b,
       round(jaccard(minhash(a.body), minhash(b.body))::numeric, 3) AS estimate,
       round(jaccard(minhash_shingles(a.body), minhash_shingles(b.body))::numeric, 3) AS exact
FROM licence a JOIN licence b ON a.name < b.name
WHERE jaccard(minhash(a.body), minhash(b.body)) >= 0.1
ORDER BY estimate DESC;
\set ECHO none

\echo '==== 6. The % operator: estimate >= minhash.similarity_threshold (default 0.5) ===='
\set ECHO queries
SELECT count(*) AS similar_pairs FROM texts a JOIN texts b ON a.label < b.label AND a.sig % b.sig;
SET minhash.similarity_threshold = 0.8;
SELECT count(*) AS similar_pairs FROM texts a JOIN texts b ON a.label < b.label AND a.sig % b.sig;
\set ECHO none

\echo '==== 7. Near-identical copyright files (threshold 0.8), estimated vs exact Jaccard ===='
\echo '-- "(+n)": n more packages ship the very same file'
\set ECHO queries
SELECT a.label AS package_a, b.label AS package_b,
       round(jaccard(a.sig, b.sig)::numeric, 3) AS estimate,
       round(jaccard(minhash_shingles(a.body), minhash_shingles(b.body))::numeric, 3) AS exact
FROM texts a JOIN texts b ON a.label < b.label AND a.sig % b.sig
ORDER BY estimate DESC, package_a LIMIT 8;
\set ECHO none

\echo '==== 8. The 5 copyright files nearest to the BSD licence: ORDER BY <%> LIMIT ===='
\set ECHO queries
SELECT label, round(distance::numeric, 3) AS distance,
       round(1 - jaccard(minhash_shingles(t.body), minhash_shingles(l.body))::numeric, 3) AS exact_distance
FROM (SELECT label, body, sig <%> (SELECT minhash(body) FROM licence WHERE name = 'BSD') AS distance
      FROM texts ORDER BY distance LIMIT 5) t,
     licence l
WHERE l.name = 'BSD' ORDER BY distance;
\set ECHO none

\echo '==== 9. The lsh index ===='
SELECT EXISTS (SELECT FROM pg_am WHERE amname = 'lsh') AS have_lsh \gset
\if :have_lsh
\echo '-- an expression index: each signature is computed once, at build time, and stored in the index'
\timing on
\set ECHO queries
CREATE INDEX copyright_lsh ON copyright USING lsh (minhash(body));
\set ECHO none
\timing off
ANALYZE copyright;
SELECT num_perm, bands, "rows", pages, live_rows FROM minhash_lsh_stats('copyright_lsh');
\echo '-- the index is read instead of recomputing minhash(body) for every row'
\set ECHO queries
EXPLAIN (COSTS OFF)
SELECT pkg FROM copyright
ORDER BY minhash(body) <%> (SELECT minhash(body) FROM licence WHERE name = 'BSD') LIMIT 5;
\set ECHO none
\timing on
SELECT pkg FROM copyright
ORDER BY minhash(body) <%> (SELECT minhash(body) FROM licence WHERE name = 'BSD') LIMIT 5;
\timing off
\set ECHO queries
EXPLAIN (COSTS OFF)
SELECT pkg FROM copyright WHERE minhash(body) % (SELECT minhash(body) FROM licence WHERE name = 'BSD');
\set ECHO none
\echo '-- (minhash.similarity_threshold is still 0.8)'
\timing on
SELECT pkg FROM copyright WHERE minhash(body) % (SELECT minhash(body) FROM licence WHERE name = 'BSD');
\timing off
\set ECHO queries
SELECT count(*) AS problems FROM minhash_lsh_check('copyright_lsh');
\set ECHO none
\else
\echo 'the lsh index is not built yet'
\endif

\echo '==== 10. Deduplication: every cluster of near-identical files in one walk of the index ===='
SELECT EXISTS (SELECT FROM pg_proc WHERE proname = 'minhash_clusters') AS have_clusters \gset
\if :have_lsh
\if :have_clusters
\echo '-- clusters at estimated Jaccard >= 0.8, named after their smallest key (the row to keep)'
\timing on
\set ECHO queries
SELECT cluster_id AS kept, count(*) AS files,
       left(string_agg(key, ' ' ORDER BY key), 60) AS members
FROM minhash_clusters('copyright_lsh', 'pkg', key_type => NULL::text, threshold => 0.8)
GROUP BY cluster_id ORDER BY files DESC, kept LIMIT 8;
\set ECHO none
\timing off
\echo '-- keep one row per cluster: the longest file, and delete only files similar to it'
\echo '-- (representative mode; connected components chain: a ~ b ~ c joins a and c)'
\set ECHO queries
ALTER TABLE copyright ADD COLUMN len int GENERATED ALWAYS AS (octet_length(body)) STORED;
DELETE FROM copyright
WHERE pkg IN (SELECT key FROM minhash_clusters('copyright_lsh', 'pkg', key_type => NULL::text, threshold => 0.8,
                                               mode => 'representative', keep => 'len', keep_desc => true)
              WHERE key <> cluster_id);
SELECT count(*) AS files_left FROM copyright;
\set ECHO none
\else
\echo 'the pairs and clusters functions are not built yet'
\endif
\else
\echo 'the lsh index is not built yet'
\endif

\echo '==== 11. Stop words and stemming: words from PostgreSQL text search ===='
\echo '-- config => regconfig: the words are the lexemes of to_tsvector(config, body), in document order'
\set ECHO queries
SELECT unit, shingles
FROM (VALUES ('word', minhash_shingles('Redistributions of source code must retain the above copyright notice', 3)),
             ('english', minhash_shingles('Redistributions of source code must retain the above copyright notice', 3,
                                          config => 'english'))) v(unit, shingles);
\set ECHO none
\echo '-- the copyright files again, signed on english lexemes (minhash.similarity_threshold is 0.8)'
\timing on
\set ECHO queries
ALTER TABLE texts ADD COLUMN sig_english minhash;
UPDATE texts SET sig_english = minhash(body, config => 'english');
\set ECHO none
\timing off
\set ECHO queries
SELECT count(*) FILTER (WHERE a.sig % b.sig) AS similar_word,
       count(*) FILTER (WHERE a.sig_english % b.sig_english) AS similar_english
FROM texts a JOIN texts b ON a.label < b.label;
\set ECHO none
\echo '-- pairs on which the two kinds of words disagree at 0.8, with the exact Jaccard of both'
\set ECHO queries
SELECT a.label AS package_a, b.label AS package_b,
       round(jaccard(minhash_shingles(a.body), minhash_shingles(b.body))::numeric, 3) AS exact_word,
       round(jaccard(minhash_shingles(a.body, 0, config => 'english'),
                     minhash_shingles(b.body, 0, config => 'english'))::numeric, 3) AS exact_english
FROM texts a JOIN texts b ON a.label < b.label AND (a.sig % b.sig) <> (a.sig_english % b.sig_english)
ORDER BY 1, 2 LIMIT 8;
\set ECHO none

\echo '==== 12. Hash families: datasketch-compatible signatures ===='
\echo '-- family => datasketch gives what Python datasketch.MinHash(num_perm, seed) gives for the same shingles'
\set ECHO queries
SELECT minhash(body, family => 'datasketch', num_perm => 4, seed => 1) AS datasketch,
       minhash(body, num_perm => 4) AS native
FROM licence WHERE name = 'BSD';
\set ECHO none
\echo '-- signatures of different families are never compared:'
\set ON_ERROR_STOP 0
\set ECHO queries
SELECT jaccard(minhash(body, family => 'datasketch'), minhash(body)) FROM licence WHERE name = 'BSD';
\set ECHO none
\set ON_ERROR_STOP 1

\echo '==== 13. Exact equality: GROUP BY and DISTINCT on signatures (btree and hash operator classes) ===='
\set ECHO queries
SELECT count(*) AS texts, count(DISTINCT sig) AS distinct_signatures FROM texts;
\set ECHO none
