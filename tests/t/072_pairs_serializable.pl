# minhash_match, minhash_similar_pairs and minhash_clusters in SERIALIZABLE
# transactions: a check "is there already a near-duplicate?" followed by an
# insert must conflict with another transaction doing the same with a
# near-duplicate of the same document, as a `%` query does. The functions
# read the index through its own access layer, not through index_beginscan,
# so they must take the relation-level predicate lock on the index that
# PostgreSQL takes for an access method without ampredlocks; an insert then
# meets it in index_insert. Without it both transactions commit, and the
# table holds a pair that each of them checked was absent (write skew).
#
# Two sessions, interleaved step by step: check, check, insert, insert,
# commit, commit. Rows follow the family model of MinhashTAP.pm (id / 8);
# the two new rows are members of family 100, which the table does not have.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('serializable', {}, 'autovacuum = off');
create_schema($node, 't', 'plain');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 79) g;  -- families 0..9
	CREATE INDEX t_sig_idx ON t USING lsh (sig);
	INSERT INTO plain SELECT * FROM t;
	CREATE INDEX plain_sig_idx ON plain USING lsh (sig) WITH (fastupdate = off);
	CREATE TABLE new_a AS SELECT 800::bigint AS id, fam_sig(800) AS sig;
	CREATE TABLE new_b AS SELECT 801::bigint AS id, fam_sig(801) AS sig;
});

# Runs the interleaving with $check (NEW stands for new_a / new_b) and
# returns "<rows of family 100 in the table>|<serialization failures>".
sub write_skew
{
	my ($table, $check) = @_;
	my @s = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 2;
	my @new = ('new_a', 'new_b');
	my $failures = 0;
	my $step = sub {
		my ($i, $sql) = @_;
		$s[$i]->{stderr} = '';
		my ($out, $ret) = $s[$i]->query($sql);
		if ($ret)
		{
			like($s[$i]->{stderr}, qr/could not serialize access/, "session $i: $sql fails with a serialization failure")
			  or diag($s[$i]->{stderr});
			$failures++;
		}
		return $out;
	};
	for my $i (0, 1)
	{
		$step->($i, 'BEGIN ISOLATION LEVEL SERIALIZABLE');
		(my $sql = $check) =~ s/NEW/$new[$i]/g;
		is($step->($i, $sql), '0', "session $i: no near-duplicate of its row yet");
	}
	$step->($_, "INSERT INTO $table SELECT * FROM $new[$_]") for 0, 1;
	$step->($_, 'COMMIT') for 0, 1;
	$_->quit for @s;
	my $rows = $node->safe_psql('postgres', "SELECT count(*) FROM $table WHERE id / 8 = 100");
	$node->safe_psql('postgres', "DELETE FROM $table WHERE id / 8 = 100");
	return "$rows|$failures";
}

# the control: an index scan with `%` (PostgreSQL locks the index for it)
is(write_skew('t', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM t WHERE sig OPERATOR(public.%) (SELECT sig FROM NEW)}),
	'1|1', '% (index scan): the second transaction fails, one row of the pair is stored');

is(write_skew('t', q{SELECT count(*) FROM minhash_match('t_sig_idx', 'id', 'NEW', 'id', 'sig')}),
	'1|1', 'minhash_match: the second transaction fails, one row of the pair is stored');

is(write_skew('plain', q{SELECT count(*) FROM minhash_match('plain_sig_idx', 'id', 'NEW', 'id', 'sig')}),
	'1|1', 'minhash_match, no pending list: the same');

is(write_skew('t', q{SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id') WHERE key_a / 8 = 100}),
	'1|1', 'minhash_similar_pairs: the second transaction fails, one row of the pair is stored');

is(write_skew('t', q{SELECT count(*) FROM minhash_clusters('t_sig_idx', 'id') WHERE key / 8 = 100}),
	'1|1', 'minhash_clusters: the second transaction fails, one row of the pair is stored');

# the parallel walk, and rows resolved in table order by parallel workers
# (their heap fetches share the leader's serializable transaction)
my $parallel = q{SET minhash.pairs_min_parallel_index_size = 0; SET max_parallel_workers_per_gather = 2;};
my $table_order = q{SET effective_cache_size = '8kB';};
for my $how ([ $parallel, qr/parallel workers launched to walk index/, 'parallel walk' ],
	[ "$parallel $table_order", qr/parallel workers launched to resolve rows in table order/,
		'rows resolved in table order by parallel workers' ])
{
	my ($set, $says, $name) = @$how;
	my ($ret, $out, $err) = $node->psql('postgres', "$set SET client_min_messages = debug1;
		SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id')");
	like($err, $says, "$name: taken with these settings");
	is(write_skew('t', "$set SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id') WHERE key_a / 8 = 100"),
		'1|1', "minhash_similar_pairs, $name: the second transaction fails, one row of the pair is stored");
}

# READ COMMITTED and REPEATABLE READ take no predicate locks: both commit, as
# with any query
my @s = map { $node->background_psql('postgres') } 1 .. 2;
$s[$_]->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ') for 0, 1;
$s[$_]->query_safe("SELECT count(*) FROM minhash_match('t_sig_idx', 'id', 'new_" . ('a', 'b')[$_] . "', 'id', 'sig')") for 0, 1;
$s[$_]->query_safe('INSERT INTO t SELECT * FROM new_' . ('a', 'b')[$_]) for 0, 1;
$s[$_]->query_safe('COMMIT') for 0, 1;
$_->quit for @s;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id / 8 = 100'), '2',
	'repeatable read: both commit (no predicate locks)');

$node->stop;
done_testing();
