# VACUUM puts the entries appended to sorted leaves (format 4) back in key
# order (lsh_vacuum.cpp): a probe compares appended entries one by one, so an
# insert-heavy table's leaves get slower to search until they are rewritten.
# Read from the index file: how many entries each leaf holds and how many of
# them lead in key order (the special space's count). After many inserts a
# plain VACUUM (no dead rows: the cleanup's pass, when a sample of leaves finds
# a fifth of their entries appended) and a VACUUM with
# deletions (pass 2) must leave no leaf with a long appended tail, and every
# query must find the same rows as before and as a sequential scan.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $BLCKSZ = 8192;
my $SPECIAL = $BLCKSZ - 24;    # the lsh special space (LshPageOpaqueData)

my $node = minhash_node('sorted_tails', {}, 'autovacuum = off');
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
	CREATE INDEX t_idx ON t USING lsh (sig) WITH (threshold = 0.5, fastupdate = off);
	CREATE TABLE qs AS SELECT q, fam_sig(q) AS sig FROM generate_series(1, 40000, 100) q;
});

# Per leaf of the index file: [ entries, entries in key order ].
sub leaves
{
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $path = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_idx')");
	open(my $fh, '<:raw', $path) or die "open $path: $!";
	local $/;
	my $img = <$fh>;
	close $fh;
	my @leaves;
	for (my $o = 0; $o + $BLCKSZ <= length($img); $o += $BLCKSZ)
	{
		my $flags = unpack('S', substr($img, $o + $SPECIAL + 16, 2));
		next unless ($flags & 0xF) == 8;    # LSH_PAGE_LEAF
		my $lower = unpack('S', substr($img, $o + 12, 2));
		my $n = ($lower - 24) / (($flags & 0x40) ? 7 : 8);    # LSH_NARROW
		push @leaves, [ $n, unpack('S', substr($img, $o + $SPECIAL + 12, 2)) ];
	}
	return @leaves;
}

# Appended entries in all leaves, and the leaves whose appended entries are
# an eighth of them or more (what VACUUM rewrites).
sub tails
{
	my ($appended, $entries, $long) = (0, 0, 0);
	for my $l (leaves())
	{
		my ($n, $sorted) = @$l;
		$entries += $n;
		$appended += $n - $sorted;
		$long++ if $n - $sorted > 0 && $n - $sorted >= ($n / 8 > 8 ? $n / 8 : 8);
	}
	return ($appended, $entries, $long);
}

# The (query, row) pairs of 400 queries, through the index and by a sequential scan.
sub answers
{
	my ($gucs) = @_;
	return $node->safe_psql('postgres', qq{
		$gucs SET enable_memoize = off;
		SELECT md5(string_agg(q || ':' || id, ',' ORDER BY q, id)) || ' ' || count(*)
		FROM qs, LATERAL (SELECT id FROM t WHERE t.sig % qs.sig) r});
}
my $by_index = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $by_seqscan = 'SET enable_indexscan = off; SET enable_bitmapscan = off;';

my ($appended, $entries, $long) = tails();
is($appended, 0, "after the build every leaf is in key order ($entries entries)");

# 60% more rows: appends to every leaf, splits of those that fill.
$node->safe_psql('postgres',
	'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(20001, 32000) g');
($appended, $entries, $long) = tails();
# more than the fifth at which VACUUM's sample starts its pass (LSH_TAIL_SHARE)
cmp_ok($appended, '>=', $entries / 4,
	"inserts left appended entries: $appended of $entries, $long leaves with long tails");
my $before = answers($by_index);
is($before, answers($by_seqscan), 'the index finds what a sequential scan finds');

# A VACUUM with nothing to remove: the cleanup samples the leaves and sorts them.
my ($ret, $out, $err) = $node->psql('postgres', 'SET client_min_messages = debug1; VACUUM t');
is($ret, 0, 'VACUUM of an insert-only table succeeds');
like($err, qr/lsh index "t_idx": \d+% of a sample of leaves were appended entries; \d+ leaves rewritten in key order/,
	'VACUUM reports the leaves it rewrote');
my ($appended2, $entries2, $long2) = tails();
is($long2, 0, "no leaf has a long appended tail after VACUUM ($appended2 appended entries left)");
cmp_ok($appended2, '<', $appended / 4, 'most appended entries are in key order now');
is($entries2, $entries, 'VACUUM kept every entry');
is(answers($by_index), $before, 'the index finds the same rows after VACUUM');

# A second VACUUM finds little to sort and rewrites nothing.
($ret, $out, $err) = $node->psql('postgres', 'SET client_min_messages = debug1; VACUUM t');
unlike($err, qr/leaves rewritten in key order/, 'a VACUUM right after it rewrites nothing');

# Deletions and more inserts: pass 2 visits every leaf and sorts long tails too.
$node->safe_psql('postgres', q{
	DELETE FROM t WHERE id % 10 = 3;
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(32001, 44000) g;
});
my ($appended3, $entries3, $long3) = tails();
cmp_ok($long3, '>', 0, "new inserts left $long3 leaves with long tails");
my $mixed = answers($by_index);
is($mixed, answers($by_seqscan), 'the index finds what a sequential scan finds');
$node->safe_psql('postgres', 'VACUUM t');
my ($appended4, $entries4, $long4) = tails();
is($long4, 0, "no leaf has a long appended tail after VACUUM with deletions ($appended4 left)");
is(answers($by_index), $mixed, 'the same rows after it');
is(answers($by_index), answers($by_seqscan), 'and still those of a sequential scan');

check_clean($node, 't_idx');
done_testing();
