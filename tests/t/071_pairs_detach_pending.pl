# The pairs functions on a partitioned lsh index whose table has a partition
# pending detach: an ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY
# cancelled while it waits for an older snapshot leaves the partition out of
# the table (a SELECT on the parent no longer reads it) but its index still a
# child of the parent index. The pairs follow the table, as the SELECT does;
# which two sessions are needed to show, so not in pg_regress.
#
# Rows are the family model of MinhashTAP.pm: families of 8 rows (id / 8),
# every two rows of one family a pair, none across families.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('detach', {}, 'autovacuum = off');
create_schema($node);
$node->safe_psql('postgres', q{
	CREATE TABLE p (id bigint NOT NULL, sig minhash) PARTITION BY RANGE (id);
	CREATE TABLE p0 PARTITION OF p FOR VALUES FROM (0) TO (80);
	CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (80) TO (160);
	INSERT INTO p SELECT g, fam_sig(g) FROM generate_series(0, 159) g;  -- 10 families per partition
	CREATE INDEX p_idx ON p USING lsh (sig);
	CREATE TABLE batch AS SELECT id, sig FROM p WHERE id IN (0, 80);
});

my $counts = q{
SELECT (SELECT count(*) FROM p)
  || '|' || (SELECT count(*) FROM minhash_similar_pairs('p_idx', 'id'))
  || '|' || (SELECT count(*) FROM minhash_clusters('p_idx', 'id'))
  || '|' || (SELECT count(*) FROM minhash_match('p_idx', 'id', 'batch', 'id', 'sig'))};
is($node->safe_psql('postgres', $counts), '160|560|160|16',
	'both partitions: 20 families of 28 pairs, 160 clustered rows, 8 matches per batch row');

# An older snapshot makes DETACH CONCURRENTLY wait in its second transaction;
# the statement timeout cancels it there, leaving the detach pending.
my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$reader->query_safe('SELECT count(*) FROM p');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = 1000;\nALTER TABLE p DETACH PARTITION p1 CONCURRENTLY;");
$reader->query_safe('COMMIT');
$reader->quit;
like($stderr, qr/canceling statement due to statement timeout/, 'the detach was cancelled while waiting');
is($node->safe_psql('postgres',
		q{SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'p1'::regclass}),
	't', 'p1 is pending detach');

is($node->safe_psql('postgres', $counts), '80|280|80|8',
	'pending detach: the pairs, clusters and matches of p0 alone, as SELECT sees the table');

$node->safe_psql('postgres', 'ALTER TABLE p DETACH PARTITION p1 FINALIZE');
is($node->safe_psql('postgres', $counts), '80|280|80|8', 'after FINALIZE: the same');

$node->stop;
done_testing();
