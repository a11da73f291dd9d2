# A database using minhash survives pg_dump / pg_restore and pg_upgrade.
#
# Two databases hold what users build with the extension:
#   app  -- the extension in public; a table with a generated signature column
#           (minhash(128) GENERATED ALWAYS AS (minhash(body)) STORED) and columns
#           of the typmods minhash(128, 16), minhash(64, 8), oph and
#           datasketch signatures and a domain over minhash(128); lsh indexes
#           with options (threshold, bands/rows, verify_bits, fastupdate,
#           fillfactor) on those columns and on the expression minhash(body);
#           a pending list and dead rows left in the indexes; a partitioned
#           table with an lsh index; a view and a materialized view using `%`;
#           a table owned by the non-superuser role alice; an unlogged
#           table with an lsh index.
#   appx -- CREATE EXTENSION minhash SCHEMA mh, with a compact generated
#           column and an lsh index on the expression mh.minhash(body).
# The rows follow MinhashTAP's family model (8 near-duplicates per family,
# Jaccard 0.83 within, 0 across), so `%` must find each row's family.
#
# 1. pg_dump (custom and plain) restored into fresh databases (pg_restore -j 2,
#    psql), with pg_restore --create, and by alice (a non-superuser database
#    owner: the extension is trusted, docs/sql.md "Trusted"): the answers of
#    `%` and ORDER BY <%> through each index (EXPLAIN shows it) that the
#    original gave through its indexes and by seq scan, the same answers of
#    the pairs and clusters functions, views and materialized view, the same
#    typmods, reloptions, index parameters and extension objects,
#    minhash_lsh_check clean on every lsh index, and a dump of the restored
#    database equal to the original's. The database-level
#    minhash.similarity_threshold follows PostgreSQL's rules, as docs/sql.md
#    says: dumped only with --create, refused to alice's --create restore
#    unless she was granted SET on it.
# 2. pg_upgrade between two clusters of the same binaries, in copy mode and
#    then (from the upgraded cluster) in link mode: the index files are carried
#    over byte for byte (link mode: the same inode), answer the same queries,
#    pass minhash_lsh_check, and take inserts, deletes and VACUUM afterwards;
#    pg_dumpall of each upgraded cluster equals the old one's; on PostgreSQL
#    18 the signature columns' statistics come along.
use strict;
use warnings;

use Cwd qw(getcwd);
use Digest::MD5;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $pg_config = $ENV{PG_CONFIG} or die 'PG_CONFIG is not set (run through scripts/tap.sh)';
my $bindir = run_or_die('pg_config', $pg_config, '--bindir') =~ s/\s+$//r;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my ($major) = run_or_die('pg_config', $pg_config, '--version') =~ /PostgreSQL (\d+)/;

sub new_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	# The queries below force index scans with enable_seqscan = off, whose
	# disable_cost would have each of them JIT-compiled first (0.3 s apiece).
	$node->append_conf('postgresql.conf', "log_statement = none\njit = off");
	return $node;
}

my $old = new_node('old');
$old->start;

# --- the databases ------------------------------------------------------------
# fam_words(id): row id's set as text, one word per element (MinhashTAP's model).
my $fam_words = q{
CREATE FUNCTION fam_words(id bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT string_agg(w::text, ' ' ORDER BY w) FROM (
    SELECT (id / 8) * 100000 + g AS w FROM generate_series(1, 60) g
    UNION ALL
    SELECT (id / 8) * 100000 + 1000 + (id % 8) * 10 + g FROM generate_series(1, 6) g) s
$$;
};
$old->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN CREATEDB;
	CREATE DATABASE app;
	CREATE DATABASE appx;
	-- a database-level threshold, as docs/sql.md "Settings" describes (the
	-- family model has no pair between 0.5 and 0.6: the answers do not change)
	ALTER DATABASE app SET minhash.similarity_threshold = 0.6;
	ALTER DATABASE appx SET minhash.similarity_threshold = 0.6;
});
my $docs_cols = q{(id, body, s16, s8, soph, sds, sdom)
	SELECT g, fam_words(g), minhash(fam_words(g), bits => 16), minhash(fam_words(g), bits => 8, num_perm => 64),
	       minhash(fam_words(g), family => 'oph'),
	       minhash(fam_words(g), family => 'datasketch', num_perm => 64),
	       minhash(fam_words(g))};
