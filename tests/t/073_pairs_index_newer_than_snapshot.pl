# minhash_similar_pairs, minhash_clusters and minhash_match in a REPEATABLE
# READ transaction whose snapshot is older than the index they are given.
# A CREATE INDEX that meets a HOT chain whose versions differ in the indexed
# column (the update was HOT because no index covered the column then)
# indexes only the chain's newest version, under the chain's root, and marks
# the index pg_index.indcheckxmin: snapshots older than it see versions the
# index does not hold, and the planner does not use it for them. The pairs
# functions are given the index by name, so they must refuse it (40001, as
# amcheck and minhash_lsh_check's heapallindexed do) rather than pair rows by
# signatures that the snapshot does not see. minhash_lsh_check with
# heapallindexed refuses it the same way.
#
# Rows follow the family model of MinhashTAP.pm (id / 8): families 0 and 1,
# then the rows of family 0 are given family 1's signatures.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('newer', {}, 'autovacuum = off');
create_schema($node, 'h');
$node->safe_psql('postgres', q{
	ALTER TABLE h SET (fillfactor = 40);  -- room on each page for HOT updates
	INSERT INTO h SELECT g, fam_sig(g) FROM generate_series(0, 15) g;
	CREATE TABLE batch AS SELECT 0::bigint AS id, fam_sig(0) AS sig;
});

my $reader = $node->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($reader->query_safe('SELECT count(*) FROM h'), '16', 'the reader takes its snapshot');

# HOT updates: no index covers sig yet
$node->safe_psql('postgres', 'UPDATE h SET sig = fam_sig(id + 8) WHERE id < 8');
$node->safe_psql('postgres', 'CREATE INDEX h_idx ON h USING lsh (sig)');
is($node->safe_psql('postgres', q{SELECT indcheckxmin FROM pg_index WHERE indexrelid = 'h_idx'::regclass}),
	't', 'the build met broken HOT chains: indcheckxmin is set');

# the control: the planner leaves the index out for the reader, whose
# snapshot still sees family 0's signatures
is($reader->query_safe(q{SET enable_seqscan = off;
	SELECT count(*) FROM h WHERE sig OPERATOR(public.%) fam_sig(0)}), '8',
	'% in the reader: the 8 rows of family 0 its snapshot sees (the index is not used)');

# each call in a savepoint, so that the transaction keeps its snapshot
for my $call (
	q{minhash_similar_pairs('h_idx', 'id')},
	q{minhash_clusters('h_idx', 'id')},
	q{minhash_match('h_idx', 'id', 'batch', 'id', 'sig')},
	q{minhash_lsh_check('h_idx', heapallindexed => true)})
{
	$reader->query_safe('SAVEPOINT s');
	$reader->{stderr} = '';
	my ($out, $ret) = $reader->query("\\set VERBOSITY verbose\nSELECT count(*) FROM $call");
	like($reader->{stderr}, qr/ERROR:  40001: lsh index "h_idx" is too new for this transaction's snapshot/,
		"$call in the older snapshot: refused with a serialization failure") or diag("returned: $out");
	$reader->{stderr} = '';
	$reader->query_safe('ROLLBACK TO SAVEPOINT s');
}
$reader->query_safe('ROLLBACK');

# a new transaction sees the updated rows: all 16 share family 1's sets
is($reader->query_safe(q{SELECT count(*) FROM minhash_similar_pairs('h_idx', 'id')}), '120',
	'in a new transaction: the pairs of the 16 rows now in one family');
is($reader->query_safe(q{SELECT count(*) FROM minhash_match('h_idx', 'id', 'batch', 'id', 'sig')}), '0',
	'... and family 0 matches nothing');
$reader->quit;

$node->stop;
done_testing();
