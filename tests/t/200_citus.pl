# A distributed table on a real Citus cluster (a coordinator and two workers
# on loopback) answers as one server holding the same rows (docs/scale-out.md,
# "Citus"). Every assertion compares the distributed table `docs` with the
# plain table `docs_ref` on the coordinator:
#  - `%` at three thresholds after SET, after SET LOCAL, and through prepared
#    statements and a PL/pgSQL function re-executed after a SET (cached plans
#    are re-planned); the shards get minhash_similar(sig, q, t) with the
#    session's t and answer it with their lsh indexes;
#  - without minhash loaded at session start, `%` on a distributed table is
#    an error with a hint, not the workers' threshold;
#  - minhash_similar(sig, q, t), ORDER BY sig <%> q LIMIT 10 (pushed to the
#    shards with its LIMIT), a join with a reference table of queries; a
#    join with a distributed one is Citus's error with minhash's hint;
#  - minhash_similar_pairs and minhash_clusters (both modes) computed by
#    Citus's distributed execution, at and below the index's threshold;
#    clusters with keep (ascending, descending, ties, NULLs, a text column
#    in an ICU collation; its privilege and order checked as on one server);
#    exact => true (word and character shingles, rows beyond exact
#    verification's memory bound and its NOTICE, NULL and empty texts);
#    unsupported cases (and minhash_match on a distributed table's index)
#    are errors with hints, never 0 rows;
#  - a table owner's code (a domain's CHECK on the distribution or key
#    column, a cast of the key) never runs as the caller; collations outside
#    pg_catalog are named with their schema in the statements; another
#    role's schema named after the caller on the workers does not stand in
#    for the shards' indexes;
#  - the scratch tables of the pairs: names another role cannot take
#    beforehand; in a read-only transaction, an error that says why;
#  - the same pairs on compact (16-bit) and oph signatures;
#  - minhash_lsh_stats summed over the shards, minhash_lsh_recall read off
#    them;
#  - minhash_agg and minhash_merge_agg computed on the workers
#    (worker_partial_agg) and combined on the coordinator;
#  - with shards on the coordinator too (Citus runs their tasks in the
#    calling backend), the same pairs, clusters, statistics, % and aggregate,
#    and minhash_match of a distributed batch.
#
# Rows: 60 groups of 50; row g's set is the 60 consecutive integers from
# (g / 50) * 1000 + g % 50, so two rows of a group at distance d have
# Jaccard (60 - d) / (60 + d) (from 1 down to 0.09) and rows of different
# groups share nothing: thresholds 0.3, 0.6 and 0.9 give different answers.
#
# Citus comes from scripts/citus.sh (scripts/test.sh runs it first): without
# it installed in the PostgreSQL under test this test fails, saying so.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my ($pkglibdir) = run_command([ 'pg_config', '--pkglibdir' ]);
chomp $pkglibdir;
if (!-f "$pkglibdir/citus.so")
{
	fail("Citus is installed in the PostgreSQL under test ($pkglibdir)");
	diag("CITUS IS MISSING: no $pkglibdir/citus.so. Run scripts/citus.sh (it builds Citus from "
		  . "the release tarball, see its header), or set MINHASH_SKIP_CITUS=1 to leave this test out.");
	done_testing();
	exit;
}

my $nrows = 3000;

sub citus_node
{
	my ($name, $preload) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = '$preload'
listen_addresses = '127.0.0.1'
log_statement = none
max_worker_processes = 16
citus.shard_count = 8
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

# minhash loaded at session start on every node, after citus
my $coord = citus_node('coord', 'citus,minhash');
my @workers = map { citus_node("worker$_", 'citus,minhash') } 1 .. 2;
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $_->port . ')') for @workers;

$coord->safe_psql('postgres', qq{
CREATE EXTENSION minhash;
CREATE FUNCTION win_sig(g bigint) RETURNS minhash LANGUAGE sql IMMUTABLE AS
  \$\$ SELECT public.minhash(ARRAY(SELECT (g / 50) * 1000 + g % 50 + i FROM generate_series(0, 59) i)) \$\$;
CREATE TABLE docs (id bigint NOT NULL, sig minhash);
SELECT create_distributed_table('docs', 'id');
INSERT INTO docs SELECT g, win_sig(g) FROM generate_series(0, $nrows - 1) g;
CREATE INDEX docs_lsh ON docs USING lsh (sig);
CREATE TABLE docs_ref AS SELECT * FROM docs;
CREATE INDEX docs_ref_lsh ON docs_ref USING lsh (sig);
ANALYZE docs, docs_ref;
});
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'docs'::regclass"),
	'8', 'docs is distributed in 8 shards');
my @per_worker = split /\n/, $coord->safe_psql('postgres', q{
	SELECT sum(result::int) FROM run_command_on_placements('docs', 'SELECT count(*) FROM %s')
	GROUP BY nodeport ORDER BY nodeport});
ok(@per_worker == 2 && $per_worker[0] > 0 && $per_worker[1] > 0 && $per_worker[0] + $per_worker[1] == $nrows,
	"both workers hold rows (@per_worker)");

# query signatures as literals (a plain row's signature)
my %sig = map { $_ => $coord->safe_psql('postgres', "SELECT sig FROM docs_ref WHERE id = $_") } (7, 1234, 2999);

# Compare like with like: an lsh scan returns the rows sharing a band with the
# query, a sequential scan every row at the threshold. The shards and the
# plain table are both read through their lsh indexes here.
# Each safe_psql on the coordinator is a new session, whose connections to
# the workers are new backends: they read the workers' settings as reloaded.
sub set_workers
{
	my ($name, $value) = @_;
	for my $w (@workers)
	{
		$w->safe_psql('postgres', "ALTER SYSTEM SET $name = $value; SELECT pg_reload_conf()");
		for (1 .. 100)
		{
			last if $w->safe_psql('postgres', "SHOW $name") eq $value;
			select(undef, undef, undef, 0.05);
		}
	}
	return;
}
set_workers('enable_seqscan', 'off');
my $index_only = 'SET enable_seqscan = off;';

sub ids
{
	my ($sql) = @_;
	return $coord->safe_psql('postgres', "$index_only $sql");
}

