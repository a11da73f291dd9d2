# WAL replay of the lsh index on a streaming replica: build, inserts, deletes
# and VACUUM on the primary; the hot standby answers `%` and ORDER BY <%> LIMIT
# queries exactly as the primary does, through the index, and its copy of the
# index is consistent. Also checks that the build logs pages in bulk (no
# per-tuple WAL records), that fresh serial and parallel builds larger than
# shared_buffers replay to the primary's pages byte for byte, and that the
# replayed index is writable after promotion.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# wal_consistency_checking: every generic record (GenericXLog's and the
# hand-built ones of src/pg/lsh/lsh_wal.cpp) carries a page image that replay
# on the standby compares with the page it rebuilt; a mismatch stops it.
my $primary = minhash_node('primary', { allows_streaming => 1 },
	'shared_buffers = 16MB', 'max_connections = 20', 'wal_consistency_checking = generic', 'wal_keep_size = 512MB');
create_schema($primary, 't');
$primary->safe_psql('postgres', q{
	CREATE EXTENSION pg_walinspect;
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 4000) g;
});

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# --- build on the primary, WAL-logged in bulk --------------------------------
my $lsn0 = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql('postgres',
	'CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5)');
my $lsn1 = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
# The build must log its pages in bulk (log_newpage_range and the like), not a
# record per tuple: count the WAL records that touch the index's file.
my ($records, $pages) = split /\|/, $primary->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
	        WHERE block_ref LIKE '%rel 1663/' || d.oid || '/' || pg_relation_filenode('t_sig_idx') || ' %'),
	       pg_relation_size('t_sig_idx') / current_setting('block_size')::int
	FROM pg_database d WHERE d.datname = current_database()});
cmp_ok($records, '>', 0, "CREATE INDEX is WAL-logged ($records records)");
cmp_ok($records, '<=', $pages,
	"CREATE INDEX logs at most one record per page ($records records, $pages pages, 4000 rows)");

# --- the same answers on both nodes -------------------------------------------
# Query signatures: rows that exist, rows deleted later (their family
# survives), rows from before and after the later inserts, a family deleted
# later as a whole (2200..2207 within 2000..2399), and a signature of no row.
my @queries = (1, 2, 3, 8, 100, 999, 2000, 2001, 2200, 3000, 4001, 4500, 5999,
	6003, 6500, 7000, 123456);
