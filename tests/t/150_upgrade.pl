# An lsh index built by the released 1.0 keeps working after the upgrade.
#
# The 1.0 shared library is built from git history (commit RELEASE_1_0, the
# v1.0 tag; by hash since a fresh clone may not carry tags) and installed into
# a private copy of the PostgreSQL installation under test, so nothing outside
# this test's scratch directory changes. A cluster running 1.0 gets data and
# lsh indexes (on a minhash column and on minhash(text)); then the current
# build (what `make install` put into $PG_CONFIG's installation) is swapped in,
# the server restarted, and ALTER EXTENSION minhash UPDATE run. The old
# indexes must give the same answers as under 1.0, on both scan paths and the
# ordered path, take inserts, deletes and VACUUM, and minhash_lsh_check must
# find them consistent with their tables -- also between the library swap and
# the ALTER EXTENSION (the state a package upgrade leaves). REINDEX at the end
# must give the same answers again.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

use constant RELEASE_1_0 => '14e919a37f1f3e5f8b5a76ed1fecc0e75df7b37b';

my $pg_config = $ENV{PG_CONFIG} or die 'PG_CONFIG is not set (run through scripts/tap.sh)';
my $scratch = "$PostgreSQL::Test::Utils::tmp_check/upgrade";
make_path($scratch);

# 1.0 was released for PostgreSQL 15 only and does not compile against other
# majors, so there is no 1.0 install to upgrade on them (a 1.0 install that
# pg_upgrade carries to a newer major brings PostgreSQL 15's format-1 indexes,
# which this test covers on 15).
my ($major) = run_or_die('pg_config', $pg_config, '--version') =~ /PostgreSQL (\d+)/;
plan skip_all => "minhash 1.0 was released for PostgreSQL 15 only; this is $major"
  if $major != 15;

# --- 1. the 1.0 library, built from git history -----------------------------
my $src10 = build_release('1.0', RELEASE_1_0, "$scratch/minhash-1.0", $pg_config);
ok(-f "$src10/minhash.so" && -f "$src10/minhash--1.0.sql", 'the 1.0 release builds');

# --- 2. a private copy of the installation, with 1.0 in it ----------------------
my $inst = private_installation($pg_config, "$scratch/install");
install_minhash($inst, $src10, $src10);

# --- 3. a 1.0 cluster with lsh indexes ---------------------------------------
my $node = PostgreSQL::Test::Cluster->new('upgrade',
	install_path => $inst->{install_path});
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minhash; CREATE EXTENSION pageinspect');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'minhash'"),
	'1.0', 'the cluster runs minhash 1.0');

# t: the family model of MinhashTAP (rows of one family of 8 are similar, of
# different families share nothing). d: the same sets as text, one word per
# element, indexed on the expression minhash(body).
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 2399) g;
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5);
	CREATE TABLE d (id bigint NOT NULL, body text NOT NULL);
	INSERT INTO d SELECT g, array_to_string(fam_set(g), ' ') FROM generate_series(0, 799) g;
	CREATE INDEX d_body_idx ON d USING lsh (minhash(body));
});

# The metapage's format version (uint32 after the 24-byte page header and the
# 4-byte magic number).
sub meta_version
{
	my ($index) = @_;
	return $node->safe_psql('postgres',
		"SELECT get_byte(p, 28) + 256 * get_byte(p, 29) + 65536 * get_byte(p, 30) + 16777216 * get_byte(p, 31) "
		  . "FROM get_raw_page('$index', 0) p"
	);
}
my %version_1_0 = map { $_ => meta_version($_) } qw(t_sig_idx d_body_idx);
is($version_1_0{t_sig_idx}, '1', '1.0 writes on-disk format version 1');

