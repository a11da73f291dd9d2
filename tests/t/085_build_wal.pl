# The WAL of an lsh build (lsh_build_wal.cpp) where 010 and 020 do not look:
# 1. A build that must not WAL-log its pages: wal_level = minimal, where the
#    index's file, new in the building transaction (here with its table), needs
#    no WAL (RelationNeedsWAL false: PostgreSQL syncs the file at commit, or
#    logs it whole if it is smaller than wal_skip_threshold). The build writes its pages unlogged, in a serial
#    build and in a parallel one (whose workers follow the leader's
#    decision), and the index survives an immediate stop after COMMIT.
# 2. The smallest shared_buffers (16 buffers): each participant keeps the
#    pages it has yet to log pinned, fewer of them when buffers are few, so
#    a parallel build (three participants) still finds buffers to use.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('wal_minimal', {},
	'wal_level = minimal', 'max_wal_senders = 0', 'shared_buffers = 2MB',
	'max_worker_processes = 8', 'autovacuum = off');
create_schema($node);

for my $build (
	[ 'serial',   'SET max_parallel_maintenance_workers = 0;', qr/^$/ ],
	[ 'parallel', 'SET max_parallel_maintenance_workers = 2;', qr/[12] of 2 parallel workers launched/ ])
{
	my ($name, $gucs, $debug) = @$build;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		BEGIN;
		CREATE TABLE m_$name (id bigint NOT NULL, sig minhash) WITH (parallel_workers = 2);
		INSERT INTO m_$name SELECT g, fam_sig(g) FROM generate_series(1, 6000) g;
		SELECT pg_current_wal_insert_lsn() AS l0 \\gset
		SET maintenance_work_mem = '128MB';
		$gucs
		SET client_min_messages = debug1;
		CREATE INDEX m_${name}_idx ON m_$name USING lsh (sig) WITH (threshold = 0.5);
		RESET client_min_messages;
		SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') || ' ' || pg_relation_size('m_${name}_idx');
		COMMIT;
	});
	is($ret, 0, "$name: CREATE TABLE, INSERT, CREATE INDEX in one transaction") or diag($err);
	my ($line) = $err =~ /lsh build of "m_${name}_idx": (.*)/;
	like($line // '', $debug, "$name: the build is $name");
	my ($wal, $size) = split / /, $out;
	cmp_ok($size, '>', 2 * 1024 * 1024, "$name: the index ($size bytes) is larger than shared_buffers");
	# a logged build writes at least its size in full-page images
	cmp_ok($wal, '<', $size / 10, "$name: the build wrote no page images to WAL ($wal bytes)");
}

$node->stop('immediate');
$node->start;
for my $name ('serial', 'parallel')
{
	check_clean($node, "m_${name}_idx", "$name: minhash_lsh_check is clean after an immediate stop");
	is(self_find_missing($node, "m_$name", "m_${name}_idx", 'bitmap', 'id % 5 = 0'), '0',
		"$name: rows are found by their own signature after an immediate stop");
}

$node->stop;

# --- 2. shared_buffers = 128kB ------------------------------------------------
my $tiny = minhash_node('tiny_buffers', {},
	'wal_level = replica', 'max_wal_senders = 0', 'shared_buffers = 128kB', 'max_connections = 10', 'max_worker_processes = 8',
	'autovacuum = off');
create_schema($tiny, 't');
$tiny->safe_psql('postgres', q{
	ALTER TABLE t SET (parallel_workers = 2);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
	ANALYZE t;
});
is($tiny->safe_psql('postgres', "SELECT current_setting('shared_buffers') || ' ' || current_setting('wal_level')"),
	'128kB replica', 'the smallest shared_buffers, and builds WAL-log their pages');
for my $build (
	[ 'serial',   'SET max_parallel_maintenance_workers = 0;', qr/^$/ ],
	[ 'parallel', 'SET max_parallel_maintenance_workers = 2;', qr/2 of 2 parallel workers launched/ ])
{
	my ($name, $gucs, $debug) = @$build;
	my ($ret, $out, $err) = $tiny->psql('postgres',
		"SET maintenance_work_mem = '128MB'; $gucs SET client_min_messages = debug1; "
		  . "CREATE INDEX t_${name}_idx ON t USING lsh (sig)");
	is($ret, 0, "$name build with shared_buffers = 128kB succeeds") or diag($err);
	my ($line) = $err =~ /lsh build of "t_${name}_idx": (.*)/;
	like($line // '', $debug, "128kB: the build is $name");
	check_clean($tiny, "t_${name}_idx", "128kB: the $name build is clean");
	$tiny->safe_psql('postgres', "DROP INDEX t_${name}_idx");
}
$tiny->stop;
done_testing();
