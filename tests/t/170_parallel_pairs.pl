# minhash_similar_pairs / minhash_clusters with parallel workers (issue 13):
# when workers start and when not (minhash.pairs_min_parallel_index_size,
# max_parallel_workers_per_gather), the same answer as the serial walk, a
# cancel that stops the workers, and a damaged index whose damage a worker
# meets: the query fails with the worker's XX002, the server stays up.
# (sql/pairs_parallel.sql compares serial and parallel answers in more
# shapes: clusters, exact mode, pending rows, partitions.)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('parallel_pairs', {}, 'autovacuum = off', 'max_worker_processes = 8',
	'max_parallel_workers = 8');
create_schema($node, 't');
$node->safe_psql('postgres', q{
INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
CREATE INDEX t_idx ON t USING lsh (sig);
});

my $pairs = "SELECT count(*) || ':' || sum(key_a * 100000 + key_b) FROM minhash_similar_pairs('t_idx', 'id')";
my $clusters = "SELECT count(*) || ':' || sum(key * 100000 + cluster_id) FROM minhash_clusters('t_idx', 'id')";
my $force = "SET minhash.pairs_min_parallel_index_size = 0; SET max_parallel_workers_per_gather = 2;";

# Runs $sql after $gucs at DEBUG1; returns (answer, the first DEBUG1 line matching
# $what -- by default the walk's "workers launched" -- or '').
sub walk
{
	my ($gucs, $sql, $what) = @_;
	$what //= qr/\d+ of \d+ parallel workers launched/;
	my ($ret, $out, $err) = $node->psql('postgres', "$gucs SET client_min_messages = debug1; $sql");
	is($ret, 0, "query succeeds ($gucs)") or diag $err;
	my ($line) = $err =~ /($what)/;
	return ($out, $line // '');
}

my ($serial, $l0) = walk('SET max_parallel_workers_per_gather = 0;', $pairs);
# 20000 rows in families of 8: every pair of a family, found at Jaccard 0.83
is($serial, $node->safe_psql('postgres',
		"SELECT count(*) || ':' || sum(a * 100000 + b) FROM generate_series(1, 20000) a, generate_series(1, 20000) b "
		  . "WHERE a / 8 = b / 8 AND a < b"), 'the serial walk finds every family pair');
is($l0, '', 'max_parallel_workers_per_gather = 0: no workers');

is($node->safe_psql('postgres', "LOAD 'minhash'; SHOW minhash.pairs_min_parallel_index_size"), '8MB',
	'minhash.pairs_min_parallel_index_size is 8MB by default');
my ($small, $l1) = walk("SET max_parallel_workers_per_gather = 2; SET minhash.pairs_min_parallel_index_size = '16MB';", $pairs);
is($l1, '', 'an index (15MB) below minhash.pairs_min_parallel_index_size: no workers');
is($small, $serial, '... and the serial answer');

my ($dflt, $ld) = walk('SET max_parallel_workers_per_gather = 2;', $pairs);
is($ld, '2 of 2 parallel workers launched', 'above it (the default): two workers walk');
is($dflt, $serial, '... and return the serial walk\'s pairs');

my ($par, $l2) = walk($force, $pairs);
is($l2, '2 of 2 parallel workers launched', 'pairs_min_parallel_index_size = 0: two workers walk');
is($par, $serial, 'the parallel walk returns the serial walk\'s pairs');

my ($cpar, $l3) = walk($force, $clusters);
is($l3, '2 of 2 parallel workers launched', 'minhash_clusters walks with workers too');
is($cpar, $node->safe_psql('postgres', "SET max_parallel_workers_per_gather = 0; $clusters"),
	'... and returns the serial clusters');

my ($noleader, $l6) = walk("$force SET parallel_leader_participation = off;", $pairs);
is($l6, '2 of 2 parallel workers launched', 'parallel_leader_participation = off: the workers alone walk');
is($noleader, $serial, '... the same pairs');

my ($one, $l4) = walk("SET minhash.pairs_min_parallel_index_size = 0; SET max_parallel_workers_per_gather = 1;", $pairs);
is($l4, '1 of 1 parallel workers launched', 'max_parallel_workers_per_gather caps the workers');
is($one, $serial, '... one worker, the same pairs');

# no worker slot free: the leader walks alone
my ($none, $l5) = walk("$force SET max_parallel_workers = 0;", $pairs);
is($l5, '0 of 2 parallel workers launched', 'max_parallel_workers = 0: none launched');
is($none, $serial, '... the leader walks serially, the same pairs');

# The pass in table order (effective_cache_size = 1: every table is larger
# than the cache) shared by the workers too: the same pairs and clusters.
my $deferred = "$force SET effective_cache_size = 1;";
sub pass_line
{
	my ($gucs, $sql) = @_;
	return walk($gucs, $sql, qr/\d+ of \d+ parallel workers launched to resolve rows in table order/);
}
my ($tpar, $lt) = pass_line($deferred, $pairs);
is($lt, '2 of 2 parallel workers launched to resolve rows in table order',
	'rows resolved in table order: two workers share the pass');
is($tpar, $serial, '... the serial walk\'s pairs');
my ($tclu, $ltc) = pass_line($deferred, $clusters);
is($ltc, '2 of 2 parallel workers launched to resolve rows in table order', 'minhash_clusters too');
is($tclu, $cpar, '... the same clusters');
my ($tone, $lt1) = pass_line("$deferred SET max_parallel_workers = 1;", $pairs);
is($lt1, '1 of 2 parallel workers launched to resolve rows in table order', 'one worker slot free: one worker');
is($tone, $serial, '... the same pairs');
my ($tnone, $lt0) = pass_line("$deferred SET max_parallel_workers = 0;", $pairs);
is($lt0, '0 of 2 parallel workers launched to resolve rows in table order', 'no worker slot free: none');
is($tnone, $serial, '... the leader resolves the rows alone, the same pairs');
# a key coerced to a domain (constraints the check does not look into) stays in the leader
$node->safe_psql('postgres', 'CREATE DOMAIN posint AS int CHECK (VALUE > 0)');
my $domain_pairs = "SELECT count(*) || ':' || sum(key_a * 100000 + key_b) "
  . "FROM minhash_similar_pairs('t_idx', 'id', key_type => NULL::posint)";
my ($tdom, $ltd) = pass_line($deferred, $domain_pairs);
is($ltd, '', 'a key coerced to a domain: the pass stays in the leader');
is($tdom, $serial, '... the same pairs');

# A damaged table page met by a worker in the pass: its error is the query's,
# the server stays up (the leader reads no page while the workers run).
$node->safe_psql('postgres', 'CREATE TABLE tdam AS SELECT * FROM t; CREATE INDEX tdam_idx ON tdam USING lsh (sig)');
my $heapfile = $node->safe_psql('postgres', "SELECT pg_relation_filepath('tdam')");
$node->stop;
open(my $hfh, '+<', $node->data_dir . "/$heapfile") or die "open $heapfile: $!";
binmode $hfh;
seek($hfh, 8192 * 5, 0);
print $hfh "\xff" x 64;
close $hfh;
$node->start;
my $damstart = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my ($dret, $dout, $derr) = $node->psql('postgres',
	"$deferred SELECT count(*) FROM minhash_similar_pairs('tdam_idx', 'id')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($derr, qr/ERROR:  XX001: invalid page in block 5 of relation/, 'a damaged table page met in the pass: XX001');
like($derr, qr/parallel worker/, '... raised in a parallel worker');
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'"),
	'... and the workers are gone');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $damstart, '... the server did not restart');
