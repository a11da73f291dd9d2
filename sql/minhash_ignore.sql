-- minhash(doc, ignore => 'accents' | 'punctuation' | both) and
-- minhash_shingles(doc, k, ignore): characters left out before shingling,
-- IMMUTABLE, so expression indexes and generated columns can use them.

-- What is compared: the shingles with accents, punctuation, or both left out
SELECT minhash_shingles('Crème brûlée, s''il vous plaît', 2, ignore => 'accents');
SELECT minhash_shingles('Crème brûlée, s''il vous plaît', 2, ignore => 'punctuation');
SELECT minhash_shingles('Crème brûlée, s''il vous plaît', 2, ignore => 'accents, punctuation');
SELECT minhash_shingles('Crème brûlée, s''il vous plaît', 2);
-- a removed character joins its neighbours: "don't" is "dont", "e-mail" "email"
SELECT minhash_shingles('Don''t re-send the e-mail!', 1, ignore => 'punctuation');
SELECT minhash_shingles('Don''t re-send the e-mail!', 1);
-- Unicode punctuation and symbols too; white space still separates
SELECT minhash_shingles('¿Qué? «Sí» — 100 € ©2024', 1, ignore => 'punctuation');
-- precomposed and decomposed accents, Å and the angstrom sign, İ
SELECT minhash_shingles(E'caf\u00e9 cafe\u0301 \u00c5 \u212b \u0130', 1, ignore => 'accents');
SELECT minhash_shingles(E'caf\u00e9 cafe\u0301 \u00c5 \u212b \u0130', 1);
-- character units
SELECT minhash_shingles('Hi, there! Ça va?', 0, ignore => 'accents,punctuation', unit => 'char');
SELECT minhash_shingles('Hi, there! Ça va?', 0, 'accents,punctuation', 'char_nospace');
-- nothing to ignore: the plain shingles and signatures
SELECT minhash_shingles('Ça, va.', 0, ignore => '') = minhash_shingles('Ça, va.'),
       minhash('Ça, va.', ignore => ' ') = minhash('Ça, va.');

-- The accent example: the same text typed with and without accents. The
-- plain word shingles share little (about 0.17); neither does NFKD help,
-- since it keeps the combining marks inside the words; ignoring accents the
-- two are one set.
CREATE TEMP TABLE accent_pair (a text, b text);
INSERT INTO accent_pair VALUES (
'Le conseil municipal a voté mardi soir le budget de la ville pour l''année prochaine. Les crédits destinés aux écoles, aux bibliothèques et aux parcs augmentent, tandis que les dépenses de fonctionnement restent stables. Le maire a salué un budget équilibré qui préserve les services publics sans hausse des impôts locaux.',
'Le conseil municipal a vote mardi soir le budget de la ville pour l''annee prochaine. Les credits destines aux ecoles, aux bibliotheques et aux parcs augmentent, tandis que les depenses de fonctionnement restent stables. Le maire a salue un budget equilibre qui preserve les services publics sans hausse des impots locaux.');
SELECT round(jaccard(minhash_shingles(a), minhash_shingles(b))::numeric, 2) AS exact_plain,
       round(jaccard(minhash(a), minhash(b))::numeric, 2) AS plain,
       round(jaccard(minhash(normalize(a, NFKD)), minhash(normalize(b, NFKD)))::numeric, 2) AS nfkd,
       jaccard(minhash(a, ignore => 'accents'), minhash(b, ignore => 'accents')) AS ignoring_accents,
       minhash(a, ignore => 'accents') = minhash(b, ignore => 'accents') AS same_signature,
       minhash(a, ignore => 'accents') = minhash(b) AS same_as_the_plain_text
FROM accent_pair;

-- every family and width, and the other arguments by name
SELECT minhash('Ça va, ça va.', ignore => 'accents,punctuation', family => 'datasketch', num_perm => 4, seed => 7)
     = minhash('ca va ca va', family => 'datasketch', num_perm => 4, seed => 7) AS datasketch,
       minhash('Ça va, ça va.', ignore => 'accents,punctuation', family => 'oph', num_perm => 16)
     = minhash('ca va ca va', family => 'oph', num_perm => 16) AS oph,
       minhash('Ça va, ça va.', ignore => 'accents,punctuation', bits => 16, unit => 'char', k => 3)
     = minhash('ca va ca va', bits => 16, unit => 'char', k => 3) AS compact_chars;
SELECT minhash('Ça va', ignore => 'accents', bits => 8, family => 'oph', unit => 'char', k => 2, num_perm => 4, seed => 3);
SELECT minhash_bits(minhash('x', ignore => 'accents', bits => 16)), minhash_family(minhash('x', ignore => 'accents', family => 'oph'));
-- varchar and char(n) documents
SELECT minhash('Ça va'::varchar, ignore => 'accents') = minhash('ca va'),
       minhash('Ça va'::char(10), ignore => 'accents') = minhash('ca va');

