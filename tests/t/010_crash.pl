# Crash safety of the lsh index: kill -9 during concurrent inserts (and during
# deletes and VACUUM), right after CREATE INDEX, on an unlogged table, and an
# immediate stop after serial and parallel builds larger than shared_buffers
# with checkpoints running during them.
# After each restart: minhash_lsh_check is clean, no acknowledged commit is
# lost, and every row is found through the index by its own signature on both
# the amgettuple and the amgetbitmap paths.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# wal_level = replica: the build must WAL-log its pages (with minimal, a new
# index skips WAL and is synced at commit instead). restart_after_crash lets the
# postmaster reinitialise after a backend is killed. Small shared_buffers so
# index pages are evicted and rewritten while the inserts run.
my $node = minhash_node('crash', {},
	'wal_level = replica', 'max_wal_senders = 0',
	'restart_after_crash = on', 'shared_buffers = 2MB',
	'max_connections = 20');
create_schema($node, 't');
$node->safe_psql('postgres', 'CREATE UNLOGGED TABLE u (id bigint NOT NULL, sig minhash)');

# Every row of t found by its own signature through t_sig_idx, both scan paths,
# the ordered path, and a clean check. With $log_offset: the server log after
# that offset shows crash recovery replaying WAL (so the checks below are about
# a replayed index, not one that happened to reach disk before the kill).
sub verify_t
{
	my ($what, $log_offset) = @_;
	ok($node->log_contains(qr/redo done at/, $log_offset),
		"$what: crash recovery replayed WAL")
	  if defined $log_offset;
	check_clean($node, 't_sig_idx', "$what: minhash_lsh_check is clean");
	is(self_find_missing($node, 't', 't_sig_idx', 'index'),
		'0', "$what: every row found by its signature (index scan)");
	is(self_find_missing($node, 't', 't_sig_idx', 'bitmap'),
		'0', "$what: every row found by its signature (bitmap scan)");
	is(nearest_self_missing($node, 't', 't_sig_idx', 'id % 5 = 0'),
		'0', "$what: ORDER BY <%> LIMIT 1 returns the row itself");
	return;
}

# --- 1. kill -9 right after CREATE INDEX: the build must be durable ---------
$node->safe_psql('postgres',
	'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 3000) g');
$node->safe_psql('postgres', q{
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5);
	INSERT INTO u SELECT g, fam_sig(g) FROM generate_series(1, 500) g;
	CREATE INDEX u_sig_idx ON u USING lsh (sig);
});
my $log_offset = -s $node->logfile;
kill9_cluster($node);
$node->start;
verify_t('after kill -9 following CREATE INDEX', $log_offset);

# An unlogged table is reset by crash recovery; its index must come back as a
# valid empty index (ambuildempty's init fork), usable for new rows.
is($node->safe_psql('postgres', 'SELECT count(*) FROM u'), '0',
	'unlogged table is empty after the crash');
check_clean($node, 'u_sig_idx', 'empty unlogged index is clean');
$node->safe_psql('postgres',
	'INSERT INTO u SELECT g, fam_sig(g) FROM generate_series(1, 300) g');
is(self_find_missing($node, 'u', 'u_sig_idx', 'index'),
	'0', 'rows inserted into the reset unlogged index are found');
check_clean($node, 'u_sig_idx', 'reset unlogged index is clean after inserts');