# --- % after SET, SET LOCAL ---
my %at;
my $mismatch = 0;
for my $t (0.3, 0.6, 0.9)
{
	for my $id (sort keys %sig)
	{
		my $q = "'$sig{$id}'::minhash";
		my $dist = ids("SET minhash.similarity_threshold = $t;
			SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % $q");
		my $ref = ids("SET minhash.similarity_threshold = $t;
			SELECT string_agg(id::text, ',' ORDER BY id) FROM docs_ref WHERE sig % $q");
		$mismatch++, diag("t = $t, query $id: distributed $dist, plain $ref") if $dist ne $ref;
		$at{$t}{$id} = $dist;
	}
}
is($mismatch, 0, '% after SET (0.3, 0.6, 0.9) gives the plain table\'s rows for every query');
# the thresholds matter (the workers' own setting, 0.5, would give other answers)
my @counts = map { scalar(split /,/, $at{$_}{1234}) } (0.3, 0.6, 0.9);
ok($counts[0] > $counts[1] && $counts[1] > $counts[2] && $counts[2] > 0,
	"the three thresholds give three answers (@counts rows)");
my $at05 = ids("SELECT string_agg(id::text, ',' ORDER BY id) FROM docs_ref WHERE sig % '$sig{1234}'");
ok($at05 ne $at{0.9}{1234} && $at05 ne $at{0.3}{1234}, 'and none of them is the answer at the default 0.5');

my $plan = ids("SET minhash.similarity_threshold = 0.6; EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM docs WHERE sig % '$sig{7}'");
like($plan, qr/Query: SELECT id FROM public\.docs_\d+ docs WHERE public\.minhash_similar\(sig, '[^']+'::public\.minhash, '0\.6'::double precision\)/,
	'the shard query carries the session\'s threshold: minhash_similar(sig, q, 0.6)') or diag $plan;
like($plan, qr/(Index Scan|Bitmap Index Scan) (using|on) docs_lsh_\d+.*\n(.*\n)*?.*Index Cond: \(docs\.sig %>= ROW\('[^']+'::minhash, '0\.6'::double precision\)::minhash_query\)/,
	'each shard answers it with its lsh index (%>= condition)') or diag $plan;

is(ids("BEGIN; SET LOCAL minhash.similarity_threshold = 0.9;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % '$sig{1234}'; COMMIT;"),
	$at{0.9}{1234}, 'SET LOCAL in a transaction');
is(ids("SET minhash.similarity_threshold = 0.3;
	BEGIN; SET LOCAL minhash.similarity_threshold = 0.9; COMMIT;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % '$sig{1234}'"),
	$at{0.3}{1234}, 'and after the transaction, the session\'s setting again');

# the function of %, called by name, reads the same setting
for my $t (0.3, 0.9)
{
	is(ids("SET minhash.similarity_threshold = $t;
		SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE minhash_similar(sig, '$sig{1234}')"),
		$at{$t}{1234}, "minhash_similar(sig, q) at the session's threshold ($t) too");
}

# --- cached plans ---
# A prepared statement without parameters has a generic plan from its first
# execution; a single-shard one (distribution column = $1) can have one too
# (forced here). Citus plans multi-shard statements with parameters afresh
# each time (it refuses generic plans for them), so those follow any setting.
my $near = 1239;    # Jaccard 55/65 = 0.85 with row 1234: in at 0.6, out at 0.9
ok((grep { $_ == $near } split /,/, $at{0.6}{1234}) && !(grep { $_ == $near } split /,/, $at{0.9}{1234}),
	"row $near is similar to row 1234 at 0.6, not at 0.9");
my $cached = ids(qq{
SET minhash.similarity_threshold = 0.6;
PREPARE p AS SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % '$sig{1234}';
PREPARE pr(bigint, minhash) AS SELECT count(*) FROM docs WHERE id = \$1 AND sig % \$2;
PREPARE pp(minhash) AS SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % \$1;
SET plan_cache_mode = force_generic_plan;
EXECUTE p; EXECUTE p; EXECUTE pr($near, '$sig{1234}'); EXECUTE pr($near, '$sig{1234}');
SET minhash.similarity_threshold = 0.9;
EXECUTE p; EXECUTE pr($near, '$sig{1234}');
BEGIN; SET LOCAL minhash.similarity_threshold = 0.3; EXECUTE p; EXECUTE pr($near, '$sig{1234}'); COMMIT;
EXECUTE p; EXECUTE pr($near, '$sig{1234}');
SELECT string_agg(name || ':' || (generic_plans > 0), ',' ORDER BY name) FROM pg_prepared_statements WHERE name IN ('p', 'pr');
RESET plan_cache_mode;
SET minhash.similarity_threshold = 0.6;
EXECUTE pp('$sig{1234}'); EXECUTE pp('$sig{1234}'); EXECUTE pp('$sig{1234}'); EXECUTE pp('$sig{1234}');
EXECUTE pp('$sig{1234}'); EXECUTE pp('$sig{1234}');
SET minhash.similarity_threshold = 0.3;
EXECUTE pp('$sig{1234}');
});
is($cached, join("\n", ($at{0.6}{1234}, $at{0.6}{1234}, 1, 1, $at{0.9}{1234}, 0, $at{0.3}{1234}, 1, $at{0.9}{1234}, 0),
		'p:true,pr:true', ($at{0.6}{1234}) x 6, $at{0.3}{1234}),
	'cached generic plans re-executed after SET, SET LOCAL and its end use the new threshold (multi-shard and single-shard)');
my $plpgsql = ids(qq{
CREATE FUNCTION near_ids(q minhash) RETURNS text LANGUAGE plpgsql AS
  \$\$ BEGIN RETURN (SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % q); END \$\$;
SET minhash.similarity_threshold = 0.6; SELECT near_ids('$sig{1234}'); SELECT near_ids('$sig{1234}');
SET minhash.similarity_threshold = 0.9; SELECT near_ids('$sig{1234}');
DROP FUNCTION near_ids(minhash);
});
is($plpgsql, join("\n", ($at{0.6}{1234}) x 2, $at{0.9}{1234}),
	'a PL/pgSQL function follows the setting too');

# --- minhash_similar(sig, q, t) and ORDER BY <%> LIMIT ---
$mismatch = 0;
for my $t (0.3, 0.75)
{
	for my $id (sort keys %sig)
	{
		my $sql = "SELECT string_agg(id::text, ',' ORDER BY id) FROM %s WHERE minhash_similar(sig, '$sig{$id}', $t)";
		$mismatch++ if ids(sprintf($sql, 'docs')) ne ids(sprintf($sql, 'docs_ref'));
	}
}
is($mismatch, 0, 'minhash_similar(sig, q, t) gives the plain table\'s rows');

# Estimates are multiples of 1/128, so the 10th distance may tie with rows
# left out: the k nearest distances must be equal, and the rows strictly
# nearer than the 10th.
my $knn = "SELECT id, round((sig <%%> '%s')::numeric, 6) FROM %s ORDER BY sig <%%> '%s' LIMIT 10";
$mismatch = 0;
for my $id (sort keys %sig)
{
	my %got;
	for my $t ('docs', 'docs_ref')
	{
		my @rows = map { [ split /\|/ ] } split /\n/, ids(sprintf($knn, $sig{$id}, $t, $sig{$id}));
		my $last = $rows[-1][1];
		$got{$t} = join(',', map { $_->[1] } @rows) . ' / '
		  . join(',', sort { $a <=> $b } map { $_->[0] } grep { $_->[1] < $last } @rows);
	}
	$mismatch++, diag("query $id: $got{docs} against $got{docs_ref}") if $got{docs} ne $got{docs_ref};
}
is($mismatch, 0, 'ORDER BY sig <%> q LIMIT 10: the plain table\'s distances, and rows nearer than the 10th');
$plan = ids("EXPLAIN (VERBOSE, COSTS OFF) " . sprintf($knn, $sig{7}, 'docs', $sig{7}));
like($plan, qr/Query: SELECT .* FROM public\.docs_\d+ docs (?:WHERE true )?ORDER BY .*OPERATOR\(public\.<%>\).* LIMIT '10'::bigint/,
	'ORDER BY <%> and the LIMIT are pushed to every shard') or diag $plan;
like($plan, qr/Index Scan using docs_lsh_\d+ on public\.docs_\d+ docs\n(.*\n)*?.*Order By: \(docs\.sig <%> /,
	'each shard reads its lsh index in distance order') or diag $plan;

# --- a join: query signatures in a reference table, probed on every shard ---
$coord->safe_psql('postgres', qq{
CREATE TABLE queries (qid int, sig minhash);
SELECT create_reference_table('queries');
INSERT INTO queries SELECT g, win_sig(g * 30 + 3) FROM generate_series(0, 99) g;
CREATE TABLE queries_ref AS SELECT * FROM queries;
ANALYZE queries, queries_ref;
});
my $join = "SET minhash.similarity_threshold = 0.6;
	SELECT count(*), sum(q.qid * 100000 + d.id) FROM queries%s q JOIN docs%s d ON d.sig % q.sig";
is(ids(sprintf($join, '', '')), ids(sprintf($join, '_ref', '_ref')),
	'a join of query signatures with the distributed table gives the plain join\'s pairs');
# Query signatures in a distributed table: Citus joins two distributed tables
# only on their distribution columns, so a similarity join is its error, with
# a hint naming the forms it runs; the materialized CTE of the hint gives the
# plain join's pairs.
$coord->safe_psql('postgres', q{
CREATE TABLE queries_d (qid int NOT NULL, sig minhash);
SELECT create_distributed_table('queries_d', 'qid');
INSERT INTO queries_d SELECT * FROM queries_ref;
});
my ($ret, $out, $err);
for my $cond ('d.sig % q.sig', 'd.sig %>= ROW(q.sig, 0.6)::minhash_query', 'minhash_similar(d.sig, q.sig, 0.6)')
{
	($ret, $out, $err) = $coord->psql('postgres', "SELECT count(*) FROM queries_d q JOIN docs d ON $cond");
	like($err, qr/ERROR:  complex joins are only supported .*\nHINT:  Citus joins two distributed tables only on their distribution columns, not on a similarity condition\. Put one side's signatures in a reference table or a materialized CTE/,
		"a join of two distributed tables on $cond is Citus's error with a hint, not an answer");
}
is(ids("SET minhash.similarity_threshold = 0.6; WITH q AS MATERIALIZED (SELECT * FROM queries_d)
	SELECT count(*), sum(q.qid * 100000 + d.id) FROM q JOIN docs d ON d.sig % q.sig"),
	ids(sprintf($join, '_ref', '_ref')), 'the hint\'s materialized CTE gives the plain join\'s pairs');
($ret, $out, $err) = $coord->psql('postgres', 'SELECT count(*) FROM queries_d q JOIN docs d ON d.id = q.qid + 1');
unlike($err, qr/similarity condition/, 'a join without a signature comparison gets no such hint');

# With the workers' own planner settings, each shard probes its lsh index
# once per query row (a nested loop over the reference table's 100 rows),
# small as the shards are (375 rows): the probes after the first find the
# index's pages cached, as the cost estimate counts them (lsh_cost.cpp). (For
# a handful of query rows a sequential scan of so small a shard is cheaper
# when nothing is cached, and is chosen.)
set_workers('enable_seqscan', 'on');
$plan = $coord->safe_psql('postgres', "SET citus.explain_all_tasks = on; SET minhash.similarity_threshold = 0.6;
	EXPLAIN (COSTS OFF) SELECT q.qid, d.id FROM queries q JOIN docs d ON d.sig % q.sig");
my @tasks = split /->  Task\n/, $plan;
shift @tasks;
my $indexed_tasks = grep { /(?:Index Scan using|Bitmap Index Scan on) docs_lsh_\d+/ } @tasks;
is(scalar(@tasks), 8, 'the join runs as one task per shard') or diag $plan;
is($indexed_tasks, 8, 'with default settings, every shard probes its lsh index per query row')
  or diag $plan;
set_workers('enable_seqscan', 'off');

# --- without minhash loaded at session start: % is refused, not answered at 0.5 ---
$coord->append_conf('postgresql.conf', "shared_preload_libraries = 'citus'");
$coord->restart;
($ret, $out, $err) = $coord->psql('postgres',
	"SET minhash.similarity_threshold = 0.9; SELECT count(*) FROM docs WHERE sig % '$sig{7}'");
like($err, qr/ERROR:  operator % on a Citus table needs the minhash library loaded at session start.*HINT:  Add minhash to shared_preload_libraries after citus/s,
	'without minhash preloaded, % on a distributed table is an error with a hint');
($ret, $out, $err) = $coord->psql('postgres',
	"SET minhash.similarity_threshold = 0.9; SELECT count(*) FROM docs_ref WHERE sig % '$sig{7}';
	 SELECT count(*) FROM docs WHERE sig % '$sig{7}'");
like($err, qr/needs the minhash library loaded at session start/,
	'also once the library is loaded in the session (no answer that depends on what ran first)');
is($coord->safe_psql('postgres', "SELECT count(*) FROM docs WHERE minhash_similar(sig, '$sig{7}', 0.9)"),
	scalar(split /,/, $at{0.9}{7}), 'minhash_similar(sig, q, t) needs no preloading');
$coord->append_conf('postgresql.conf', "shared_preload_libraries = 'citus,minhash'");
$coord->restart;

# --- all pairs and clusters ---
# (the single-server functions on docs_ref read its index: compare the sets;
# each result is computed once, into a temporary table)
sub same_set
{
	my ($a, $b, $keep) = @_;
	return $coord->safe_psql('postgres', qq{
		CREATE TEMP TABLE a AS $a; CREATE TEMP TABLE b AS $b;
		SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
		       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)
		       || '|' || coalesce(($keep)::text, '')});
}
for my $t (0.5, 0.3)
{
	my ($n, $m, $diff) = split /\|/, same_set(
		"SELECT * FROM minhash_similar_pairs('docs_lsh', 'id', $t)",
		"SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', $t)", 'NULL');
	ok($n == $m && $diff == 0 && $n > 10000,
		"minhash_similar_pairs at $t: the plain table's $m pairs, each once ($n, $diff differ)");
}
my ($n, $m, $diff) = split /\|/, same_set(
	"SELECT * FROM minhash_similar_pairs('docs_lsh', 'id', key_type => NULL::text, threshold => 0.85)",
	"SELECT * FROM minhash_similar_pairs('docs_ref_lsh', 'id', key_type => NULL::text, threshold => 0.85)", 'NULL');
ok($n == $m && $diff == 0 && $n > 0, "keys of another type (text): the same $m pairs ($diff differ)");
for my $mode ('connected', 'representative')
{
	for my $t ($mode eq 'connected' ? (0.5) : (0.5, 0.85))
	{
		my $groups;
		($n, $m, $diff, $groups) = split /\|/, same_set(
			"SELECT * FROM minhash_clusters('docs_lsh', 'id', $t, mode => '$mode')",
			"SELECT * FROM minhash_clusters('docs_ref_lsh', 'id', $t, mode => '$mode')",
			"SELECT count(DISTINCT cluster_id) FROM a");
		ok($n == $m && $diff == 0 && $n > 0,
			"minhash_clusters $mode at $t: the plain table's clusters ($m rows, $diff differ)");
		is("$groups/$n", "60/$nrows", 'connected clusters at 0.5 are the 60 groups')
		  if $mode eq 'connected' && $t == 0.5;
	}
}
# compact signatures (16 bits) and the oph family: the band keys and the
# first shared band are computed from the values the shards' indexes key
# (widened, densified), not from the stored form
$coord->safe_psql('postgres', q{
CREATE TABLE docs_c (id bigint NOT NULL, sig16 minhash, sigoph minhash);
SELECT create_distributed_table('docs_c', 'id', colocate_with => 'docs');
INSERT INTO docs_c SELECT id, sig::minhash(128, 16),
	minhash(ARRAY(SELECT (id / 50) * 1000 + id % 50 + i FROM generate_series(0, 59) i), 'oph'::minhash_family)
	FROM docs_ref WHERE id < 1000;
CREATE INDEX docs_c_16 ON docs_c USING lsh (sig16);
CREATE INDEX docs_c_oph ON docs_c USING lsh (sigoph);
CREATE TABLE docs_c_ref AS SELECT * FROM docs_c;
CREATE INDEX docs_c_ref_16 ON docs_c_ref USING lsh (sig16);
CREATE INDEX docs_c_ref_oph ON docs_c_ref USING lsh (sigoph);
});
for my $kind ('16', 'oph')
{
	for my $t (0.5, 0.8)
	{
		($n, $m, $diff) = split /\|/, same_set(
			"SELECT * FROM minhash_similar_pairs('docs_c_$kind', 'id', $t)",
			"SELECT * FROM minhash_similar_pairs('docs_c_ref_$kind', 'id', $t)", 'NULL');
		ok($n == $m && $diff == 0 && $n > 100,
			"minhash_similar_pairs on signatures '$kind' at $t: the plain table's $m pairs ($n, $diff differ)");
	}
}
($n, $m, $diff) = split /\|/, same_set(
	"SELECT * FROM minhash_clusters('docs_c_16', 'id', 0.5, mode => 'representative')",
	"SELECT * FROM minhash_clusters('docs_c_ref_16', 'id', 0.5, mode => 'representative')", 'NULL');
ok($n == $m && $diff == 0 && $n > 100,
	"minhash_clusters on 16-bit signatures: the plain table's clusters ($m rows, $diff differ)");

# A role that may read the table (and create the scratch tables) but does
# not own it: on one server SELECT suffices, and so it does here (the
# shards' index parameters come from the shell index's options and the k of
# a signature, not from minhash_lsh_stats on the shards, their owner's)
$coord->safe_psql('postgres', 'CREATE ROLE pairs_reader LOGIN; GRANT SELECT ON docs, docs_ref TO pairs_reader;
	GRANT CREATE ON SCHEMA public TO pairs_reader');
for my $f ("minhash_similar_pairs('%s', 'id', 0.85)", "minhash_clusters('%s', 'id', 0.85, mode => 'representative')")
{
	($n, $m, $diff) = split /\|/, $coord->safe_psql('postgres', sprintf(q{
		SET ROLE pairs_reader;
		CREATE TEMP TABLE a AS SELECT * FROM %s; CREATE TEMP TABLE b AS SELECT * FROM %s;
		SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
		       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)},
		sprintf($f, 'docs_lsh'), sprintf($f, 'docs_ref_lsh')));
	ok($n == $m && $diff == 0 && $n > 1000, "with SELECT only, $f gives the plain table's $m rows ($n, $diff differ)");
}
$coord->safe_psql('postgres', 'REVOKE CREATE ON SCHEMA public FROM pairs_reader;
	REVOKE SELECT ON docs, docs_ref FROM pairs_reader; DROP ROLE pairs_reader');

# --- clusters with keep: the row kept is chosen as on one server ---
# len: 5 values, so ties in every cluster (broken by key), NULL in one row of
# 11; label: varchar(20) in an ICU collation, 4 values a < B < c < D (in
# "C": B < D < a < c), NULL in one row of 13; p: a point, which has no btree
# order; size: a domain over int with a CHECK constraint (its values travel
# in the base type), 7 values.
my $keep_cols = q{id bigint NOT NULL, sig minhash, len int, label varchar(20) COLLATE "und-x-icu", p point, size keep_size};
my $keep_rows = q{SELECT id, sig, CASE WHEN id % 11 = 0 THEN NULL ELSE (id * 7) % 5 END,
	CASE WHEN id % 13 = 0 THEN NULL WHEN id % 2 = 0 THEN chr((97 + (id * 7) % 4)::int) ELSE chr((65 + (id * 7) % 4)::int) END,
	point(id, id), (id * 3) % 7 FROM docs_ref WHERE id < 1000};
$coord->safe_psql('postgres', qq{
CREATE DOMAIN keep_size AS int CHECK (VALUE >= 0);
CREATE TABLE docs_k ($keep_cols);
SELECT create_distributed_table('docs_k', 'id', colocate_with => 'docs');
INSERT INTO docs_k $keep_rows;
CREATE INDEX docs_k_lsh ON docs_k USING lsh (sig);
CREATE TABLE docs_k_ref ($keep_cols);
INSERT INTO docs_k_ref $keep_rows;
CREATE INDEX docs_k_ref_lsh ON docs_k_ref USING lsh (sig);
CREATE TABLE docs_k_c (LIKE docs_k_ref);
ALTER TABLE docs_k_c ALTER COLUMN label TYPE varchar(20) COLLATE "C";
INSERT INTO docs_k_c $keep_rows;
CREATE INDEX docs_k_c_lsh ON docs_k_c USING lsh (sig);
});
my %kept;
for my $keep ('len', 'label')
{
	for my $desc ('false', 'true')
	{
		for my $case ([ 'connected', 0.5 ], [ 'representative', 0.5 ], [ 'representative', 0.85 ])
		{
			my ($mode, $t) = @$case;
			my $f = "minhash_clusters('%s', 'id', $t, mode => '$mode', keep => '$keep', keep_desc => $desc)";
			my $kept;
			($n, $m, $diff, $kept) = split /\|/, same_set(
				'SELECT * FROM ' . sprintf($f, 'docs_k_lsh'), 'SELECT * FROM ' . sprintf($f, 'docs_k_ref_lsh'),
				q{SELECT string_agg(DISTINCT cluster_id::text, ',' ORDER BY cluster_id::text) FROM a});
			ok($n == $m && $diff == 0 && $n > 100,
				"minhash_clusters $mode at $t, keep => '$keep', keep_desc => $desc: the plain table's clusters ($m rows, $n, $diff differ)");
			$kept{"$keep $desc"} = $kept if $mode eq 'connected';
		}
	}
}
($n, $m, $diff) = split /\|/, same_set(
	"SELECT * FROM minhash_clusters('docs_k_lsh', 'id', 0.5, mode => 'representative', keep => 'size', keep_desc => true)",
	"SELECT * FROM minhash_clusters('docs_k_ref_lsh', 'id', 0.5, mode => 'representative', keep => 'size', keep_desc => true)", 'NULL');
ok($n == $m && $diff == 0 && $n > 100, "keep => 'size', a domain: the plain table's clusters ($m rows, $n, $diff differ)");
# the keep column decides: the four choices and the smallest key keep five different sets of rows
$kept{none} = $coord->safe_psql('postgres',
	q{SELECT string_agg(DISTINCT cluster_id::text, ',' ORDER BY cluster_id::text) FROM minhash_clusters('docs_k_lsh', 'id', 0.5)});
my %distinct = map { $_ => 1 } values %kept;
is(scalar(keys %distinct), 5, 'keep by len or label, ascending or descending: five different sets of kept rows');
# and the collation: in "C" the kept rows are others
for my $desc ('false', 'true')
{
	my $f = "minhash_clusters('%s', 'id', 0.5, keep => 'label', keep_desc => $desc)";
	cmp_ok($coord->safe_psql('postgres', sprintf('SELECT count(*) FROM ((SELECT * FROM %s) EXCEPT (SELECT * FROM %s)) x',
		sprintf($f, 'docs_k_c_lsh'), sprintf($f, 'docs_k_lsh'))), '>', 0,
		"the label column's collation decides which row is kept (the \"C\" collation keeps others; keep_desc => $desc)");
}

# SELECT on the keep column: 42501 as on one server; a type without a btree order: 42883
# (a role with SELECT on the other columns: Citus reads ctid too)
$coord->safe_psql('postgres', 'CREATE ROLE keep_reader LOGIN; GRANT SELECT (id, sig, p, ctid) ON docs_k, docs_k_ref TO keep_reader;
	GRANT CREATE ON SCHEMA public TO keep_reader');
my $as_reader = q{SET ROLE keep_reader;
	CREATE TEMP TABLE a AS SELECT * FROM %s; CREATE TEMP TABLE b AS SELECT * FROM %s;
	SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
	       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)};
my $f = "minhash_clusters('%s', 'id', 0.5, mode => 'representative')";
($n, $m, $diff) = split /\|/, $coord->safe_psql('postgres', sprintf($as_reader, sprintf($f, 'docs_k_lsh'), sprintf($f, 'docs_k_ref_lsh')));
ok($n == $m && $diff == 0 && $n > 100, "with SELECT on the other columns, clusters without keep: the plain table's $m rows ($n, $diff differ)");
for my $t ('docs_k', 'docs_k_ref')
{
	for my $case ([ 'len', qr/ERROR:  42501: permission denied for table $t\n/ ],
		[ 'p', qr/ERROR:  42883: could not identify an ordering operator for type point\n/ ])
	{
		($ret, $out, $err) = $coord->psql('postgres', qq{\\set VERBOSITY verbose
			SET ROLE keep_reader; SELECT count(*) FROM minhash_clusters('${t}_lsh', 'id', 0.5, keep => '$case->[0]')});
		like($err, $case->[1], "keep => '$case->[0]' on $t (not granted; a point): the error of one server");
	}
}
$coord->safe_psql('postgres', 'GRANT SELECT (len) ON docs_k, docs_k_ref TO keep_reader');
$f = "minhash_clusters('%s', 'id', 0.5, mode => 'representative', keep => 'len')";
($n, $m, $diff) = split /\|/, $coord->safe_psql('postgres', sprintf($as_reader, sprintf($f, 'docs_k_lsh'), sprintf($f, 'docs_k_ref_lsh')));
ok($n == $m && $diff == 0 && $n > 100, "with SELECT on the keep column granted: the plain table's $m rows ($n, $diff differ)");
$coord->safe_psql('postgres', 'REVOKE CREATE ON SCHEMA public FROM keep_reader;
	REVOKE SELECT ON docs_k, docs_k_ref FROM keep_reader; DROP ROLE keep_reader');

# --- exact => true: the exact similarity of the shingles, as on one server ---
# Rows 1-6 as in sql/pairs_exact_bound.sql (5-word shingles; rows 1 and 2
# beyond exact verification's bound at work_mem = 64kB, 3 near it), 20 groups
# of 10 windows of 60 words (Jaccard from 1 down to 0.7 on their shingles), a
# row whose text is NULL beside its twin's signature (never similar), and
# two empty texts (similarity 1).
my $exact_rows = q{
	SELECT id, body, CASE WHEN id = 7 THEN minhash('a b c d e f') ELSE minhash(body) END FROM (VALUES
	  (1, exb_words(1, 3000)),
	  (2, exb_words(1, 300, 'x') || ' ' || exb_words(301, 3000)),
	  (3, exb_words(1, 2000)),
	  (4, exb_words(5001, 5100)),
	  (5, exb_words(5001, 5090) || ' ' || exb_words(1, 10, 'y')),
	  (6, exb_words(2501, 3000)),
	  (7, NULL), (8, 'a b c d e f'), (9, ''), (10, '')) v(id, body)
	UNION ALL
	SELECT 100 + g, exb_words((g / 10) * 1000 + g % 10 * 2, (g / 10) * 1000 + g % 10 * 2 + 59), NULL
	FROM generate_series(0, 199) g};
$coord->safe_psql('postgres', qq{
CREATE FUNCTION exb_words(lo int, hi int, prefix text DEFAULT 'w') RETURNS text
LANGUAGE sql IMMUTABLE AS \$\$ SELECT string_agg(prefix || i, ' ' ORDER BY i) FROM generate_series(lo, hi) i \$\$;
CREATE TABLE docs_x (id bigint NOT NULL, body text, sig minhash);
SELECT create_distributed_table('docs_x', 'id', colocate_with => 'docs');
CREATE TABLE docs_x_ref (LIKE docs_x);
INSERT INTO docs_x $exact_rows;
INSERT INTO docs_x_ref $exact_rows;
UPDATE docs_x SET sig = minhash(body) WHERE sig IS NULL;
UPDATE docs_x_ref SET sig = minhash(body) WHERE sig IS NULL;
CREATE INDEX docs_x_lsh ON docs_x USING lsh (sig) WITH (threshold = 0.1);
CREATE INDEX docs_x_ref_lsh ON docs_x_ref USING lsh (sig) WITH (threshold = 0.1);
});
for my $wm ('4MB', '64kB')
{
	for my $case ([ 'minhash_similar_pairs', 0.15, '' ], [ 'minhash_similar_pairs', 0.65, '' ],
		[ 'minhash_similar_pairs', 0.5, ", unit => 'char', k => 4" ],
		[ 'minhash_clusters', 0.65, ", mode => 'connected'" ], [ 'minhash_clusters', 0.65, ", mode => 'representative'" ],
		[ 'minhash_clusters', 0.65, ", mode => 'representative', keep => 'id', keep_desc => true" ])
	{
		my ($fn, $t, $more) = @$case;
		my $f = "$fn('%s', 'id', $t, exact => true, text_column => 'body'$more)";
		($ret, $out, $err) = $coord->psql('postgres', sprintf(q{SET work_mem = '%s';
			CREATE TEMP TABLE a AS SELECT * FROM %s; CREATE TEMP TABLE b AS SELECT * FROM %s;
			SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
			       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)},
			$wm, sprintf($f, 'docs_x_lsh'), sprintf($f, 'docs_x_ref_lsh')));
		($n, $m, $diff) = split /\|/, $out;
		ok($ret == 0 && $n == $m && $diff == 0 && $n > 100,
			"$f at work_mem $wm: the plain table's $m rows ($n, $diff differ)") or diag $err;
		# the NOTICE of the rows too large: the same, once per call
		my @notices = $err =~ /(NOTICE:  .*)/g;
		is(scalar(@notices), $wm eq '64kB' ? 2 : 0,
			"... with one NOTICE of rows too large each at 64kB, none at 4MB") or diag $err;
		is($notices[0], $notices[1], '... the same NOTICE') if @notices == 2;
	}
}
like($err, qr/NOTICE:  minhash_clusters: 2 rows too large for exact verification within work_mem were verified by their estimate/,
	'the NOTICE counts rows 1 and 2, each once');
# the exact values (by brute force on the plain table)
my $exact = $coord->safe_psql('postgres', q{
	SELECT string_agg(key_a || '-' || key_b || ':' || round(similarity::numeric, 4), ',' ORDER BY key_a, key_b)
	FROM minhash_similar_pairs('docs_x_lsh', 'id', 0.6, exact => true, text_column => 'body') WHERE key_a < 100});
like($exact, qr/(^|,)9-10:1\.0000(,|$)/, 'two empty texts: similarity 1');
unlike($exact, qr/(^|,)7-8:/, 'a NULL text beside its twin\'s signature: never similar');
is($exact,
	$coord->safe_psql('postgres', q{
	SELECT string_agg(a.id || '-' || b.id || ':' || round(jaccard(minhash_shingles(a.body), minhash_shingles(b.body))::numeric, 4), ',' ORDER BY a.id, b.id)
	FROM docs_x_ref a JOIN docs_x_ref b ON a.id < b.id
	WHERE a.id < 100 AND b.id < 100 AND jaccard(minhash_shingles(a.body), minhash_shingles(b.body)) >= 0.6}),
	'exact => true: the rows\' exact similarities (at 4MB), an empty pair 1, a NULL text never similar');
# what one server refuses, refused alike (text_reader may read every column but body)
$coord->safe_psql('postgres', 'CREATE ROLE text_reader LOGIN; GRANT SELECT (id, sig, ctid) ON docs_x, docs_x_ref TO text_reader;
	GRANT CREATE ON SCHEMA public TO text_reader');
for my $case ([ "text_column => 'sig'", qr/ERROR:  42804: text column "sig" is of type (public\.)?minhash, not a string type/ ],
	[ '', qr/ERROR:  22023: exact verification needs the text of the rows/ ],
	[ "text_column => 'body'", qr/ERROR:  42501: permission denied for table docs_x/, 'SET ROLE text_reader;' ])
{
	for my $t ('docs_x', 'docs_x_ref')
	{
		($ret, $out, $err) = $coord->psql('postgres', qq{\\set VERBOSITY verbose
			@{[ $case->[2] // '' ]} SELECT count(*) FROM minhash_similar_pairs('${t}_lsh', 'id', exact => true@{[ $case->[0] ? ", $case->[0]" : '' ]})});
		like($err, $case->[1], "exact => true, $case->[0] on $t@{[ $case->[2] ? ' without SELECT on body' : '' ]}: the error of one server");
	}
}
is($coord->safe_psql('postgres', "SET ROLE text_reader; SELECT count(*) > 100 FROM minhash_similar_pairs('docs_x_lsh', 'id', 0.6)"),
	't', '... which gives text_reader the pairs on the estimate');
$coord->safe_psql('postgres', 'REVOKE CREATE ON SCHEMA public FROM text_reader;
	REVOKE SELECT ON docs_x, docs_x_ref FROM text_reader; DROP ROLE text_reader');

# --- the scratch tables: names nobody can take beforehand; never read-only ---
# Another role with CREATE on the schema takes the names the calling backend
# would once have used (its pid and a counter): the call does not fail.
$coord->safe_psql('postgres', 'CREATE ROLE squatter; GRANT CREATE ON SCHEMA public TO squatter');
($ret, $out, $err) = $coord->psql('postgres', q{
	SELECT pg_backend_pid() AS pid \gset
	SET ROLE squatter;
	SELECT format('CREATE TABLE public.minhash_pairs_%s_%s_%s ()', :pid, i, s)
	FROM generate_series(1, 2) i, unnest('{b,c,e}'::text[]) s \gexec
	RESET ROLE;
	SELECT (SELECT count(*) FROM minhash_similar_pairs('docs_x_lsh', 'id', 0.6)) || '|' ||
	       (SELECT count(*) FROM minhash_similar_pairs('docs_x_ref_lsh', 'id', 0.6));
	SET ROLE squatter;
	SELECT format('DROP TABLE public.minhash_pairs_%s_%s_%s', :pid, i, s)
	FROM generate_series(1, 2) i, unnest('{b,c,e}'::text[]) s \gexec});
($n, $m) = split /\|/, $out;
ok($ret == 0 && $n == $m && $n > 100,
	"another role's tables named after the calling backend: the plain table's $m pairs ($n)") or diag $err;
$coord->safe_psql('postgres', 'REVOKE CREATE ON SCHEMA public FROM squatter; DROP ROLE squatter');
# The Citus path writes its scratch tables: in a read-only transaction, an
# error that says so (one server's pairs write nothing, and run).
for my $case ([ 'BEGIN READ ONLY;', 'minhash_similar_pairs', '' ],
	[ 'SET default_transaction_read_only = on;', 'minhash_clusters', ", mode => 'representative'" ])
{
	my ($ro, $fn, $more) = @$case;
	($ret, $out, $err) = $coord->psql('postgres', qq{\\set VERBOSITY verbose
		$ro SELECT count(*) FROM $fn('docs_x_lsh', 'id', 0.6$more)});
	like($err, qr/ERROR:  25006: $fn on Citus table "docs_x" cannot run in a read-only transaction\n(.*\n)*HINT:  Call it in a read-write transaction/,
		"$ro $fn on a distributed table: the error of a read-only transaction, with a hint");
	is($coord->safe_psql('postgres', "$ro SELECT count(*) > 100 FROM $fn('docs_x_ref_lsh', 'id', 0.6$more)"),
		't', "... and on the plain table, the pairs");
}

# --- an attacker's table: code of its owner never runs as the caller ---
# mallory owns tables whose columns are of her domains (a CHECK calling her
# function) and of her enum (an assignment cast to bigint through her
# function); her function raises an error when it runs as anyone else (it
# is strict: NULL::mallory_id in the caller's own query runs none of it). One
# server runs such code as the table owner; Citus cannot, so it must not
# run (a domain's values travel in its base type) or the call is refused.
$coord->safe_psql('postgres', q{
CREATE ROLE mallory LOGIN;
GRANT CREATE ON SCHEMA public TO mallory;
CREATE FUNCTION mallory_ok(v bigint) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS
  $$ BEGIN IF current_user <> 'mallory' THEN RAISE EXCEPTION 'mallory''s code ran as %', current_user; END IF; RETURN true; END $$;
ALTER FUNCTION mallory_ok(bigint) OWNER TO mallory;
SET ROLE mallory;
CREATE DOMAIN mallory_id AS bigint CHECK (mallory_ok(VALUE));
CREATE TYPE mallory_mood AS ENUM ('a', 'b');
RESET ROLE;
});
# the cast runs where the statements run: create it on every node as she would
for my $node ($coord, @workers)
{
	$node->safe_psql('postgres', q{
SET citus.enable_ddl_propagation = off;
CREATE FUNCTION mallory_mood_int(m mallory_mood) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS
  $$ BEGIN PERFORM public.mallory_ok(0::bigint); RETURN CASE WHEN m = 'a' THEN 1 ELSE 2 END; END $$;
ALTER FUNCTION mallory_mood_int(mallory_mood) OWNER TO mallory;
SET ROLE mallory;
CREATE CAST (mallory_mood AS bigint) WITH FUNCTION mallory_mood_int(mallory_mood) AS ASSIGNMENT;
});
}
$coord->safe_psql('postgres', q{
SET ROLE mallory;
CREATE TABLE mal_d (id mallory_id NOT NULL, sig minhash);
SELECT create_distributed_table('mal_d', 'id');
INSERT INTO mal_d SELECT g, win_sig(g) FROM generate_series(0, 199) g;
CREATE INDEX mal_d_lsh ON mal_d USING lsh (sig);
CREATE TABLE mal_k (id bigint NOT NULL, k mallory_id, mood mallory_mood, ks mallory_id[], sig minhash);
SELECT create_distributed_table('mal_k', 'id');
INSERT INTO mal_k SELECT g, g, 'a', ARRAY[g], win_sig(g) FROM generate_series(0, 199) g;
CREATE INDEX mal_k_lsh ON mal_k USING lsh (sig);
CREATE TABLE mal_k_ref AS SELECT * FROM mal_k;
CREATE INDEX mal_k_ref_lsh ON mal_k_ref USING lsh (sig);
});
# a distribution column of her domain: refused before anything runs
($ret, $out, $err) = $coord->psql('postgres', q{\set VERBOSITY verbose
	SELECT count(*) FROM minhash_similar_pairs('mal_d_lsh', 'id', 0.5)});
unlike($err, qr/mallory's code ran as/, "a distribution column of the owner's domain: its CHECK never runs as the caller");
like($err, qr/ERROR:  0A000: minhash_similar_pairs on Citus table "mal_d" does not support distribution columns of types with a domain's CHECK constraint/,
	'... the call is refused, saying why');
# a key column of her domain, returned as itself: its values travel in the base type
($ret, $out, $err) = $coord->psql('postgres',
	q{SELECT count(*) FROM minhash_similar_pairs('mal_k_lsh', 'k', NULL::mallory_id, 0.5)});
unlike($err, qr/mallory's code ran as/, "a key column of the owner's domain: its CHECK never runs as the caller");
is($out, $coord->safe_psql('postgres',
	q{SELECT count(*) FROM minhash_similar_pairs('mal_k_ref_lsh', 'k', NULL::mallory_id, 0.5)}),
	'... and the pairs are the plain table\'s') or diag $err;
cmp_ok($out || 0, '>', 100, '... which are many');
# an array of her domain (its elements are checked wherever it is stored): refused as a key and as keep
for my $case ([ q{minhash_similar_pairs('mal_k_lsh', 'ks', NULL::mallory_id[], 0.5)}, 'keys' ],
	[ q{minhash_clusters('mal_k_lsh', 'id', 0.5, keep => 'ks')}, 'keep columns' ])
{
	($ret, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose
		SELECT count(*) FROM $case->[0]");
	unlike($err, qr/mallory's code ran as/, "$case->[0]: the CHECK of her domain in an array never runs as the caller");
	like($err, qr/ERROR:  0A000: minhash_\w+ on Citus table "mal_k" does not support $case->[1] of types with a domain's CHECK constraint in their elements or fields/,
		'... the call is refused, saying why');
}
# a key column converted by her cast: refused (one server runs it as her)
($ret, $out, $err) = $coord->psql('postgres', q{\set VERBOSITY verbose
	SELECT count(*) FROM minhash_similar_pairs('mal_k_lsh', 'mood', NULL::bigint, 0.5)});
unlike($err, qr/mallory's code ran as/, "a key converted by the owner's cast: the cast never runs as the caller");
like($err, qr/ERROR:  0A000: minhash_similar_pairs on Citus table "mal_k" does not support key conversions that call user code/,
	'... the call is refused, saying why');
is($coord->safe_psql('postgres',
	q{SELECT count(*) > 100 FROM minhash_similar_pairs('mal_k_ref_lsh', 'mood', NULL::bigint, 0.5)}), 't',
	'... which one server runs as the table owner');

# a collation outside pg_catalog, visible on the caller's search_path: named
# with its schema in the statements (which run with search_path pg_catalog)
$coord->safe_psql('postgres', q{
CREATE COLLATION public.und_icu (provider = icu, locale = 'und');
CREATE TABLE coll (id bigint NOT NULL, sig minhash, label text COLLATE public.und_icu);
SELECT create_distributed_table('coll', 'id');
INSERT INTO coll SELECT g, win_sig(g), chr(65 + (g % 4)::int) FROM generate_series(0, 199) g;
CREATE INDEX coll_lsh ON coll USING lsh (sig);
CREATE TABLE coll_ref AS SELECT * FROM coll;
CREATE INDEX coll_ref_lsh ON coll_ref USING lsh (sig);
});
for my $f ("minhash_clusters('%s', 'id', 0.5, keep => 'label')", "minhash_similar_pairs('%s', 'label', NULL::text, 0.5)")
{
	($ret, $out, $err) = $coord->psql('postgres', sprintf(q{
		CREATE TEMP TABLE a AS SELECT * FROM %s; CREATE TEMP TABLE b AS SELECT * FROM %s;
		SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
		       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)},
		sprintf($f, 'coll_lsh'), sprintf($f, 'coll_ref_lsh')));
	my ($n, $m, $diff) = split /\|/, $out // '';
	ok($ret == 0 && $n == $m && $diff == 0 && $n > 100,
		"$f, a column in collation public.und_icu: the plain table's rows") or diag $err;
}

# names that need quoting, and a collation on the caller's search_path:
# a schema, table, columns, index and collation with quotes, dots and spaces
$coord->safe_psql('postgres', q{
CREATE SCHEMA "we""ird sch.ema";
CREATE COLLATION "we""ird sch.ema"."und icu" (provider = icu, locale = 'und');
CREATE TABLE "we""ird sch.ema"."t""b l" ("i d" bigint NOT NULL, "s.ig" minhash, "la""bel" text COLLATE "we""ird sch.ema"."und icu");
SELECT create_distributed_table('"we""ird sch.ema"."t""b l"', 'i d');
INSERT INTO "we""ird sch.ema"."t""b l" SELECT * FROM coll_ref;
CREATE INDEX "i""x" ON "we""ird sch.ema"."t""b l" USING lsh ("s.ig");
});
($ret, $out, $err) = $coord->psql('postgres', q{
	SET search_path = "we""ird sch.ema", public;
	CREATE TEMP TABLE a AS SELECT * FROM minhash_clusters('"we""ird sch.ema"."i""x"', 'i d', 0.5, keep => 'la"bel');
	CREATE TEMP TABLE b AS SELECT * FROM minhash_clusters('coll_ref_lsh', 'id', 0.5, keep => 'label');
	SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
	       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)});
my ($wn, $wm, $wdiff) = split /\|/, $out // '';
ok($ret == 0 && $wn == $wm && $wdiff == 0 && $wn > 100,
	'a table, its columns, index, schema and collation named with quotes, dots and spaces: the plain table\'s clusters') or diag $err;

# The shards' index statistics are read on the workers by the shard index's
# name, under the worker connection's search_path, whose "$user" comes
# first: a schema named after the caller, created by another role, must not
# put that role's index in the place of the shard's (the name is qualified)
$coord->safe_psql('postgres', q{
CREATE ROLE rv LOGIN;
GRANT CREATE ON SCHEMA public TO rv;
SET ROLE rv;
CREATE TABLE rv_t (id bigint NOT NULL, sig minhash);
SELECT create_distributed_table('rv_t', 'id', colocate_with => 'none');
INSERT INTO rv_t SELECT g, win_sig(g) FROM generate_series(0, 199) g;
CREATE INDEX rv_t_lsh ON rv_t USING lsh (sig);
});
my $rv_stats = q{SET ROLE rv; SELECT count(*) FROM minhash_similar_pairs('rv_t_lsh', 'id', 0.5)};
my $rv_before = $coord->safe_psql('postgres', $rv_stats);
my @shard_idx = split /\n/, $coord->safe_psql('postgres',
	q{SELECT shard_name('rv_t_lsh', shardid) FROM pg_dist_shard WHERE logicalrelid = 'rv_t'::regclass});
for my $w (@workers)
{
	$w->safe_psql('postgres', 'SET citus.enable_ddl_propagation = off; CREATE SCHEMA rv AUTHORIZATION mallory; GRANT USAGE ON SCHEMA rv TO rv;');
	$w->safe_psql('postgres', 'SET citus.enable_ddl_propagation = off; SET ROLE mallory; CREATE TABLE rv.planted (sig minhash); GRANT SELECT ON rv.planted TO PUBLIC; '
		  . join('', map { "CREATE INDEX $_ ON rv.planted USING lsh (sig); " } @shard_idx));
}
($ret, $out, $err) = $coord->psql('postgres', $rv_stats);
ok($ret == 0 && $out eq $rv_before && $rv_before > 100,
	"a schema named after the caller on the workers, holding another role's indexes of the shard indexes' names: the same $rv_before pairs")
  or diag "$out: $err";

# the scratch tables are gone
is($coord->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname LIKE 'minhash_pairs_%'}),
	'0', 'no scratch table is left behind');

# the dedup workflow: keep one row per cluster
is($coord->safe_psql('postgres', q{
	BEGIN;
	DELETE FROM docs WHERE id IN (SELECT key FROM minhash_clusters('docs_lsh', 'id', 0.5) WHERE key <> cluster_id);
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs;
	ROLLBACK;}),
	join(',', map { $_ * 50 } 0 .. 59), 'DELETE ... WHERE id IN (minhash_clusters ...) keeps one row per group');

# never 0 rows silently
$coord->safe_psql('postgres', q{
CREATE TABLE docs_text (id bigint NOT NULL, body text);
SELECT create_distributed_table('docs_text', 'id');
INSERT INTO docs_text VALUES (1, 'a b c d'), (2, 'a b c e');
CREATE INDEX docs_text_lsh ON docs_text USING lsh (minhash(body));
CREATE TABLE docs_refd (id bigint, sig minhash);
SELECT create_reference_table('docs_refd');
CREATE INDEX docs_refd_lsh ON docs_refd USING lsh (sig);
});
for my $case (
	[ "minhash_similar_pairs('docs_text_lsh', 'id')", qr/does not support expression or partial indexes.*HINT:  Store the signature in a column/s, 'an expression index' ],
	[ "minhash_similar_pairs('docs_refd_lsh', 'id')", qr/does not support reference or local tables.*HINT:  Distribute the table by hash/s, 'a reference table' ],
	[ "minhash_lsh_check('docs_lsh')", qr/minhash_lsh_check does not support Citus tables.*HINT:  Call it on the workers, on each shard's index/s, 'minhash_lsh_check on the shell index' ],
	[ "minhash_match('docs_lsh', 'id', 'docs_ref', 'id', 'sig')", qr/minhash_match does not support Citus tables.*HINT:  Join the batch with the table on %>=/s, 'minhash_match on the shell index' ])
{
	($ret, $out, $err) = $coord->psql('postgres', "SELECT count(*) FROM $case->[0]");
	like($err, $case->[1], "$case->[2] is an error with a hint, not 0 rows");
}

# --- minhash_lsh_stats, summed over the shards ---
my $stats = 'SELECT num_perm, seed, bands, rows, threshold, live_rows, dead_rows, entries, pending_rows FROM minhash_lsh_stats(%s)';
is($coord->safe_psql('postgres', sprintf($stats, "'docs_lsh'")),
	$coord->safe_psql('postgres', sprintf($stats, "'docs_ref_lsh'")),
	'minhash_lsh_stats: the parameters, and rows and entries summed over the shards');
is($coord->safe_psql('postgres', "SELECT pages FROM minhash_lsh_stats('docs_lsh')"),
	$coord->safe_psql('postgres', q{SELECT sum(result::bigint) FROM run_command_on_shards('docs',
		$$SELECT pg_relation_size(i.indexrelid) / 8192 FROM pg_index i WHERE i.indrelid = '%s'::regclass$$)}),
	'pages: the sum of the shard indexes\' sizes');
# minhash_lsh_recall reads the shards' indexes (the shell holds no
# signature: its answer would be NULL), with SELECT on the table only
my $recall = "SELECT similarity || ':' || recall || ':' || depth FROM minhash_lsh_recall(%s, %s)";
for my $t ('0.6', 'NULL')
{
	my $dist = $coord->safe_psql('postgres', "SET minhash.similarity_threshold = 0.8; " . sprintf($recall, "'docs_lsh'", $t));
	is($dist, $coord->safe_psql('postgres', "SET minhash.similarity_threshold = 0.8; " . sprintf($recall, "'docs_ref_lsh'", $t)),
		"minhash_lsh_recall at $t: the plain table's recall and depth");
	like($dist, qr/^(0\.\d+:0\.\d+:\d+\n){2}0\.\d+:0\.\d+:\d+$/, "... three rows with a recall and a depth ($t)");
}
is($coord->safe_psql('postgres', "CREATE ROLE recall_reader LOGIN; GRANT SELECT ON docs TO recall_reader;
	SET ROLE recall_reader; " . sprintf($recall, "'docs_lsh'", '0.6') . "; RESET ROLE;
	REVOKE SELECT ON docs FROM recall_reader; DROP ROLE recall_reader"),
	$coord->safe_psql('postgres', sprintf($recall, "'docs_ref_lsh'", '0.6')),
	'minhash_lsh_recall on a Citus table needs SELECT only, as on one server');

# The shards' statistics are read over new connections: in a transaction that
# holds an ACCESS EXCLUSIVE lock on the table (TRUNCATE, ALTER TABLE, LOCK
# TABLE, which Citus takes on the shards too) they would wait for it until
# statement_timeout. It is an error at once instead, for the stats and for the
# pairs and clusters that read them.
for my $case (
	[ 'LOCK TABLE docs IN ACCESS EXCLUSIVE MODE', "SELECT count(*) FROM minhash_lsh_stats('docs_lsh')" ],
	[ 'TRUNCATE docs', "SELECT count(*) FROM minhash_similar_pairs('docs_lsh', 'id', 0.5)" ],
	[ 'TRUNCATE docs', "SELECT count(*) FROM minhash_clusters('docs_lsh', 'id', 0.5)" ])
{
	my $t0 = time();
	my ($ret, $out, $err) = $coord->psql('postgres',
		"SET statement_timeout = '30s'; BEGIN; $case->[0]; $case->[1]; ROLLBACK;");
	like($err, qr/cannot read the lsh indexes of the shards of "docs" in a transaction that holds an ACCESS EXCLUSIVE lock/,
		"after $case->[0] in the transaction, $case->[1] is an error, not a wait on itself");
	cmp_ok(time() - $t0, '<', 20, "... at once ($case->[0])");
}
is($coord->safe_psql('postgres', 'SELECT count(*) FROM docs'), $nrows, 'the rolled-back TRUNCATE left the rows');

# --- aggregates on the workers ---
$coord->safe_psql('postgres', qq{
CREATE TABLE words (doc bigint, w bigint);
SELECT create_distributed_table('words', 'w');
INSERT INTO words SELECT g, (g / 50) * 1000 + g % 50 + i FROM generate_series(0, $nrows - 1) g, generate_series(0, 59) i;
CREATE TABLE words_ref AS SELECT * FROM words;
});
for my $agg ('minhash_agg(w)', 'minhash_agg(w, 64, 7)', 'minhash_agg(w::text)')
{
	is($coord->safe_psql('postgres', "SELECT $agg::text FROM words"),
		$coord->safe_psql('postgres', "SELECT $agg::text FROM words_ref"),
		"$agg over the distributed table equals the plain table's");
}
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT doc / 50 AS g, minhash_agg(w) AS s FROM words GROUP BY 1) a
	JOIN (SELECT doc / 50 AS g, minhash_agg(w) AS s FROM words_ref GROUP BY 1) b USING (g) WHERE a.s = b.s}),
	'60', 'minhash_agg(w) GROUP BY a column other than the distribution column: the plain table\'s 60 signatures');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT doc, minhash_agg(w) AS s FROM words GROUP BY doc) a JOIN docs_ref d ON d.id = a.doc
	WHERE a.s = d.sig}), $nrows, 'each document\'s signature, aggregated from its words across shards, is its signature');
$plan = $coord->safe_psql('postgres', 'EXPLAIN (VERBOSE, COSTS OFF) SELECT doc / 50, minhash_agg(w) FROM words GROUP BY 1');
like($plan, qr/coord_combine_agg\(.*\n(.*\n)*.*Query: SELECT .*worker_partial_agg\('public\.minhash_merge_agg\(public\.minhash\)'::regprocedure, public\.minhash\(ARRAY\[w\], 128, '1'::bigint\)\)/,
	'minhash_agg runs on the workers (worker_partial_agg) and is combined on the coordinator') or diag $plan;
is($coord->safe_psql('postgres', 'SELECT minhash_merge_agg(sig)::text FROM docs'),
	$coord->safe_psql('postgres', 'SELECT minhash_merge_agg(sig)::text FROM docs_ref'),
	'minhash_merge_agg over the distributed table equals the plain table\'s');

# --- shards on the coordinator too: Citus runs their tasks locally ---
# With shouldhaveshards, the coordinator holds shards of the tables created
# from then on, and Citus runs the tasks of those shards in the calling
# backend (local execution, on by default) instead of over a connection:
# pairs and clusters must not lose the pairs found on them. Last in this
# file, so that no table above has shards on the coordinator.
$coord->safe_psql('postgres', qq{
SELECT citus_set_node_property('127.0.0.1', @{[ $coord->port ]}, 'shouldhaveshards', true);
CREATE TABLE here (id bigint NOT NULL, sig minhash);
SELECT create_distributed_table('here', 'id', colocate_with => 'none', shard_count => 3);
INSERT INTO here SELECT * FROM docs_ref WHERE id < 1000;
CREATE INDEX here_lsh ON here USING lsh (sig);
CREATE TABLE here_ref AS SELECT * FROM here;
CREATE INDEX here_ref_lsh ON here_ref USING lsh (sig);
});
is($coord->safe_psql('postgres', qq{
	SELECT count(DISTINCT nodeport) || '/' || count(*) FILTER (WHERE nodeport = @{[ $coord->port ]})
	FROM pg_dist_shard_placement WHERE shardid IN (SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'here'::regclass)}),
	'3/1', 'table here has one shard on each node, the coordinator included');
# Citus says which shard commands it runs in this backend: the final query
# of the pairs (over the scratch table of entries, *_e) is one of them.
($ret, $out, $err) = $coord->psql('postgres', q{
	SET citus.log_local_commands = on;
	CREATE TEMP TABLE a AS SELECT * FROM minhash_similar_pairs('here_lsh', 'id', 0.5);
	RESET citus.log_local_commands;
	CREATE TEMP TABLE b AS SELECT * FROM minhash_similar_pairs('here_ref_lsh', 'id', 0.5);
	SELECT (SELECT count(*) FROM a) || '|' || (SELECT count(*) FROM b) || '|' ||
	       (SELECT count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) x)});
like($err, qr/executing the command locally: SELECT .* FROM \(public\.minhash_pairs_[0-9a-f]{16}_e_\d+ x JOIN/,
	'the final query of the pairs runs locally on the coordinator\'s shards');
($n, $m, $diff) = split /\|/, $out;
ok($ret == 0 && $n == $m && $diff == 0 && $n > 1000,
	"shards on the coordinator: minhash_similar_pairs gives the plain table's $m pairs ($n, $diff differ)");
# (the clusters come from the same distributed pairs in both modes)
($n, $m, $diff) = split /\|/, same_set(
	"SELECT * FROM minhash_clusters('here_lsh', 'id', 0.5, mode => 'representative')",
	"SELECT * FROM minhash_clusters('here_ref_lsh', 'id', 0.5, mode => 'representative')", 'NULL');
ok($n == $m && $diff == 0 && $n > 0,
	"shards on the coordinator: minhash_clusters gives the plain table's clusters ($m rows, $diff differ)");
is($coord->safe_psql('postgres', sprintf($stats, "'here_lsh'")),
	$coord->safe_psql('postgres', sprintf($stats, "'here_ref_lsh'")),
	'shards on the coordinator: minhash_lsh_stats sums them too');
is($coord->safe_psql('postgres', "SET minhash.similarity_threshold = 0.6;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM here WHERE sig % '$sig{7}';
	SELECT minhash_merge_agg(sig)::text FROM here"),
	$coord->safe_psql('postgres', "SET minhash.similarity_threshold = 0.6;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM here_ref WHERE sig % '$sig{7}';
	SELECT minhash_merge_agg(sig)::text FROM here_ref"),
	'shards on the coordinator: % and minhash_merge_agg give the plain table\'s answers');
# a distributed batch for minhash_match (its index a plain table's): read by Citus as any query
my $match = "SELECT count(*) || ':' || sum(batch_key * 1000 + key) FROM minhash_match('here_ref_lsh', 'id', '%s', 'id', 'sig', 0.6)";
is($coord->safe_psql('postgres', sprintf($match, 'here')), $coord->safe_psql('postgres', sprintf($match, 'here_ref')),
	'shards on the coordinator: minhash_match of a distributed batch gives the plain batch\'s pairs');

$_->stop for ($coord, @workers);
done_testing();
