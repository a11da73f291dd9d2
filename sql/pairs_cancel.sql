-- Query cancel of minhash_similar_pairs and minhash_clusters: statement_timeout
-- (SQLSTATE 57014) stops a walk that would take seconds, and it stops it
-- promptly, which only happens if the walk checks for interrupts while it
-- verifies a group (an error raised after the function returned would come
-- seconds late).

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

-- 3000 sets of the same 60 elements and one of their own (J = 60/62): one
-- group of about all rows in most bands, 4498500 pairs, seconds to walk. The
-- signatures differ (2,734 distinct), more than minhash_clusters reduces to
-- classes of identical signatures (pairs_walk.cpp): it compares the pairs too.
CREATE TABLE pcancel (id int PRIMARY KEY, sig minhash);
INSERT INTO pcancel SELECT g, minhash(ARRAY(SELECT generate_series(1, 60)) || (1000 + g)) FROM generate_series(1, 3000) g;
CREATE INDEX pcancel_idx ON pcancel USING lsh (sig);

SET statement_timeout = '200ms';
SELECT count(*) FROM minhash_similar_pairs('pcancel_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM minhash_clusters('pcancel_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
RESET statement_timeout;

-- Promptly: the time from the start of the call to the cancel, measured in
-- the server, is well below the walk's full length (the timeout is set at top
-- level: it is armed when a statement starts)
CREATE FUNCTION canceled_within(query text, bound interval) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE query;
    RETURN 'not canceled';
EXCEPTION WHEN query_canceled THEN
    RETURN CASE WHEN clock_timestamp() - t0 < bound THEN 'canceled promptly'
                ELSE 'canceled late: ' || (clock_timestamp() - t0)::text END;
END $$;
SET statement_timeout = '200ms';
SELECT canceled_within($q$SELECT count(*) FROM minhash_similar_pairs('pcancel_idx', 'id')$q$, '1.2 s');
SELECT canceled_within($q$SELECT count(*) FROM minhash_clusters('pcancel_idx', 'id', mode => 'representative')$q$, '1.2 s');
RESET statement_timeout;

-- exact => true spends its time on shingles: cancel works there too
CREATE TABLE pcancel_text (id int PRIMARY KEY, body text);
INSERT INTO pcancel_text SELECT g, repeat('word ', 300) FROM generate_series(1, 3000) g;
CREATE INDEX pcancel_text_idx ON pcancel_text USING lsh (minhash(body));
SET statement_timeout = '200ms';
SELECT canceled_within($q$SELECT count(*) FROM minhash_similar_pairs('pcancel_text_idx', 'id', exact => true)$q$, '1.2 s');
RESET statement_timeout;

-- one long text: the shingles of a single row are hashed with cancel polled
-- as they go (two 16 MB texts, 0.6-1 s each to shingle, on a quiet machine too; canceled
-- 0.3 s in, so the cancel always lands inside the first text)
CREATE TABLE pcancel_long (id int PRIMARY KEY, body text);
ALTER TABLE pcancel_long ALTER body SET STORAGE external;
INSERT INTO pcancel_long SELECT g, repeat('abcdefghij klmnopq ', 850000) FROM generate_series(1, 2) g;
CREATE INDEX pcancel_long_idx ON pcancel_long USING lsh (minhash(body, 'char'));
SET statement_timeout = '300ms';
SELECT canceled_within($q$SELECT count(*) FROM minhash_similar_pairs('pcancel_long_idx', 'id', exact => true)$q$, '2.5 s');
RESET statement_timeout;
DROP TABLE pcancel_long;

-- the session goes on normally
SELECT count(*) FROM pcancel;
DROP FUNCTION canceled_within;
DROP TABLE pcancel, pcancel_text;
