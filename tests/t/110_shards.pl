# A table sharded over three servers with postgres_fdw (docs/scale-out.md):
# hash partitioning on the coordinator, one foreign partition per shard, each
# shard holding its rows with an lsh index. What a single server cannot show:
#  - minhash_similar(sig, q, t) is shipped to every shard (EXPLAIN VERBOSE
#    shows it in the Remote SQL, asynchronously), uses the shard's lsh index,
#    and returns what the same query on one node returns; `%` (STABLE, it
#    reads a GUC) is not shipped;
#  - ORDER BY sig <%> q LIMIT k: the ORDER BY goes to every shard, the
#    coordinator merges (Merge Append) and returns the single-node answer;
#  - all pairs and clusters of the sharded table, cross-shard pairs included,
#    by the band-key recipe of docs/scale-out.md, equal the single-node
#    minhash_similar_pairs / minhash_clusters on the same rows, also at the
#    smallest work_mem (the coordinator's sorts and hashes spill);
#  - the pairs functions refuse a partitioned table with foreign partitions.
#
# Rows follow the family model of MinhashTAP.pm (family id / 8, Jaccard 0.83
# within a family, 0 across); hash partitioning on id spreads every family
# over the shards.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $nshards = 3;
my $nrows = 1600;                       # 200 families of 8

my @shards;
for my $i (1 .. $nshards)
{
	my $s = minhash_node("shard$i");
	$s->safe_psql('postgres', q{
		CREATE TABLE docs (id bigint NOT NULL, sig minhash);
		CREATE INDEX docs_sig_lsh ON docs USING lsh (sig);
		-- the band keys of every row, those the index's 30 bands of 4 rows
		-- store and a probe of depth 4 compares
		CREATE VIEW docs_bands AS
		  SELECT d.id, b.band::int AS band, b.key
		  FROM docs d, unnest(minhash_bands(d.sig, 30, 4, 4)) WITH ORDINALITY AS b(key, band);
	});
	push @shards, $s;
}

my $coord = minhash_node('coord');
create_schema($coord, 'docs_ref');      # fam_sig(), and the single-node reference table
my $ddl = q{
CREATE EXTENSION postgres_fdw;
CREATE TABLE docs (id bigint NOT NULL, sig minhash) PARTITION BY HASH (id);
CREATE TABLE docs_bands (id bigint, band int, key bigint) PARTITION BY HASH (id);
};
for my $i (1 .. $nshards)
{
	my $s = $shards[ $i - 1 ];
	my ($host, $port) = ($s->host, $s->port);
	my $r = $i - 1;
	$ddl .= qq{
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host '$host', port '$port', dbname 'postgres', extensions 'minhash', async_capable 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i;
CREATE FOREIGN TABLE docs_s$i PARTITION OF docs
  FOR VALUES WITH (MODULUS $nshards, REMAINDER $r) SERVER shard$i OPTIONS (table_name 'docs');
CREATE FOREIGN TABLE docs_bands_s$i PARTITION OF docs_bands
  FOR VALUES WITH (MODULUS $nshards, REMAINDER $r) SERVER shard$i OPTIONS (table_name 'docs_bands');
};
}
$ddl .= qq{
INSERT INTO docs SELECT g, fam_sig(g) FROM generate_series(0, $nrows - 1) g;
INSERT INTO docs_ref SELECT * FROM docs;
CREATE INDEX docs_ref_lsh ON docs_ref USING lsh (sig);
};
$coord->safe_psql('postgres', $ddl);
$_->safe_psql('postgres', 'ANALYZE docs') for @shards;

my @per_shard = map { $_->safe_psql('postgres', 'SELECT count(*) FROM docs') } @shards;
is(eval { my $t = 0; $t += $_ for @per_shard; $t }, $nrows, "the $nrows rows are on the shards (@per_shard)");
ok((grep { $_ > $nrows / $nshards / 2 } @per_shard) == $nshards, 'every shard holds a share of them');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT id / 8 FROM docs GROUP BY 1
	                      HAVING count(DISTINCT tableoid) > 1) f}),
	'200', 'every family is spread over several shards');