# --- 1b. a checkpoint in the middle of a build, then an immediate stop -------
# The build WAL-logs each page as it writes it (lsh_build_wal.cpp): pages
# logged before a checkpoint's redo point must reach disk through that
# checkpoint, the later ones come back from WAL. The index expression sleeps
# while test.slow_build is on, so the builds are still scanning the table when
# the CHECKPOINT runs (pg_stat_progress_create_index says how far they are);
# then an immediate stop (no shutdown checkpoint) right after each build. One
# serial build and one parallel build (two workers), each index larger than
# shared_buffers (2MB).
$node->safe_psql('postgres', q{
	CREATE FUNCTION slow_sig(id bigint) RETURNS minhash
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
	BEGIN
		IF id % 2 = 0 AND current_setting('test.slow_build', true) = 'on' THEN
			PERFORM pg_sleep(0.002);
		END IF;
		RETURN public.fam_sig(id);
	END $$;
	CREATE TABLE c (id bigint NOT NULL) WITH (parallel_workers = 2);
	INSERT INTO c SELECT g FROM generate_series(1, 6000) g;
	ANALYZE c;
});
for my $build (
	[ 'c_serial_idx', 'SET max_parallel_maintenance_workers = 0;', qr/^$/ ],
	[ 'c_par_idx',    'SET max_parallel_maintenance_workers = 2;', qr/[12] of 2 parallel workers launched/ ])
{
	my ($index, $gucs, $debug) = @$build;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-v', 'ON_ERROR_STOP=1', '-c',
		  "SET test.slow_build = on; SET client_min_messages = debug1; $gucs "
		  . "CREATE INDEX $index ON c USING lsh (slow_sig(id)) WITH (threshold = 0.5)" ],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	ok($node->poll_query_until('postgres', q{
		SELECT blocks_total > 0 AND blocks_done * 2 >= blocks_total
		FROM pg_stat_progress_create_index WHERE relid = 'c'::regclass AND pid <> pg_backend_pid()}),
		"$index: the build is half way through the table");
	$node->safe_psql('postgres', 'CHECKPOINT');
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_progress_create_index WHERE relid = 'c'::regclass"),
		'1', "$index: the CHECKPOINT completed while the build was running");
	ok($h->finish, "$index: CREATE INDEX succeeds") or diag($err);
	my ($line) = $err =~ /lsh build of "\Q$index\E": (.*)/;
	like($line // '', $debug, "$index: serial or parallel as asked");
	cmp_ok($node->safe_psql('postgres',
		"SELECT pg_relation_size('$index') > pg_size_bytes(current_setting('shared_buffers'))"),
		'eq', 't', "$index: the index is larger than shared_buffers");
	$log_offset = -s $node->logfile;
	$node->stop('immediate');
	$node->start;
	ok($node->log_contains(qr/redo done at/, $log_offset),
		"$index: crash recovery replayed WAL after the immediate stop");
	check_clean($node, $index, "$index: minhash_lsh_check (heapallindexed) is clean after recovery");
	is($node->safe_psql('postgres', q{
		SET enable_seqscan = off;
		SELECT count(*) FROM c a WHERE id % 7 = 0
		  AND (SELECT count(*) FROM c b WHERE slow_sig(b.id) % public.fam_sig(a.id) AND b.id = a.id) <> 1}),
		'0', "$index: every row found by its own signature after recovery");
	like($node->safe_psql('postgres',
		'SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM c WHERE slow_sig(id) % fam_sig(1)'),
		qr/\Q$index\E/, "$index: the lookups use the index");
	$node->safe_psql('postgres', "DROP INDEX $index");
}
$node->safe_psql('postgres', 'DROP TABLE c; DROP FUNCTION slow_sig(bigint)');

# --- concurrent writers ----------------------------------------------------
# Each writer is a psql running a long script of 10-row INSERTs (one commit
# each) into its own id range. psql prints "INSERT 0 10" only after the commit
# is acknowledged, so the count of those lines is a lower bound of what must
# survive the crash; at most one more statement may have committed unacknowledged.
my $batch = 10;
my $statements = 5000;

sub start_writer
{
	my ($tag, $first_id, $sql_extra) = @_;
	my $script = $node->basedir . "/$tag.sql";
	open my $fh, '>', $script or die "cannot write $script: $!";
	for my $i (0 .. $statements - 1)
	{
		my $lo = $first_id + $i * $batch;
		my $hi = $lo + $batch - 1;
		print $fh "INSERT INTO t SELECT g, fam_sig(g) FROM generate_series($lo, $hi) g;\n";
		print $fh $sql_extra->($i) if $sql_extra;
	}
	close $fh;
	my %w = (tag => $tag, first => $first_id, out => '', err => '');
	local $ENV{PGAPPNAME} = $tag;
	$w{h} = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', \$w{out}, '2>', \$w{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%w;
}

# A deleter churns the rows loaded before the writers (ids 1..3000), with
# VACUUM between batches, so the crash can also hit bulk delete and cleanup.
sub start_deleter
{
	my ($tag) = @_;
	my $script = $node->basedir . "/$tag.sql";
	open my $fh, '>', $script or die "cannot write $script: $!";
	for my $round (0 .. 200)
	{
		my $m = $round % 7;
		print $fh "DELETE FROM t WHERE id <= 3000 AND id % 7 = $m;\n";
		print $fh "INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 3000) g WHERE g % 7 = $m;\n";
		print $fh "VACUUM t;\n";
	}
	close $fh;
	my %w = (tag => $tag, out => '', err => '');
	local $ENV{PGAPPNAME} = $tag;
	$w{h} = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', \$w{out}, '2>', \$w{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%w;
}

