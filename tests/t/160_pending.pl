# The pending list of fast inserts (fastupdate) under WAL replay, on a hot
# standby and through crashes:
#  - a streaming standby replays appends and merges; with rows still pending
#    it answers %, ORDER BY <%> LIMIT and all pairs as the primary does (the
#    standby cannot merge: minhash_lsh_clean_pending_list refuses), and its
#    copy is consistent;
#  - kill -9 of the server while writers insert with a small limit (merges
#    running) and with rows pending: after recovery the check is clean and
#    every committed row is found through the index;
#  - a merge interrupted half-way (statement_timeout) leaves entries of rows
#    still on the list in the tree; the next merge adds none twice.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# wal_consistency_checking: replay (the standby's, and crash recovery's)
# compares every page an insert or merge record rebuilt (lsh_wal.cpp names
# the bytes it changed) with the image the primary logged beside it.
my $primary = minhash_node('primary', { allows_streaming => 1 },
	'shared_buffers = 16MB', 'max_connections = 20', 'restart_after_crash = on',
	'wal_consistency_checking = generic', 'wal_keep_size = 512MB');
create_schema($primary, 't');
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 2000) g;
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 64);
});

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# merges while inserting (64kB: 126 rows), then 300 rows left pending
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(2001, 3000) g;
	ALTER INDEX t_sig_idx SET (pending_list_limit = 100000);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(3001, 3300) g;
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

my $stats_sql = 'SELECT pending_rows, live_rows FROM minhash_lsh_stats(\'t_sig_idx\')';
my $stats = $standby->safe_psql('postgres', $stats_sql);
is($stats, $primary->safe_psql('postgres', $stats_sql), "standby replays the pending list ($stats)");
my ($npending) = split /\|/, $stats;
cmp_ok($npending, '>=', 300, 'rows are pending on the standby');

for my $node ($primary, $standby)
{
	my $name = $node->name;
	is(self_find_missing($node, 't', 't_sig_idx', 'index'), '0',
		"$name: every row found by its signature (index scan)");
	is(self_find_missing($node, 't', 't_sig_idx', 'bitmap'), '0',
		"$name: every row found by its signature (bitmap scan)");
	is(nearest_self_missing($node, 't', 't_sig_idx'), '0',
		"$name: every row nearest to itself (ORDER BY <%> LIMIT 1)");
	check_clean($node, 't_sig_idx', "$name: minhash_lsh_check is clean with rows pending");
}
my $pairs_sql = q{SELECT count(*), coalesce(sum(key_a * 7 + key_b), 0)
	FROM minhash_similar_pairs('t_sig_idx', 'id')};
my $pairs = $primary->safe_psql('postgres', $pairs_sql);
is($standby->safe_psql('postgres', $pairs_sql), $pairs,
	"standby: the same pairs as the primary with rows pending ($pairs)");
my $within = $primary->safe_psql('postgres', q{
	SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id') WHERE key_a > 3000 AND key_b > 3000});
cmp_ok($within, '>', 0, "pairs among pending rows ($within)");
my ($ret, $out, $err) = $standby->psql('postgres', "SELECT minhash_lsh_clean_pending_list('t_sig_idx')");
like($err, qr/recovery is in progress/, 'the standby cannot merge the pending list');

# the merge replays: same pairs, nothing pending, on both
is($primary->safe_psql('postgres', "SELECT minhash_lsh_clean_pending_list('t_sig_idx')"), $npending,
	"the primary merges the $npending pending rows");
# the merge assigns no transaction id, so its commit does not flush WAL (the
# WAL writer does, later): wait for the insert position, not the write one
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', $stats_sql), '0|3300', 'standby: nothing pending after the merge');
is($standby->safe_psql('postgres', $pairs_sql), $pairs, 'standby: the same pairs after the merge');
check_clean($standby, 't_sig_idx', 'standby: minhash_lsh_check is clean after the merge');
$standby->stop;

# --- a merge interrupted half-way ----------------------------------------------
# 150,000 rows (under the 100000 kB limit at about 520 bytes a row): their
# merge takes seconds (about 20 us a row), so a 300 ms timeout strikes inside
# it on any machine (20,000 rows merged within 300 ms once)
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1000001, 1150000) g;});
my $pending = $primary->safe_psql('postgres', 'SELECT pending_rows FROM minhash_lsh_stats(\'t_sig_idx\')');
is($pending, '150000', '150000 rows pending');
($ret, $out, $err) = $primary->psql('postgres',
	"SET statement_timeout = '300ms'; SELECT minhash_lsh_clean_pending_list('t_sig_idx')");
