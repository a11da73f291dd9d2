# An lsh index with rows pending under the released 1.1 keeps working after the
# upgrade.
#
# 1.1 wrote *plain* pending pages (row ids only); the current build writes
# *keyed* ones (LSH_PENDING_KEYED: each row id with its band keys, which scans
# filter by) and must still read the plain ones: a scan takes every row of a
# plain page as a candidate, merges and minhash_lsh_check read both kinds, and
# a plain tail is never appended to (new rows start a keyed page after it).
# Only the 1.1 binary writes plain pages, so it is built from git history
# (MinhashTAP::build_release) into a private copy of the installation under
# test, fills an index with fastupdate (merges, then rows left pending), and
# the current build (what `make install` put into $PG_CONFIG's installation)
# is swapped in. Then, before and after ALTER EXTENSION minhash UPDATE, every
# row must be found by its own signature (index and bitmap scans, ORDER BY
# <%> LIMIT 1), minhash_lsh_check must be clean and the all-pairs walk must
# give the same pairs as under 1.1; the same after new (keyed) rows, after a
# merge of the mixed list and after VACUUM.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

use constant RELEASE_1_1 => '422d9a4a61133fe0f29e4ec8ef1f3e0454deaebb';

# lsh_page.h: the metapage's pending_tail, pending_pages and pending_rows (LshMetaPageData
# after the 24-byte page header), and a page's LshPageOpaqueData (the last 24
# bytes of the 8 kB page): next, count, flags.
use constant {
	META_PENDING_HEAD  => 24 + 368,
	META_PENDING_TAIL  => 24 + 372,
	META_PENDING_PAGES => 24 + 384,
	META_PENDING_ROWS  => 24 + 392,
	OPAQUE_NEXT        => 8192 - 24 + 8,
	OPAQUE_COUNT       => 8192 - 24 + 12,
	OPAQUE_FLAGS       => 8192 - 24 + 16,
	LSH_PAGE_TYPE_MASK => 0x008F,
	LSH_PAGE_PENDING   => 0x0080,
	LSH_PENDING_KEYED  => 0x0200,
};

my $pg_config = $ENV{PG_CONFIG} or die 'PG_CONFIG is not set (run through scripts/tap.sh)';
my $scratch = "$PostgreSQL::Test::Utils::tmp_check/pending_upgrade";
make_path($scratch);

# --- 1. the 1.1 library from git history, in a private installation ----------
my $src11 = build_release('1.1', RELEASE_1_1, "$scratch/minhash-1.1", $pg_config);
ok(-f "$src11/minhash.so" && -f "$src11/minhash--1.0--1.1.sql", 'the 1.1 release builds');
my $inst = private_installation($pg_config, "$scratch/install");
install_minhash($inst, $src11, $src11);

my $node = PostgreSQL::Test::Cluster->new('pending_upgrade',
	install_path => $inst->{install_path});
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minhash; CREATE EXTENSION pageinspect');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'minhash'"),
	'1.1', 'the cluster runs minhash 1.1');

# pending_list(index): the pending list as the scans walk it, from the
# metapage's pending_head along opaque.next up to pending_tail: each page's
# position, block, flags, band keys per row (opaque.count), pd_lower and the
# bytes of its rows.
my ($head, $tail, $next, $count, $flags) =
  (META_PENDING_HEAD, META_PENDING_TAIL, OPAQUE_NEXT, OPAQUE_COUNT, OPAQUE_FLAGS);
