# The build's external sort: with maintenance_work_mem = 1MB the band entries
# (one 8-byte datum per row and band) no longer fit in memory and the
# tuplesort spills to a temporary file, which log_temp_files = 0 makes the
# server log. The spilled build must produce the same index as an in-memory
# build (same counts, pages and fill: the sorted stream is the same), be
# consistent with its table, and find every row by its own signature.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# 6000 rows x 30 bands = 180,000 entries: several MB of sort tuples
my $rows = 6000;
my $node = minhash_node('spill', {}, 'autovacuum = off', 'log_temp_files = 0');
create_schema($node, 't');
$node->safe_psql('postgres',
	"INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, $rows) g; ANALYZE t");

my $stats_cols = 'num_perm, bands, rows, height, pages, data_pages, leaf_pages, '
  . 'internal_pages, live_rows, entries, leaf_fill';

$node->safe_psql('postgres', 'CREATE EXTENSION pageinspect');

# md5 of an index's pages in order, each past its LSN (which the build's WAL sets)
sub pages_digest
{
	my ($index) = @_;
	return $node->safe_psql('postgres',
		"SELECT md5(string_agg(md5(substr(get_raw_page('$index', b::int8), 9)), '' ORDER BY b)) "
		  . "FROM generate_series(0, pg_relation_size('$index') / 8192 - 1) b");
}

# Runs $sql and returns what the server logged meanwhile.
sub logged_during
{
	my ($sql) = @_;
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', $sql);
	return slurp_file($node->logfile, $offset);
}

# The reference: an in-memory build (64MB is far more than needed).
my $log = logged_during(
	"SET maintenance_work_mem = '64MB'; CREATE INDEX t_mem ON t USING lsh (sig)");
unlike($log, qr/temporary file/, 'a build within maintenance_work_mem writes no temporary file');
my $mem_stats = $node->safe_psql('postgres', "SELECT $stats_cols FROM minhash_lsh_stats('t_mem')");
my $mem_pages = pages_digest('t_mem');
$node->safe_psql('postgres', 'DROP INDEX t_mem');

$log = logged_during(
	"SET maintenance_work_mem = '1MB'; CREATE INDEX t_spill ON t USING lsh (sig)");
like($log, qr/LOG:  temporary file: path "[^"]*pgsql_tmp[^"]*", size [1-9]\d*\n[^\n]*STATEMENT:[^\n]*CREATE INDEX t_spill/,
	'the build with maintenance_work_mem = 1MB spills its sort to a temporary file');
my $spill_stats = $node->safe_psql('postgres', "SELECT $stats_cols FROM minhash_lsh_stats('t_spill')");
is($spill_stats, $mem_stats, 'the spilled build gives the same index as the in-memory one');
# A serial build sorts per group of adjacent bands, as many groups as
# maintenance_work_mem has 64 kB for (up to the 30 bands): 30 groups in
# memory, 16 spilling here. The page images (past their LSN) are the same.
is(pages_digest('t_spill'), $mem_pages,
	'the spilled build (16 band groups) writes the same pages as the in-memory one (30 groups)');
like($spill_stats, qr/^128\|30\|4\|\d+\|\d+\|\d+\|\d+\|\d+\|$rows\|180000\|/,
	'every row is indexed with one entry per band');

check_clean($node, 't_spill', 'minhash_lsh_check(heapallindexed) is clean after the spilled build');
is(self_find_missing($node, 't', 't_spill', 'index'), '0', 'every row finds itself (index scan)');
is(self_find_missing($node, 't', 't_spill', 'bitmap'), '0', 'every row finds itself (bitmap scan)');
is(nearest_self_missing($node, 't', 't_spill'), '0', 'every row is its own nearest (ORDER BY <%> LIMIT 1)');

$node->stop;
done_testing();