like($err, qr/statement timeout/, 'the merge was cancelled half-way');
check_clean($primary, 't_sig_idx', 'minhash_lsh_check is clean after a cancelled merge');
# (the timeout may also strike after the unlink: then nothing is left to merge)
$primary->safe_psql('postgres', "SELECT minhash_lsh_clean_pending_list('t_sig_idx')");
check_clean($primary, 't_sig_idx', 'no entry doubled by the merge after the cancelled one');
is($primary->safe_psql('postgres',
	'SELECT pending_rows, entries = live_rows * bands FROM minhash_lsh_stats(\'t_sig_idx\')'),
	'0|t', 'every row has its band entries once');

# --- kill -9 during inserts that merge, and with rows pending -------------------
$primary->safe_psql('postgres', 'ALTER INDEX t_sig_idx SET (pending_list_limit = 64)');
my $script = $primary->basedir . '/writer.sql';
open my $fh, '>', $script or die "cannot write $script: $!";
print $fh "INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(100000 + $_ * 50, 100049 + $_ * 50) g;\n"
  for 0 .. 400;
close $fh;
my ($wout, $werr) = ('', '');
my $h = IPC::Run::start([ 'psql', '-X', '-d', $primary->connstr('postgres'), '-f', $script ],
	'>', \$wout, '2>', \$werr, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
$primary->poll_query_until('postgres', 'SELECT count(*) > 3000 FROM t WHERE id >= 100000')
  or die 'the writer did not get going';
my $log_offset = -s $primary->logfile;
kill9_cluster($primary);
$h->finish;
$primary->start;
ok($primary->log_contains(qr/redo done at/, $log_offset), 'crash recovery replayed WAL');
my $acked = () = $wout =~ /^INSERT 0 50$/mg;
my $found = $primary->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id >= 100000');
cmp_ok($found, '>=', $acked * 50, "no acknowledged insert lost ($acked statements, $found rows)");
check_clean($primary, 't_sig_idx', 'after kill -9 during merging inserts: minhash_lsh_check is clean');
is(self_find_missing($primary, 't', 't_sig_idx', 'index'), '0',
	'after kill -9: every row found by its signature (index scan)');
is(self_find_missing($primary, 't', 't_sig_idx', 'bitmap'), '0',
	'after kill -9: every row found by its signature (bitmap scan)');

# rows pending at the crash stay visible and merge afterwards
$primary->safe_psql('postgres', q{
	ALTER INDEX t_sig_idx SET (pending_list_limit = 100000);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(200001, 200500) g;});
$log_offset = -s $primary->logfile;
kill9_cluster($primary);
$primary->start;
ok($primary->log_contains(qr/redo done at/, $log_offset), 'crash recovery replayed WAL (rows pending)');
is($primary->safe_psql('postgres', 'SELECT pending_rows >= 500 FROM minhash_lsh_stats(\'t_sig_idx\')'),
	't', 'the pending rows survive the crash');
is(self_find_missing($primary, 't', 't_sig_idx', 'index', 'id > 200000'), '0',
	'after kill -9: every pending row found by its signature');
check_clean($primary, 't_sig_idx', 'after kill -9 with rows pending: minhash_lsh_check is clean');
$primary->safe_psql('postgres', 'VACUUM t');
is($primary->safe_psql('postgres',
	'SELECT pending_rows, entries = live_rows * bands FROM minhash_lsh_stats(\'t_sig_idx\')'),
	'0|t', 'VACUUM merges the rows pending at the crash');
check_clean($primary, 't_sig_idx', 'after VACUUM: minhash_lsh_check is clean');

$primary->stop;
done_testing();