$old->safe_psql('app', $fam_words . qq{
	CREATE EXTENSION minhash;
	CREATE DOMAIN sig128 AS minhash(128) CHECK (minhash_num_perm(VALUE) = 128);
	CREATE TABLE docs (
		id bigint PRIMARY KEY,
		body text NOT NULL,
		sig minhash(128) GENERATED ALWAYS AS (minhash(body)) STORED,
		s16 minhash(128, 16),
		s8 minhash(64, 8),
		soph minhash(128),
		sds minhash(64),
		sdom sig128);
	INSERT INTO docs $docs_cols FROM generate_series(0, 639) g;
	CREATE INDEX docs_sig_idx ON docs USING lsh (sig) WITH (threshold = 0.6, fastupdate = on);
	CREATE INDEX docs_expr_idx ON docs USING lsh (minhash(body)) WITH (threshold = 0.5, fillfactor = 80);
	CREATE INDEX docs_s16_idx ON docs USING lsh (s16) WITH (verify_bits = 16, fastupdate = off);
	CREATE INDEX docs_s8_idx ON docs USING lsh (s8) WITH (bands = 16, rows = 4);
	CREATE INDEX docs_oph_idx ON docs USING lsh (soph) WITH (threshold = 0.5, fp_weight = 0.5, fn_weight = 0.5);
	CREATE INDEX docs_ds_idx ON docs USING lsh (sds) WITH (threshold = 0.7);
	CREATE INDEX docs_dom_idx ON docs USING lsh (sdom) WITH (fillfactor = 90, fastupdate = on);
	-- rows after the build (the pending lists of the fastupdate indexes keep
	-- some), and dead rows not yet vacuumed
	INSERT INTO docs $docs_cols FROM generate_series(640, 759) g;
	DELETE FROM docs WHERE id < 160 AND id % 8 = 7;

	CREATE TABLE parts (id bigint NOT NULL, sig minhash(128)) PARTITION BY RANGE (id);
	CREATE TABLE parts_lo PARTITION OF parts FOR VALUES FROM (0) TO (400);
	CREATE TABLE parts_hi PARTITION OF parts FOR VALUES FROM (400) TO (MAXVALUE);
	CREATE INDEX parts_sig_idx ON parts USING lsh (sig) WITH (threshold = 0.5);
	INSERT INTO parts SELECT id, sig FROM docs;

	CREATE TABLE alice_docs (id bigint NOT NULL, sig minhash(128));
	ALTER TABLE alice_docs OWNER TO alice;
	INSERT INTO alice_docs SELECT id, sig FROM docs WHERE id < 320;
	CREATE INDEX alice_docs_sig_idx ON alice_docs USING lsh (sig);

	-- unlogged: its index has an init fork besides the main one
	CREATE UNLOGGED TABLE scratch (id bigint NOT NULL, sig minhash(128));
	INSERT INTO scratch SELECT id, sig FROM docs WHERE id < 240;
	CREATE INDEX scratch_sig_idx ON scratch USING lsh (sig) WITH (fastupdate = on);
	INSERT INTO scratch SELECT id, sig FROM docs WHERE id >= 240 AND id < 320;
	-- statistics on signature columns (PostgreSQL 18's pg_upgrade carries them
	-- over, reading them back through the type's input function)
	ANALYZE;

	CREATE VIEW docs_near AS
		SELECT a.id AS a, b.id AS b FROM docs a JOIN docs b ON a.sig % b.sig AND a.id < b.id
		WHERE a.id < 64;
	CREATE MATERIALIZED VIEW docs_near_mv AS
		SELECT id, round((sig <%> minhash(fam_words(0)))::numeric, 4) AS dist
		FROM docs WHERE sig % minhash(fam_words(0));
});
$old->safe_psql('appx', $fam_words . q{
	CREATE SCHEMA mh;
	CREATE EXTENSION minhash SCHEMA mh;
	CREATE TABLE notes (
		id bigint PRIMARY KEY,
		body text NOT NULL,
		sig mh.minhash(128, 16) GENERATED ALWAYS AS (mh.minhash(body, bits => 16)) STORED);
	INSERT INTO notes (id, body) SELECT g, fam_words(g) FROM generate_series(0, 399) g;
	CREATE INDEX notes_expr_idx ON notes USING lsh (mh.minhash(body)) WITH (threshold = 0.5, fastupdate = on);
	CREATE INDEX notes_sig_idx ON notes USING lsh (sig) WITH (verify_bits = 16);
	INSERT INTO notes (id, body) SELECT g, fam_words(g) FROM generate_series(400, 479) g;
	CREATE VIEW notes_near AS
		SELECT a.id AS a, b.id AS b FROM notes a JOIN notes b ON a.sig OPERATOR(mh.%) b.sig AND a.id < b.id;
});

# --- what must not change -------------------------------------------------------
# Per database: [table, indexed expression (@ stands for the table's alias),
# the lsh index a scan of the table uses (for parts: one partition's), rows
# whose own signatures are the queries (the alias q)].
my %specs = (
	app => [
		[ 'docs',       '@.sig',           'docs_sig_idx',       'q.id % 97 = 0' ],
		[ 'docs',       'minhash(@.body)', 'docs_expr_idx',      'q.id % 97 = 3' ],
		[ 'docs',       '@.s16',           'docs_s16_idx',       'q.id % 97 = 5' ],
		[ 'docs',       '@.s8',            'docs_s8_idx',        'q.id % 97 = 10' ],
		[ 'docs',       '@.soph',          'docs_oph_idx',       'q.id % 97 = 15' ],
		[ 'docs',       '@.sds',           'docs_ds_idx',        'q.id % 97 = 20' ],
		[ 'docs',       '@.sdom',          'docs_dom_idx',       'q.id % 97 = 25' ],
		[ 'parts',      '@.sig',           'parts_lo_sig_idx',   'q.id % 97 = 1' ],
		[ 'alice_docs', '@.sig',           'alice_docs_sig_idx', 'q.id % 97 = 2' ],
		[ 'scratch',    '@.sig',           'scratch_sig_idx',    'q.id % 97 = 6' ],
	],
	appx => [
		[ 'notes', 'minhash(@.body)', 'notes_expr_idx', 'q.id % 97 = 0' ],
		[ 'notes', '@.sig',           'notes_sig_idx',  'q.id % 97 = 4' ],
	],);
my %prelude = (app => '', appx => 'SET search_path = public, mh;');
my %modes = (
	index  => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;',
	seq    => 'SET enable_indexscan = off; SET enable_bitmapscan = off;',);

# app or appx: which of the two databases $db is (or is a restored copy of).
sub kind { return $_[0] =~ /^appx/ ? 'appx' : 'app'; }

# The answers of database $db on $node (a hash: what -> text): through the
# index (index and bitmap scans) and, with $seq, by seq scan too. Asserts
# that the index modes use the index.
sub answers
{
	my ($node, $db, $seq, $label) = @_;
	my $kind = kind($db);
	# one psql run for all of it (a psql start costs more than these queries):
	# each statement's output follows a line "@@key"
	my @batch;
	my %plan_want;
	for my $spec (@{ $specs{$kind} })
	{
		my ($t, $expr, $idx, $where) = @$spec;
		my ($be, $qe) = map { $expr =~ s/\@/$_/gr } qw(b q);
		my $e = $expr =~ s/\@\.//gr;
		my $match = "SELECT string_agg(q.id || ':' || coalesce((SELECT string_agg(b.id::text, ',' ORDER BY b.id) "
		  . "FROM $t b WHERE $be % $qe), '-'), ' ' ORDER BY q.id) FROM $t q WHERE $where";
		my $near = "SELECT string_agg(q.id || ':' || (SELECT string_agg(round(n.d::numeric, 4)::text, ',' ORDER BY n.d) "
		  . "FROM (SELECT $be <%> $qe AS d FROM $t b ORDER BY $be <%> $qe LIMIT 3) n), ' ' ORDER BY q.id) "
		  . "FROM $t q WHERE $where";
		for my $mode (sort keys %modes)
		{
			next if $mode eq 'seq' && !$seq;
			my $set = "RESET ALL; $prelude{$kind} $modes{$mode}";
			push @batch, [ "$t.$e % ($mode)", "$set $match" ];
			push @batch, [ "$t.$e <%> ($mode)", "$set $near" ] if $mode ne 'bitmap';
			next if $mode eq 'seq';
			my $want = $mode eq 'index' ? "Index Scan using $idx" : "Bitmap Index Scan on $idx";
			push @batch, [ "plan $db $t.$e % uses $idx ($mode)", "$set EXPLAIN (COSTS OFF) $match" ];
			$plan_want{"plan $db $t.$e % uses $idx ($mode)"} = $want;
			next if $mode ne 'index';
			push @batch, [ "plan $db $t.$e ORDER BY <%> uses $idx", "$set EXPLAIN (COSTS OFF) $near" ];
			$plan_want{"plan $db $t.$e ORDER BY <%> uses $idx"} = $want;
		}
	}
	my $reset = "RESET ALL; $prelude{$kind}";
	if ($kind eq 'app')
	{
		push @batch,
		  [ 'pairs docs_sig_idx',
			"$reset SELECT count(*) || ' ' || sum(key_a * 3 + key_b) FROM minhash_similar_pairs('docs_sig_idx', 'id', threshold => 0.6)" ],
		  [ 'pairs parts_sig_idx',
			"$reset SELECT count(*) || ' ' || sum(key_a * 3 + key_b) FROM minhash_similar_pairs('parts_sig_idx', 'id')" ],
		  [ 'clusters docs_expr_idx',
			"$reset SELECT count(DISTINCT cluster_id) || ' ' || count(*) FROM minhash_clusters('docs_expr_idx', 'id')" ],
		  [ 'view', "$reset SELECT count(*) || ' ' || sum(a * 1000 + b) FROM docs_near" ],
		  [ 'matview', "$reset SELECT string_agg(id || '/' || dist, ',' ORDER BY id) FROM docs_near_mv" ];
	}
	else
	{
		push @batch,
		  [ 'view', "$reset SELECT count(*) || ' ' || sum(a * 1000 + b) FROM notes_near" ],
		  [ 'pairs notes_expr_idx',
			"$reset SELECT count(*) || ' ' || sum(key_a * 3 + key_b) FROM minhash_similar_pairs('notes_expr_idx', 'id', exact => true, text_column => 'body')" ];
	}
	# typmods of every column and index column of a minhash type (or the domain)
	push @batch, [ 'typmods', q{RESET ALL;
		SELECT string_agg(c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod), E'\n'
		                  ORDER BY c.relname, a.attnum)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
		  AND format_type(a.atttypid, NULL) IN ('minhash', 'mh.minhash', 'sig128')} ];
	# The extension's objects as binary-upgrade mode recreates them one by one:
	# its members, the lsh operator families' operators and support functions,
	# the type's I/O and typmod functions, its casts, the access method, the
	# families' enum labels in order.
	push @batch, [ 'extension', qq{$reset
		SELECT string_agg(d, E'\\n' ORDER BY d) FROM (
			SELECT pg_describe_object(classid, objid, objsubid) AS d FROM pg_depend
			WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
			  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minhash')
			UNION ALL
			SELECT pg_describe_object('pg_amop'::regclass, o.oid, 0) FROM pg_amop o
			JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am am ON am.oid = f.opfmethod
			WHERE am.amname = 'lsh'
			UNION ALL
			SELECT pg_describe_object('pg_amproc'::regclass, p.oid, 0) FROM pg_amproc p
			JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am am ON am.oid = f.opfmethod
			WHERE am.amname = 'lsh'
			UNION ALL
			SELECT concat_ws(' ', 'opclass', opcname, opcdefault, opcintype::regtype) FROM pg_opclass
			WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'lsh')
			UNION ALL
			SELECT concat_ws(' ', 'type', typname, typinput, typoutput, typreceive, typsend,
			                 typmodin, typmodout, typstorage, typalign, typlen)
			FROM pg_type WHERE oid = 'minhash'::regtype
			UNION ALL
			SELECT concat_ws(' ', 'cast', castsource::regtype, casttarget::regtype,
			                 castfunc::regprocedure, castcontext, castmethod)
			FROM pg_cast WHERE 'minhash'::regtype IN (castsource, casttarget)
			UNION ALL
			SELECT concat_ws(' ', 'am', amname, amhandler, amtype) FROM pg_am WHERE amname = 'lsh'
			UNION ALL
			SELECT 'enum ' || string_agg(enumlabel, ',' ORDER BY enumsortorder) FROM pg_enum
			WHERE enumtypid = 'minhash_family'::regtype) s} ];
	# options and parameters of every lsh index
	push @batch, [ 'indexes', qq{$reset
		SELECT string_agg(c.relname || ' ' || coalesce(array_to_string(c.reloptions, ','), '-') || ' '
		                  || CASE c.relkind WHEN 'i' THEN
		                       (SELECT s.num_perm || '/' || s.seed || '/' || s.bands || 'x' || s.rows || '/' || s.threshold
		                        FROM minhash_lsh_stats(c.oid) s) ELSE 'partitioned' END
		                  || ' ' || pg_get_indexdef(c.oid), E'\n' ORDER BY c.relname)
		FROM pg_class c JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'lsh'} ];

	my $out = $node->safe_psql($db, join('', map { "\\echo \@\@$_->[0]\n$_->[1];\n" } @batch));
	my %a;
	my $key;
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^\@\@(.*)$/) { $key = $1; $a{$key} = undef; next; }
		die "output before the first key: $line" unless defined $key;
		$a{$key} = defined $a{$key} ? "$a{$key}\n$line" : $line;
	}
	is(scalar(keys %a), scalar(@batch), "$label: $db answered every query");
	for my $k (sort keys %plan_want)
	{
		like($a{$k} // '', qr/\Q$plan_want{$k}\E/, "$label: $k") or diag($a{$k});
		delete $a{$k};
	}
	$a{$_} //= '' for keys %a;
	return \%a;
}

