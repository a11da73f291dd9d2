# The README's Python example (section "From a client program") runs against
# a fresh database and prints what the README says it prints, so the example
# cannot rot. It needs psycopg 3 (python3-psycopg, from scripts/install-deps.sh)
# and Debian's interpreter, which that package installs into.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $python = '/usr/bin/python3';
-x $python or die "$python is missing: run scripts/install-deps.sh";

open(my $fh, '<', "$ENV{MINHASH_SRC}/README.md") or die "README.md: $!";
my $readme = do { local $/; <$fh> };
close $fh;
my ($section) = $readme =~ /^## From a client program\n(.*?)^## /ms
  or die 'README.md has no section "From a client program"';
my ($code, $expected) = $section =~ /^```python\n(.*?)^```\n```\n(.*?)^```/ms
  or die 'the section has no ```python block followed by its output';

my $node = minhash_node('client');
my ($stdout, $stderr);
{
	local $ENV{PGHOST}     = $node->host;
	local $ENV{PGPORT}     = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	local $ENV{PGUSER}     = $node->safe_psql('postgres', 'SELECT current_user');
	IPC::Run::run([ $python, '-c', $code ], '>', \$stdout, '2>', \$stderr);
}
is($?, 0, 'the README example runs') or diag($stderr);
is($stdout, $expected, 'it prints what the README shows');
is($node->safe_psql('postgres', 'SELECT count(*) FROM docs'), '3',
	'it stored its three documents');

$node->stop;
done_testing();
