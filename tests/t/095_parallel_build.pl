# Parallel CREATE INDEX ... USING lsh (issue 13.3): with
# max_parallel_maintenance_workers, as for a btree, workers
# scan the table, evaluate the index expression and sort their band entries;
# the index they build answers exactly as a serial build's does and passes
# minhash_lsh_check. The index expression runs in the workers as the table
# owner inside a security-restricted operation, as in a serial build
# (TAP 090 has the serial case for the other entry points).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $rows = 20000;
my $node = minhash_node('parallel_build', {}, 'autovacuum = off', 'max_worker_processes = 8');
create_schema($node, 't');
$node->safe_psql('postgres', qq{
INSERT INTO t SELECT g, NULL FROM generate_series(1, $rows + 50) g;
ALTER TABLE t SET (parallel_workers = 2);
ANALYZE t;
});
# NULL signatures (ids 20001..20050) are not indexed, by any participant
$node->safe_psql('postgres', q{
CREATE FUNCTION idx_sig(id bigint) RETURNS minhash LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$ SELECT CASE WHEN id NOT BETWEEN 20001 AND 20050 THEN public.fam_sig(id) END $$;
});

my $par = "SET max_parallel_maintenance_workers = 2; SET maintenance_work_mem = '128MB'; "
  . "SET client_min_messages = debug1;";

# Builds an index, returns the DEBUG line of the lsh build (or '').
sub build
{
	my ($name, $gucs) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"$gucs CREATE INDEX $name ON t USING lsh (idx_sig(id))");
	is($ret, 0, "CREATE INDEX $name succeeds") or diag $err;
	my ($line) = $err =~ /(lsh build of "\Q$name\E": .*)/;
	return $line // '';
}

is(build('t_serial', 'SET max_parallel_maintenance_workers = 0; SET client_min_messages = debug1;'),
	'', 'max_parallel_maintenance_workers = 0: a serial build, no workers asked for');
like(build('t_par', $par), qr/2 of 2 parallel workers launched/,
	'max_parallel_maintenance_workers = 2: two workers build the index with the leader');
like(build('t_par_noleader', "$par SET parallel_leader_participation = off;"),
	qr/2 of 2 parallel workers launched/,
	'parallel_leader_participation = off: the workers alone scan the table');
# As for a btree: without the table's parallel_workers its size decides
# (min_parallel_table_scan_size), and parallel_workers = 0 keeps a build serial
$node->safe_psql('postgres', 'ALTER TABLE t RESET (parallel_workers)');
is(build('t_small', $par), '',
	'no parallel_workers, a table below min_parallel_table_scan_size: a serial build');
like(build('t_by_size', "$par SET min_parallel_table_scan_size = 0;"),
	qr/2 of 2 parallel workers launched/,
	'no parallel_workers, a table above min_parallel_table_scan_size: workers by default');
$node->safe_psql('postgres', 'ALTER TABLE t SET (parallel_workers = 0)');
is(build('t_zero', "$par SET min_parallel_table_scan_size = 0;"), '',
	'parallel_workers = 0 on the table: a serial build');
$node->safe_psql('postgres',
	'DROP INDEX t_small, t_by_size, t_zero; ALTER TABLE t SET (parallel_workers = 2)');
# a parallel-unsafe expression is built serially
$node->safe_psql('postgres', q{
CREATE FUNCTION unsafe_sig(id bigint) RETURNS minhash LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS
  $$ BEGIN RETURN public.fam_sig(id); END $$;
});
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"$par CREATE INDEX t_unsafe ON t USING lsh (unsafe_sig(id)); DROP INDEX t_unsafe;");
	is($ret, 0, 'an index on a parallel-unsafe expression builds');
	unlike($err, qr/parallel workers launched/, '... serially');
}

for my $idx (qw(t_serial t_par t_par_noleader))
{
	check_clean($node, $idx);
}

# Same rows indexed, same statistics for the cost estimate, same answers.
my $stats = q{SELECT bands, rows, live_rows FROM minhash_lsh_stats('%s')};
my $ser_stats = $node->safe_psql('postgres', sprintf($stats, 't_serial'));
like($ser_stats, qr/\|$rows$/, "the serial index holds the $rows non-NULL signatures");
for my $idx (qw(t_par t_par_noleader))
{
	is($node->safe_psql('postgres', sprintf($stats, $idx)), $ser_stats,
		"$idx: same bands, rows and live rows as the serial build");
	is($node->safe_psql('postgres', qq{
		SELECT (SELECT entries FROM minhash_lsh_stats('$idx')) =
		       (SELECT entries FROM minhash_lsh_stats('t_serial'))}), 't',
		"$idx: same number of band entries");
	# all pairs through each index: the same set
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (
		  (SELECT key_a, key_b FROM minhash_similar_pairs('$idx', 'id')
		   EXCEPT SELECT key_a, key_b FROM minhash_similar_pairs('t_serial', 'id'))
		  UNION ALL
		  (SELECT key_a, key_b FROM minhash_similar_pairs('t_serial', 'id')
		   EXCEPT SELECT key_a, key_b FROM minhash_similar_pairs('$idx', 'id'))) d}),
		'0', "$idx: minhash_similar_pairs gives the serial index's pairs");
}
# and there are pairs to compare: about 28 in every family of 8
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM minhash_similar_pairs('t_serial', 'id')}),
	'>', $rows / 8 * 27, 'the pairs are the planted families');

