# minhash_similar_pairs and minhash_clusters against other sessions, and
# their memory at the smallest work_mem, which SQL alone cannot show:
#  - another session's uncommitted inserts and deletes are not seen, its own
#    are; after its commit they are;
#  - a REPEATABLE READ snapshot returns the same pairs while other sessions
#    insert, delete and VACUUM (which frees index slots and heap line
#    pointers that the new rows may reuse);
#  - a walk over one huge band group at work_mem = 64kB stays small: the
#    backend's memory contexts, logged by pg_log_backend_memory_contexts()
#    while it runs, never total more than a few MB.
#
# Expected pairs follow from the family model of MinhashTAP.pm: two live rows
# are a pair iff they are in one family (id / 8), Jaccard 0.83, far above the
# default threshold 0.5 and certain to share a band.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use MinhashTAP;

my $node = minhash_node('pairs', {}, 'autovacuum = off');
create_schema($node, 't');
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(0, 399) g;  -- families 0..49
	CREATE INDEX t_sig_idx ON t USING lsh (sig);
	-- the pairs the family model predicts among the rows this snapshot sees
	CREATE VIEW expected_pairs AS
	  SELECT a.id AS key_a, b.id AS key_b FROM t a JOIN t b ON a.id / 8 = b.id / 8 AND a.id < b.id;
	CREATE VIEW expected_clusters AS
	  SELECT id AS key, min(id) OVER (PARTITION BY id / 8) AS cluster_id FROM t
	  WHERE (SELECT count(*) FROM t u WHERE u.id / 8 = t.id / 8) > 1;
});

