# The extension's scripts cannot be hijacked by the objects of a database
# owner (the class of CVE-2018-1058).
#
# minhash is trusted: a database owner who is not a superuser may CREATE it
# and ALTER EXTENSION ... UPDATE it, and the scripts then run as the bootstrap
# superuser with search_path = <the extension's schema>, pg_temp. The owner
# owns that schema (public, or one of theirs). Any name a script leaves to the
# search_path could resolve to an object the owner planted there: an operator
# or function with a better-matching argument type than pg_catalog's (as
# `oid = regoperator` prefers an exact `=(oid, regoperator)` in public over
# pg_catalog's `=(oid, oid)`), which then runs as superuser.
#
# So this test does what a hostile owner would, mechanically:
#  1. it reads every installed script (minhash--*.sql) and lists every name
#     they reference: operators, functions (called, or named as support,
#     selectivity, I/O or aggregate functions), types and cast targets. The
#     list comes from the scripts, so a future script is covered as it is;
#  2. for every version, as the non-superuser owner of a new database, it
#     plants in public (the schema the extension goes to) a shadow of each
#     name: operators and functions of that name for every combination of
#     argument types the scripts mention (one and two arguments, and the
#     arities and literal types of each call site), types of that name, and
#     casts to each type. Each shadow records that it ran (a WARNING and a row
#     of public.shadow_log) and tries ALTER ROLE ... SUPERUSER;
#  3. it runs CREATE EXTENSION minhash VERSION v, and for every update path
#     installs the start version first, plants the shadows in the extension's
#     schema (now holding the extension's objects), and runs ALTER EXTENSION
#     UPDATE TO the end version;
#  4. each install must succeed, no shadow may have run, and the owner must
#     still not be a superuser.
# A shadow whose identity equals an object the script itself creates would
# only make the script fail ("already exists"): a refusal, not a capture. Such
# identities, taken from a reference install, are not planted.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $node = PostgreSQL::Test::Cluster->new('shadowing');
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\nclient_min_messages = warning");
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE regress_dbowner LOGIN');

# ---------------------------------------------------------------------------
# 1. The names the scripts reference
# ---------------------------------------------------------------------------