# Every lsh index of $db on $node passes minhash_lsh_check with the heap.
sub check_all
{
	my ($node, $db, $label) = @_;
	my $out = $node->safe_psql($db, $prelude{kind($db)} . q{
		SELECT c.relname || ': ' || coalesce((SELECT string_agg(problem, '; ')
		        FROM minhash_lsh_check(c.oid, heapallindexed => true)), 'clean')
		FROM pg_class c JOIN pg_am am ON am.oid = c.relam
		WHERE am.amname = 'lsh' AND c.relkind = 'i' ORDER BY c.relname});
	my @lines = split /\n/, $out;
	ok(@lines >= 2, "$label: $db has lsh indexes to check");
	is(join("\n", grep { !/: clean$/ } @lines), '', "$label: minhash_lsh_check on every lsh index of $db");
	return;
}

# Asserts that each answer in $got equals the one in $want.
sub same_answers
{
	my ($got, $want, $label) = @_;
	for my $k (grep { exists $got->{$_} } sort keys %$want)
	{
		is($got->{$k}, $want->{$k}, "$label: $k");
	}
	return;
}

my %before;
for my $db (qw(app appx))
{
	$before{$db} = answers($old, $db, 1, 'original');
	for my $k (grep { /\((index|bitmap)\)$/ } sort keys %{ $before{$db} })
	{
		(my $seq = $k) =~ s/\((index|bitmap)\)$/(seq)/;
		is($before{$db}{$k}, $before{$db}{$seq}, "original: $db $k equals the seq scan");
	}
	check_all($old, $db, 'original');
}
like($before{app}{'docs.sig % (index)'}, qr/^0:0,1,2,3,4,5,6 97:96,97,98,99,100,101,102 /,
	'the families are found (rows 7 and 103 deleted)');
