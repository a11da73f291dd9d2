-- minhash_shingles(doc, k, unit): what minhash(doc) compares.
-- Every error is followed by its SQLSTATE.

-- word shingles: runs of letters and digits, lowercased, k words joined by a space
SELECT minhash_shingles('The quick brown fox jumps over the lazy dog', 3);
-- default k = 5 words
SELECT minhash_shingles('One two three four five six seven');
SELECT minhash_shingles('One two three four five six seven', 0, 'word');
-- distinct, in order of first appearance
SELECT minhash_shingles('a b a b a b c', 2);
SELECT minhash_shingles('to be or not to be', 1);
-- punctuation and case do not matter, digits are letters
SELECT minhash_shingles('Hello, WORLD! hello world?', 2);
SELECT minhash_shingles('R2-D2 and C-3PO', 2);
-- fewer than k units: one shingle of the whole normalized text; nothing: none
SELECT minhash_shingles('Hello, World!');
SELECT minhash_shingles(''), minhash_shingles(' ,.;! '), minhash_shingles('', 3, 'char');

-- character shingles: whitespace runs become one space, trimmed at both ends
SELECT minhash_shingles(E'  ab \t\n cd  ', 3, 'char');
-- char_nospace drops whitespace entirely
SELECT minhash_shingles(E'  ab \t\n cd  ', 3, 'char_nospace');
-- default k = 9 characters
SELECT minhash_shingles('abcdefghij', unit => 'char');
SELECT minhash_shingles('Hello', unit => 'char');
-- Unicode: non-ASCII letters are letters, lowercased; k counts code points
SELECT minhash_shingles('Ärger über Öl, ÜBER ärger', 2);
SELECT minhash_shingles('ÄÖü', 2, 'char');
SELECT minhash_shingles('Ελληνικά κείμενα', 1);
SELECT array_length(minhash_shingles(repeat('x', 300), 256, 'char'), 1) AS k_256_allowed;
-- full case folding: texts differing only in case have the same shingles,
-- also where lowercasing one character at a time would not make them equal
SELECT minhash_shingles('ΣΟΦΙΑΣ Σοφιας σοφιας', 1) AS final_sigma,
       minhash_shingles('Straße STRASSE STRAẞE', 1) AS sharp_s,
       minhash_shingles('ﬁle FILE', 1) AS ligature,
       minhash_shingles('Maß', 2, 'char') AS one_char_two_units;
SELECT minhash('Die Straße des Sokrates'::text) = minhash('DIE STRASSE DES SOKRATES'::text) AS same_signature;

-- named arguments
SELECT minhash_shingles(doc => 'a b c', unit => 'char_nospace', k => 2);

-- NULL in, NULL out
SELECT minhash_shingles(NULL) IS NULL AS null_doc, minhash_shingles('a', NULL) IS NULL AS null_k,
       minhash_shingles('a', 1, NULL) IS NULL AS null_unit;

-- errors: 22023
SELECT minhash_shingles('a b', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles('a b', 257);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles('a b', 2, 'sentence');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles('a b', 2, 'WORD');
\echo :LAST_ERROR_SQLSTATE

-- The array is built in one piece: it equals its own text round trip, and
-- minhash(doc) = minhash(minhash_shingles(doc)) on a larger document.
WITH d AS (SELECT string_agg(md5(i::text), ' ') AS doc FROM generate_series(1, 20000) i)
SELECT array_length(s, 1) AS n, array_ndims(s) AS ndims, array_lower(s, 1) AS lower,
       s = s::text::text[] AS round_trip,
       s[1] = md5('1') AND s[20000] = md5('20000') AS first_and_last,
       minhash(doc, 'word', 1) = minhash(s) AS signature_of_shingles
FROM d, LATERAL minhash_shingles(doc, 1) AS s;

-- Too many distinct shingles for one array: 54000 (program_limit_exceeded),
-- reported as soon as the budget (1 GB, each shingle counted as its length
-- plus 32 bytes) is spent -- here 4.8 million distinct 256-character
-- shingles, an array of 1.25 GB.
SELECT minhash_shingles(string_agg(md5(i::text), ''), 256, 'char') IS NULL
FROM generate_series(1, 150000) i;
\echo :LAST_ERROR_SQLSTATE

-- A long call honours statement_timeout: listing the 256-character shingles
-- of 32 MB of text takes seconds, the timeout stops it within its 100 ms
-- plus a little (57014 query_canceled).
SELECT clock_timestamp() AS started \gset
SET statement_timeout = '100ms';
SELECT minhash_shingles(repeat('lorem ipsum dolor sit amet ', 1200000), 256, 'char') IS NULL;
\echo :LAST_ERROR_SQLSTATE
RESET statement_timeout;
SELECT clock_timestamp() - :'started'::timestamptz < interval '1.5 s' AS cancelled_promptly;

-- A database in another encoding converts to UTF-8 before shingling and
-- hashing, so shingles and signatures are the same in every encoding.
SELECT current_database() AS regress_db \gset
SELECT minhash_shingles('Ärger über Öl in Köln', 2)::text AS utf8_shingles,
       minhash('Ärger über Öl in Köln'::text, 'char', 3)::text AS utf8_sig_char,
       minhash('Ärger über Öl in Köln'::text)::text AS utf8_sig_word,
       minhash(ARRAY['Ärger', 'Öl'])::text AS utf8_sig_array \gset
CREATE DATABASE minhash_regress_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c minhash_regress_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION minhash;
SHOW server_encoding;
SELECT minhash_shingles('Ärger über Öl in Köln', 2);
SELECT minhash_shingles('Ärger über Öl in Köln', 2)::text = :'utf8_shingles' AS same_shingles,
       minhash('Ärger über Öl in Köln'::text, 'char', 3)::text = :'utf8_sig_char' AS same_char_signature,
       minhash('Ärger über Öl in Köln'::text)::text = :'utf8_sig_word' AS same_word_signature,
       minhash(ARRAY['Ärger', 'Öl'])::text = :'utf8_sig_array' AS same_array_signature;
\c :regress_db
DROP DATABASE minhash_regress_latin1;