# SQL text -> tokens [kind, text]. Comments are dropped, string and quoted
# identifier contents kept as values, dollar-quoted bodies tokenized as SQL
# too (a function body in SQL or PL/pgSQL names objects just as well).
sub tokenize
{
	my ($sql) = @_;
	my @tokens;
	pos($sql) = 0;
	while (pos($sql) < length($sql))
	{
		if ($sql =~ /\G\s+/gc) { next; }
		elsif ($sql =~ /\G--[^\n]*/gc) { next; }
		elsif ($sql =~ m{\G/\*.*?\*/}gcs) { next; }
		elsif ($sql =~ /\G^\\[^\n]*/gcm) { next; }    # psql meta-command (\echo ... \quit)
		elsif ($sql =~ /\G(\$[A-Za-z_]*\$)(.*?)\1/gcs) { push @tokens, tokenize($2); }
		elsif ($sql =~ /\G[Ee]?'((?:[^']|'')*)'/gc) { push @tokens, [ 'string', $1 =~ s/''/'/gr ]; }
		elsif ($sql =~ /\G"((?:[^"]|"")*)"/gc) { push @tokens, [ 'ident', $1 =~ s/""/"/gr ]; }
		elsif ($sql =~ /\G([A-Za-z_][A-Za-z_0-9\$]*)/gc) { push @tokens, [ 'ident', lc $1 ]; }
		elsif ($sql =~ /\G(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)/gc) { push @tokens, [ 'number', $1 ]; }
		elsif ($sql =~ /\G(::)/gc) { push @tokens, [ 'cast', $1 ]; }
		elsif ($sql =~ /\G([(),;\[\].:])/gc) { push @tokens, [ 'punct', $1 ]; }
		elsif ($sql =~ m{\G([-+*/<>=~!\@#%^&|`?]+)}gc) { push @tokens, [ 'op', $1 ]; }
		else { die 'cannot tokenize at: ' . substr($sql, pos($sql), 40); }
	}
	return @tokens;
}

# The tokens of an argument list starting after the '(' at $i: a list of
# arguments, each a list of tokens, and the index of the closing ')'.
sub arguments
{
	my ($tokens, $i) = @_;
	my ($depth, @args, @cur) = (0);
	for (; $i < @$tokens; $i++)
	{
		my $t = $tokens->[$i];
		if ($t->[0] eq 'punct' && $t->[1] eq '(') { $depth++; }
		elsif ($t->[0] eq 'punct' && $t->[1] eq ')')
		{
			if ($depth-- == 0)
			{
				push @args, [@cur] if @cur || @args;
				return (\@args, $i);
			}
		}
		elsif ($t->[0] eq 'punct' && $t->[1] eq ',' && $depth == 0)
		{
			push @args, [@cur];
			@cur = ();
			next;
		}
		push @cur, $t;
	}
	return (\@args, $i);
}

my $sharedir = $node->config_data('--sharedir');
my @scripts = sort glob("$sharedir/extension/minhash--*.sql");
ok(scalar(@scripts) >= 3, 'the installed scripts: ' . join(', ', map { s{.*/}{}r } @scripts));

my (%operators, %functions, %words, %cast_targets, @call_sites);
# Options of CREATE TYPE/OPERATOR/AGGREGATE and SUPPORT clauses that name a function.
my %function_options = map { $_ => 1 } qw(
  input output receive send typmod_in typmod_out analyze subscript function procedure
  restrict join sfunc finalfunc combinefunc serialfunc deserialfunc msfunc minvfunc
  mfinalfunc support canonical subtype_diff handler validator inline);
for my $script (@scripts)
{
	open(my $fh, '<', $script) or die "$script: $!";
	my @t = tokenize(do { local $/; <$fh> });
	close $fh;
	for (my $i = 0; $i < @t; $i++)
	{
		my ($kind, $text) = @{ $t[$i] };
		my $next = $t[ $i + 1 ] // [ '', '' ];
		my $prev = $i > 0 ? $t[ $i - 1 ] : [ '', '' ];
		if ($kind eq 'op')
		{
			# named-argument notation is syntax, not an operator
			$operators{$text} = 1 unless $text eq '=>' || $text eq ':=';
		}
		elsif ($kind eq 'ident')
		{
			$words{$text} = 1;
			$words{"$text\[\]"} = 1 if $next->[1] eq '[' && ($t[ $i + 2 ] // [ '', '' ])->[1] eq ']';
			$words{"$text $next->[1]"} = 1 if $next->[0] eq 'ident';
			if ($next->[0] eq 'punct' && $next->[1] eq '(')
			{
				my ($args) = arguments(\@t, $i + 2);
				if ($text eq 'cast')
				{
					# CAST (x AS t), CREATE CAST (s AS t): t is a cast target
					my @a = map { @$_ } @$args;
					for my $j (0 .. $#a - 1)
					{
						$cast_targets{ $a[ $j + 1 ][1] } = 1 if $a[$j][1] eq 'as';
					}
				}
				# an enum's labels (CREATE TYPE t AS ENUM ('a', 'b')) are not a call either
				elsif ($text eq 'enum' && $prev->[0] eq 'ident' && $prev->[1] eq 'as') { }
				# an option list (CREATE TYPE t (INPUT = f, ...), SET (RESTRICT = f)) is not a call
				elsif (!@$args || grep { !(@$_ >= 3 && $_->[0][0] eq 'ident' && $_->[1][1] eq '=') } @$args)
				{
					$functions{$text}{ scalar @$args } = 1;
					push @call_sites, [ $text, $args ];
				}
			}
			elsif ($prev->[0] eq 'op' && $prev->[1] eq '=' && $i > 1
				&& $t[ $i - 2 ][0] eq 'ident' && $function_options{ $t[ $i - 2 ][1] })
			{
				$functions{$text} //= {};
			}
			elsif ($prev->[0] eq 'ident' && $prev->[1] eq 'support')
			{
				$functions{$text} //= {};
			}
			if ($prev->[0] eq 'cast')
			{
				$cast_targets{$text} = 1;
			}
		}
		elsif ($kind eq 'string' && $prev->[0] ne 'ident')
		{
			# text that is cast to a reg* type names objects too
			# ('=(minhash, minhash)'::regoperator): tokenized as SQL
			my $after = $t[ $i + 2 ] // [ '', '' ];
			if ($next->[0] eq 'cast' && $after->[1] =~ /^(pg_catalog)?$/ || $after->[1] =~ /^reg/)
			{
				for my $u (eval { tokenize($text) })
				{
					$operators{ $u->[1] } = 1 if $u->[0] eq 'op';
					$words{ $u->[1] } = 1 if $u->[0] eq 'ident';
				}
			}
		}
	}
}
# CAST (x AS t) and CREATE CAST (s AS t): the word after AS inside parentheses
# is a type; the types are picked out of %words below in any case.
ok(exists $operators{'='} && exists $operators{'%'}, 'operators found: ' . join(' ', sort keys %operators));
ok(exists $functions{minhash} && exists $functions{eqsel} && exists $functions{minhash_similar_sel},
	'functions found: ' . scalar(keys %functions));

# ---------------------------------------------------------------------------
# 2. Types: the words that name a type once the newest version is installed
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE reference');
$node->safe_psql('reference', 'CREATE EXTENSION minhash');

sub sql_list { return join(', ', map { "'" . ($_ =~ s/'/''/gr) . "'" } @_); }

# Words include adjacent pairs (double precision) and word[] where written so.
my @candidates = keys %words;
# word -> the type's SQL spelling. to_regtype() raises on text that is not a
# type name at all ('from'): caught; a reserved word is tried quoted ("any").
my %types = map { split /\t/ } split /\n/, $node->safe_psql('reference', qq{
	CREATE FUNCTION pg_temp.type_of(w text) RETURNS regtype LANGUAGE plpgsql AS \$\$
	BEGIN RETURN coalesce(pg_catalog.to_regtype(w), pg_catalog.to_regtype(pg_catalog.quote_ident(w)));
	EXCEPTION WHEN others THEN
	  BEGIN RETURN pg_catalog.to_regtype(pg_catalog.quote_ident(w));
	  EXCEPTION WHEN others THEN RETURN NULL; END;
	END \$\$;
	SELECT w || E'\t' || pg_catalog.format_type(pg_temp.type_of(w), NULL)
	FROM unnest(ARRAY[${\ sql_list(@candidates)}]) w
	WHERE pg_temp.type_of(w) IS NOT NULL});
ok(exists $types{minhash} && exists $types{regoperator} && exists $types{oid},
	'types found: ' . join(', ', sort values %types));

# The identity of every object a version creates, per schema-less key
# ("function name(types)", "operator name(types)", "type name"), from a
# reference install: planting one of those would be a refusal, not a capture.
sub identities
{
	my ($db) = @_;
	return map { $_ => 1 } split /\n/, $node->safe_psql($db, q{
		SELECT 'function ' || p.proname || '(' ||
		       coalesce((SELECT string_agg(pg_catalog.format_type(t, NULL), ',' ORDER BY n)
		                 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, n)), '') || ')'
		FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'public'::regnamespace
		UNION ALL
		SELECT 'operator ' || o.oprname || '(' || pg_catalog.format_type(o.oprleft, NULL) || ',' ||
		       pg_catalog.format_type(o.oprright, NULL) || ')'
		FROM pg_catalog.pg_operator o WHERE o.oprnamespace = 'public'::regnamespace
		UNION ALL
		SELECT 'type ' || t.typname FROM pg_catalog.pg_type t WHERE t.typnamespace = 'public'::regnamespace
		UNION ALL
		SELECT 'relation ' || c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = 'public'::regnamespace});
}

# ---------------------------------------------------------------------------
# 3. Shadows
# ---------------------------------------------------------------------------

# The argument types a shadow can take, of the types that exist in $db now:
# those a PL/pgSQL function accepts (not internal, cstring, ...), found by
# trying.
sub usable_types
{
	my ($db) = @_;
	return split /\n/, $node->safe_psql($db, qq{
		CREATE TEMP TABLE usable (t text);
		DO \$\$
		DECLARE w text;
		BEGIN
		  FOREACH w IN ARRAY ARRAY[${\ sql_list(sort values %types)}] LOOP
		    BEGIN
		      EXECUTE pg_catalog.format('CREATE FUNCTION pg_temp.probe(%s) RETURNS text LANGUAGE plpgsql AS %L',
		                                w, 'BEGIN RETURN NULL; END');
		      EXECUTE pg_catalog.format('DROP FUNCTION pg_temp.probe(%s)', w);
		      INSERT INTO usable VALUES (w);
		    EXCEPTION WHEN others THEN NULL;
		    END;
		  END LOOP;
		END \$\$;
		SELECT DISTINCT t FROM usable ORDER BY 1});
}

# The types an argument of a call site may have: a declaration's type, a
# cast's target, a literal's types, or any usable type.
sub argument_types
{
	my ($arg, $usable) = @_;
	my @words = map { $_->[1] } grep { $_->[0] eq 'ident' } @$arg;
	for (my $j = 0; $j < @$arg - 1; $j++)
	{
		return ($types{ $arg->[ $j + 1 ][1] }) if $arg->[$j][0] eq 'cast' && $types{ $arg->[ $j + 1 ][1] };
	}
	if (@$arg == 1 && $arg->[0][0] eq 'number')
	{
		return $arg->[0][1] =~ /^\d+$/ ? ('integer', 'bigint', 'numeric') : ('numeric', 'double precision');
	}
	if (@$arg == 1 && $arg->[0][0] eq 'string') { return ('text', @$usable); }
	# a declaration: [mode] [name] type [DEFAULT ...]
	my @decl = grep { $types{$_} } (map({ "$words[$_] $words[$_ + 1]" } 0 .. $#words - 1), @words);
	return ($types{ $decl[0] }) if @decl && !grep { $_->[0] eq 'punct' && $_->[1] eq '(' } @$arg;
	return @$usable;
}

sub product
{
	my @lists = @_;
	return ([]) unless @lists;
	my $first = shift @lists;
	return map { my $x = $_; map { [ $x, @$_ ] } product(@lists) } @$first;
}

# The signatures to plant for a function name. A call site whose arguments
# all have known types (a declaration, a cast, a literal) gets those; one with
# an argument of unknown type (an expression) gets every usable type there. A
# declaration or an exact lookup (COMMENT ON FUNCTION f(t), FUNCTION 1 f(t))
# is captured only by a shadow of exactly its signature, and a name given as
# an option (RESTRICT = f) is looked up with a fixed signature: each gets its
# own signature, and one-argument shadows over every usable type besides.
sub function_signatures
{
	my ($name, $usable) = @_;
	my %can = map { $_ => 1 } @$usable;
	my %sigs = map { $_ => [$_] } @$usable;
	for my $site (grep { $_->[0] eq $name } @call_sites)
	{
		# only types a shadow can take: an argument of another type
		# (internal) cannot be shadowed by a non-superuser
		my @per_arg = map { [ grep { $can{$_} } argument_types($_, $usable) ] } @{ $site->[1] };
		next if grep { !@$_ } @per_arg;
		my $n = 1;
		$n *= scalar(@$_) for @per_arg;
		die "a call of $name with " . scalar(@per_arg) . " arguments admits $n signatures: "
		  . 'qualify it (pg_catalog.) or cast its arguments, so that this test can shadow it'
		  . " (" . join(" / ", map { join(" ", map { $_->[1] } @$_) } @{ $site->[1] }) . ")" if $n > 5000;
		$sigs{ join(',', @$_) } = $_ for product(@per_arg);
	}
	return values %sigs;
}

# One shadow body: says it ran, records it, tries to become superuser.
sub shadow_body
{
	my ($what, $returns) = @_;
	my $tag = $what =~ s/'/''/gr;
	return qq{LANGUAGE plpgsql AS \$shadow\$
BEGIN
  RAISE WARNING 'shadow ran: %', '$tag';
  INSERT INTO public.shadow_log VALUES ('$tag', current_user);
  BEGIN EXECUTE 'ALTER ROLE regress_dbowner SUPERUSER'; EXCEPTION WHEN others THEN NULL; END;
  RETURN NULL::$returns;
END \$shadow\$;};
}

sub quote_ident { my ($n) = @_; return $n =~ /^[a-z_][a-z0-9_]*$/ ? qq{"$n"} : '"' . ($n =~ s/"/""/gr) . '"'; }

# Plants the shadows in schema public of $db as the owner; returns how many.
sub plant
{
	my ($db, $skip) = @_;
	my @usable = usable_types($db);
	my @sql = ('CREATE TABLE IF NOT EXISTS public.shadow_log (what text, who name)');
	my %seen;
	for my $name (sort keys %functions)
	{
		for my $sig (function_signatures($name, \@usable))
		{
			my $id = "function $name(" . join(',', @$sig) . ')';
			next if $skip->{$id} || $seen{$id}++;
			push @sql, 'CREATE FUNCTION public.' . quote_ident($name) . '(' . join(', ', @$sig)
			  . ') RETURNS text ' . shadow_body($id, 'text');
		}
	}
	# operators: one function per argument pair, then every operator name
	my @pairs = (product(\@usable, \@usable), map { [ 'NONE', $_ ] } @usable);
	my $n = 0;
	for my $pair (@pairs)
	{
		my ($l, $r) = @$pair;
		my $fn = 'shadow_op_' . $n++;
		push @sql, "CREATE FUNCTION public.$fn(" . join(', ', grep { $_ ne 'NONE' } $l, $r)
		  . ') RETURNS boolean ' . shadow_body("operator ($l, $r)", 'boolean');
		for my $op (sort keys %operators)
		{
			my $id = "operator $op($l,$r)";
			$id = "operator $op(-,$r)" if $l eq 'NONE';
			next if $skip->{"operator $op(" . ($l eq 'NONE' ? '-' : $l) . ",$r)"} || $seen{$id}++;
			push @sql, "CREATE OPERATOR public.$op (" . ($l eq 'NONE' ? '' : "LEFTARG = $l, ")
			  . "RIGHTARG = $r, FUNCTION = public.$fn)";
		}
	}
	# types of the referenced names that do not exist in public, and a cast
	# from a type of the owner's to every referenced type
	for my $type (sort keys %types)
	{
		next if $type =~ /[\[ ]/ || $skip->{"type $type"} || $skip->{"relation $type"};
		next if $node->safe_psql($db, "SELECT to_regtype('public.' || quote_ident('$type')) IS NOT NULL") eq 't';
		push @sql, 'CREATE TYPE public.' . quote_ident($type) . " AS ENUM ('shadow')";
	}
	push @sql, q{CREATE TYPE public.shadow_source AS ENUM ('shadow')};
	for my $i (0 .. $#usable)
	{
		my $target = $usable[$i];
		next if $target =~ /^any/;
		push @sql, "CREATE FUNCTION public.shadow_cast_$i(public.shadow_source) RETURNS $target "
		  . shadow_body("cast to $target", $target);
		push @sql, "CREATE CAST (public.shadow_source AS $target) WITH FUNCTION public.shadow_cast_$i(public.shadow_source) AS IMPLICIT";
	}
	my ($ret, $out, $err) = $node->psql($db, join(";\n", 'BEGIN', @sql, 'COMMIT') . ';',
		extra_params => [ '-U', 'regress_dbowner', '-v', 'ON_ERROR_STOP=1' ]);
	die "planting the shadows in $db failed: $err" if $ret;
	return scalar(@sql);
}

# ---------------------------------------------------------------------------
# 4. Every version, every update path
# ---------------------------------------------------------------------------

my @versions = split /\n/, $node->safe_psql('postgres',
	q{SELECT version FROM pg_available_extension_versions WHERE name = 'minhash' ORDER BY version});
my @paths = split /\n/, $node->safe_psql('postgres', q{
	SELECT source || ' ' || target FROM pg_extension_update_paths('minhash')
	WHERE path IS NOT NULL ORDER BY source, target});
ok(@versions >= 2 && @paths >= 1, "versions @versions; update paths: " . join(', ', @paths));

# The objects each version creates (as a fresh install), for the skip list.
my %created;
for my $v (@versions)
{
	my $db = 'ref_' . ($v =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION minhash VERSION '$v'");
	$created{$v} = { identities($db) };
}

my $case = 0;
for my $run ((map { [ 'create', $_ ] } @versions), (map { [ 'update', split / / ] } @paths))
{
	my ($kind, $from, $to) = @$run;
	my $db = 'shadowed_' . $case++;
	my $what = $kind eq 'create' ? "CREATE EXTENSION minhash VERSION '$from'" : "update $from -> $to";
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER regress_dbowner");
	my ($ret, $out, $err);
	if ($kind eq 'update')
	{
		($ret, $out, $err) = $node->psql($db, "CREATE EXTENSION minhash VERSION '$from'",
			extra_params => [ '-U', 'regress_dbowner' ]);
		is($ret, 0, "$what: the owner installs $from") or diag($err);
	}
	# what the end version creates, and what exists already, is not planted
	my %skip = (%{ $created{ $to // $from } }, identities($db));
	my $planted = plant($db, \%skip);
	my $sql = $kind eq 'create' ? "CREATE EXTENSION minhash VERSION '$from'"
	  : "ALTER EXTENSION minhash UPDATE TO '$to'";
	($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-U', 'regress_dbowner' ]);
	is($ret, 0, "$what: succeeds as the database owner among $planted planted shadows") or diag($err);
	unlike($err, qr/shadow ran/, "$what: no shadow ran") or diag($err);
	is($node->safe_psql($db, 'SELECT count(*) FROM public.shadow_log'), '0',
		"$what: the shadows' log is empty");
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'minhash'}),
		$to // $from, "$what: the extension is at " . ($to // $from));
	is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_dbowner'}),
		'f', "$what: the owner is still not a superuser");
}

# The shadows do capture what they are meant to: the statement 1.0 -> 1.1
# once had (an unqualified = between oid and regoperator), run by a superuser
# with the search_path of an extension script among the same shadows.
my $db = 'shadowed_' . ($case - 1);
my ($ret, $out, $err) = $node->psql($db, q{
	SET search_path = public, pg_temp;
	SELECT count(*) FROM pg_catalog.pg_operator WHERE oid = '=(minhash, minhash)'::pg_catalog.regoperator});
like($err, qr/shadow ran: operator \(oid, regoperator\)/,
	'an unqualified = of the old update script would run the owner\'s shadow');
$node->safe_psql('postgres', 'ALTER ROLE regress_dbowner NOSUPERUSER');

$node->stop;
done_testing();