like($before{appx}{'notes.minhash(body) % (index)'}, qr/^0:0,1,2,3,4,5,6,7 97:96,97,98,99,100,101,102,103 /,
	'the families are found in the extension schema mh');
like($before{app}{extension}, qr/^am lsh lsh_handler i$/m, 'the extension\'s objects are listed');
like($before{app}{extension}, qr/^cast minhash minhash minhash_enforce_typmod\(minhash,integer,boolean\) i f$/m,
	'the typmod cast is listed');
like($before{appx}{extension}, qr/^enum native,datasketch,oph$/m, 'the families are listed in order');
like($before{app}{typmods}, qr/^alice_docs\.sig minhash\(128\)\n.*^docs\.sig minhash\(128\)\ndocs\.s16 minhash\(128,16\)\ndocs\.s8 minhash\(64,8\)$/ms,
	'typmods as declared');
# The optimizer statistics of the signature columns (ANALYZE above): on
# PostgreSQL 18 pg_upgrade carries them over, through the type's text form.
my $stats_sql = q{SELECT string_agg(attname || ' ' || md5(coalesce(histogram_bounds::text, '')
                  || coalesce(most_common_vals::text, '')), ',' ORDER BY attname)
                  FROM pg_stats WHERE schemaname = 'public' AND tablename = 'docs'
                  AND attname IN ('sig', 's16', 's8', 'soph', 'sds', 'sdom')};