$node->safe_psql('postgres', qq{
CREATE FUNCTION page_u16(p bytea, o int) RETURNS int
LANGUAGE sql IMMUTABLE AS \$\$ SELECT get_byte(p, o) + 256 * get_byte(p, o + 1) \$\$;
CREATE FUNCTION page_u32(p bytea, o int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS \$\$
  SELECT get_byte(p, o) + 256::bigint * get_byte(p, o + 1)
         + 65536::bigint * get_byte(p, o + 2) + 16777216::bigint * get_byte(p, o + 3) \$\$;
CREATE FUNCTION pending_list(idx text)
RETURNS TABLE (pos int, blkno bigint, flags int, nkeys int, lower int, body bytea)
LANGUAGE sql AS \$\$
  WITH RECURSIVE m AS (SELECT page_u32(p, $head) AS head, page_u32(p, $tail) AS tail
                       FROM get_raw_page(idx, 0) p),
  l(pos, blkno, p) AS (
    SELECT 1, head, get_raw_page(idx, head) FROM m WHERE head <> 4294967295
    UNION ALL
    SELECT l.pos + 1, page_u32(l.p, $next), get_raw_page(idx, page_u32(l.p, $next))
    FROM l, m WHERE l.blkno <> m.tail AND l.pos < 10000)
  SELECT pos, blkno, page_u16(p, $flags), page_u16(p, $count), page_u16(p, 12),
         substr(p, 25, page_u16(p, 12) - 24)
  FROM l
\$\$;
});

# --- 2. under 1.1: merges, then rows left pending on plain pages -------------
# The family model (MinhashTAP): rows 0..399 at the build; 400..1399 with a
# 64 kB limit (126 signatures of k = 128: merges while inserting); then a
# limit no insert reaches and 1400..3799 stay pending, more than one plain
# page holds (2036 row ids).
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 399) g;
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 64);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(400, 1399) g;
	ALTER INDEX t_sig_idx SET (pending_list_limit = 1000000);
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1400, 3799) g;
});

my $stats_sql = q{SELECT pending_pages, pending_rows, live_rows, bands, entries
	FROM minhash_lsh_stats('t_sig_idx')};
sub stats
{
	my %s;
	@s{qw(pages rows live bands entries)} = split /\|/, $node->safe_psql('postgres', $stats_sql);
	return \%s;
}
my $s11 = stats();
is($s11->{live}, 3800, '1.1: every row is in the index');
cmp_ok($s11->{rows}, '>=', 2400, "1.1: rows are pending ($s11->{rows})");
cmp_ok($s11->{pages}, '>=', 2, "1.1: on more than one pending page ($s11->{pages})");
cmp_ok($s11->{live} - $s11->{rows}, '>', 400, '1.1: merges put rows inserted after the build into the tree');
is($s11->{entries}, ($s11->{live} - $s11->{rows}) * $s11->{bands},
	'1.1: the tree holds the band entries of the merged rows only');
is($node->safe_psql('postgres', qq{SELECT page_u32(p, ${\ META_PENDING_PAGES}) || '|' || page_u32(p, ${\ META_PENDING_ROWS})
	FROM get_raw_page('t_sig_idx', 0) p}), "$s11->{pages}|$s11->{rows}",
	'the metapage offsets this test reads agree with minhash_lsh_stats');

# The plain pages as 1.1 left them: block, pd_lower and a digest of the row ids.
my $plain_sql = q{SELECT string_agg(blkno || ':' || lower || ':' || md5(body), ' ' ORDER BY pos)
	FROM pending_list('t_sig_idx') WHERE pos <= %d};
my $plain = $node->safe_psql('postgres', sprintf($plain_sql, $s11->{pages}));
is($node->safe_psql('postgres', q{
	SELECT count(*) || '|' || count(*) FILTER (WHERE flags & } . LSH_PAGE_TYPE_MASK . ' = ' . LSH_PAGE_PENDING
	  . ' AND flags & ' . LSH_PENDING_KEYED . q{ = 0) || '|' || sum((lower - 24) / 4)
	FROM pending_list('t_sig_idx')}),
	"$s11->{pages}|$s11->{pages}|$s11->{rows}",
	'1.1 wrote plain pending pages (row ids only, no LSH_PENDING_KEYED), all on the list');
# (the tail has room left, so a new row could go there: it must not)
cmp_ok($node->safe_psql('postgres', "SELECT lower FROM pending_list('t_sig_idx') WHERE pos = $s11->{pages}"),
	'<=', 8192 - 24 - 4, '1.1 left room on the plain tail');

# The pairs of the all-pairs walk among rows below $upto: a digest, and how
# many differ from the family model (pairs of one family of 8, key_a < key_b)
# in each direction.
sub pairs_digest
{
	my ($upto) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) || ':' || md5(string_agg(key_a || '-' || key_b, ',' ORDER BY key_a, key_b))
		FROM minhash_similar_pairs('t_sig_idx', 'id') WHERE key_b < $upto});
}
sub pairs_off_model
{
	my ($upto) = @_;
	return $node->safe_psql('postgres', qq{
		WITH p AS (SELECT key_a, key_b FROM minhash_similar_pairs('t_sig_idx', 'id')),
		f AS (SELECT a::bigint AS key_a, (a / 8 * 8 + j)::bigint AS key_b
		      FROM generate_series(0, $upto - 1) a, generate_series(0, 7) j WHERE a / 8 * 8 + j > a)
		SELECT (SELECT count(*) FROM (SELECT * FROM p EXCEPT SELECT * FROM f) x) || '|'
		    || (SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM p) x)});
}