sub rows_inserted_by
{
	my ($w) = @_;
	my $hi = $w->{first} + $statements * $batch - 1;
	return $node->safe_psql('postgres',
		"SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM t WHERE id BETWEEN $w->{first} AND $hi");
}

# Waits until the writers have committed $n rows in total.
sub wait_for_rows
{
	my ($writers, $n) = @_;
	my $ranges = join(' OR ',
		map { "id BETWEEN $_->{first} AND " . ($_->{first} + $statements * $batch - 1) } @$writers);
	$node->poll_query_until('postgres',
		"SELECT count(*) >= $n FROM t WHERE $ranges")
	  or die "writers did not insert $n rows";
	return;
}

# Waits for the writers' psql to exit (the crash ends their sessions).
sub finish_writers
{
	$_->{h}->finish for @_;
	return;
}

# After the crash: every writer died of it (it did not simply finish), and its
# committed rows are a gap-free prefix of its range at least as long as what
# it was told was committed.
sub check_writers
{
	my ($what, @writers) = @_;
	for my $w (@writers)
	{
		my $acked = 0;
		$acked += $1 for $w->{out} =~ /^INSERT 0 (\d+)$/mg;
		my ($count, $min, $max) = split /\|/, rows_inserted_by($w);
		cmp_ok($acked, '<', $statements * $batch,
			"$what: $w->{tag} was interrupted by the crash");
		like($w->{err}, qr/server closed the connection|terminating connection|connection to server was lost/,
			"$what: $w->{tag} saw the crash")
		  or diag($w->{err});
		cmp_ok($count, '>=', $acked,
			"$what: $w->{tag}: no acknowledged row lost ($acked acknowledged, $count present)");
		cmp_ok($count, '<=', $acked + $batch,
			"$what: $w->{tag}: at most one unacknowledged statement committed");
		is($count == 0 ? 0 : $max - $min + 1, $count,
			"$what: $w->{tag}: committed rows have no gap");
	}
	return;
}

# --- 2. kill -9 one inserting backend: the postmaster crash-restarts all ----
{
	my @w = map { start_writer("w$_", 1_000_000 * $_) } 1 .. 3;
	wait_for_rows(\@w, 1000);
	$node->safe_psql('postgres', 'CHECKPOINT');    # replay starts mid-stream
	wait_for_rows(\@w, 2500);
	my $victim = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'w2'");
	like($victim, qr/^\d+$/, 'found the backend of writer w2');
	$log_offset = -s $node->logfile;
	kill 'KILL', $victim;
	# All writers have exited once the postmaster has begun the crash
	# restart, so the poll below cannot reach the old server.
	finish_writers(@w);
	$node->poll_query_until('postgres', 'SELECT true')
	  or die 'server did not come back after the crash';
	check_writers('backend kill -9', @w);
	ok($node->log_contains('terminated by signal 9'),
		'the postmaster saw the backend die of SIGKILL');
	verify_t('after backend kill -9 during inserts', $log_offset);
}

# --- 3. kill -9 the whole server during inserts, deletes and VACUUM ---------
{
	my @w = map { start_writer("x$_", 1_000_000 * (10 + $_)) } 1 .. 3;
	my $d = start_deleter('del');
	wait_for_rows(\@w, 1500);
	$node->safe_psql('postgres', 'CHECKPOINT');
	wait_for_rows(\@w, 3000);
	$log_offset = -s $node->logfile;
	my $killed = kill9_cluster($node);
	cmp_ok($killed, '>', 4, "kill -9 hit all $killed processes of the server");
	finish_writers(@w, $d);
	$node->start;
	check_writers('server kill -9', @w);
	verify_t('after server kill -9 during inserts, deletes and VACUUM', $log_offset);
}

# The recovered index keeps working: more rows, a VACUUM, still consistent.
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(50000000, 50001999) g;
	DELETE FROM t WHERE id % 3 = 0;
	VACUUM t;
});
verify_t('recovered index after more inserts, deletes and VACUUM');

$node->stop;
done_testing();
