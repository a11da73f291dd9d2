# lsh index scans held open in a cursor (DECLARE, FETCH in steps) while
# another session changes the index under them, which SQL alone cannot
# show: between two FETCHes it VACUUMs (freeing the slots of deleted rows,
# which new rows then reuse), merges the pending list into the tree
# (minhash_lsh_clean_pending_list), and inserts enough rows to split leaves.
# The cursor's snapshot decides: every row it sees is returned once, none
# twice, none it cannot see, for
#  - ORDER BY sig <%> q without a LIMIT (the scan widens stage by stage as
#    rows are fetched, so later stages read the index after the changes);
#  - % through amgettuple and through a bitmap scan;
# and no statement of the other session waits for the open cursor.
#
# Rows follow the family model of MinhashTAP.pm (id / 8).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('cursor', {}, 'autovacuum = off');
create_schema($node);

# Each cursor starts from the same table: rows in the tree, rows on the
# pending list, and deleted rows for VACUUM to free. Rows 50000.. carry the
# sets of family 500 (a group of 208 similar rows, so that % returns enough
# rows to fetch in steps).
sub setup
{
	$node->safe_psql('postgres', q{
		DROP TABLE IF EXISTS t;
		CREATE TABLE t (id bigint NOT NULL, sig minhash);
		INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 3999) g;
		INSERT INTO t SELECT g, fam_sig(4000 + g % 8) FROM generate_series(50000, 50099) g;
		CREATE INDEX t_idx ON t USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 100000);
		INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(4000, 4999) g;                   -- pending
		INSERT INTO t SELECT g, fam_sig(4000 + g % 8) FROM generate_series(50100, 50199) g;    -- pending
		DELETE FROM t WHERE id BETWEEN 100 AND 899 OR id BETWEEN 50000 AND 50019 OR id BETWEEN 50100 AND 50119;
	});
	return;
}

my $q = 'sig OPERATOR(public.%) fam_sig(4003)';
my %cursor = (
	'ORDER BY <%>' => q{SET enable_seqscan = off; SET minhash.lsh_max_scan_tuples = 100000;
		DECLARE c CURSOR FOR SELECT id FROM t ORDER BY sig <%> fam_sig(3000)},
	'% index scan' => qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
		DECLARE c CURSOR FOR SELECT id FROM t WHERE $q},
	'% bitmap scan' => qq{SET enable_seqscan = off; SET enable_indexscan = off;
		DECLARE c CURSOR FOR SELECT id FROM t WHERE $q},
);
# the same rows by a sequential scan, in the cursor's snapshot
my %expected = (
	'ORDER BY <%>' => 'SELECT id FROM t ORDER BY id',
	'% index scan' => "SELECT id FROM t WHERE $q ORDER BY id",
);
$expected{'% bitmap scan'} = $expected{'% index scan'};

my $writer = $node->background_psql('postgres');
$writer->query_safe("SET statement_timeout = '20s'");
for my $name (sort keys %cursor)
{
	setup();
	my $reader = $node->background_psql('postgres');
	$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	my $want = $reader->query_safe("SET enable_indexscan = off; SET enable_bitmapscan = off; $expected{$name}");
	$reader->query_safe("RESET ALL; $cursor{$name}");
	my @got = split /\n/, $reader->query_safe('FETCH 5 FROM c');
	for my $change (
		'VACUUM t',
		q{SELECT minhash_lsh_clean_pending_list('t_idx')},
		'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(10000, 13999) g',  # leaf splits
		'DELETE FROM t WHERE id BETWEEN 1000 AND 1999',
		'VACUUM t',
		'INSERT INTO t SELECT g, fam_sig(4000 + g % 8) FROM generate_series(20000, 20999) g',  # reuses freed slots
		q{SELECT minhash_lsh_clean_pending_list('t_idx')})
	{
		$writer->query_safe($change);
		push @got, split /\n/, $reader->query_safe('FETCH 3 FROM c');
	}
	push @got, split /\n/, $reader->query_safe('FETCH ALL FROM c');
	$reader->query_safe('COMMIT');
	$reader->quit;

	my @want = split /\n/, $want;
	my %times;
	$times{$_}++ for @got;
	my @twice = grep { $times{$_} > 1 } sort keys %times;
	is(scalar(@twice), 0, "$name: no row returned twice") or diag("@twice[0 .. min(9, $#twice)]");
	is(join(',', sort { $a <=> $b } keys %times), join(',', @want),
		"$name: the rows of the cursor's snapshot (" . scalar(@want) . '), none missing, none it cannot see');
	check_clean($node, 't_idx', "$name: minhash_lsh_check is clean after the changes");
}
$writer->quit;

sub min { return $_[0] < $_[1] ? $_[0] : $_[1]; }

$node->stop;
done_testing();