$node->safe_psql('postgres', 'DROP TABLE tdam');

# Cancel: 3000 identical rows (4.5 million pairs, seconds of walking) stopped
# by statement_timeout; the workers stop with the leader.
$node->safe_psql('postgres', q{
CREATE TABLE same (id bigint, sig minhash);
INSERT INTO same SELECT g, minhash('the same text in every row'::text) FROM generate_series(1, 3000) g;
CREATE INDEX same_idx ON same USING lsh (sig);
});
my ($ret, $out, $err) = $node->psql('postgres',
	"$force SET statement_timeout = '300ms'; SELECT count(*) FROM minhash_similar_pairs('same_idx', 'id')");
like($err, qr/canceling statement due to statement timeout/, 'a parallel walk is cancelled');
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'"),
	'... and its workers are gone');

# Damage only a worker meets: every page but the metapage (which the leader
# reads) zeroed, and the leader not walking (parallel_leader_participation
# off). The worker's XX002 is the query's error.
my $file = $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_idx')");
my $blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('t_idx') / 8192");
$node->stop;
open(my $fh, '+<', $node->data_dir . "/$file") or die "open $file: $!";
binmode $fh;
seek($fh, 8192, 0);
print $fh "\0" x (8192 * ($blocks - 1));
close $fh;
$node->start;
my $start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
($ret, $out, $err) = $node->psql('postgres', "$force SET parallel_leader_participation = off; $pairs",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  XX002: .*t_idx/, 'damage met by a worker: the query fails with XX002 naming the index');
like($err, qr/parallel worker/, '... raised in a parallel worker');
($ret, $out, $err) = $node->psql('postgres', "$force $pairs", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  XX002: .*t_idx/, 'parallel_leader_participation on (the leader still only gathers): XX002 too');
($ret, $out, $err) = $node->psql('postgres', "SET max_parallel_workers_per_gather = 0; $pairs",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  XX002: .*t_idx/, 'the serial walk reports the same damage');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start, 'the server did not restart');

$node->stop;
done_testing();
