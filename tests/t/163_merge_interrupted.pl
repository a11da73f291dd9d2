# A merge of the pending list cancelled in the middle of putting entries into
# the tree, twice, with different budgets (maintenance_work_mem), then
# finished: every row ends up with its band entries exactly once.
#
# 1. The merge's tree phase can be cancelled at all: its loop checked for
#    interrupts while holding the metapage's buffer lock, where PostgreSQL
#    holds them off, so a statement_timeout (or pg_cancel_backend, or a
#    shutdown) waited for the whole round.
# 2. A round cancelled in its tree phase leaves a mark (merge_upto, its last
#    page) so that the next round drops the entries already in the tree. A
#    second round with a larger budget read past the mark, put entries of
#    those later rows in the tree and was cancelled too; the mark stayed
#    where the first round had put it, a third round with a small budget
#    reached it and cleared it, and the rounds after it added the second
#    round's entries again (duplicates, which minhash_lsh_check reports).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('merge', {}, 'autovacuum = off');
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
	CREATE INDEX t_idx ON t USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 1000000);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1000001, 1020000) g;
});

# pending rows, live rows, entries, bands
sub counts
{
	return split /\|/, $node->safe_psql('postgres',
		q{SELECT pending_rows, live_rows, entries, bands FROM minhash_lsh_stats('t_idx')});
}

# Runs the merge with this budget in another session, and a watcher that
# cancels it (pg_cancel_backend) once it has written 64kB of WAL: reading the
# list and looking for entries already in the tree write none (but the
# closing of the tail and a mark, a few records), putting entries in the tree
# writes a record a leaf. Returns whether the merge was cancelled (rather
# than finished first).
sub cancel_in_tree_phase
{
	my ($budget) = @_;
	my ($out, $err, $wout, $werr) = ('', '', '', '');
	my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my $watcher = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', qq{
		DO \$\$
		BEGIN
			FOR i IN 1 .. 100000 LOOP
				IF pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn') > 65536 THEN
					PERFORM pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'merger';
					RETURN;
				END IF;
				PERFORM pg_sleep(0.0005);
			END LOOP;
		END \$\$} ],
		'>', \$wout, '2>', \$werr, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres') . ' application_name=merger', '-c',
		  "SET maintenance_work_mem = '$budget'; SELECT minhash_lsh_clean_pending_list('t_idx')" ],
		'>', \$out, '2>', \$err, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$h->finish;
	$watcher->finish;
	return $err =~ /canceling statement due to user request/;
}

my ($pending0, $live, $entries0, $bands) = counts();
is($pending0, 20000, '20000 rows pending');
ok(cancel_in_tree_phase('1MB'), 'a merge in rounds of a 1MB budget was cancelled');
my ($pending1, undef, $entries1) = counts();
cmp_ok($entries1, '>', ($live - $pending1) * $bands, 'entries of pending rows are in the tree');

ok(cancel_in_tree_phase('64MB'),
	'a merge with a larger budget (one round: every pending row) was cancelled');
my ($pending2, undef, $entries2) = counts();
is($pending2, $pending1, 'no row left the list');
cmp_ok($entries2, '>', $entries1, 'the larger round put more entries in the tree');

# the rest, in rounds of the first budget
$node->safe_psql('postgres', q{SET maintenance_work_mem = '1MB'; SELECT minhash_lsh_clean_pending_list('t_idx')});
is(join('|', (counts())[0, 2]), '0|' . ($live * $bands), 'every row has its band entries once');
check_clean($node, 't_idx', 'minhash_lsh_check is clean after the interrupted merges');
is(self_find_missing($node, 't', 't_idx', 'bitmap', 'id % 7 = 0'), '0', 'rows are found by their signature');

$node->stop;
done_testing();
