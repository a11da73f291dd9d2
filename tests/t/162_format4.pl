# An lsh index of on-disk format 4 (sorted leaves, 32-bit slots: what builds
# wrote before compact signatures) keeps working under the current build,
# which writes format 5: % scans (index and bitmap), the all-pairs walk and
# minhash_match (each the pairs of the per-row join through the index),
# minhash_lsh_check, inserts (now into the pending list by default, which
# format 4 has), VACUUM; and REINDEX writes format 5.
#
# Format 4 was never in a release (1.1 writes format 3: 150 and 161 cover
# it), so its writer is the last commit before format 5, built from git
# history into a private copy of the installation under test
# (MinhashTAP::build_release), as 161 builds 1.1. Both builds are extension
# version 1.1; the older one's catalog has no minhash_match, which the test
# declares as the current script does.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

use constant FORMAT_4 => 'd44914950c92153d7e98d703f5fb43a8b779f640';

my $pg_config = $ENV{PG_CONFIG} or die 'PG_CONFIG is not set (run through scripts/tap.sh)';
my $scratch = "$PostgreSQL::Test::Utils::tmp_check/format4";
make_path($scratch);

my $src = build_release('format 4', FORMAT_4, "$scratch/minhash-format4", $pg_config);
my $inst = private_installation($pg_config, "$scratch/install");
install_minhash($inst, $src, $src);

my $node = PostgreSQL::Test::Cluster->new('format4', install_path => $inst->{install_path});
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\nlog_statement = none");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minhash; CREATE EXTENSION pageinspect');

# t: rows appended to the sorted leaves after the build (fastupdate was off by
# default then); p: rows left on its pending list
create_schema($node, 't', 'p');
$node->safe_psql('postgres', q{
INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 599) g;
INSERT INTO p SELECT g, fam_sig(g) FROM generate_series(0, 599) g;
CREATE INDEX t_idx ON t USING lsh (sig);
CREATE INDEX p_idx ON p USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 100000);
INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(600, 999) g;
INSERT INTO p SELECT g, fam_sig(g) FROM generate_series(600, 999) g;
});

# the metapage's version: the uint32 after the page header and the magic
sub version
{
	my ($idx) = @_;
	return $node->safe_psql('postgres', qq{SELECT get_byte(p, 28) + 256 * get_byte(p, 29)
		FROM get_raw_page('$idx', 0) p});
}
sub pending_rows
{
	my ($idx) = @_;
	return $node->safe_psql('postgres', "SELECT pending_rows FROM minhash_lsh_stats('$idx')");
}
is(version($_), 4, "the older build wrote $_ in format 4") for qw(t_idx p_idx);
is(pending_rows('t_idx'), 0, 'format 4: t_idx took its rows into the tree');
cmp_ok(pending_rows('p_idx'), '>=', 400, 'format 4: p_idx has rows pending');

swap_in_current_build($node, $inst);
$node->safe_psql('postgres', q{
CREATE FUNCTION minhash_match(index regclass, key_column name,
                              batch regclass, batch_key_column name, batch_sig_column name,
                              threshold double precision DEFAULT NULL)
    RETURNS TABLE (batch_key bigint, key bigint, similarity double precision)
    AS '$libdir/minhash', 'minhash_match' LANGUAGE C STABLE;
});

# Every row found by its own signature, a clean check, and the pairs and the
# matches of the table against itself equal to the per-row join through the
# index (count and a digest of the keys).
sub assert_answers
{
	my ($tab, $idx, $when) = @_;
	is(self_find_missing($node, $tab, $idx, 'index'), '0', "$when: every row of $tab found by its own signature (index scan)");
	is(self_find_missing($node, $tab, $idx, 'bitmap'), '0', "$when: every row of $tab found by its own signature (bitmap scan)");
	check_clean($node, $idx, "$when: minhash_lsh_check('$idx') is clean");
	my $join = 'SET enable_seqscan = off; SET enable_bitmapscan = off; '
	  . "SELECT count(*) || ':' || coalesce(sum(a.id * 7 + b.id), 0) FROM $tab a JOIN $tab b ON b.sig % a.sig";
	my $pairs_join = $node->safe_psql('postgres', "$join AND a.id < b.id");
	my $match_join = $node->safe_psql('postgres', $join);
	like($pairs_join, qr/^[1-9]\d*:/, "$when: $tab has similar pairs");
	is($node->safe_psql('postgres',
		"SELECT count(*) || ':' || coalesce(sum(key_a * 7 + key_b), 0) FROM minhash_similar_pairs('$idx', 'id')"),
		$pairs_join, "$when: minhash_similar_pairs('$idx') gives the pairs of the per-row join");
	is($node->safe_psql('postgres',
		"SELECT count(*) || ':' || coalesce(sum(batch_key * 7 + key), 0) FROM minhash_match('$idx', 'id', '$tab', 'id', 'sig')"),
		$match_join, "$when: minhash_match('$idx') gives the matches of the per-row join");
	return;
}

assert_answers('t', 't_idx', 'format 4 under the current build');
assert_answers('p', 'p_idx', 'format 4 under the current build');

# inserts: the default is fastupdate on now, and format 4 has a pending list
$node->safe_psql('postgres', q{
INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1000, 1199) g;
INSERT INTO p SELECT g, fam_sig(g) FROM generate_series(1000, 1199) g;
});
cmp_ok(pending_rows('t_idx'), '>=', 200, 'a format-4 index without options takes new rows into its pending list');
assert_answers('t', 't_idx', 'after inserts');
assert_answers('p', 'p_idx', 'after inserts');
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 3; DELETE FROM p WHERE id % 7 = 3; VACUUM t; VACUUM p');
is(pending_rows($_), 0, "VACUUM merged the pending list of $_") for qw(t_idx p_idx);
assert_answers('t', 't_idx', 'after VACUUM');
assert_answers('p', 'p_idx', 'after VACUUM');
is(version($_), 4, "$_ is still format 4") for qw(t_idx p_idx);

$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
is(version('t_idx'), 5, 'REINDEX writes format 5');
assert_answers('t', 't_idx', 'after REINDEX');

$node->stop;
done_testing();