my $qarray = join(',', @queries);
my %gucs = (
	index  => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;',);
my $pct_sql = qq{
	SELECT q, (SELECT string_agg(id::text, ',' ORDER BY id) FROM t WHERE sig % fam_sig(q))
	FROM unnest(ARRAY[$qarray]::bigint[]) q ORDER BY q};
my $knn_sql = qq{
	SELECT q, array_to_string(ARRAY(
		SELECT id || ':' || round((sig <%> fam_sig(q))::numeric, 6) FROM t
		ORDER BY sig <%> fam_sig(q) LIMIT 10), ',')
	FROM unnest(ARRAY[$qarray]::bigint[]) q ORDER BY q};

# Waits for the standby to replay everything, then compares the answers of
# both nodes through the index (both scan paths, several thresholds, the
# ordered scan), checks the standby's copy, and returns the primary's `%`
# answers (index scan) and ORDER BY answers as hashes q => result.
sub same_answers
{
	my ($stage) = @_;
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	my %pct;
	for my $mode (sort keys %gucs)
	{
		for my $node ($primary, $standby)
		{
			like($node->safe_psql('postgres', "$gucs{$mode} EXPLAIN (COSTS OFF) $pct_sql"),
				qr/t_sig_idx/, "$stage: % uses the index ($mode) on " . $node->name);
		}
		my $sql = "$gucs{$mode} $pct_sql";
		my $p = $primary->safe_psql('postgres', $sql);
		is($standby->safe_psql('postgres', $sql), $p,
			"$stage: standby answers % like the primary ($mode)");
		%pct = map { split /\|/, $_, 2 } split /\n/, $p if $mode eq 'index';
	}
	# The standby reads minhash.similarity_threshold at scan time too.
	for my $threshold (0.3, 0.95)
	{
		my $sql = "SET minhash.similarity_threshold = $threshold; $gucs{index} $pct_sql";
		is($standby->safe_psql('postgres', $sql), $primary->safe_psql('postgres', $sql),
			"$stage: standby answers % like the primary at threshold $threshold");
	}
	my $knn = "$gucs{index} $knn_sql";
	like($standby->safe_psql('postgres', "$gucs{index} EXPLAIN (COSTS OFF) $knn_sql"),
		qr/Index Scan using t_sig_idx/, "$stage: ORDER BY <%> LIMIT uses the index on the standby");
	my $pk = $primary->safe_psql('postgres', $knn);
	is($standby->safe_psql('postgres', $knn), $pk,
		"$stage: standby answers ORDER BY <%> LIMIT like the primary");
	check_clean($standby, 't_sig_idx', "$stage: minhash_lsh_check is clean on the standby");
	check_clean($primary, 't_sig_idx', "$stage: minhash_lsh_check is clean on the primary");
	return (\%pct, { map { split /\|/, $_, 2 } split /\n/, $pk });
}

# Right after the build: the standby's index is exactly what the build logged.
my ($pct, $near) = same_answers('after build');
is($pct->{1}, '1,2,3,4,5,6,7', "after build: % with row 1's signature finds its family");
is($pct->{123456} // '', '', 'after build: % finds no row for a signature of no row');
like($near->{1}, qr/^1:0(\.0+)?,/, 'after build: ORDER BY <%> returns the row itself first');

# --- builds larger than shared_buffers, serial and parallel -----------------
# The build logs each page as it writes it, 32 to a record (lsh_build_wal.cpp):
# the standby's copy must be the primary's page for page (past pd_lsn and
# pd_checksum), for an index larger than shared_buffers (16MB, so pages are
# evicted between being written and the end of the build) and for a parallel
# build (the workers log the data pages they write).
$primary->safe_psql('postgres', q{
	CREATE EXTENSION pageinspect;
	CREATE TABLE big (id bigint NOT NULL, sig minhash) WITH (parallel_workers = 2);
	INSERT INTO big SELECT g, fam_sig(g) FROM generate_series(1, 30000) g;
	ANALYZE big;
});

# md5 of every page of $index past its first 10 bytes (pd_lsn, pd_checksum)
sub pages_md5
{
	my ($node, $index) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) || ' pages ' ||
		       md5(string_agg(md5(substr(get_raw_page('$index', b::int), 11)), '' ORDER BY b))
		FROM generate_series(0, pg_relation_size('$index') / current_setting('block_size')::int - 1) b});
}

for my $build (
	[ 'big_serial_idx', 'SET max_parallel_maintenance_workers = 0;', qr/^$/ ],
	[ 'big_par_idx',    'SET max_parallel_maintenance_workers = 2;', qr/[12] of 2 parallel workers launched/ ])
{
	my ($index, $gucs, $debug) = @$build;
	my $l0 = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my ($ret, $out, $err) = $primary->psql('postgres',
		"$gucs SET client_min_messages = debug1; CREATE INDEX $index ON big USING lsh (sig)");
	is($ret, 0, "$index: CREATE INDEX succeeds") or diag($err);
	my ($line) = $err =~ /lsh build of "\Q$index\E": (.*)/;
	like($line // '', $debug, "$index: serial or parallel as asked");
	my $l1 = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my ($records, $pages, $buffers) = split /\|/, $primary->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM pg_get_wal_records_info('$l0', '$l1')
		        WHERE block_ref LIKE '%rel 1663/' || d.oid || '/' || pg_relation_filenode('$index') || ' %'),
		       pg_relation_size('$index') / current_setting('block_size')::int,
		       current_setting('shared_buffers', true)::text
		FROM pg_database d WHERE d.datname = current_database()});
	cmp_ok($pages * 8192, '>', 16 * 1024 * 1024,
		"$index: the index ($pages pages) is larger than shared_buffers ($buffers)");
	# 32 pages a record, plus one partly filled batch per participant
	cmp_ok($records, '<=', int(($pages + 31) / 32) + 3,
		"$index: pages are logged 32 to a record ($records records, $pages pages)");
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	my $md5 = pages_md5($primary, $index);
	is(pages_md5($standby, $index), $md5, "$index: the standby's pages are the primary's ($md5)");
	check_clean($standby, $index, "$index: minhash_lsh_check is clean on the standby");
	my $q = 'SET enable_seqscan = off; SELECT string_agg(id::text, \',\' ORDER BY id) '
	  . 'FROM big WHERE sig % fam_sig(12345)';
	is($standby->safe_psql('postgres', $q), '12344,12345,12346,12347,12348,12349,12350,12351',
		"$index: the standby finds a family through the index");
	$primary->safe_psql('postgres', "DROP INDEX $index");
}
$primary->safe_psql('postgres', 'DROP TABLE big');

