# minhash_lsh_check on a hot standby while WAL replay changes the index.
# A standby's check cannot keep replay out (replay takes no relation lock),
# so a pass may read pages from before and after a replayed insert, split,
# merge or VACUUM: entries naming slots of data pages added after it read the
# block count, a free list caught half-way, pending rows beyond the slots it
# knows. Those are not damage, and the check must not list them: a pass
# whose problems coincide with replay changing the index (a page LSN past
# where replay stood when it began) is run again, and a check that never
# gets a quiet pass fails with 55000 rather than report problems. With
# replay idle, the standby's check still reports damage.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# The last test flips a byte of the standby's copy: no data checksums, which
# initdb turns on by default from PostgreSQL 18 on (the read would fail before
# the check sees the page).
my ($major) = `$ENV{PG_CONFIG} --version` =~ /PostgreSQL (\d+)/;
my $primary = minhash_node('primary',
	{ allows_streaming => 1, (($major // 0) >= 18 ? (extra => ['--no-data-checksums']) : ()) },
	'shared_buffers = 16MB', 'autovacuum = off', 'hot_standby_feedback = on');
create_schema($primary, 't', 'tf');
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 3000) g;
	INSERT INTO tf SELECT g, fam_sig(g) FROM generate_series(1, 3000) g;
	CREATE INDEX t_idx ON t USING lsh (sig) WITH (fastupdate = off);
	CREATE INDEX tf_idx ON tf USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 64);
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# inserts (into the tree, and through the pending list with merges), deletes
# and VACUUM on the primary, while the standby checks both indexes in a loop
my $churn = $primary->basedir . '/churn.sql';
open my $fh, '>', $churn or die "cannot write $churn: $!";
for my $r (0 .. 40)
{
	my $b = 1_000_000 + $r * 1000;
	for my $x ('t', 'tf')
	{
		print $fh "INSERT INTO $x SELECT g, fam_sig(g) FROM generate_series($b, $b + 199) g;\n";
		print $fh "DELETE FROM $x WHERE id BETWEEN $b - 3000 AND $b - 2900;\n";
		print $fh "VACUUM $x;\n" if $r % 4 == 0;
	}
}
close $fh;
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $primary->connstr('postgres'), '-f', $churn ],
	'>', \$out, '2>', \$err, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
my (%problems, %errors);
my ($clean, $gave_up) = (0, 0);
while ($h->pumpable)
{
	for my $index ('t_idx', 'tf_idx')
	{
		my ($ret, $list, $msg) = $standby->psql('postgres',
			"SELECT problem FROM minhash_lsh_check('$index', heapallindexed => true)");
		if ($ret == 0 && $list eq '')
		{
			$clean++;
		}
		elsif ($ret != 0 && $msg =~ /could not check index "\Q$index\E": WAL replay changed it during each of \d+ checks/)
		{
			$gave_up++;
		}
		elsif ($ret != 0)
		{
			$errors{"$index: $msg"}++;
		}
		else
		{
			$problems{"$index: $_"}++ for split /\n/, $list;
		}
	}
	$h->pump_nb;
}
ok($h->finish, 'the primary ran its inserts, deletes and VACUUMs') or diag($err);
note("checks on the standby during replay: $clean clean, $gave_up gave up");
my @listed = sort keys %problems;
splice(@listed, 20) if @listed > 20;
is(join("\n", @listed), '',
	'no check on the standby listed a problem while replay changed the index');
is(join("\n", sort keys %errors), '', 'no check on the standby failed otherwise');
cmp_ok($clean, '>', 0, "checks on the standby completed during replay ($clean)");

# replay idle: the standby's copy is clean, and it is the primary's
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
for my $index ('t_idx', 'tf_idx')
{
	check_clean($standby, $index, "$index: clean on the standby once replay is idle");
	check_clean($primary, $index, "$index: clean on the primary");
}
my $stats = q{SELECT live_rows, entries, pending_rows FROM minhash_lsh_stats('tf_idx')};
is($standby->safe_psql('postgres', $stats), $primary->safe_psql('postgres', $stats),
	'the standby replayed the same index');

# and with replay idle the standby's check still sees damage: a byte of a
# leaf's first entry flipped in the standby's copy (after a checkpoint, so
# that restarting the standby replays nothing over it)
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $file = $standby->data_dir . '/' . $standby->safe_psql('postgres', "SELECT pg_relation_filepath('t_idx')");
$standby->stop;
my $leaf;
open(my $ifh, '+<', $file) or die "open $file: $!";
binmode $ifh;
for (my $blk = 1; !defined $leaf; $blk++)
{
	seek($ifh, $blk * 8192, 0) or die "seek: $!";
	read($ifh, my $page, 8192) == 8192 or die "no leaf in $file";
	# the special space: low, high, next (4 bytes each), count and level (2 each), flags, page id
	my ($flags, $page_id) = unpack('S S', substr($page, 8192 - 24 + 16, 4));
	next unless $page_id == 0xFF8C && ($flags & 0xF) == 0x8;
	$leaf = $blk;
	seek($ifh, $blk * 8192 + 24, 0) or die "seek: $!";
	print $ifh chr(ord(substr($page, 24, 1)) ^ 0xFF);
}
close $ifh;
$standby->start;
like($standby->safe_psql('postgres', "SELECT string_agg(problem, E'\\n') FROM minhash_lsh_check('t_idx')"),
	qr/entry|lacks/, "replay idle: the standby's check reports a flipped byte of leaf $leaf");

$standby->stop;
$primary->stop;
done_testing();