# Every row found by its own signature through the index on both scan paths
# and the ordered one, the check clean, the pairs those of the family model.
sub assert_answers
{
	my ($when, $rows) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	for my $mode (qw(index bitmap))
	{
		is(self_find_missing($node, 't', 't_sig_idx', $mode), '0',
			"$when: every row found by its signature ($mode scan)");
	}
	is(nearest_self_missing($node, 't', 't_sig_idx'), '0',
		"$when: every row nearest to itself (ORDER BY <%> LIMIT 1)");
	check_clean($node, 't_sig_idx', "$when: minhash_lsh_check is clean");
	is(pairs_off_model($rows), '0|0', "$when: the pairs are exactly the families' pairs");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows, "$when: $rows rows");
	return;
}
assert_answers('1.1', 3800);
my $pairs11 = pairs_digest(3800);

# --- 3. the current build swapped in, before and after ALTER EXTENSION --------
swap_in_current_build($node, $inst);

sub assert_plain_kept
{
	my ($when) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($node->safe_psql('postgres', sprintf($plain_sql, $s11->{pages})), $plain,
		"$when: the plain pages are as 1.1 left them (blocks, pd_lower, row ids)");
	return;
}
for my $when ('current library, 1.1 SQL objects', 'after ALTER EXTENSION UPDATE')
{
	if ($when =~ /ALTER/)
	{
		$node->safe_psql('postgres', 'ALTER EXTENSION minhash UPDATE');
		is($node->safe_psql('postgres', q{
			SELECT extversion = default_version FROM pg_extension
			JOIN pg_available_extensions ON name = extname WHERE extname = 'minhash'}),
			't', 'ALTER EXTENSION minhash UPDATE reaches the default version');
	}
	assert_answers($when, 3800);
	is(pairs_digest(3800), $pairs11, "$when: the same pairs as under 1.1");
	is(stats()->{rows}, $s11->{rows}, "$when: the rows are still pending");
	assert_plain_kept($when);
}

# --- 4. new rows go onto keyed pages after the plain tail ----------------------
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(3800, 4799) g');
my $s = stats();
is($s->{rows}, $s11->{rows} + 1000, 'the new rows are pending');
cmp_ok($s->{pages}, '>', $s11->{pages}, "on new pending pages ($s11->{pages} -> $s->{pages})");
assert_plain_kept('after inserts');
is($node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE flags & ${\ LSH_PENDING_KEYED} <> 0 AND nkeys = $s->{bands})
	       || '|' || count(*) || '|' || sum(CASE WHEN flags & ${\ LSH_PENDING_KEYED} <> 0
	                                             THEN (lower - 24) / (4 * (1 + nkeys)) END)
	FROM pending_list('t_sig_idx') WHERE pos > $s11->{pages}}),
	join('|', $s->{pages} - $s11->{pages}, $s->{pages} - $s11->{pages}, 1000),
	'the pages after the plain tail are keyed (row id and the band keys) and hold the new rows');
assert_answers('plain and keyed pages', 4800);
is(pairs_digest(3800), $pairs11, 'plain and keyed pages: the old rows have the same pairs as under 1.1');

# --- 5. the merge of the mixed list, VACUUM ---------------------------------
is($node->safe_psql('postgres', "SELECT minhash_lsh_clean_pending_list('t_sig_idx')"),
	$s->{rows}, 'minhash_lsh_clean_pending_list merges the plain and the keyed pages');
$s = stats();
is("$s->{pages}|$s->{rows}|$s->{entries}", '0|0|' . 4800 * $s->{bands},
	'after the merge: nothing pending, every row has its band entries in the tree');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pending_list(\'t_sig_idx\')'), '0',
	'after the merge: the pending list is empty');
assert_answers('after the merge', 4800);
is(pairs_digest(3800), $pairs11, 'after the merge: the old rows have the same pairs as under 1.1');
$node->safe_psql('postgres', 'VACUUM t');
assert_answers('after VACUUM', 4800);
is(stats()->{live}, 4800, 'after VACUUM: every row is live in the index');

$node->stop;
done_testing();