# % lookups through the parallel index (the planner may only use it)
$node->safe_psql('postgres', 'DROP INDEX t_serial; DROP INDEX t_par_noleader');
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM t a WHERE idx_sig(a.id) IS NOT NULL AND
	  (SELECT count(*) FROM t b WHERE idx_sig(b.id) % idx_sig(a.id)) <>
	  (SELECT count(*) FROM t b WHERE b.id / 8 = a.id / 8 AND idx_sig(b.id) IS NOT NULL)}),
	'0', 'every row finds its family through the parallel index');
like($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	EXPLAIN (COSTS OFF) SELECT * FROM t WHERE idx_sig(id) % idx_sig(1)}),
	qr/Index Scan using t_par/, '... through an index scan of it');

# Inserts and VACUUM on a parallel-built index (its free list has the
# participants' partly filled data pages)
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, NULL FROM generate_series(30001, 30400) g;
	DELETE FROM t WHERE id % 5 = 0;
	VACUUM t;
	INSERT INTO t SELECT g, NULL FROM generate_series(30401, 30800) g;});
check_clean($node, 't_par', 'the parallel-built index after inserts, deletes and VACUUM');

# ---- security: the expression in the workers ----
$node->safe_psql('postgres', q{
CREATE ROLE regress_owner LOGIN;
CREATE SCHEMA own AUTHORIZATION regress_owner;
});
my ($ret, $out, $err) = $node->psql('postgres', q{
CREATE FUNCTION own.sig(id bigint) RETURNS minhash LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RAISE NOTICE 'expression runs in pid % as %', pg_catalog.pg_backend_pid(), current_user;
  RETURN public.minhash(ARRAY[id, id / 4]);
END $$;
-- a function that switches role: refused inside a security-restricted operation
CREATE FUNCTION own.switch_sig(id bigint) RETURNS minhash LANGUAGE sql IMMUTABLE PARALLEL SAFE
  SET role = regress_owner AS $$ SELECT public.minhash(ARRAY[id, id / 4]) $$;
CREATE TABLE own.docs (id bigint);
INSERT INTO own.docs SELECT g FROM generate_series(1, 2000) g;
ALTER TABLE own.docs SET (parallel_workers = 2);
}, extra_params => [ '-U', 'regress_owner' ]);
is($ret, 0, 'the owner creates its table and functions') or diag $err;

# The superuser builds the owner's index with two workers and the leader out.
($ret, $out, $err) = $node->psql('postgres',
	"$par SET parallel_leader_participation = off; SELECT 'leader ' || pg_backend_pid(); "
	  . "CREATE INDEX docs_idx ON own.docs USING lsh (own.sig(id))");
is($ret, 0, 'a superuser builds the owner\'s index in parallel') or diag $err;
like($err, qr/docs_idx": 2 of 2 parallel workers launched/, '... with two workers');
my ($leader) = $out =~ /leader (\d+)/;
my %users;
my %pids;
while ($err =~ /NOTICE:  expression runs in pid (\d+) as (\S+)/g)
{
	$pids{$1}++;
	$users{$2}++;
}
is_deeply([ keys %users ], ['regress_owner'],
	'the expression runs as the table owner, never as the superuser who builds');
is(scalar(grep { $_ != $leader } keys %pids), 2, 'in the two workers');
ok(!$pids{$leader}, 'and not in the leader (parallel_leader_participation = off)');
check_clean($node, 'own.docs_idx');

for my $case ([ 'serial', 'SET max_parallel_maintenance_workers = 0;' ],
	[ 'parallel', "$par SET parallel_leader_participation = off;" ])
{
	my ($name, $gucs) = @$case;
	($ret, $out, $err) = $node->psql('postgres',
		"$gucs CREATE INDEX docs_switch ON own.docs USING lsh (own.switch_sig(id))");
	isnt($ret, 0, "$name: an expression that sets role fails the build");
	like($err, qr/cannot set parameter "role" within security-restricted operation/,
		"$name: refused inside a security-restricted operation");
	if ($name eq 'parallel')
	{
		like($err, qr/CONTEXT:.*parallel worker/s, 'parallel: the refusal comes from a worker');
	}
}

$node->stop;
done_testing();