my $stats_before = $old->safe_psql('app', $stats_sql);
like($stats_before, qr/^s16 \w+,s8 \w+,sdom \w+,sds \w+,sig \w+,soph \w+$/,
	'ANALYZE gathered statistics of every signature column');
my $pending = $old->safe_psql('app', "SELECT pending_rows FROM minhash_lsh_stats('docs_sig_idx')");
ok($pending > 0, "docs_sig_idx carries a pending list ($pending rows) into the dump and the upgrade");

# --- 1. pg_dump / pg_restore ---------------------------------------------------
# The threshold a new session of $db starts with (the library loaded first, so
# that an unset placeholder reads as the default).
sub threshold
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, "LOAD 'minhash'; SHOW minhash.similarity_threshold");
}
is(threshold($old, 'app'), '0.6', 'app runs at its database-level threshold');

# $node's dump of $db in plain format, without the random \restrict key lines
# of newer minor releases.
sub plain_dump
{
	my ($node, $db, $file, @opts) = @_;
	$node->command_ok([ 'pg_dump', '--no-sync', @opts, '-f', $file, '-d', $node->connstr($db) ],
		"pg_dump $db");
	return filtered($file);
}

sub filtered
{
	my ($file) = @_;
	my $text = slurp_file($file);
	$text =~ s/^\\(un)?restrict .*\n//mg;
	return $text;
}