# --- changes after the build ------------------------------------------------
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(4001, 6000) g;
	DELETE FROM t WHERE id % 3 = 0;
	VACUUM t;
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(6001, 7000) g;
	DELETE FROM t WHERE id BETWEEN 2000 AND 2399;
});
($pct, $near) = same_answers('after inserts, deletes and VACUUM');
# Not vacuous: a live row is found with the other live members of its family
# (3 and 6 are deleted), a deleted family is not found, new rows are.
is($pct->{1}, '1,2,4,5,7', "% with row 1's signature finds its live family");
is($pct->{2200} // '', '', '% finds nothing of a deleted family');
is($pct->{6500}, '6496,6497,6498,6499,6500,6501,6502,6503', '% finds rows inserted after the build');
like($near->{6500}, qr/^6500:0(\.0+)?,/, 'ORDER BY <%> returns a new row itself first');
is(self_find_missing($standby, 't', 't_sig_idx', 'index'), '0',
	'every row found by its own signature on the standby');

# --- compact signatures: format 5's 8-bit slots, and its pending list --------
# An index of minhash(128, 16) signatures keeps 8 bits of each value (the
# executor rechecks): its build, fast inserts, merge, deletes and VACUUM
# replay to an index that answers as the primary's.
$primary->safe_psql('postgres', q{
	CREATE TABLE tc (id bigint NOT NULL, sig minhash(128, 16));
	INSERT INTO tc SELECT g, fam_sig(g)::minhash(128, 16) FROM generate_series(1, 3000) g;
	CREATE INDEX tc_idx ON tc USING lsh (sig) WITH (fastupdate = on);
	INSERT INTO tc SELECT g, fam_sig(g)::minhash(128, 16) FROM generate_series(3001, 3600) g;
});
is($primary->safe_psql('postgres', "SELECT pending_rows > 0 FROM minhash_lsh_stats('tc_idx')"), 't',
	'compact: rows wait in the pending list');
my $tc_sql = qq{
	SELECT q, (SELECT string_agg(id::text, ',' ORDER BY id) FROM tc WHERE sig % fam_sig(q)::minhash(128, 16)),
	       array_to_string(ARRAY(SELECT id FROM tc ORDER BY sig <%> fam_sig(q)::minhash(128, 16), id LIMIT 3), ',')
	FROM unnest(ARRAY[$qarray]::bigint[]) q ORDER BY q};
for my $stage ('compact, with a pending list', 'compact, merged, after deletes and VACUUM')
{
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	for my $mode (sort keys %gucs)
	{
		like($standby->safe_psql('postgres', "$gucs{$mode} EXPLAIN (COSTS OFF) $tc_sql"), qr/tc_idx/,
			"$stage: % uses the index ($mode) on the standby");
		is($standby->safe_psql('postgres', "$gucs{$mode} $tc_sql"),
			$primary->safe_psql('postgres', "$gucs{$mode} $tc_sql"),
			"$stage: standby answers % and ORDER BY <%> like the primary ($mode)");
	}
	is(self_find_missing($standby, 'tc', 'tc_idx', 'index'), '0',
		"$stage: every row found by its own signature on the standby");
	check_clean($standby, 'tc_idx', "$stage: minhash_lsh_check is clean on the standby");
	$primary->safe_psql('postgres', q{
		SELECT minhash_lsh_clean_pending_list('tc_idx');
		DELETE FROM tc WHERE id % 4 = 0;
		VACUUM tc;
	});
}
is($primary->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM tc WHERE sig % fam_sig(3500)::minhash(128, 16)}),
	'3497,3498,3499,3501,3502,3503', 'compact: % finds the live family of a row inserted after the build');

# --- the replayed index is a working index after promotion ------------------
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'standby was not promoted';
$standby->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(7001, 8000) g;
	DELETE FROM t WHERE id % 5 = 0;
	VACUUM t;
});
check_clean($standby, 't_sig_idx', 'promoted standby: check is clean after writes');
is(self_find_missing($standby, 't', 't_sig_idx', 'bitmap'), '0',
	'promoted standby: every row found by its own signature');

$standby->stop;
$primary->stop;
done_testing();
