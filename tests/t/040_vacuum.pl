# VACUUM and space reuse in the lsh index: cycles of "insert N new rows, delete
# most rows, VACUUM" keep the number of live rows bounded, so the index must
# stay bounded too (bulk delete removes the dead entries and later inserts
# reuse the space). After every VACUUM the index is consistent, reports the
# right tuple count, and the surviving rows are found through it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $n      = 5000;    # rows inserted per cycle
my $cycles = 6;

# No autovacuum: the test decides when VACUUM runs.
my $node = minhash_node('vacuum', {}, 'autovacuum = off', 'shared_buffers = 16MB');
create_schema($node, 't');
# Built empty, so every entry arrives through the insert path.
$node->safe_psql('postgres',
	'CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5)');

sub index_size
{
	return $node->safe_psql('postgres', "SELECT pg_relation_size('t_sig_idx')");
}

# Each cycle inserts N rows of new families, then deletes everything but 10% of
# the newest rows: at most 1.1 N rows are live at any time.
my @peak;
for my $c (1 .. $cycles)
{
	my $base = $c * 1_000_000;
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT g, fam_sig(g) FROM generate_series($base + 1, $base + $n) g");
	push @peak, index_size();
	# The new rows reuse heap TIDs VACUUM freed. An index entry left behind
	# for a dead row would now name a new row, and since lsh answers without
	# a recheck it would return that row for the dead row's signature: every
	# row the index returns must really be similar to the query.
	if ($c > 1)
	{
		my $prev = ($c - 1) * 1_000_000;
		is($node->safe_psql('postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*) FROM generate_series(0, 299) k,
			LATERAL (SELECT sig FROM t WHERE sig % fam_sig($prev + 8 * k + 3)) r
			WHERE jaccard(r.sig, fam_sig($prev + 8 * k + 3)) < 0.5}),
			'0', "cycle $c: no false match through reused TIDs of vacuumed rows");
	}
	$node->safe_psql('postgres', "DELETE FROM t WHERE id < $base OR id % 10 <> 0");
	$node->safe_psql('postgres', 'VACUUM t');

	my $live = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
	is($live, $n / 10, "cycle $c: $live rows live after the delete");
	# amvacuumcleanup's num_index_tuples becomes the index's reltuples.
	is($node->safe_psql('postgres',
			"SELECT reltuples::bigint FROM pg_class WHERE relname = 't_sig_idx'"),
		$live, "cycle $c: VACUUM reports the index's live tuple count");
	check_clean($node, 't_sig_idx', "cycle $c: minhash_lsh_check is clean after VACUUM");
	is(self_find_missing($node, 't', 't_sig_idx', 'bitmap'),
		'0', "cycle $c: surviving rows found by their own signature");
	# Family base+8..base+15 keeps one survivor (base+10, as id % 10 = 0): the
	# index must return it and none of the dead members.
	is($node->safe_psql('postgres',
			"SET enable_seqscan = off; SELECT string_agg(id::text, ',') FROM t WHERE sig % fam_sig($base + 11)"),
		$base + 10, "cycle $c: % returns only the surviving family member");
}
note('index size at each peak: ' . join(', ', @peak));

# Peak 1 held N rows, every later peak 1.1 N. Without reuse each cycle would
# add N rows' worth (the last peak would be ~5.5x the first); with reuse the
# later peaks stay within a small factor of the first.
cmp_ok($peak[-1], '<=', 1.5 * $peak[1],
	"index does not keep growing: last peak $peak[-1] <= 1.5 x second peak $peak[1]");
cmp_ok($peak[-1], '<=', 2 * $peak[0],
	"last peak $peak[-1] <= 2 x first peak $peak[0]");

# Empty the table completely, VACUUM, refill: still bounded and consistent.
$node->safe_psql('postgres', 'DELETE FROM t; VACUUM t');
check_clean($node, 't_sig_idx', 'emptied index is clean');
is($node->safe_psql('postgres',
		'SET enable_seqscan = off; SELECT count(*) FROM t WHERE sig % fam_sig(1000003)'),
	'0', 'emptied index returns nothing');
my $refill = 9_000_000;
$node->safe_psql('postgres',
	"INSERT INTO t SELECT g, fam_sig(g) FROM generate_series($refill + 1, $refill + $n) g");
cmp_ok(index_size(), '<=', 1.5 * $peak[1], 'refilling the emptied index reuses its space');
check_clean($node, 't_sig_idx', 'refilled index is clean');
is(self_find_missing($node, 't', 't_sig_idx', 'index'), '0',
	'refilled rows found by their own signature');

$node->stop;
done_testing();