sub check_restored
{
	my ($node, $db, $orig, $label, @dump_opts) = @_;
	same_answers(answers($node, $db, 0, $label), $before{$orig}, $label);
	check_all($node, $db, $label);
	my $a = plain_dump($node, $orig, "$tmp/$label-orig.sql", @dump_opts);
	my $b = plain_dump($node, $db, "$tmp/$label-restored.sql", @dump_opts);
	ok($a eq $b, "$label: a dump of the restored $db equals the dump of $orig")
	  or diag(`diff -u '$tmp/$label-orig.sql' '$tmp/$label-restored.sql' | head -60`);
	return;
}

my $connstr_app = $old->connstr('app');
$old->command_ok([ 'pg_dump', '--no-sync', '-Fc', '-f', "$tmp/app.dump", '-d', $connstr_app ],
	'pg_dump -Fc app');
$old->command_ok([ 'pg_dump', '--no-sync', '-Fp', '-f', "$tmp/app.sql", '-d', $connstr_app ],
	'pg_dump -Fp app');

$old->safe_psql('postgres', 'CREATE DATABASE r_custom');
# two jobs: the indexes are built in parallel sessions, as pg_restore -j does
$old->command_ok([ 'pg_restore', '--exit-on-error', '-j', '2', '-d', $old->connstr('r_custom'), "$tmp/app.dump" ],
	'pg_restore -j 2 of the custom dump');
check_restored($old, 'r_custom', 'app', 'custom');
# pg_dump writes ALTER DATABASE ... SET only with --create (PostgreSQL's rule)
is(threshold($old, 'r_custom'), '0.5', 'a restore without --create leaves the database-level threshold out');

$old->safe_psql('postgres', 'CREATE DATABASE r_plain');
$old->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $old->connstr('r_plain'),
		'-f', "$tmp/app.sql" ], 'psql restores the plain dump');
check_restored($old, 'r_plain', 'app', 'plain');

# A database owner who is no superuser restores (the extension is trusted); the
# objects become alice's, so the dumps compared leave owners and grants out.
$old->safe_psql('postgres', 'CREATE DATABASE r_alice OWNER alice');
$old->command_ok([ 'pg_restore', '--exit-on-error', '--no-owner', '--no-privileges', '-U', 'alice',
		'-d', $old->connstr('r_alice'), "$tmp/app.dump" ],
	'pg_restore run by alice, a non-superuser database owner');
is($old->safe_psql('r_alice',
		"SELECT string_agg(DISTINCT pg_get_userbyid(relowner), ',') FROM pg_class WHERE relname LIKE 'docs%'"),
	'alice', 'the restored tables and indexes are alice\'s');
check_restored($old, 'r_alice', 'app', 'alice', '--no-owner', '--no-privileges');

