# Shared helpers for the minhash TAP tests (tests/t/*.pl).
#
# The data model every test uses is a set of "families" of planted
# near-duplicates, so expected answers follow from the construction instead of
# from observed output:
#   row id belongs to family id / 8 and is member id % 8;
#   its set = 60 family elements  ∪  6 elements private to the member.
# Two members of one family have Jaccard 60 / 72 = 0.83; rows of different
# families share nothing (Jaccard 0). So at the default threshold 0.5 a `%`
# query with a row's own signature must match exactly the live rows of its
# family (up to the estimate's error, which at k = 128 is ±0.03 around 0.83).
package MinhashTAP;

use strict;
use warnings;

use Cwd qw(realpath);
use Exporter 'import';
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  minhash_node create_schema
  check_clean self_find_missing nearest_self_missing
  cluster_pids kill9_cluster
  run_or_die build_release private_installation install_minhash swap_in_current_build
);

use constant FAMILY_SIZE => 8;

# A started node with the extension created in database "postgres".
# %init goes to Cluster::init; @conf lines are appended to postgresql.conf.
sub minhash_node
{
	my ($name, $init, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $init // {} });
	# The tests below generate many statements; logging each one only costs
	# I/O on a 2-core machine. Errors are still logged.
	$node->append_conf('postgresql.conf', "log_statement = none");
	$node->append_conf('postgresql.conf', $_) for @conf;
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION minhash');
	return $node;
}

# fam_sig(id): the signature of row id under the family model above (default
# k = 128, seed 1). IMMUTABLE so it can be used in index quals with a Param;
# its names are qualified because index expressions evaluated by the
# extension (exact pairs, the heap check) run with search_path = pg_catalog,
# pg_temp.
# Also creates a table (id bigint, sig minhash) for each name in @tables.
sub create_schema
{
	my ($node, @tables) = @_;
	my $fs = FAMILY_SIZE;
	my $sql = qq{
CREATE FUNCTION fam_set(id bigint) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS \$\$
  SELECT ARRAY(
    SELECT (id / $fs) * 100000 + g FROM generate_series(1, 60) g
    UNION ALL
    SELECT (id / $fs) * 100000 + 1000 + (id % $fs) * 10 + g FROM generate_series(1, 6) g)
\$\$;
CREATE FUNCTION fam_sig(id bigint) RETURNS minhash
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS \$\$ SELECT public.minhash(public.fam_set(id)) \$\$;
};
	for my $t (@tables)
	{
		$sql .= "CREATE TABLE $t (id bigint NOT NULL, sig minhash);\n";
	}
	$node->safe_psql('postgres', $sql);
	return;
}

# Asserts that minhash_lsh_check($index, heapallindexed => true) reports
# nothing (the index is consistent, also with its table); on failure the
# problems it reported are the diagnostic.
sub check_clean
{
	my ($node, $index, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $problems = $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(problem, E'\\n'), '') FROM minhash_lsh_check('$index', heapallindexed => true)"
	);
	is($problems, '', $name // "minhash_lsh_check('$index') is clean");
	return;
}

my %scan_gucs = (
	index  => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;',);
my %scan_node = (
	index  => 'Index Scan using %s',
	bitmap => 'Bitmap Index Scan on %s',);

# Looks every row of $table up through $index by its own signature
# (`sig % own sig` plus the row's id), with the planner forced onto the
# amgettuple path ($mode 'index') or the amgetbitmap path ('bitmap').
# Asserts that EXPLAIN shows the index and returns the number of rows that were
# not found exactly once. $where restricts the rows checked.
sub self_find_missing
{
	my ($node, $table, $index, $mode, $where) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $q = "SELECT count(*) FROM $table a WHERE "
	  . (defined $where ? "($where) AND " : '')
	  . "(SELECT count(*) FROM $table b WHERE b.sig % a.sig AND b.id = a.id) <> 1";
	my $plan = $node->safe_psql('postgres', "$scan_gucs{$mode} EXPLAIN (COSTS OFF) $q");
	my $expect = sprintf($scan_node{$mode}, $index);
	like($plan, qr/\Q$expect\E/, "$mode lookup on $table uses $index")
	  or diag($plan);
	return $node->safe_psql('postgres', "$scan_gucs{$mode} $q");
}

# The ordered path: for each row (restricted by $where), the first row of
# ORDER BY sig <%> own sig LIMIT 1 through the index must be at distance 0.
# Asserts the plan and returns the number of rows for which it is not.
sub nearest_self_missing
{
	my ($node, $table, $index, $where) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $q = "SELECT count(*) FROM $table a WHERE "
	  . (defined $where ? "($where) AND " : '')
	  . "coalesce((SELECT b.sig <%> a.sig FROM $table b "
	  . "ORDER BY b.sig <%> a.sig LIMIT 1), 1) <> 0";
	my $gucs = $scan_gucs{index};
	my $plan = $node->safe_psql('postgres', "$gucs EXPLAIN (COSTS OFF) $q");
	like($plan, qr/Index Scan using \Q$index\E/,
		"ORDER BY <%> LIMIT on $table uses $index")
	  or diag($plan);
	return $node->safe_psql('postgres', "$gucs $q");
}

# Every process of $node's cluster: PostgreSQL processes chdir into the data
# directory, so this finds the postmaster, its children and any orphan left
# behind by a killed postmaster, and nothing of other clusters.
sub cluster_pids
{
	my ($node) = @_;
	my $pgdata = realpath($node->data_dir);
	my @pids;
	opendir(my $dh, '/proc') or die "cannot read /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir $dh)
	{
		my $cwd = readlink("/proc/$pid/cwd");
		push @pids, $pid if defined $cwd && $cwd eq $pgdata;
	}
	closedir $dh;
	return @pids;
}

# kill -9 the postmaster and every process of the cluster at once, as a power
# cut would, and wait until they are all gone: a leftover process attached to
# shared memory, or a postmaster not yet reaped (a zombie still "exists" for
# the lock-file check), would stop the next start.
sub kill9_cluster
{
	my ($node) = @_;
	my @pids = cluster_pids($node);
	die 'no process found for ' . $node->name unless @pids;
	$node->kill9;    # the postmaster; marks the node stopped
	kill 'KILL', @pids;
	for (1 .. 3000)
	{
		my @left = cluster_pids($node);
		kill 'KILL', @left;
		return scalar(@pids) unless @left || grep { kill 0, $_ } @pids;
		usleep(10_000);
	}
	die 'processes of ' . $node->name . ' survived SIGKILL';
}

# --- an older release beside the current build (150_upgrade, 161_pending_upgrade) ---

# Runs @cmd; dies with its output if it fails, else returns its stdout.
sub run_or_die
{
	my ($what, @cmd) = @_;
	my ($out, $err) = run_command(\@cmd);
	die "$what failed: @cmd\n$out\n$err" if $?;
	return $out;
}

# Builds the minhash release $name at $commit (a full hash: a fresh clone may
# not carry tags) from the git history of $MINHASH_SRC (scripts/tap.sh copies
# it) into the new directory $dir against $pg_config. A missing commit (a
# shallow clone, a rewritten history) is a failure, not a skip: without it
# nothing would be tested.
sub build_release
{
	my ($name, $commit, $dir, $pg_config) = @_;
	my $src = $ENV{MINHASH_SRC} or die 'MINHASH_SRC is not set (run through scripts/tap.sh)';
	# The repository belongs to another user than the one running the tests.
	my @git = ('git', '-c', 'safe.directory=*', '-C', $src);
	system(@git, 'cat-file', '-e', "$commit^{commit}") == 0
	  or die "the $name release commit $commit is not in the history of $src:"
	  . ' fetch the full history (git fetch --unshallow)';
	make_path($dir);
	run_or_die('git archive', 'sh', '-c',
		join(' ', map { "'$_'" } @git, 'archive', $commit) . " | tar -x -C '$dir'");
	run_or_die("building $name", 'nice', 'make', '-C', $dir, '-j2', "PG_CONFIG=$pg_config");
	return $dir;
}

# A private copy under $copy of the PostgreSQL installation of $pg_config, so
# that swapping minhash builds changes nothing outside the test's scratch
# directory. PostgreSQL finds its lib and share directories relative to its
# binaries, so the copy keeps the layout below the directories' common prefix.
# Binaries are copied (the server resolves symlinks to find itself), share is
# copied (the extension directory is rewritten), lib entries are symlinked
# except minhash.so. Returns { bindir, pkglibdir, sharedir, extdir } of the
# copy, install_path (for PostgreSQL::Test::Cluster->new) and orig: the
# installation's own { bindir, pkglibdir, sharedir, extdir } (the current
# build, as `make install` put it there).
sub private_installation
{
	my ($pg_config, $copy) = @_;
	my %dir;
	$dir{$_} = run_or_die('pg_config', $pg_config, "--$_") =~ s/\s+$//r
	  for qw(bindir pkglibdir sharedir);
	my $prefix = $dir{bindir};
	$prefix = dirname($prefix)
	  until !grep { index("$_/", "$prefix/") != 0 } values %dir;
	my %inst = map { $_ => $copy . substr($dir{$_}, length $prefix) } keys %dir;
	make_path(dirname($inst{$_})) for keys %inst;
	run_or_die('copying bin', 'cp', '-a', $dir{bindir}, $inst{bindir});
	run_or_die('copying share', 'cp', '-a', $dir{sharedir}, $inst{sharedir});
	make_path($inst{pkglibdir});
	opendir(my $dh, $dir{pkglibdir}) or die "cannot read $dir{pkglibdir}: $!";
	for my $entry (grep { !/^\.\.?$/ && $_ ne 'minhash.so' } readdir $dh)
	{
		symlink("$dir{pkglibdir}/$entry", "$inst{pkglibdir}/$entry")
		  or die "symlink $entry: $!";
	}
	closedir $dh;
	$dir{extdir} = "$dir{sharedir}/extension";
	$inst{extdir} = "$inst{sharedir}/extension";
	$inst{install_path} = dirname($inst{bindir});
	$inst{orig} = \%dir;
	return \%inst;
}

# Puts minhash.so from $from_lib and the control file and SQL scripts from
# $from_share into the private installation $inst, replacing what was there.
sub install_minhash
{
	my ($inst, $from_lib, $from_share) = @_;
	unlink glob("$inst->{extdir}/minhash*"), "$inst->{pkglibdir}/minhash.so";
	copy("$from_lib/minhash.so", "$inst->{pkglibdir}/minhash.so") or die "copy minhash.so: $!";
	for my $f (glob("$from_share/minhash.control"), glob("$from_share/minhash--*.sql"))
	{
		copy($f, $inst->{extdir}) or die "copy $f: $!";
	}
	return;
}

# The package-upgrade step of the upgrade tests: $node stopped, the
# installation's own (current) build copied into the private copy $inst,
# $node started on it.
sub swap_in_current_build
{
	my ($node, $inst) = @_;
	$node->stop;
	install_minhash($inst, $inst->{orig}{pkglibdir}, $inst->{orig}{extdir});
	$node->start;
	return;
}

1;
