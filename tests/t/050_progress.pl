# CREATE INDEX ... USING lsh reports its progress in
# pg_stat_progress_create_index: the lsh subphase names (ambuildphasename) and,
# while it scans the table, the heap blocks done out of the total. The index expression sleeps 1 ms a
# row so the scan lasts seconds and another session can watch it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $rows = 4000;
my $node = minhash_node('progress');
$node->safe_psql('postgres', qq{
CREATE TABLE t (id bigint);
INSERT INTO t SELECT g FROM generate_series(1, $rows) g;
-- Declared IMMUTABLE (a lie about pg_sleep) only so it can be indexed; its
-- search_path pinned, since CREATE INDEX runs it with search_path =
-- pg_catalog, pg_temp from PostgreSQL 17 on.
CREATE FUNCTION slow_sig(id bigint) RETURNS minhash LANGUAGE sql IMMUTABLE
  SET search_path FROM CURRENT AS
  \$\$ SELECT minhash(ARRAY[id, id + 1]) FROM pg_sleep(0.001) \$\$;
});

my $builder = $node->background_psql('postgres');
$builder->query_until(qr/started/, q{
\echo started
CREATE INDEX t_slow_idx ON t USING lsh (slow_sig(id));
});

# Poll until the build is over; keep every distinct observation.
my (%phases, @done, $total);
my $deadline = time() + 120;
while (time() < $deadline)
{
	my $row = $node->safe_psql('postgres', q{
		SELECT phase || '|' || blocks_done || '|' || blocks_total
		FROM pg_stat_progress_create_index p JOIN pg_class c ON c.oid = p.relid
		WHERE c.relname = 't'});
	if ($row eq '')
	{
		last if %phases;    # it had started and is now finished
		next;
	}
	my ($phase, $bdone, $btotal) = split /\|/, $row;
	$phases{$phase}++;
	if ($phase eq 'building index: scanning table')
	{
		push @done, $bdone;
		$total = $btotal;
	}
}
$builder->quit;

ok($phases{'building index: scanning table'},
	'the build reports the lsh subphase "scanning table"')
  or diag explain \%phases;
# Before it reads its first block, PostgreSQL's heap scan reports
# blocks_done = blocks_total (its block counter starts "one past the end"):
# that is the heap access method's, not the index's, so skip it.
shift @done while @done > 1 && $done[0] == $total && grep { $_ < $total } @done[1 .. $#done];
my @sorted = sort { $a <=> $b } @done;
is_deeply(\@done, \@sorted, 'blocks_done never goes backwards while scanning') or diag "@done";
my $table_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('t') / 8192");
is($total, $table_blocks, 'blocks_total is the size of the table');
ok(@done && $done[-1] > 0 && $done[-1] <= $total,
	"blocks_done advances with the scan (last seen $done[-1] of $total)");
ok(!grep({ !/^(initializing|building index: .*|waiting for .*)$/ } keys %phases),
	'only known phase names are reported')
  or diag explain \%phases;

is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_index WHERE indexrelid = 't_slow_idx'::regclass AND indisvalid"),
	'1', 'the watched build finished with a valid index');
check_clean($node, 't_slow_idx');

# The subphase names the access method declares, as the view would show them.
is($node->safe_psql('postgres', q{
	SELECT string_agg(pg_indexam_progress_phasename(a.oid, n), ', ' ORDER BY n)
	FROM pg_am a, generate_series(1, 4) n WHERE a.amname = 'lsh'}),
	'initializing, scanning table, sorting band entries, loading band entries',
	'lsh declares its build subphases');

$node->stop;
done_testing();