# pg_restore --create, of the database with the extension in schema mh: the
# original is renamed out of the way, the restore recreates appx.
$old->command_ok([ 'pg_dump', '--no-sync', '-Fc', '-f', "$tmp/appx.dump", '-d', $old->connstr('appx') ],
	'pg_dump -Fc appx');
$old->safe_psql('postgres', 'ALTER DATABASE appx RENAME TO appx_orig');
$old->command_ok([ 'pg_restore', '--exit-on-error', '--create', '-d', $old->connstr('postgres'), "$tmp/appx.dump" ],
	'pg_restore --create of appx (extension in schema mh)');
{
	same_answers(answers($old, 'appx', 0, 'create'), $before{appx}, 'create');
	check_all($old, 'appx', 'create');
	my $a = plain_dump($old, 'appx_orig', "$tmp/create-orig.sql");
	my $b = plain_dump($old, 'appx', "$tmp/create-restored.sql");
	ok($a eq $b, 'create: a dump of the restored appx equals the dump of the original')
	  or diag(`diff -u '$tmp/create-orig.sql' '$tmp/create-restored.sql' | head -60`);
	is(threshold($old, 'appx'), '0.6', 'pg_restore --create restores the database-level threshold');
}

# pg_restore --create by alice (CREATEDB, no superuser): as docs/sql.md
# "Settings" says, the ALTER DATABASE ... SET of the minhash setting fails
# (the library is not loaded in her session, so it is a placeholder only a
# superuser may store); the rest is restored and the database answers at the
# default threshold. After GRANT SET ON PARAMETER the same restore is clean.
$old->safe_psql('postgres', 'DROP DATABASE appx');
my @alice_create = ('pg_restore', '--create', '--no-owner', '--no-privileges', '-U', 'alice',
	'-d', $old->connstr('postgres'), "$tmp/appx.dump");
{
	local $ENV{PGHOST} = $old->host;
	local $ENV{PGPORT} = $old->port;
	my ($out, $err) = run_command(\@alice_create);
	isnt($?, 0, 'pg_restore --create by alice reports an error');
	like($err, qr/permission denied to set parameter "minhash\.similarity_threshold"/,
		'... the database-level minhash setting');
	is(scalar(() = $err =~ /^pg_restore: error:/mg), 1, '... and nothing else') or diag($err);
}
is(threshold($old, 'appx'), '0.5', 'alice\'s restored appx runs at the default threshold');
same_answers(answers($old, 'appx', 0, 'alice create'), $before{appx}, 'alice create');
check_all($old, 'appx', 'alice create');
$old->safe_psql('postgres', q{
	DROP DATABASE appx;
	GRANT SET ON PARAMETER minhash.similarity_threshold TO alice;
});
$old->command_ok([ @alice_create[0 .. 0], '--exit-on-error', @alice_create[1 .. $#alice_create] ],
	'after GRANT SET ON PARAMETER, alice\'s pg_restore --create is clean');
is(threshold($old, 'appx'), '0.6', '... and restores the database-level threshold');
$old->safe_psql('postgres', q{
	DROP DATABASE appx;
	ALTER DATABASE appx_orig RENAME TO appx;
	DROP DATABASE r_custom;
	DROP DATABASE r_plain;
	DROP DATABASE r_alice;
});

# --- 2. pg_upgrade -----------------------------------------------------------------
# The lsh index files of $node: relation name => [path relative to the data
# directory, MD5 of the file, inode], read from disk with the cluster stopped.
sub lsh_files
{
	my ($node, $paths) = @_;
	my %f;
	for my $db (sort keys %$paths)
	{
		for my $rel (sort keys %{ $paths->{$db} })
		{
			my $path = $node->data_dir . '/' . $paths->{$db}{$rel};
			open(my $fh, '<', $path) or die "open $path: $!";
			binmode $fh;
			my $md5 = Digest::MD5->new->addfile($fh)->hexdigest;
			close $fh;
			$f{"$db.$rel"} = [ $paths->{$db}{$rel}, $md5, (stat $path)[1] ];
		}
	}
	return \%f;
}

sub lsh_paths
{
	my ($node) = @_;
	my %p;
	for my $db (qw(app appx))
	{
		for my $line (split /\n/, $node->safe_psql($db, q{
			SELECT c.relname || ' ' || pg_relation_filepath(c.oid)
			FROM pg_class c JOIN pg_am am ON am.oid = c.relam
			WHERE am.amname = 'lsh' AND c.relkind = 'i'}))
		{
			my ($rel, $path) = split / /, $line;
			$p{$db}{$rel} = $path;
		}
	}
	return \%p;
}

sub upgrade
{
	my ($from, $to, $mode_opt, $label) = @_;
	my $paths = lsh_paths($from);
	my $dumpall_before = "$tmp/$label-before.sql";
	$from->command_ok([ 'pg_dumpall', '--no-sync', '-f', $dumpall_before ], "$label: pg_dumpall before");
	$from->stop;
	my $files_before = lsh_files($from, $paths);
	my $cwd = getcwd();
	chdir $tmp or die "chdir $tmp: $!";
	command_ok([ 'pg_upgrade', '--no-sync', @$mode_opt,
			'-d', $from->data_dir, '-D', $to->data_dir, '-b', $bindir, '-B', $bindir,
			'-s', $to->host, '-p', $from->port, '-P', $to->port ],
		"$label: pg_upgrade");
	chdir $cwd or die "chdir $cwd: $!";
	my $files_after = lsh_files($to, $paths);
	for my $rel (sort keys %$files_before)
	{
		is($files_after->{$rel}[1], $files_before->{$rel}[1],
			"$label: $rel carried over byte for byte ($files_before->{$rel}[0])");
		if (grep { $_ eq '--link' } @$mode_opt)
		{
			is($files_after->{$rel}[2], $files_before->{$rel}[2], "$label: $rel is a hard link");
		}
	}
	$to->start;
	is_deeply(lsh_paths($to), $paths, "$label: the lsh indexes keep their files");
	for my $db (qw(app appx))
	{
		same_answers(answers($to, $db, 0, $label), $before{$db}, $label);
		check_all($to, $db, $label);
	}
	is(threshold($to, $_), '0.6', "$label: $_ keeps its database-level threshold") for qw(app appx);
	is($to->safe_psql('app', $stats_sql), $major >= 18 ? $stats_before : '',
		$major >= 18
		? "$label: the signature columns' statistics are carried over (PostgreSQL $major)"
		: "$label: PostgreSQL ${major}'s pg_upgrade carries no statistics (ANALYZE after it)");
	my $dumpall_after = "$tmp/$label-after.sql";
	$to->command_ok([ 'pg_dumpall', '--no-sync', '-f', $dumpall_after ], "$label: pg_dumpall after");
	ok(filtered($dumpall_before) eq filtered($dumpall_after), "$label: pg_dumpall after equals before")
	  or diag(`diff -u '$dumpall_before' '$dumpall_after' | head -60`);
	return;
}

my $new1 = new_node('new1');
upgrade($old, $new1, [], 'copy');
my $new2 = new_node('new2');
upgrade($new1, $new2, ['--link'], 'link');

# --- writes after the upgrade ------------------------------------------------------
$new2->safe_psql('app', qq{
	INSERT INTO docs $docs_cols FROM generate_series(760, 839) g;
	INSERT INTO parts SELECT id, sig FROM docs WHERE id >= 760;
	INSERT INTO alice_docs SELECT id, sig FROM docs WHERE id >= 760;
	DELETE FROM docs WHERE id % 8 = 6;
	DELETE FROM parts WHERE id % 8 = 6;
	DELETE FROM alice_docs WHERE id % 8 = 6;
	VACUUM docs, parts, alice_docs;
});
$new2->safe_psql('appx', q{
	INSERT INTO notes (id, body) SELECT g, fam_words(g) FROM generate_series(480, 559) g;
	DELETE FROM notes WHERE id % 8 = 6;
	VACUUM notes;
});
for my $db (qw(app appx))
{
	my $after = answers($new2, $db, 1, 'after writes');
	for my $k (grep { /\((index|bitmap)\)$/ } sort keys %$after)
	{
		(my $seq = $k) =~ s/\((index|bitmap)\)$/(seq)/;
		is($after->{$k}, $after->{$seq}, "after writes: $db $k equals the seq scan");
	}
	check_all($new2, $db, 'after writes');
}
like($new2->safe_psql('app', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE sig % minhash(fam_words(832))}),
	qr/^832,833,834,835,836,837,839$/, 'a family inserted after the upgrade is found, its deleted row is not');

$new2->stop;
done_testing();