# Answers that must not change: for every 7th row the rows found by `%` with
# its signature, through the index; the distances of the 3 nearest by <%>; the
# text index's matches; the all-pairs walk; the index's statistics.
my %force_index = (
	index  => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;',);
sub answers
{
	my %a;
	for my $mode (sort keys %force_index)
	{
		$a{"t %, $mode scan"} = $node->safe_psql('postgres', qq{$force_index{$mode}
			SELECT string_agg(q || ':' || (SELECT string_agg(id::text, ',' ORDER BY id)
			                                FROM t WHERE sig % fam_sig(q)), ' ' ORDER BY q)
			FROM generate_series(0, 2399, 7) q});
		$a{"d %, $mode scan"} = $node->safe_psql('postgres', qq{$force_index{$mode}
			SELECT string_agg(q.id || ':' || (SELECT string_agg(id::text, ',' ORDER BY id)
			                                   FROM d WHERE minhash(body) % minhash(q.body)), ' ' ORDER BY q.id)
			FROM d q WHERE q.id % 5 = 0});
	}
	$a{'t <%> LIMIT 3'} = $node->safe_psql('postgres', qq{$force_index{index}
		SELECT string_agg(q || ':' || (SELECT string_agg(round(dist::numeric, 4)::text, ',')
		       FROM (SELECT sig <%> fam_sig(q) AS dist FROM t ORDER BY sig <%> fam_sig(q) LIMIT 3) n), ' ' ORDER BY q)
		FROM generate_series(0, 2399, 101) q});
	$a{'pairs'} = $node->safe_psql('postgres',
		"SELECT count(*), sum(key_a * 3 + key_b) FROM minhash_similar_pairs('t_sig_idx', 'id', threshold => 0.5)");
	$a{'stats'} = $node->safe_psql('postgres',
		'SELECT num_perm, seed, bands, rows, live_rows, dead_rows FROM minhash_lsh_stats(\'t_sig_idx\')');
	return \%a;
}
my $before = answers();
like($before->{'t %, index scan'}, qr/^0:0,1,2,3,4,5,6,7 7:0,1,2,3,4,5,6,7 14:8,/,
	'1.0 finds the families (index scan)');
is($before->{'t %, bitmap scan'}, $before->{'t %, index scan'}, '1.0: bitmap scan agrees');
like($before->{'d %, index scan'}, qr/^0:0,1,2,3,4,5,6,7 5:0,1,2,3,4,5,6,7 10:8,/,
	'1.0 finds the families of texts through minhash(body)');
check_clean($node, $_, "1.0: minhash_lsh_check('$_') is clean") for qw(t_sig_idx d_body_idx);

# --- 4. the current build swapped in, before and after ALTER EXTENSION --------
swap_in_current_build($node, $inst);

sub compare_answers
{
	my ($when) = @_;
	my $now = answers();
	is($now->{$_}, $before->{$_}, "$when: $_ as under 1.0") for sort keys %$before;
	check_clean($node, $_, "$when: minhash_lsh_check('$_') is clean") for qw(t_sig_idx d_body_idx);
	return;
}
compare_answers('current library, 1.0 SQL objects');

$node->safe_psql('postgres', 'ALTER EXTENSION minhash UPDATE');
is($node->safe_psql('postgres',
	"SELECT extversion = default_version FROM pg_extension JOIN pg_available_extensions ON name = extname WHERE extname = 'minhash'"),
	't', 'ALTER EXTENSION minhash UPDATE reaches the default version');
compare_answers('after ALTER EXTENSION UPDATE');
my %version_now = map { $_ => meta_version($_) } qw(t_sig_idx d_body_idx);
diag("metapage version of the 1.0 indexes after the update: t_sig_idx $version_now{t_sig_idx}, d_body_idx $version_now{d_body_idx}");

# --- 5. writes to the old indexes ----------------------------------------------
# New rows (families 300..349) are found; deleted rows (families 0..49,
# members 0..3) disappear, VACUUM removes them, and the rest still finds its
# family.
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(2400, 2799) g;
	INSERT INTO d SELECT g, array_to_string(fam_set(g), ' ') FROM generate_series(800, 999) g;
	DELETE FROM t WHERE id < 400 AND id % 8 < 4;
	DELETE FROM d WHERE id < 400 AND id % 8 < 4;
});
for my $mode (qw(index bitmap))
{
	is(self_find_missing($node, 't', 't_sig_idx', $mode), '0',
		"after inserts and deletes: every row of t found by its signature ($mode scan)");
}
$node->safe_psql('postgres', 'VACUUM t; VACUUM d');
for my $mode (qw(index bitmap))
{
	is($node->safe_psql('postgres', qq{$force_index{$mode}
		SELECT count(*) FROM generate_series(0::bigint, 2799) q
		WHERE (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM t WHERE sig % fam_sig(q))
		   <> ARRAY(SELECT g FROM generate_series(q / 8 * 8, q / 8 * 8 + 7) g
		            WHERE g >= 400 OR g % 8 >= 4)}),
		'0', "after VACUUM: `%` finds exactly the live rows of each family in t ($mode scan)");
	is($node->safe_psql('postgres', qq{$force_index{$mode}
		SELECT count(*) FROM generate_series(0::bigint, 999) q
		WHERE (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM d
		       WHERE minhash(body) % minhash(array_to_string(fam_set(q), ' ')))
		   <> ARRAY(SELECT g FROM generate_series(q / 8 * 8, q / 8 * 8 + 7) g
		            WHERE g >= 400 OR g % 8 >= 4)}),
		'0', "after VACUUM: `%` finds exactly the live rows of each family in d ($mode scan)");
}
is(nearest_self_missing($node, 't', 't_sig_idx', 'id % 13 = 0'), '0',
	'after VACUUM: ORDER BY <%> LIMIT 1 returns the row itself');
is($node->safe_psql('postgres', "SELECT live_rows, dead_rows FROM minhash_lsh_stats('t_sig_idx')"),
	'2600|0', 'after VACUUM: minhash_lsh_stats counts the live rows and no dead ones');
check_clean($node, $_, "after VACUUM: minhash_lsh_check('$_') is clean") for qw(t_sig_idx d_body_idx);

# --- 6. REINDEX writes the current format; the answers stay ---------------------
my $after_writes = answers();
$node->safe_psql('postgres', 'REINDEX INDEX t_sig_idx; REINDEX INDEX d_body_idx');
my $reindexed = answers();
for my $k (grep { $_ ne 'stats' } sort keys %$after_writes)
{
	is($reindexed->{$k}, $after_writes->{$k}, "REINDEX: $k unchanged");
}
check_clean($node, $_, "REINDEX: minhash_lsh_check('$_') is clean") for qw(t_sig_idx d_body_idx);
diag('metapage version after REINDEX: ' . meta_version('t_sig_idx'));

$node->stop;
done_testing();
