# CREATE EXTENSION minhash by a database owner who is not a superuser, and
# the properties that make that safe (docs/sql.md, "Trusted").
#
# A trusted extension's scripts run as the bootstrap superuser on behalf of
# the database owner, who also picks the schema (one they own) and the
# version, and may later run ALTER EXTENSION UPDATE. So:
#  - the install succeeds exactly when the control file says trusted;
#  - the objects belong to the bootstrap superuser, not to the owner, who can
#    therefore neither redefine them nor grant what the script revoked;
#  - no extension function runs SQL with the caller's search_path (every
#    function is C, or pins search_path) or runs as its owner (SECURITY
#    DEFINER);
#  - nothing the extension's objects depend on lies outside the extension and
#    pg_catalog (a name the scripts resolved to an object of the owner's
#    schema would show up here);
#  - the scripts never replace what may exist (CREATE OR REPLACE, IF NOT
#    EXISTS: the hole behind CVE-2022-2625) and, the extension being
#    relocatable, never use @extschema@ (it would not be substituted);
# all of it for a fresh install and for 1.0 updated by the owner.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = PostgreSQL::Test::Cluster->new('trusted');
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;
$node->safe_psql('postgres', q{
	CREATE ROLE regress_owner LOGIN;
	CREATE DATABASE owned_fresh OWNER regress_owner;
	CREATE DATABASE owned_update OWNER regress_owner;
});

my $trusted = $node->safe_psql('postgres', q{
	SELECT trusted FROM pg_available_extension_versions
	WHERE name = 'minhash'
	  AND version = (SELECT default_version FROM pg_available_extensions WHERE name = 'minhash')});
is($trusted, 't', 'minhash is trusted (the decision in docs/sql.md)');

sub as_owner
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-U', 'regress_owner' ]);
	return ($ret, $out, $err);
}

# --- installing as the database owner, in a schema of the owner's ------------
my ($ret, $out, $err) = as_owner('owned_fresh',
	'CREATE SCHEMA s; CREATE EXTENSION minhash SCHEMA s');
if ($trusted eq 't')
{
	is($ret, 0, 'the database owner can CREATE EXTENSION minhash') or diag($err);
}
else
{
	like($err, qr/permission denied to create extension "minhash"/,
		'an untrusted minhash needs a superuser');
	$node->safe_psql('owned_fresh', 'CREATE EXTENSION minhash SCHEMA s');
}

# 1.0, then ALTER EXTENSION UPDATE, both by the owner (the update script runs
# as superuser just the same)
($ret, $out, $err) = as_owner('owned_update',
	q{CREATE SCHEMA s; CREATE EXTENSION minhash SCHEMA s VERSION '1.0'; ALTER EXTENSION minhash UPDATE});
if ($trusted eq 't')
{
	is($ret, 0, 'the database owner can install 1.0 and update it') or diag($err);
}
else
{
	like($err, qr/permission denied to create extension "minhash"/,
		'an untrusted minhash 1.0 needs a superuser');
	$node->safe_psql('owned_update',
		q{CREATE EXTENSION minhash SCHEMA s VERSION '1.0'; ALTER EXTENSION minhash UPDATE});
}

