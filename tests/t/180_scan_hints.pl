# The leaf hints of a % scan (lsh_prefetch.cpp, lsh_tree.cpp): a backend
# remembers the buffer each leaf was last read in and pins it there the next
# time, without a lookup in the shared buffer table. With shared buffers far
# smaller than the index, the buffers the hints name hold other pages by the
# time they are used (often other leaves of the same index): the answers must
# not change, within a session (hints in use) and across sessions (none yet).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# 32 buffers for an index of hundreds of leaves.
my $node = minhash_node('scan_hints', {}, 'autovacuum = off', 'shared_buffers = 256kB',
	'max_connections = 10');
create_schema($node, 't', 'other');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
	INSERT INTO other SELECT g, fam_sig(g) FROM generate_series(1, 20000) g;
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5);
	ANALYZE t;
});
my $leaves = $node->safe_psql('postgres',
	"SELECT leaf_pages FROM minhash_lsh_stats('t_sig_idx')");
cmp_ok($leaves, '>', 100, "the index has more leaves ($leaves) than shared buffers");

# The (query, row) pairs of 300 queries through the index, as one md5.
my $batch = q{
	SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_memoize = off;
	SELECT md5(string_agg(q || ':' || id, ',' ORDER BY q, id)) || ' ' || count(*)
	FROM generate_series(1, 3000, 10) q, LATERAL (SELECT id FROM t WHERE sig % fam_sig(q)) r;
};
like($node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_memoize = off; '
		  . 'EXPLAIN (COSTS OFF) SELECT id FROM t WHERE sig % fam_sig(1)'),
	qr/Index Scan using t_sig_idx/, 'the batch goes through the index');

my $fresh = $node->safe_psql('postgres', $batch);
like($fresh, qr/ (\d{3,})$/, "a fresh session finds the rows ($fresh)");

# One session: the batch, other queries and a scan of another table (every
# buffer now holds some other page), then the batch again, twice.
my $again = $node->safe_psql('postgres', qq{
	$batch
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM generate_series(5001, 9000, 7) q, LATERAL (SELECT id FROM t WHERE sig % fam_sig(q)) r;
	SET enable_seqscan = on;
	SELECT count(*) FROM other;
	$batch
	$batch
});
my @lines = grep { /^[0-9a-f]{32} / } split /\n/, $again;
is(scalar(@lines), 3, 'three batches in one session');
is($_, $fresh, 'a batch in a session with stale leaf hints finds the same rows') for @lines;

check_clean($node, 't_sig_idx');
done_testing();
