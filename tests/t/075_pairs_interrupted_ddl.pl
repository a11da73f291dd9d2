# The pairs functions after concurrent DDL on their index was interrupted,
# which takes two sessions: a transaction that has called a pairs function
# keeps AccessShareLock on the table and index, so DROP INDEX CONCURRENTLY
# and REINDEX CONCURRENTLY wait for it; a statement timeout cancels them
# there, leaving
#  - after DROP INDEX CONCURRENTLY: the index marked invalid, refused (55000)
#    with a detail that names what can leave it so and a hint that mends it;
#  - after REINDEX CONCURRENTLY: the rebuilt index under the old name,
#    valid and giving the same pairs, and the old one (_ccold) refused.
# Meanwhile the waiting transaction's own calls still answer.
#
# Rows follow the family model of MinhashTAP.pm (id / 8): 50 families of 8,
# 50 x 28 pairs.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = minhash_node('ddl', {}, 'autovacuum = off');
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 399) g;
	CREATE INDEX t_idx ON t USING lsh (sig);
});
my $pairs = q{SELECT count(*) FROM minhash_similar_pairs('%s', 'id')};

# Runs $ddl while another transaction holds the lock of a pairs call, with a
# statement timeout; returns the DDL's stderr.
sub interrupted
{
	my ($ddl) = @_;
	my $reader = $node->background_psql('postgres');
	$reader->query_safe('BEGIN');
	is($reader->query_safe(sprintf($pairs, 't_idx')), '1400', "before $ddl: the pairs");
	my ($ret, $out, $err) = $node->psql('postgres', "SET statement_timeout = '1s';\n$ddl");
	is($reader->query_safe(sprintf($pairs, 't_idx')), '1400', "while $ddl waits: the same pairs in the reader");
	$reader->query_safe('COMMIT');
	$reader->quit;
	return $err;
}

like(interrupted('REINDEX INDEX CONCURRENTLY t_idx'), qr/canceling statement due to statement timeout/,
	'REINDEX CONCURRENTLY waited for the reader and was cancelled');
my $indexes = q{SELECT string_agg(c.relname || ':' || i.indisvalid, ' ' ORDER BY c.relname)
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 't'::regclass};
my $state = $node->safe_psql('postgres', $indexes);
if ($state eq 't_idx:true t_idx_ccold:false')
{
	pass('it was cancelled after the swap: t_idx is the rebuilt index, t_idx_ccold the old one');
	is($node->safe_psql('postgres', sprintf($pairs, 't_idx')), '1400', 'the rebuilt index gives the same pairs');
	my ($ret, $out, $err) = $node->psql('postgres', sprintf($pairs, 't_idx_ccold'));
	like($err, qr/ERROR:  lsh index "t_idx_ccold" is not valid/, 'the old index is refused');
}
else
{
	# a loaded machine may cancel it before the swap: a new, invalid _ccnew
	is($state, 't_idx:true t_idx_ccnew:false', 'it was cancelled before the swap: t_idx is untouched');
	is($node->safe_psql('postgres', sprintf($pairs, 't_idx')), '1400', 't_idx gives the same pairs');
	my ($ret, $out, $err) = $node->psql('postgres', sprintf($pairs, 't_idx_ccnew'));
	like($err, qr/ERROR:  lsh index "t_idx_ccnew" is not valid/, 'the unfinished new index is refused');
}
$node->safe_psql('postgres', 'DROP INDEX IF EXISTS t_idx_ccold; DROP INDEX IF EXISTS t_idx_ccnew');

like(interrupted('DROP INDEX CONCURRENTLY t_idx'), qr/canceling statement due to statement timeout/,
	'DROP INDEX CONCURRENTLY waited for the reader and was cancelled');
is($node->safe_psql('postgres', $indexes), 't_idx:false', 't_idx is left invalid');
my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n" . sprintf($pairs, 't_idx'));
like($err, qr/ERROR:  55000: lsh index "t_idx" is not valid/, 'the pairs functions refuse it (55000)');
like($err, qr/DETAIL:  .*DROP INDEX CONCURRENTLY of it failed, was interrupted or is in progress/,
	'... with a detail that names the interrupted drop');
like($err, qr/HINT:  REINDEX the index, or drop it\./, '... and a hint that mends it');
$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
is($node->safe_psql('postgres', sprintf($pairs, 't_idx')), '1400', 'after REINDEX: the pairs again');

$node->stop;
done_testing();
