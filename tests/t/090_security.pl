# The extension under attack by its users (issue 8):
#  - a table owner's index expression must run as that owner, inside a
#    security-restricted operation, never as whoever calls the pairs,
#    clusters or check functions (the CVE-2022-1552 lesson): a plpgsql
#    function that tries ALTER ROLE ... SUPERUSER when a superuser runs
#    minhash_similar_pairs(..., exact => true) must fail;
#  - the caller's search_path must not reach into the owner's code;
#  - a caller learns nothing a SELECT would not show: the columns of a
#    partial index's predicate need SELECT too, the table's schema USAGE;
#  - names given as arguments are names, never SQL (key_column, text_column,
#    unit), and the extension's own objects are found by OID, not by a
#    search_path lookup an attacker can redirect.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('security', {}, 'autovacuum = off');

# psql as a role: (stdout, stderr)
sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return ($out, $err);
}

sub is_superuser
{
	my ($role) = @_;
	return $node->safe_psql('postgres',
		"SELECT rolsuper FROM pg_roles WHERE rolname = '$role'");
}

# ---- the escalation attempt ----

$node->safe_psql('postgres', q{
CREATE ROLE regress_attacker LOGIN;
CREATE SCHEMA attacker AUTHORIZATION regress_attacker;
});
# Everything below is created by the attacker: a table, a log of what its
# code could do, and an IMMUTABLE function (what an index expression needs)
# that calls a VOLATILE one (which may run any command) on every row.
as_role('regress_attacker', q{
CREATE TABLE attacker.log (who name, what text, outcome text);
CREATE FUNCTION attacker.escalate() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  BEGIN
    EXECUTE 'ALTER ROLE regress_attacker SUPERUSER';
    INSERT INTO attacker.log VALUES (current_user, 'alter role', 'done');
  EXCEPTION WHEN others THEN
    INSERT INTO attacker.log VALUES (current_user, 'alter role', SQLSTATE || ' ' || SQLERRM);
  END;
  BEGIN
    EXECUTE 'CREATE TEMP TABLE attacker_tmp (x int)';
    INSERT INTO attacker.log VALUES (current_user, 'temp table', 'done');
  EXCEPTION WHEN others THEN
    INSERT INTO attacker.log VALUES (current_user, 'temp table', SQLSTATE || ' ' || SQLERRM);
  END;
END $$;
CREATE FUNCTION attacker.body(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM attacker.escalate();
  RETURN t;
END $$;
CREATE TABLE attacker.docs (id int, body text);
INSERT INTO attacker.docs
  SELECT g, 'the same words in every row of this table ' || (g % 3) FROM generate_series(1, 12) g;
CREATE INDEX docs_idx ON attacker.docs USING lsh (minhash(attacker.body(body)));
TRUNCATE attacker.log;
});
is(is_superuser('regress_attacker'), 'f', 'the attacker is not superuser after building its index');

# What the attacker's code did when a superuser ran $sql; clears the log.
sub attack
{
	my ($sql) = @_;
	$node->safe_psql('postgres', $sql);
	my $log = $node->safe_psql('postgres',
		"SELECT DISTINCT who || ' | ' || what || ' | ' || outcome FROM attacker.log ORDER BY 1");
	$node->safe_psql('postgres', 'TRUNCATE attacker.log');
	return $log;
}

for my $case (
	[ 'minhash_similar_pairs exact',
		"SELECT count(*) FROM minhash_similar_pairs('attacker.docs_idx', 'id', exact => true)" ],
	[ 'minhash_clusters exact',
		"SELECT count(*) FROM minhash_clusters('attacker.docs_idx', 'id', exact => true)" ],
	[ 'minhash_clusters exact, representative, text keys',
		"SELECT count(*) FROM minhash_clusters('attacker.docs_idx', 'id', NULL::text, mode => 'representative', exact => true)" ],
	[ 'minhash_lsh_check heapallindexed',
		"SELECT count(*) FROM minhash_lsh_check('attacker.docs_idx', true)" ])
{
	my ($name, $sql) = @$case;
	my $log = attack($sql);
	is(is_superuser('regress_attacker'), 'f', "$name: the attacker stays non-superuser");
	like($log, qr/^regress_attacker \| alter role \| 42501 /m,
		"$name: the index expression runs as the table owner, and ALTER ROLE is refused");
	like($log,
		qr/^regress_attacker \| temp table \| 42501 cannot create temporary table within security-restricted operation/m,
		"$name: inside a security-restricted operation");
	unlike($log, qr/^postgres \|/m, "$name: nothing ran as the superuser");
}

# The same expression raising instead of swallowing the error: the call fails
# as a whole, and the role is unchanged.
as_role('regress_attacker', q{
CREATE OR REPLACE FUNCTION attacker.escalate() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  EXECUTE 'ALTER ROLE regress_attacker SUPERUSER';
END $$;
});
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM minhash_similar_pairs('attacker.docs_idx', 'id', exact => true)");
like($err, qr/permission denied to alter role|must be superuser to alter superuser roles/,
	'an unguarded attempt makes the call fail with a privilege error');
is(is_superuser('regress_attacker'), 'f', 'and the attacker is still not superuser');

# A GUC set by the owner's code is undone when the call returns (new GUC nest level).
as_role('regress_attacker', q{
CREATE OR REPLACE FUNCTION attacker.escalate() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM set_config('work_mem', '1234kB', false);
END $$;
});
is( $node->safe_psql('postgres', q{
SELECT count(*) >= 0 FROM minhash_similar_pairs('attacker.docs_idx', 'id', exact => true);
SHOW work_mem;}),
	"t\n4MB", 'a setting changed by the owner\'s code does not leak into the caller\'s session');

# ---- converting the key column to key_type is the owner's code too ----

# The attacker owns the key column's type and attaches casts to bigint (the
# default key_type) and to text that run its code. A superuser's SELECT k
# runs none of it; the pairs and clusters functions convert every key they
# return, and must do so as the table owner, in a security-restricted
# operation, in the leader and in parallel workers.
as_role('regress_attacker', q{
CREATE OR REPLACE FUNCTION attacker.escalate() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  BEGIN
    EXECUTE 'ALTER ROLE regress_attacker SUPERUSER';
    INSERT INTO attacker.log VALUES (current_user, 'alter role', 'done');
  EXCEPTION WHEN others THEN
    INSERT INTO attacker.log VALUES (current_user, 'alter role', SQLSTATE || ' ' || SQLERRM);
  END;
  BEGIN
    EXECUTE 'CREATE TEMP TABLE attacker_tmp (x int)';
    INSERT INTO attacker.log VALUES (current_user, 'temp table', 'done');
  EXCEPTION WHEN others THEN
    INSERT INTO attacker.log VALUES (current_user, 'temp table', SQLSTATE || ' ' || SQLERRM);
  END;
END $$;
CREATE TYPE attacker.kk AS ENUM ('a', 'b', 'c', 'd');
CREATE FUNCTION attacker.kk_to_int8(attacker.kk) RETURNS bigint LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN PERFORM attacker.escalate(); RETURN array_position(enum_range(NULL::attacker.kk), $1); END $$;
CREATE CAST (attacker.kk AS bigint) WITH FUNCTION attacker.kk_to_int8(attacker.kk) AS ASSIGNMENT;
-- PARALLEL SAFE, so that workers may run it; a worker can neither write nor
-- start a subtransaction, so this one only says whose rights it runs with
CREATE FUNCTION attacker.kk_to_text(attacker.kk) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RAISE NOTICE 'kk_to_text ran as %', current_user;
  RETURN pg_catalog.format('key %s', $1);
END $$;
CREATE CAST (attacker.kk AS text) WITH FUNCTION attacker.kk_to_text(attacker.kk) AS ASSIGNMENT;
CREATE TABLE attacker.trap2 (k attacker.kk, sig minhash);
INSERT INTO attacker.trap2
  SELECT (ARRAY['a', 'b', 'c', 'd'])[1 + g % 4]::attacker.kk, minhash('the quick brown fox')
  FROM generate_series(1, 8) g;
CREATE INDEX trap2_idx ON attacker.trap2 USING lsh (sig);
TRUNCATE attacker.log;
});
is($node->safe_psql('postgres', 'SELECT count(DISTINCT k) FROM attacker.trap2'), '4',
	'a superuser reads the key column');
is($node->safe_psql('postgres', 'SELECT count(*) FROM attacker.log'), '0',
	'and runs none of its owner\'s code doing so');
for my $case (
	[ 'minhash_similar_pairs, bigint keys',
		"SELECT count(*) FROM minhash_similar_pairs('attacker.trap2_idx', 'k')", '28' ],
	[ 'minhash_clusters, bigint keys',
		"SELECT count(DISTINCT key) FROM minhash_clusters('attacker.trap2_idx', 'k')", '4' ],
	[ 'minhash_clusters, text keys',
		"SELECT string_agg(DISTINCT key, ',') FROM minhash_clusters('attacker.trap2_idx', 'k', NULL::text)",
		'key a,key b,key c,key d' ],
	# effective_cache_size = 1 (8 kB): every table is "larger than the cache"
	[ 'minhash_similar_pairs, text keys, rows resolved in table order by parallel workers',
		"SET effective_cache_size = 1; SET minhash.pairs_min_parallel_index_size = 0;
		 SET max_parallel_workers_per_gather = 2; SET client_min_messages = debug1;
		 SELECT count(*) FROM minhash_similar_pairs('attacker.trap2_idx', 'k', NULL::text)", '28' ])
{
	my ($name, $sql, $expected) = @$case;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	if ($name =~ /text keys/)
	{
		like($err, qr/[12] of 2 parallel workers launched to resolve rows in table order/,
			"$name: workers convert the keys") if $name =~ /workers/;
		like($err, qr/NOTICE:  kk_to_text ran as regress_attacker/, "$name: as the table owner");
		unlike($err, qr/NOTICE:  kk_to_text ran as postgres/, "$name: never as the caller");
		is($out, $expected, "$name: the keys come back converted by the owner's cast");
		is(is_superuser('regress_attacker'), 'f', "$name: the attacker stays non-superuser");
		$node->safe_psql('postgres', 'TRUNCATE attacker.log');
		next;
	}
	my $log = $node->safe_psql('postgres',
		"SELECT DISTINCT who || ' | ' || what || ' | ' || outcome FROM attacker.log ORDER BY 1");
	$node->safe_psql('postgres', 'TRUNCATE attacker.log');
	is($out, $expected, "$name: the keys come back converted by the owner's cast") or diag($err);
	is(is_superuser('regress_attacker'), 'f', "$name: the attacker stays non-superuser");
	like($log, qr/^regress_attacker \| alter role \| 42501 /m,
		"$name: the cast runs as the table owner, and ALTER ROLE is refused");
	like($log,
		qr/^regress_attacker \| temp table \| 42501 cannot create temporary table within security-restricted operation/m,
		"$name: inside a security-restricted operation");
	unlike($log, qr/^postgres \|/m, "$name: nothing ran as the superuser");
}

# Code of a third role in the conversion would run with the table owner's
# rights: refused. Here the reader's own domain over text, with a CHECK.
$node->safe_psql('postgres', q{
CREATE ROLE regress_keyreader LOGIN;
CREATE SCHEMA keyreader AUTHORIZATION regress_keyreader;
GRANT USAGE ON SCHEMA attacker TO regress_keyreader;
});
as_role('regress_attacker', 'GRANT SELECT ON attacker.trap2 TO regress_keyreader');
($out, $err) = as_role('regress_keyreader', q{
CREATE FUNCTION keyreader.ok(text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE DOMAIN keyreader.k AS text CHECK (keyreader.ok(VALUE));
SELECT count(*) FROM minhash_similar_pairs('attacker.trap2_idx', 'k', NULL::keyreader.k);});
like($err, qr/42501: key column "k" cannot be returned as keyreader\.k by minhash_similar_pairs/,
	'a conversion through a domain of neither the owner nor a superuser is refused (42501)');
like($err, qr/DETAIL:  The conversion checks the constraints of domain keyreader\.k/,
	'the detail names the domain');
($out, $err) = as_role('regress_keyreader',
	q{SELECT count(*) FROM minhash_similar_pairs('attacker.trap2_idx', 'k', NULL::attacker.kk)});
is($out, '28', 'keys of the column\'s own type need no conversion, and run no code');
is($node->safe_psql('postgres', 'SELECT count(*) FROM attacker.log'), '0', 'no code ran for them');

# ---- constant folding of an index expression is evaluation too ----

# konst('x') has only constant arguments: PostgreSQL folds it when it first
# loads the index expression into a backend (RelationGetIndexExpressions),
# so whoever triggers that load runs it. Each call below starts a new
# backend, where the first load happens inside the extension's code.
as_role('regress_attacker', q{
CREATE OR REPLACE FUNCTION attacker.escalate() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  BEGIN
    EXECUTE 'ALTER ROLE regress_attacker SUPERUSER';
    INSERT INTO attacker.log VALUES (current_user, 'alter role', 'done');
  EXCEPTION WHEN others THEN
    INSERT INTO attacker.log VALUES (current_user, 'alter role', SQLSTATE || ' ' || SQLERRM);
  END;
END $$;
CREATE FUNCTION attacker.konst(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM attacker.escalate();
  RETURN t;
END $$;
CREATE TABLE attacker.folded (id int, body text);
INSERT INTO attacker.folded SELECT g, 'one two three four five six' FROM generate_series(1, 4) g;
CREATE INDEX folded_idx ON attacker.folded USING lsh (minhash(attacker.konst('x ') || body));
TRUNCATE attacker.log;
});
for my $case (
	[ 'pairs', "SELECT count(*) FROM minhash_similar_pairs('attacker.folded_idx', 'id')" ],
	[ 'exact pairs', "SELECT count(*) FROM minhash_similar_pairs('attacker.folded_idx', 'id', exact => true)" ],
	[ 'exact clusters', "SELECT count(*) FROM minhash_clusters('attacker.folded_idx', 'id', exact => true)" ],
	[ 'heap check', "SELECT count(*) FROM minhash_lsh_check('attacker.folded_idx', true)" ])
{
	my ($name, $sql) = @$case;
	my $log = attack($sql);
	is(is_superuser('regress_attacker'), 'f', "$name, folding: the attacker stays non-superuser");
	unlike($log, qr/^postgres \|/m, "$name, folding: nothing ran as the superuser");
}

# ---- the caller's search_path does not reach the owner's code ----

# The owner's function calls lower() unqualified. A reader who can SELECT the
# table puts a schema of their own before pg_catalog: if the owner's code ran
# under the reader's search_path, the reader's lower() would run with the
# owner's rights.
$node->safe_psql('postgres', q{
CREATE ROLE regress_owner LOGIN;
CREATE ROLE regress_reader LOGIN;
CREATE SCHEMA owned AUTHORIZATION regress_owner;
CREATE SCHEMA readers AUTHORIZATION regress_reader;
});
as_role('regress_owner', q{
CREATE FUNCTION owned.norm(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RETURN lower(t); END $$;
CREATE TABLE owned.docs (id int, body text);
INSERT INTO owned.docs
  SELECT g, CASE WHEN g % 2 = 0 THEN 'Alpha Beta Gamma Delta Epsilon Zeta' ELSE 'One Two Three Four Five Six' END
  FROM generate_series(1, 6) g;
CREATE INDEX docs_idx ON owned.docs USING lsh (minhash(owned.norm(body)));
GRANT USAGE ON SCHEMA owned TO regress_reader;
GRANT SELECT ON owned.docs TO regress_reader;
});
as_role('regress_reader', q{
CREATE FUNCTION readers.lower(t text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'hijacked: running as %', current_user; END $$;
});
($out, $err) = as_role('regress_reader', q{
SET search_path = readers, pg_catalog;
SELECT count(*) FROM public.minhash_similar_pairs('owned.docs_idx', 'id', exact => true);
});
unlike($err, qr/hijacked/, 'the reader\'s search_path does not redirect the owner\'s lower()');
is($out, '6', 'the pairs are found with pg_catalog.lower');

# ---- what the caller may read ----

$node->safe_psql('postgres', q{
CREATE SCHEMA hr AUTHORIZATION regress_owner;
});
as_role('regress_owner', q{
CREATE TABLE hr.staff (id int, salary int, cv text, sig minhash);
INSERT INTO hr.staff
  SELECT g, CASE WHEN g % 2 = 0 THEN 200000 ELSE 50000 END, 'cv', minhash(ARRAY[1, 2, 3])
  FROM generate_series(1, 10) g;
CREATE INDEX staff_rich_idx ON hr.staff USING lsh (sig) WHERE salary > 100000;
CREATE INDEX staff_idx ON hr.staff USING lsh (sig);
GRANT USAGE ON SCHEMA hr TO regress_reader;
GRANT SELECT (id, sig) ON hr.staff TO regress_reader;
});
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_clusters('hr.staff_rich_idx', 'id', threshold => 0)");
like($err, qr/42501: permission denied for table staff/,
	'the columns of a partial index\'s predicate need SELECT (42501)');
is($out, '', 'and nothing of who earns more is returned');
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_clusters('hr.staff_idx', 'id', threshold => 0)");
is($out, '10', 'SELECT on the key and indexed columns is enough for a full index');
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_similar_pairs('hr.staff_idx', 'id', exact => true, text_column => 'cv')");
like($err, qr/42501: permission denied for table staff/, 'text_column needs SELECT too');
# which row a cluster keeps would tell who earns most
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_clusters('hr.staff_idx', 'id', threshold => 0, mode => 'representative', keep => 'salary', keep_desc => true)");
like($err, qr/42501: permission denied for table staff/, 'the keep column needs SELECT too (42501)');
is($out, '', 'and nothing of who earns most is returned');
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_clusters('hr.staff_idx', 'id', threshold => 0, mode => 'representative', keep => 'id', keep_desc => true)");
is($out, '10', 'a keep column the caller may read is enough');

# USAGE on the schema, as a SELECT would need: the index named by OID
# avoids the regclass lookup that would check it.
my $oid = $node->safe_psql('postgres', "SELECT 'hr.staff_idx'::regclass::oid");
$node->safe_psql('postgres', 'REVOKE USAGE ON SCHEMA hr FROM regress_reader');
($out, $err) = as_role('regress_reader', 'SELECT count(*) FROM hr.staff');
like($err, qr/permission denied for schema hr/, 'no USAGE: a SELECT is refused');
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_similar_pairs($oid, 'id', threshold => 0)");
like($err, qr/42501: permission denied for schema hr/, 'no USAGE: the pairs are refused (42501)');
is($out, '', 'and return nothing');
($out, $err) = as_role('regress_reader',
	"SELECT count(*) FROM minhash_clusters($oid, 'id', threshold => 0)");
like($err, qr/42501: permission denied for schema hr/, 'no USAGE: the clusters are refused (42501)');

# ---- names are names ----

$node->safe_psql('postgres', q{
CREATE TABLE victim (x int);
CREATE TABLE names ("we""ird key" int, "Body; DROP TABLE victim" text, sig minhash);
INSERT INTO names SELECT g, 'a b c d e f', minhash('a b c d e f') FROM generate_series(1, 3) g;
CREATE INDEX names_idx ON names USING lsh (sig);
});
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM minhash_similar_pairs('names_idx', 'id\"; DROP TABLE victim; --')");
like($err, qr/key column "id"; DROP TABLE victim; --" of relation "names" does not exist/,
	'key_column is a column name, not SQL');
is($node->safe_psql('postgres', "SELECT to_regclass('victim') IS NOT NULL"), 't',
	'the table named in the injection attempt still exists');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM minhash_clusters('names_idx', 'we\"ird key', keep => 'x\"; DROP TABLE victim; --')");
like($err, qr/keep column "x"; DROP TABLE victim; --" of relation "names" does not exist/,
	'keep is a column name, not SQL');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM minhash_similar_pairs('names_idx', 'we"ird key', exact => true,
		      text_column => 'Body; DROP TABLE victim')}),
	'3', 'quoted identifiers with quotes, spaces and semicolons are found as they are spelled');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT * FROM minhash_similar_pairs('names_idx', 'we"ird key', exact => true,
	      text_column => 'Body; DROP TABLE victim', unit => $$word'); DROP TABLE victim; --$$)});
like($err, qr/unknown shingle unit/, 'unit is a value, not SQL');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT * FROM minhash_similar_pairs('names_idx; DROP TABLE victim', 'x')});
like($err, qr/invalid name syntax|does not exist/, 'the index argument is a regclass');
is($node->safe_psql('postgres', "SELECT to_regclass('victim') IS NOT NULL"), 't',
	'the victim table survived every attempt');

# ---- the extension's objects are found by OID, not by name ----

# Decoys of what the extension and the owner's code use, in a schema first on
# the caller's search_path (before pg_catalog): none of them may run, and the
# pairs come out as under a plain search_path.
as_role('regress_attacker', q{
CREATE FUNCTION attacker.lower(t text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'decoy lower() ran as %', current_user; END $$;
CREATE FUNCTION attacker.minhash(doc text, unit text DEFAULT 'word', k int DEFAULT 0,
                                 num_perm int DEFAULT 128, seed bigint DEFAULT 1)
RETURNS public.minhash LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE EXCEPTION 'decoy minhash() ran as %', current_user; END $$;
CREATE FUNCTION attacker.minhash_shingles(doc text, k int DEFAULT 0, unit text DEFAULT 'word')
RETURNS text[] LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE EXCEPTION 'decoy minhash_shingles() ran as %', current_user; END $$;
GRANT USAGE ON SCHEMA attacker TO PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA attacker TO PUBLIC;
});
for my $fn ('minhash_similar_pairs', 'minhash_clusters')
{
	my $plain = $node->safe_psql('postgres',
		"SELECT count(*) FROM $fn('owned.docs_idx', 'id', exact => true)");
	($ret, $out, $err) = $node->psql('postgres', qq{
SET search_path = attacker, pg_catalog, public;
SELECT count(*) FROM public.$fn('owned.docs_idx', 'id', exact => true);
SELECT count(*) FROM public.minhash_lsh_check('owned.docs_idx', true);});
	unlike($err, qr/decoy/, "$fn under a hostile search_path: no decoy runs");
	is($out, "$plain
0", "$fn under a hostile search_path: the same answer, a clean check");
}

# ---- a database owner's operator during ALTER EXTENSION UPDATE ----

# The extension is trusted: its update script runs as the bootstrap
# superuser for the owner of the database, with the extension's schema
# (public, the owner's) first on search_path. The 1.0 -> 1.1 script once
# compared oid = '...'::regoperator with an unqualified =, which an exact
# =(oid, regoperator) of the owner's in public won over pg_catalog's
# =(oid, oid). tests/t/091_script_shadowing.pl does this for every name of
# every script; this is the reproduction as it was reported.
$node->safe_psql('postgres', q{
CREATE ROLE regress_dbowner LOGIN;
CREATE DATABASE owned_by_dbowner OWNER regress_dbowner;
});
my ($upd_ret, $upd_out, $upd_err) = $node->psql('owned_by_dbowner', q{
CREATE EXTENSION minhash VERSION '1.0';
CREATE TABLE public.eq_log (who name);
CREATE FUNCTION public.evil_eq(oid, regoperator) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.eq_log VALUES (current_user);
  BEGIN EXECUTE 'ALTER ROLE regress_dbowner SUPERUSER'; EXCEPTION WHEN others THEN NULL; END;
  RETURN $1 = $2::oid;
END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regoperator, FUNCTION = public.evil_eq);
ALTER EXTENSION minhash UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'minhash';
SELECT count(*) FROM public.eq_log;
}, extra_params => [ '-U', 'regress_dbowner' ]);
is($upd_out, "1.1\n0", 'the database owner updates 1.0 to 1.1, and the planted = never runs')
  or diag($upd_err);
is(is_superuser('regress_dbowner'), 'f', 'the database owner is still not superuser after the update');

is(is_superuser('regress_attacker'), 'f', 'at the end, the attacker is still not superuser');
$node->stop;
done_testing();