# The extension's objects: its members, plus what they own (operators of its
# operator families, array types).
my $objects = q{
	WITH members AS (
		SELECT classid, objid FROM pg_depend
		WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minhash')),
	objects AS (
		SELECT classid, objid FROM members
		UNION SELECT 'pg_amop'::regclass, o.oid FROM members m JOIN pg_amop o
			ON m.classid = 'pg_opfamily'::regclass AND o.amopfamily = m.objid
		UNION SELECT 'pg_amproc'::regclass, p.oid FROM members m JOIN pg_amproc p
			ON m.classid = 'pg_opfamily'::regclass AND p.amprocfamily = m.objid
		UNION SELECT 'pg_type'::regclass, t.typarray FROM members m JOIN pg_type t
			ON m.classid = 'pg_type'::regclass AND t.oid = m.objid)
};

for my $db (qw(owned_fresh owned_update))
{
	is($node->safe_psql($db, q{
		SELECT extowner::regrole, extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'minhash')
		FROM pg_extension WHERE extname = 'minhash'}),
		($trusted eq 't' ? 'regress_owner' : 'postgres') . '|t',
		"$db: the extension belongs to who created it, at the default version");

	# owners of the objects: the bootstrap superuser (OID 10), never the caller
	is($node->safe_psql($db, $objects . q{
		SELECT string_agg(pg_describe_object(classid, objid, 0), ', ')
		FROM objects o
		WHERE coalesce((SELECT proowner FROM pg_proc WHERE o.classid = 'pg_proc'::regclass AND oid = o.objid),
		               (SELECT typowner FROM pg_type WHERE o.classid = 'pg_type'::regclass AND oid = o.objid),
		               (SELECT oprowner FROM pg_operator WHERE o.classid = 'pg_operator'::regclass AND oid = o.objid),
		               (SELECT opcowner FROM pg_opclass WHERE o.classid = 'pg_opclass'::regclass AND oid = o.objid),
		               (SELECT opfowner FROM pg_opfamily WHERE o.classid = 'pg_opfamily'::regclass AND oid = o.objid),
		               10) <> 10}),
		'', "$db: every object belongs to the bootstrap superuser");

	# no SECURITY DEFINER; no function body that resolves names at run time
	# with the caller's search_path
	is($node->safe_psql($db, $objects . q{
		SELECT string_agg(p.oid::regprocedure::text, ', ')
		FROM objects o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND p.oid = o.objid
		WHERE p.prosecdef
		   OR (p.prolang NOT IN (SELECT oid FROM pg_language WHERE lanname IN ('c', 'internal'))
		       AND NOT EXISTS (SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search\_path=%'))}),
		'', "$db: no SECURITY DEFINER function, no SQL body without a pinned search_path");

	# everything the objects depend on: the extension's own objects, its
	# schema, or pg_catalog (pinned, so absent from pg_depend)
	is($node->safe_psql($db, $objects . q{
		SELECT string_agg(DISTINCT pg_describe_object(d.refclassid, d.refobjid, 0), ', ')
		FROM objects o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
		WHERE (d.refclassid, d.refobjid) NOT IN (SELECT classid, objid FROM objects)
		  AND NOT (d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e')
		  AND NOT (d.refclassid = 'pg_namespace'::regclass AND d.refobjid = 's'::regnamespace)}),
		'', "$db: the objects depend on nothing outside the extension and pg_catalog");

	# the owner cannot redefine, re-own or grant the extension's objects
	($ret, $out, $err) = as_owner($db,
		q{CREATE OR REPLACE FUNCTION s.minhash_seed(s.minhash) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint'});
	like($err, qr/must be owner of function minhash_seed/, "$db: the owner cannot replace a function");
	($ret, $out, $err) = as_owner($db, q{ALTER FUNCTION s.minhash_seed(s.minhash) SECURITY DEFINER});
	like($err, qr/must be owner of function/, "$db: nor alter one");
	($ret, $out, $err) = as_owner($db,
		q{ALTER EXTENSION minhash DROP FUNCTION s.minhash_seed(s.minhash)});
	like($err, qr/must be owner of function (s\.)?minhash_seed/,
		"$db: nor detach one from the extension (to own it after DROP EXTENSION)");
	($ret, $out, $err) = as_owner($db,
		q{GRANT EXECUTE ON FUNCTION s.minhash_lsh_check(regclass, boolean) TO regress_owner});
	like($err, qr/permission denied for function minhash_lsh_check|no privileges were granted/,
		"$db: nor grant what the script revoked");

	# ... and can use what it installed
	($ret, $out, $err) = as_owner($db, q{
		SET search_path = s, public;
		CREATE TABLE public.docs (id int, body text);
		INSERT INTO public.docs SELECT g, 'document number ' || (g / 2) || ' of a set' FROM generate_series(1, 200) g;
		CREATE INDEX docs_sig_idx ON public.docs USING lsh (minhash(body));
		SET enable_seqscan = off;
		SELECT string_agg(id::text, ',' ORDER BY id) FROM public.docs
		WHERE minhash(body) % minhash('document number 7 of a set');
		SELECT bands FROM minhash_lsh_stats('docs_sig_idx');});
	like($out, qr/^14,15\n\d+$/, "$db: the owner builds and queries an lsh index") or diag($err);
	($ret, $out, $err) = as_owner($db, q{SELECT * FROM s.minhash_lsh_check('docs_sig_idx')});
	like($err, qr/permission denied for function minhash_lsh_check/,
		"$db: minhash_lsh_check stays a superuser's (or a grantee's) tool");
}

# --- the scripts --------------------------------------------------------------
my $sharedir = $node->config_data('--sharedir');
my @scripts = glob("$sharedir/extension/minhash--*.sql");
ok(scalar(grep { /minhash--1\.0\.sql$/ } @scripts) && scalar(grep { /--1\.0--/ } @scripts),
	'the installed scripts include 1.0 and its upgrade');
for my $script (@scripts)
{
	open(my $fh, '<', $script) or die "$script: $!";
	my $sql = do { local $/; <$fh> };
	close $fh;
	$sql =~ s/--[^\n]*//g;    # comments may name what the code must not do
	my $name = $script =~ s{.*/}{}r;
	my @bad = grep { $sql =~ /$_->[1]/i } (
		[ 'CREATE OR REPLACE', qr/\bOR\s+REPLACE\b/ ],
		[ 'IF NOT EXISTS',     qr/\bIF\s+NOT\s+EXISTS\b/ ],
		[ 'SECURITY DEFINER',  qr/\bSECURITY\s+DEFINER\b/ ],
		[ '@extschema@',       qr/\@extschema\@/ ],);
	is(join(', ', map { $_->[0] } @bad), '', "$name: no replace-if-exists, SECURITY DEFINER or \@extschema\@");
}

$node->stop;
done_testing();
