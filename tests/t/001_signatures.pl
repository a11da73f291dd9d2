# Signatures and `%` through the SQL API in a real cluster: proves the TAP
# harness (install, CREATE EXTENSION, psql plumbing) independently of the index,
# and checks what only a multi-process, restartable server can show: signatures
# are the same in every backend, database and server lifetime.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('sig');
create_schema($node, 't');

# psql -XAt output of one SQL statement, from a fresh session.
sub q1 { return $node->safe_psql('postgres', $_[0]); }

# --- shape and text form -------------------------------------------------
my $doc = 'the quick brown fox jumps over the lazy dog and runs far away';
is( q1("SELECT minhash_num_perm(minhash('$doc'::text)), minhash_seed(minhash('$doc'::text))"),
	'128|1', 'defaults: k = 128, seed 1');
like(
	q1("SELECT minhash('$doc', 'word', 2, 4, 7)::text"),
	qr/^\s*7\s*:\s*\[\s*\d+\s*(,\s*\d+\s*){3}\]\s*$/,
	'text form is seed:[v1,...,vk] with k values');
is( q1("SELECT s::text::minhash = s FROM (SELECT minhash('$doc', 'char', 3, 64, 42) s) x"),
	't', 'text form round-trips');
is( q1("SELECT minhash('$doc') = minhash('$doc'::text)"),
	't', 'a bare literal is a document, not a signature literal');
is( q1("SELECT minhash('$doc'::text) = minhash(minhash_shingles('$doc'))"),
	't', 'minhash(doc) equals minhash of its shingles');
is( q1("SELECT minhash(ARRAY[1, 2, 3, 40]) = minhash(ARRAY['1', '2', '3', '40'])"),
	't', 'int and text arrays of the same values agree');

# --- the same signature in every backend, database and server lifetime ----
my $sig_sql = "SELECT minhash('$doc', 'word', 3, 256, 99)::text";
my $before = q1($sig_sql);
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION minhash');
is($node->safe_psql('other', $sig_sql), $before, 'same signature in another database');
$node->restart;
is(q1($sig_sql), $before, 'same signature after a server restart');

# --- estimates against exact Jaccard --------------------------------------
# A = 1..400, B = 101..500: |A ∩ B| = 300, |A ∪ B| = 500, J = 0.6.
my $set_a = 'ARRAY(SELECT generate_series(1, 400))';
my $set_b = 'ARRAY(SELECT generate_series(101, 500))';
is(q1("SELECT jaccard($set_a, $set_b)"), '0.6', 'exact jaccard of the arrays is 0.6');
# k = 256: the estimate's standard deviation is sqrt(0.6 * 0.4 / 256) = 0.031.
my $est = q1("SELECT jaccard(minhash($set_a, 256), minhash($set_b, 256))");
cmp_ok(abs($est - 0.6), '<', 0.125, "estimate $est is within 4 sd of 0.6");
is( q1("SELECT abs((minhash($set_a, 256) <%> minhash($set_b, 256)) - (1 - $est)) < 1e-12"),
	't', '<%> is 1 - estimate');
is( q1("SELECT jaccard(minhash($set_a), minhash($set_a)), minhash($set_a) <%> minhash($set_a), minhash($set_a) % minhash($set_a)"),
	'1|0|t', 'a signature is identical to itself');
cmp_ok(
	q1("SELECT jaccard(minhash($set_a, 256), minhash(ARRAY(SELECT generate_series(1001, 1400)), 256))"),
	'<', 0.02, 'disjoint sets estimate near 0');

# --- `%` follows minhash.similarity_threshold --------------------------------
my $pct = "SELECT minhash($set_a, 256) % minhash($set_b, 256)";
is(q1("SET minhash.similarity_threshold = 0.3; $pct"), 't', '% is true below the estimate');
is(q1("SET minhash.similarity_threshold = 0.9; $pct"), 'f', '% is false above the estimate');
# The GUC exists once the library is loaded (first use of a function).
is(q1("SELECT minhash_num_perm(minhash(ARRAY[1])) > 0; SHOW minhash.similarity_threshold"),
	"t\n0.5", 'threshold defaults to 0.5');

# --- `%` over a table (sequential scan) ------------------------------------
# 200 rows = 25 families of 8: within a family J = 0.83, across families 0, so
# the self-join finds exactly 25 * C(8, 2) = 700 unordered pairs.
$node->safe_psql('postgres',
	'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 199) g');
is( q1("SELECT count(*) FROM t a JOIN t b ON a.sig % b.sig WHERE a.id < b.id"),
	'700', '% self-join finds exactly the planted family pairs');
is( q1("SELECT count(*) FROM t a JOIN t b ON a.sig % b.sig "
	  . "WHERE a.id < b.id AND a.id / 8 <> b.id / 8"),
	'0', 'no pair across families');
is( q1("SELECT string_agg(id::text, ',' ORDER BY id) FROM "
	  . "(SELECT id FROM t ORDER BY sig <%> fam_sig(83), id LIMIT 8) s"),
	'80,81,82,83,84,85,86,87', 'ORDER BY <%> LIMIT returns the family first');

# --- bad input is an error with the right SQLSTATE, and the server survives --
sub sqlstate_of
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return $err =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : "none (exit $ret: $err)";
}
is( sqlstate_of("SELECT minhash('a b', 'word', 1, 16, 1) % minhash('a b', 'word', 1, 16, 2)"),
	'22023', 'different seeds: 22023');
is(sqlstate_of("SELECT minhash($set_a, 64) % minhash($set_a, 32)"),
	'22023', 'different k: 22023');
is(sqlstate_of("SELECT 'not a signature'::minhash"), '22P02', 'malformed literal: 22P02');
is(sqlstate_of("SELECT minhash('x', 'word', 0, 0)"), '22023', 'num_perm 0: 22023');
is(sqlstate_of("SELECT minhash('x', 'syllable')"), '22023', 'unknown unit: 22023');
is(q1('SELECT 1'), '1', 'server still accepts queries');

$node->stop;
done_testing();
