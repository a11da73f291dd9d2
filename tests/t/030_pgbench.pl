# Concurrency of the lsh index under pgbench: clients insert, delete, run `%`
# and ORDER BY <%> LIMIT queries through the index, and VACUUM, all at once for
# a bounded time. No client may see an error; afterwards the index is
# consistent, every row is found by its own signature, and index answers are a
# subset of the sequential scan's (the index never invents a match).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $duration = 15;
my $clients  = 4;

my $node = minhash_node('bench', {}, 'shared_buffers = 16MB', 'max_connections = 20',
	'autovacuum_naptime = 1s', 'autovacuum_vacuum_threshold = 100',
	'autovacuum_vacuum_scale_factor = 0.05');
create_schema($node, 't');
$node->safe_psql('postgres', q{
	CREATE SEQUENCE t_id START 100000;
	INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 5000) g;
	CREATE INDEX t_sig_idx ON t USING lsh (sig) WITH (threshold = 0.5);
});

# Queries run with enable_seqscan = off, which only adds a large cost to a
# sequential scan: a query that could not use the index would still run (as a
# sequential scan) rather than fail. That the scripts' queries do use the index
# is asserted from their plans just below.
my %scripts = (
	'insert@6' => q{
INSERT INTO t SELECT n, fam_sig(n) FROM (SELECT nextval('t_id') AS n FROM generate_series(1, 5)) s;
},
	'delete@3' => q{
\set lo random(1, 120000)
DELETE FROM t WHERE id BETWEEN :lo AND :lo + 3;
},
	'query@8' => q{
\set q random(1, 120000)
BEGIN;
SET LOCAL enable_seqscan = off;
SELECT count(*) FROM t WHERE sig % fam_sig(:q);
SELECT id, sig <%> fam_sig(:q) AS d FROM t ORDER BY sig <%> fam_sig(:q) LIMIT 5;
SET LOCAL enable_indexscan = off;
SELECT count(*) FROM t WHERE sig % fam_sig(:q);
COMMIT;
},
	'vacuum@1' => q{
VACUUM t;
},);

# Sanity: the query script really is index-driven.
my $plans = $node->safe_psql('postgres', q{
	SET enable_seqscan = off;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE sig % fam_sig(7);
	EXPLAIN (COSTS OFF) SELECT id FROM t ORDER BY sig <%> fam_sig(7) LIMIT 5;
});
like($plans, qr/Bitmap Index Scan on t_sig_idx|Index Scan using t_sig_idx/,
	'% query plan uses the index');
like($plans, qr/Index Scan using t_sig_idx.*\n.*Order By/s,
	'ORDER BY <%> LIMIT plan is an ordered index scan');

$node->pgbench(
	"--no-vacuum --client=$clients --jobs=2 --time=$duration",
	0,
	[ qr{processed: [1-9]\d*\b}, qr{number of failed transactions: 0 } ],
	[qr{^$}],
	'pgbench: concurrent inserts, deletes, queries and VACUUM without errors',
	\%scripts);

my ($rows, $inserted, $deleted) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*), count(*) FILTER (WHERE id >= 100000),
	       5000 - count(*) FILTER (WHERE id <= 5000) FROM t});
cmp_ok($inserted, '>', 0, "the run inserted rows ($inserted)");
cmp_ok($deleted, '>', 0, "the run deleted rows ($deleted of the first 5000)");

check_clean($node, 't_sig_idx', 'minhash_lsh_check is clean after the run');
is(self_find_missing($node, 't', 't_sig_idx', 'index'),
	'0', "each of the $rows rows is found by its own signature (index scan)");
is(self_find_missing($node, 't', 't_sig_idx', 'bitmap'),
	'0', 'each row is found by its own signature (bitmap scan)');

# Index answers ⊆ sequential scan answers, for the signatures of a sample of
# rows (each query's answer is its family, so the check is not vacuous).
my $subset = q{
	SELECT count(*), count(*) FILTER (WHERE jaccard(i.sig, qs.sig) < 0.5)
	FROM (SELECT sig FROM t WHERE id % 50 = 0) qs,
	LATERAL (SELECT sig FROM t WHERE sig % qs.sig) i};
my ($returned, $wrong) = split /\|/,
  $node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $subset");
cmp_ok($returned, '>', 0, "sample queries return rows ($returned)");
is($wrong, '0', 'every row the index returns for % really is similar');

# After a final VACUUM the index still agrees with itself and the heap.
$node->safe_psql('postgres', 'VACUUM t');
check_clean($node, 't_sig_idx', 'minhash_lsh_check is clean after a final VACUUM');

# --- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY under the same load --
# Their validation pass enumerates the index through ambulkdelete and inserts
# what the build missed: a TID it fails to report ends up twice in the index.
my @bench = ('pgbench', '--no-vacuum', '--client=3', '--jobs=1', '--time=10',
	'-h', $node->host, '-p', $node->port,
	map { ('-f', $node->basedir . "/$_") } grep { !/^vacuum/ } sort keys %scripts);
my ($bout, $berr) = ('', '');
local $ENV{PGAPPNAME} = 'load';    # PostgreSQL::Test::Utils sets it to the script's name
my $bh = IPC::Run::start([ @bench, 'postgres' ], '>', \$bout, '2>', \$berr,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
$node->poll_query_until('postgres',
	"SELECT count(*) >= 3 FROM pg_stat_activity WHERE application_name = 'load'")
  or do { $bh->kill_kill; $bh->finish; die "pgbench did not start: $berr"; };
$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY t_sig_cic ON t USING lsh (sig)');
$node->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_sig_idx');
ok($bh->pumpable, 'the load was still running when both finished');
ok($bh->finish, 'pgbench alongside CREATE/REINDEX CONCURRENTLY exits 0')
  or diag("exit status $?: $berr");
like($bout, qr{number of failed transactions: 0 }, 'no failed transactions');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_index WHERE indrelid = 't'::regclass AND indisvalid"),
	'2', 'both indexes are valid');
check_clean($node, 't_sig_cic', 'index built concurrently is clean');
check_clean($node, 't_sig_idx', 'index rebuilt concurrently is clean');
$node->safe_psql('postgres', 'DROP INDEX t_sig_idx');
is(self_find_missing($node, 't', 't_sig_cic', 'index'),
	'0', 'each row is found through the concurrently built index');

$node->stop;
done_testing();