# --- the shippable threshold form ---
my $q = 'SELECT id FROM docs WHERE minhash_similar(sig, fam_sig(%d), 0.5)';
my $plan = $coord->safe_psql('postgres', 'EXPLAIN (VERBOSE, COSTS OFF) ' . sprintf($q, 42));
my @remote = $plan =~ /Remote SQL: SELECT id FROM public\.docs WHERE \(public\.minhash_similar\(sig, '[^']+'::public\.minhash, 0\.5::double precision\)\)/g;
is(scalar @remote, $nshards, 'minhash_similar(sig, q, t) is in the Remote SQL of every shard')
  or diag $plan;
is(scalar(() = $plan =~ /Async Foreign Scan/g), $nshards, 'the shards are scanned asynchronously');
my $plan_pct = $coord->safe_psql('postgres',
	'EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM docs WHERE sig % fam_sig(42)');
ok($plan_pct =~ /Filter: \(docs_\d+\.sig % / && $plan_pct !~ /Remote SQL:.*%/,
	'% (STABLE: it reads minhash.similarity_threshold) is filtered on the coordinator, not shipped')
  or diag $plan_pct;

# On a shard the shipped condition is an lsh index condition. Small shards
# favour a sequential scan, so it is disabled there to show the index can
# answer it; the answers must not change.
for my $s (@shards)
{
	$s->append_conf('postgresql.conf', 'enable_seqscan = off');
	$s->reload;
}
my $shard_plan = $shards[0]->safe_psql('postgres',
	q{EXPLAIN (COSTS OFF) SELECT id FROM public.docs WHERE public.minhash_similar(sig, (SELECT sig FROM docs LIMIT 1), 0.5::double precision)});
# (the InitPlan's output shows as $0 up to PostgreSQL 16, (InitPlan 1).col1 from 17)
like($shard_plan, qr/Index Scan (using|on) docs_sig_lsh.*\n\s+Index Cond: \(sig %>= ROW\((?:\$0|\(InitPlan 1\)\.col1), '0\.5'::double precision\)::minhash_query\)/,
	'on a shard, the shipped minhash_similar() is an lsh index condition');
my @scans_before = map { $_->safe_psql('postgres',
		"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'docs_sig_lsh'") } @shards;
my $mismatch = 0;
for my $id (0, 42, 777, 1599)
{
	my $sharded = $coord->safe_psql('postgres', sprintf($q, $id) . ' ORDER BY id');
	my $single = $coord->safe_psql('postgres',
		"SELECT id FROM docs_ref WHERE minhash_similar(sig, fam_sig($id), 0.5) ORDER BY id");
	my $family = join "\n", map { int($id / 8) * 8 + $_ } 0 .. 7;
	$mismatch++ unless $sharded eq $single && $sharded eq $family;
}
is($mismatch, 0, 'minhash_similar over the shards returns the single-node answer: the query row\'s family');
# idx_scan of the shards' lsh indexes (counted by the scan since 1.1);
# statistics reach the shared counters when a backend goes idle: poll
my $used = 0;
for (1 .. 50)
{
	my @after = map { $_->safe_psql('postgres',
			"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'docs_sig_lsh'") } @shards;
	$used = grep { $after[$_] > $scans_before[$_] } 0 .. $#after;
	last if $used == $nshards;
	select(undef, undef, undef, 0.2);
}
is($used, $nshards, 'every shard answered through its lsh index');

# --- ORDER BY <%> LIMIT ---
my $knn = 'SELECT id, round((sig <%%> fam_sig(%d))::numeric, 6) FROM %s ORDER BY sig <%%> fam_sig(%d), id LIMIT 6';
my $knn_plan = $coord->safe_psql('postgres',
	'EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM docs ORDER BY sig <%> fam_sig(42) LIMIT 6');
like($knn_plan, qr/Merge Append/, 'ORDER BY <%> LIMIT merges the shards (Merge Append)');
is(scalar(() = $knn_plan =~ /Remote SQL: SELECT id, sig FROM public\.docs ORDER BY \(sig OPERATOR\(public\.<%>\) '[^']+'(?::public\.minhash)?\) ASC NULLS LAST/g),
	$nshards, 'the ORDER BY <%> is pushed down to every shard') or diag $knn_plan;
$mismatch = 0;
for my $id (3, 500, 1234)
{
	my $sharded = $coord->safe_psql('postgres', sprintf($knn, $id, 'docs', $id));
	my $single = $coord->safe_psql('postgres', sprintf($knn, $id, 'docs_ref', $id));
	$mismatch++ unless $sharded eq $single;
}
is($mismatch, 0, 'ORDER BY <%> LIMIT over the shards returns the single-node rows and distances');

# What each shard does for the LIMIT. PostgreSQL does not push the LIMIT
# below the Merge Append (the partitioned parent has no FDW to offer a final
# foreign path), so the Remote SQL has no LIMIT: each shard runs the ORDER BY
# as a cursor, the coordinator FETCHes fetch_size rows (100 by default) from
# each, the Merge Append reads at most LIMIT + 1 of them per shard and the
# cursors are closed. On the shard, the cursor is planned for its first rows
# (cursor_tuple_fraction), so the lsh ordered index scan answers it and
# stops after the first fetch: auto_explain of the remote cursor shows it.
# (Shown with the shards' default planner settings.)
sub remote_cursor_plans
{
	my @at = map { -s $_->logfile } @shards;
	my $plan = $coord->safe_psql('postgres',
		'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM docs ORDER BY sig <%> fam_sig(42) LIMIT 6');
	my @logs;
	for my $i (0 .. $#shards)
	{
		my $log = '';
		for (1 .. 50)
		{
			$log = substr(slurp_file($shards[$i]->logfile), $at[$i]);
			last if $log =~ /Query Text: DECLARE c\d+ CURSOR FOR\s+SELECT id, sig FROM public\.docs ORDER BY.*\n(?:\t.*\n)+/;
			select(undef, undef, undef, 0.1);
		}
		push @logs, $log;
	}
	return ($plan, @logs);
}
for my $s (@shards)
{
	$s->append_conf('postgresql.conf', qq{
enable_seqscan = on
session_preload_libraries = 'auto_explain'
auto_explain.log_min_duration = 0
auto_explain.log_analyze = on
auto_explain.log_timing = off
auto_explain.log_verbose = on
});
	$s->reload;
}
my @shard_rows = map { $_->safe_psql('postgres', 'SELECT count(*) FROM docs') } @shards;
my ($knn_analyze, @remote_plans) = remote_cursor_plans();
like($knn_analyze, qr/Limit \(actual rows=6(?:\.00)? loops=1\)\n.*\n\s+->  Merge Append \(actual rows=6(?:\.00)? loops=1\)/,
	'the coordinator: a Limit over a Merge Append of the shards') or diag $knn_analyze;
my @fs_rows = $knn_analyze =~ /Foreign Scan on public\.docs_s\d+ docs_\d+ \(actual rows=(\d+)(?:\.\d+)? loops=1\)/g;
is(scalar(grep { $_ <= 7 } @fs_rows), $nshards,
	"the Merge Append reads at most LIMIT + 1 rows of each shard (@fs_rows)") or diag $knn_analyze;
unlike($knn_analyze, qr/Remote SQL:.*LIMIT/, 'the LIMIT is not in the Remote SQL (PostgreSQL does not push it below a Merge Append)');
# shards of ~530 rows: the cursor's cheapest plan sorts the whole shard, then
# the first FETCH takes 100 rows of the sort
my $sorted = grep {
	$remote_plans[$_] =~ /\tSort  \(cost=[^)]*\) \(actual rows=(\d+)(?:\.\d+)? loops=1\)\n(?:\t.*\n)*?\t\s+->  Seq Scan on public\.docs\s+\(cost=[^)]*\) \(actual rows=(\d+)(?:\.\d+)? loops=1\)/
	  && $1 == 100 && $2 == $shard_rows[$_] } 0 .. $#shards;
is($sorted, $nshards, 'small shards: the remote cursor sorts every row of the shard, the coordinator fetches 100 of them')
  or diag join "\n----\n", @remote_plans;
# where the index is cheaper (a larger shard: 25,000 rows per shard already
# picks it, docs/scale-out.md; here enable_seqscan = off stands for that), the
# lsh ordered index scan answers the cursor and stops after the first fetch
$_->append_conf('postgresql.conf', 'enable_seqscan = off') for @shards;
$_->reload for @shards;
($knn_analyze, @remote_plans) = remote_cursor_plans();
my $indexed = grep {
	$remote_plans[$_] =~ /\tIndex Scan using docs_sig_lsh on public\.docs\s+\(cost=[^)]*\) \(actual rows=(\d+)(?:\.\d+)? loops=1\)\n(?:\t.*\n){0,2}?\t\s+Order By: \(docs\.sig (?:OPERATOR\(public\.<%>\)|<%>) /
	  && $1 == 100 && $1 < $shard_rows[$_] } 0 .. $#shards;
is($indexed, $nshards,
	'with the index cheaper, each shard answers the cursor with its lsh ordered index scan and reads only the 100 rows of the first fetch')
  or diag join "\n----\n", @remote_plans;
$_->append_conf('postgresql.conf', "session_preload_libraries = ''") for @shards;
$_->reload for @shards;

# --- all pairs and clusters across shards: the band-key recipe ---
# (docs/scale-out.md, "All pairs across shards"; kept in step with it)
my $recipe = q{
SELECT set_config('maintenance_work_mem',
                  greatest(pg_size_bytes(current_setting('work_mem')), 1024 * 1024) / 1024 || 'kB', false);
SET hash_mem_multiplier = 1;
CREATE UNLOGGED TABLE cand_ids AS
  SELECT DISTINCT id FROM (SELECT id, count(*) OVER (PARTITION BY key) AS n FROM docs_bands) b
  WHERE n > 1;
ALTER TABLE cand_ids ADD PRIMARY KEY (id);
CREATE UNLOGGED TABLE cand (id bigint, sig minhash);
DO $$
DECLARE
  per_batch int := least(greatest(pg_size_bytes(current_setting('work_mem')) / 256, 256), 512);
  ids bigint[];
BEGIN
  SET LOCAL plan_cache_mode = force_generic_plan;
  SELECT array_agg(id ORDER BY id) INTO ids
    FROM (SELECT id FROM cand_ids ORDER BY id LIMIT per_batch) s;
  WHILE ids IS NOT NULL LOOP
    INSERT INTO cand SELECT id, sig FROM docs WHERE id = ANY (ids);
    SELECT array_agg(id ORDER BY id) INTO ids
      FROM (SELECT id FROM cand_ids WHERE id > ids[cardinality(ids)] ORDER BY id LIMIT per_batch) s;
  END LOOP;
END
$$;
CREATE INDEX cand_sig_lsh ON cand USING lsh (sig) WITH (bands = 30, rows = 4);
};
my $compare = q{
SELECT (SELECT count(*) FROM minhash_similar_pairs('cand_sig_lsh', 'id', 0.5))
  || '|' || (SELECT count(*) FROM minhash_similar_pairs('docs_ref_lsh', 'id', 0.5))
  || '|' || (SELECT count(*) FROM (
       (SELECT * FROM minhash_similar_pairs('cand_sig_lsh', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', 0.5))
       UNION ALL
       (SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_similar_pairs('cand_sig_lsh', 'id', 0.5))) x)
  || '|' || (SELECT count(*) FROM minhash_clusters('cand_sig_lsh', 'id', 0.5))
  || '|' || (SELECT count(*) FROM (
       (SELECT * FROM minhash_clusters('cand_sig_lsh', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_clusters('docs_ref_lsh', 'id', 0.5))
       UNION ALL
       (SELECT * FROM minhash_clusters('docs_ref_lsh', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_clusters('cand_sig_lsh', 'id', 0.5))) x)
  || '|' || (SELECT count(*) FROM minhash_similar_pairs('cand_sig_lsh', 'id', 0.5) p
             JOIN docs a ON a.id = p.key_a JOIN docs b ON b.id = p.key_b
             WHERE a.tableoid <> b.tableoid)};
# what travels: band keys (id and key only) and the candidates' signatures
my $recipe_plan = $coord->safe_psql('postgres', q{
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT DISTINCT id FROM (SELECT id, count(*) OVER (PARTITION BY key) AS n FROM docs_bands) b WHERE n > 1;
SET plan_cache_mode = force_generic_plan;
PREPARE step2(bigint[]) AS SELECT id, sig FROM docs WHERE id = ANY ($1);
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE step2('{1,2,3}');
});
# (the planner may also push the sort by key down to the shards and merge)
is(scalar(() = $recipe_plan =~ /Remote SQL: SELECT id, key FROM public\.docs_bands( ORDER BY key ASC NULLS LAST)?\n/g),
	$nshards, 'step 1 fetches only (id, key) from every shard') or diag $recipe_plan;
is(scalar(() = $recipe_plan =~ /Remote SQL: SELECT id, sig FROM public\.docs WHERE \(\(id = ANY \(\$1::bigint\[\]\)\)\)/g),
	$nshards, 'step 2 sends a batch of candidate ids to every shard as one parameter and fetches only their signatures') or diag $recipe_plan;

# the shards log the statements they receive during the recipe, with their
# parameters: the id lists of step 2
$_->append_conf('postgresql.conf', 'log_statement = all') for @shards;
$_->reload for @shards;
for my $wm ('4MB', '64kB')
{
	my @at = map { -s $_->logfile } @shards;
	my $out = $coord->safe_psql('postgres', "SET work_mem = '$wm';\n$recipe\n$compare");
	my ($pairs, $ref, $diff, $members, $cdiff, $cross) = split /\|/, (split /\n/, $out)[-1];
	is("$pairs|$ref|$diff|$members|$cdiff", '5600|5600|0|1600|0',
		"work_mem $wm: pairs (200 x 28) and clusters of the shards equal the single node's");
	cmp_ok($cross, '>', 2000, "work_mem $wm: $cross of the pairs cross shards");
	# Step 2 sends the candidate ids in batches of work_mem / 256 bytes of
	# ids, at least 256 and at most 512 ids: the coordinator never holds the
	# whole list. Each batch goes to every shard as one array parameter.
	my $ncand = $coord->safe_psql('postgres', 'SELECT count(*) FROM cand_ids');
	my $per_batch = $wm eq '64kB' ? 256 : 512;
	my ($batches, $largest, $sent) = (0, 0, 0);
	for my $i (0 .. $#shards)
	{
		my $log = substr(slurp_file($shards[$i]->logfile), $at[$i]);
		while ($log =~ /CURSOR FOR\s+SELECT id, sig FROM public\.docs WHERE \(\(id = ANY \(\$1::bigint\[\]\)\)\)\n[^\n]*DETAIL:  [Pp]arameters: \$1 = '\{([^}]*)\}'/g)
		{
			my $n = scalar(split /,/, $1);
			$batches++;
			$sent += $n;
			$largest = $n if $n > $largest;
		}
	}
	my $want = $nshards * int(($ncand + $per_batch - 1) / $per_batch);
	is("$batches|$sent", "$want|" . ($nshards * $ncand),
		"work_mem $wm: step 2 sends the $ncand candidate ids to each shard in batches ($batches lists in all)");
	cmp_ok($largest, '<=', $per_batch, "work_mem $wm: no list holds more than $per_batch ids ($largest)");
	$coord->safe_psql('postgres', 'DROP TABLE cand, cand_ids');
}
$_->append_conf('postgresql.conf', 'log_statement = none') for @shards;
$_->reload for @shards;

# The Spark-style form: join on band keys, dedupe, verify on signatures.
my $spark = $coord->safe_psql('postgres', q{
SET work_mem = '64kB';
CREATE TEMP TABLE bands AS SELECT * FROM docs_bands;
CREATE TEMP TABLE spark AS
  WITH cand AS (SELECT DISTINCT a.id AS id_a, b.id AS id_b
                FROM bands a JOIN bands b ON a.band = b.band AND a.key = b.key AND a.id < b.id),
       sigs AS (SELECT id, sig FROM docs
                WHERE id = ANY ((SELECT array_agg(DISTINCT id) FROM bands
                                 WHERE (band, key) IN (SELECT band, key FROM bands GROUP BY 1, 2
                                                       HAVING count(*) > 1))::bigint[]))
  SELECT c.id_a AS key_a, c.id_b AS key_b, jaccard(x.sig, y.sig) AS similarity
  FROM cand c JOIN sigs x ON x.id = c.id_a JOIN sigs y ON y.id = c.id_b
  WHERE minhash_similar(x.sig, y.sig, 0.5);
SELECT (SELECT count(*) FROM spark) || '|' || (SELECT count(*) FROM (
       (SELECT * FROM spark EXCEPT SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', 0.5))
       UNION ALL
       (SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', 0.5) EXCEPT SELECT * FROM spark)) x)});
is($spark, '5600|0', 'the Spark-style join on band keys finds the same pairs');

# --- the pairs functions on the coordinator's partitioned table: refused ---
my ($ret, $stdout, $stderr) = $coord->psql('postgres', q{
	CREATE INDEX docs_coord_lsh ON docs USING lsh (sig);
	SELECT count(*) FROM minhash_similar_pairs('docs_coord_lsh', 'id', 0.5)});
like($stderr, qr/minhash_similar_pairs does not support foreign partitions.*HINT:.*band keys/s,
	'minhash_similar_pairs on a table with foreign partitions points to the band-key recipe');

$_->stop for ($coord, @shards);
done_testing();