-- An expression index, its query, and a generated column. Twenty texts, each
-- twice: with accents and punctuation inside words (peut-être, c'est), and
-- typed without them (translate drops ' and -).
CREATE TABLE ign_docs (id int PRIMARY KEY, body text);
INSERT INTO ign_docs
SELECT 2 * d + v, CASE v WHEN 0 THEN t ELSE translate(t, 'éèêàâîïôûùç''-', 'eeeaaiiouuc') END
FROM (SELECT d, string_agg(w[1 + (hashint4(100 * d + j)::bigint + 2147483648) % 30], ' ' ORDER BY j) AS t
      FROM (SELECT ARRAY['été', 'déjà', 'crème', 'brûlée', 'élève', 'château', 'forêt', 'garçon',
                         'hôtel', 'naïve', 'très', 'côté', 'fenêtre', 'théâtre', 'île', 'peut-être',
                         'aujourd''hui', 'c''est', 'e-mail', 'lui-même', 'le', 'la', 'et', 'un',
                         'pour', 'avec', 'ville', 'maison', 'rue', 'soir'] AS w) words,
           generate_series(1, 20) d, generate_series(1, 30) j
      GROUP BY d) texts,
     generate_series(0, 1) v;
SELECT id, body FROM ign_docs WHERE id IN (2, 3);
CREATE INDEX ign_docs_lsh ON ign_docs USING lsh (minhash(body, ignore => 'accents, punctuation'))
    WITH (threshold = 0.8);
SET enable_seqscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE q(text) AS SELECT id FROM ign_docs
WHERE minhash(body, ignore => 'accents, punctuation') % minhash($1, ignore => 'accents, punctuation');
EXPLAIN (COSTS OFF) EXECUTE q('c''est');
DEALLOCATE q;
RESET plan_cache_mode;
-- the accented text and its plain copy find each other, and nothing else
SELECT id FROM ign_docs
WHERE minhash(body, ignore => 'accents, punctuation')
    % (SELECT minhash(body, ignore => 'accents, punctuation') FROM ign_docs WHERE id = 7)
ORDER BY id;
-- without ignoring them, they do not
SELECT count(*) AS plain_pairs FROM ign_docs a JOIN ign_docs b ON a.id + 1 = b.id AND a.id % 2 = 0
WHERE minhash(a.body) % minhash(b.body);
RESET enable_seqscan;
-- all the pairs by the pairs function; exact => true shingles as the index
-- expression does (ignoring accents and punctuation: J = 1)
SELECT count(*) AS pairs, count(*) FILTER (WHERE key_a % 2 = 0 AND key_b = key_a + 1) AS copies,
       min(similarity) AS min_similarity
FROM minhash_similar_pairs('ign_docs_lsh', 'id', 0.8);
SELECT count(*) AS pairs, count(*) FILTER (WHERE key_a % 2 = 0 AND key_b = key_a + 1) AS copies,
       min(similarity) AS min_exact_similarity
FROM minhash_similar_pairs('ign_docs_lsh', 'id', 0.8, exact => true);

ALTER TABLE ign_docs ADD COLUMN sig minhash GENERATED ALWAYS AS (minhash(body, ignore => 'accents')) STORED;
SELECT count(*) AS rows, count(*) FILTER (WHERE sig = minhash(body, ignore => 'accents')) AS as_computed,
       count(DISTINCT sig) AS distinct_signatures
FROM ign_docs;
-- accents alone: the copies still differ by their punctuation
SELECT count(*) AS equal_copies FROM ign_docs a JOIN ign_docs b ON a.id + 1 = b.id AND a.id % 2 = 0
WHERE a.sig = b.sig;
CREATE INDEX ign_docs_sig ON ign_docs USING lsh (sig);
INSERT INTO ign_docs (id, body) VALUES (100, 'Été déjà fini'), (101, 'ete deja fini');
SELECT a.id, b.id FROM ign_docs a JOIN ign_docs b ON a.id < b.id AND a.sig = b.sig WHERE a.id >= 100;
DROP TABLE ign_docs;

-- The functions are immutable (and strict, parallel safe)
SELECT p.oid::regprocedure, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p WHERE 'minhash_ignore'::regtype = ANY (p.proargtypes) ORDER BY 1::text;

-- Older calls resolve as before: the unit is still the second argument, and
-- an untyped second parameter is still a unit (minhash) or k (minhash_shingles)
SELECT minhash('a b c', 'char') = minhash('a b c', unit => 'char'), minhash('a b c', NULL) IS NULL,
       minhash_shingles('a b c d', '3') = minhash_shingles('a b c d', 3);
PREPARE unit_param AS SELECT minhash($1::text, $2);
PREPARE k_param AS SELECT minhash_shingles($1::text, $2);
PREPARE unit3_param AS SELECT minhash_shingles($1::text, $2, $3);
SELECT name, parameter_types FROM pg_prepared_statements ORDER BY name;
DEALLOCATE ALL;

-- Errors (22023): an unknown option, with the valid ones; the option given
-- where the unit goes, with how to name it; a long value is cut
SELECT minhash('x', ignore => 'accent');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', ignore => 'accents punctuation');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', ignore => 'accents,');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles('x', 0, ignore => repeat('y', 100));
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', 'accents');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', 'punctuation, accents');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles('x', 0, 'accents');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', ignore => 'accents', bits => 12);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', ignore => 'accents', unit => 'token');
\echo :LAST_ERROR_SQLSTATE
-- NULL gives NULL
SELECT minhash('x', ignore => NULL) IS NULL, minhash_shingles('x', 0, ignore => NULL) IS NULL;