# One line: "<pairs>|<pairs not expected>|<expected pairs missing>|<cluster rows>|<cluster mismatches>|<digest>"
my $report = q{
SELECT (SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id'))
  || '|' || (SELECT count(*) FROM (SELECT key_a, key_b FROM minhash_similar_pairs('t_sig_idx', 'id')
                                  EXCEPT SELECT * FROM expected_pairs) x)
  || '|' || (SELECT count(*) FROM (SELECT * FROM expected_pairs
                                  EXCEPT SELECT key_a, key_b FROM minhash_similar_pairs('t_sig_idx', 'id')) x)
  || '|' || (SELECT count(*) FROM minhash_clusters('t_sig_idx', 'id'))
  || '|' || (SELECT count(*) FROM (
               (SELECT * FROM minhash_clusters('t_sig_idx', 'id') EXCEPT SELECT * FROM expected_clusters)
               UNION ALL
               (SELECT * FROM expected_clusters EXCEPT SELECT * FROM minhash_clusters('t_sig_idx', 'id'))) x)
  || '|' || (SELECT md5(string_agg(key_a || '-' || key_b || ':' || similarity, ',' ORDER BY key_a, key_b))
             FROM minhash_similar_pairs('t_sig_idx', 'id'))};

sub parts { return split /\|/, $_[0]; }

my $base = $node->safe_psql('postgres', $report);
my ($n0, $extra0, $missing0, $members0, $cmis0, $digest0) = parts($base);
is("$n0|$extra0|$missing0|$members0|$cmis0", '1400|0|0|400|0',
	'at start: the 50 families give 50 x 28 pairs, 400 clustered rows, as predicted');

# --- another session's uncommitted changes ---
my $writer = $node->background_psql('postgres');
$writer->query_safe(q{
	BEGIN;
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(800, 807) g;  -- family 100
	DELETE FROM t WHERE id BETWEEN 0 AND 7;                                -- family 0
});
is($node->safe_psql('postgres', $report), $base,
	"another session's uncommitted insert and delete are not seen (same pairs, same digest)");
my ($wn, $wextra, $wmissing, $wmembers, $wcmis) = parts($writer->query_safe($report));
is("$wn|$wextra|$wmissing|$wmembers|$wcmis", '1400|0|0|400|0',
	'the writing session sees its own changes (family 100 in, family 0 out)');
is($writer->query_safe(q{SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id')
	WHERE key_a < 8 OR key_a >= 800}), '28', '... that is, the pairs of family 100 and none of family 0');
$writer->query_safe('COMMIT');
my ($cn, $cextra, $cmissing, undef, $ccmis, $cdigest) = parts($node->safe_psql('postgres', $report));
is("$cn|$cextra|$cmissing|$ccmis", '1400|0|0|0', 'after the commit: the predicted pairs of the new rows');
isnt($cdigest, $digest0, 'after the commit the pairs differ from before');
is($node->safe_psql('postgres', q{SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id')
	WHERE key_a < 8 OR key_a >= 800}), '28', '... family 100 appears, family 0 is gone');

# --- a REPEATABLE READ snapshot while others insert, delete and vacuum ---
# Family 1 is deleted (committed) before the snapshot: a VACUUM during it may
# remove those rows and free their index slots and line pointers for reuse.
$node->safe_psql('postgres', 'DELETE FROM t WHERE id BETWEEN 8 AND 15');
my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $snap = $reader->query_safe($report);
my ($rn, $rextra, $rmissing, undef, $rcmis) = parts($snap);
is("$rn|$rextra|$rmissing|$rcmis", '1372|0|0|0', 'repeatable read: the predicted pairs at the snapshot');

$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(808, 823) g');  # families 101, 102
$node->safe_psql('postgres', 'DELETE FROM t WHERE id BETWEEN 16 AND 31');                               # families 2, 3
$node->safe_psql('postgres', 'UPDATE t SET sig = fam_sig(id + 8) WHERE id BETWEEN 32 AND 39');          # family 4 -> 5's sets
$node->safe_psql('postgres', 'VACUUM t');
is($reader->query_safe($report), $snap,
	'repeatable read: the same pairs and clusters after inserts, deletes, an update and two VACUUMs');
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(824, 831) g');  # family 103
$node->safe_psql('postgres', 'VACUUM t');
is($reader->query_safe($report), $snap, 'repeatable read: still the same after more inserts and a VACUUM');
$reader->query_safe('COMMIT');
my ($an, undef, undef, undef, undef, $adigest) = parts($reader->query_safe(
	q{SELECT (SELECT count(*) FROM minhash_similar_pairs('t_sig_idx', 'id')) || '|0|0|0|0|'
	  || (SELECT md5(string_agg(key_a || '-' || key_b || ':' || similarity, ',' ORDER BY key_a, key_b))
	      FROM minhash_similar_pairs('t_sig_idx', 'id'))}));
# families 2..49 and 100 at the snapshot, then 101..103 in and 2, 3 out: 50
# families, of which 4 and 5 now form one of 16 rows (family 4's rows carry
# family 5's sets): 48 x 28 + 16 x 15 / 2 pairs
is($an, 48 * 28 + 120, 'after the reader commits: the changes are seen');
isnt($adigest, (parts($snap))[5], '... and the pairs differ from the snapshot');
$reader->quit;
$writer->quit;
check_clean($node, 't_sig_idx');

# --- memory at work_mem = 64kB over one group of 5000 identical rows ---
# (12.5 million pairs: the walk lasts long enough to be sampled several times
# on a fast machine; 3000 rows once gave only 2 samples)
$node->safe_psql('postgres', q{
	CREATE TABLE same (id int, sig minhash);
	INSERT INTO same SELECT g, fam_sig(0) FROM generate_series(1, 5000) g;
	CREATE INDEX same_idx ON same USING lsh (sig);
});
my $walker = $node->background_psql('postgres');
my $pid = $walker->query_safe('SELECT pg_backend_pid()');
my $log_offset = -s $node->logfile;
# The walk's progress NOTICE (every 10 s, so only on a loaded machine) would
# reach stderr, which query_safe treats as a failure: this test is about memory.
$walker->query_until(qr/started/, q{
SET client_min_messages = warning;
SET work_mem = '64kB';
\echo started
SELECT count(*) FROM minhash_similar_pairs('same_idx', 'id');
});
my $walking = "pid = $pid AND state = 'active' AND query LIKE '%minhash_similar_pairs%'";
$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM pg_stat_activity WHERE $walking")
  or die 'the walk did not start';
# one sampling session (no psql start per sample, which is slow on a loaded
# machine): each query asks for a memory dump while the walk is active
my $sampler = $node->background_psql('postgres');
my $samples = 0;
for (1 .. 1200)
{
	my $asked = $sampler->query_safe(
		"SELECT count(pg_log_backend_memory_contexts(pid)) FROM pg_stat_activity WHERE $walking");
	last unless $asked eq '1';
	$samples++;
	usleep(50_000);
}
$sampler->quit;
# waits for the walk to finish; its output comes first
my $out = $walker->query_safe("SELECT 'over'");
$walker->quit;
like($out, qr/^12497500\n/, 'the walk at work_mem = 64kB returns every pair of the group once');
my $log = substr(slurp_file($node->logfile), $log_offset);
my @totals = $log =~ /Grand total: (\d+) bytes/g;
my $peak = 0;
$peak = $_ > $peak ? $_ : $peak for @totals;
ok(@totals >= 3, "memory sampled during the walk (" . scalar(@totals) . " samples of $samples requests)");
cmp_ok($peak, '<', 4 * 1024 * 1024, "peak memory of the walking backend at work_mem = 64kB: $peak bytes");

$node->stop;
done_testing();
