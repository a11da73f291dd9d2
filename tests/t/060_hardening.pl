# What SQL alone cannot show about the lsh index's defences:
#  - minhash_lsh_check and minhash_lsh_stats refuse a caller who does not
#    own the table before requesting any lock, so a non-owner cannot queue
#    behind a writer (and make everyone after it wait);
#  - damaged pages (edited on disk here: a leaf's pd_lower out of bounds, a
#    metapage with impossible parameters) are reported as index corruption
#    (XX002) by inserts and scans, never written or read past their bounds,
#    and minhash_lsh_check lists what is wrong;
#  - damage that leaves every page well-formed (a flipped key byte, a
#    dropped leaf entry, a garbage slot state) is found by minhash_lsh_check.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# The test edits pages in place: no data checksums, which initdb turns on by
# default from PostgreSQL 18 on.
my ($major) = `$ENV{PG_CONFIG} --version` =~ /PostgreSQL (\d+)/;
my $node = minhash_node('hardening',
	($major // 0) >= 18 ? { extra => ['--no-data-checksums'] } : {},
	'autovacuum = off');
create_schema($node, 't');
# 20 rows x 30 bands = 600 entries: the tree is a single leaf, which every
# insert and every scan touches (fastupdate off: an insert goes to the leaf,
# not to the pending list, which has a case of its own below).
$node->safe_psql('postgres', q{
INSERT INTO t SELECT g, fam_sig(g) FROM generate_series(1, 20) g;
CREATE INDEX t_idx ON t USING lsh (sig) WITH (fastupdate = off);
CREATE ROLE regress_other LOGIN;
GRANT EXECUTE ON FUNCTION minhash_lsh_check(regclass, bool) TO regress_other;
});
check_clean($node, 't_idx', 'the fresh index is clean');

# ---- privileges before locks ----

# psql as regress_other; returns its stderr
sub as_other
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SET lock_timeout = '1s';\n$sql",
		extra_params => [ '-U', 'regress_other' ]);
	return $err;
}

# An INSERT holds RowExclusiveLock on t_idx from its first row to the end
# of the statement (here: it sleeps 5 s before its second row): the check's
# ShareLock must wait for it, and a queued ShareLock request would make every
# later writer wait as well.
my $writer = $node->background_psql('postgres');
$writer->query_until(qr/started/, q{
\echo started
INSERT INTO t SELECT g, CASE WHEN g = 1001 THEN (SELECT fam_sig(g) FROM pg_sleep(5)) ELSE fam_sig(g) END
FROM generate_series(1000, 1001) g;
});
$node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_locks
	WHERE relation = 't_idx'::regclass AND mode = 'RowExclusiveLock' AND granted})
  or die 'the writer never locked the index';
my $err = as_other("SELECT * FROM minhash_lsh_check('t_idx')");
like($err, qr/must be owner of index t_idx/,
	'a non-owner is refused while a writer holds the index');
unlike($err, qr/lock timeout/, 'the refusal does not wait for the writer\'s lock');
# the owner (here a superuser) does wait: that is what makes the check see a
# quiescent index
my ($ret, $out);
($ret, $out, $err) = $node->psql('postgres',
	"SET lock_timeout = '500ms'; SELECT * FROM minhash_lsh_check('t_idx')");
like($err, qr/lock timeout/, 'the owner\'s check waits for the writer');
$writer->query_safe('SELECT 1');    # the INSERT is over

# ACCESS EXCLUSIVE on the table blocks every lock: stats and check by a
# non-owner must still return at once.
$writer->query_safe('BEGIN');
$writer->query_safe('LOCK TABLE t IN ACCESS EXCLUSIVE MODE');
$err = as_other("SELECT * FROM minhash_lsh_stats('t_idx')");
like($err, qr/must be owner of index t_idx/, 'stats: a non-owner is refused under ACCESS EXCLUSIVE');
unlike($err, qr/lock timeout/, 'stats: the refusal does not queue for a lock');
$err = as_other("SELECT * FROM minhash_lsh_check('t_idx', true)");
like($err, qr/must be owner of index t_idx/, 'check: a non-owner is refused under ACCESS EXCLUSIVE');
unlike($err, qr/lock timeout/, 'check: the refusal does not queue for a lock');
$writer->query_safe('COMMIT');
$writer->quit;
check_clean($node, 't_idx', 'the index is clean after the refused calls');

# ---- damaged pages ----

is($node->safe_psql('postgres', 'SHOW data_checksums'), 'off',
	'no data checksums: pages can be edited in place');

my $BLCKSZ = 8192;
my $SPECIAL = $BLCKSZ - 24;    # LshPageOpaqueData: low, high, next, count, level, flags, page_id

sub index_file
{
	return $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_idx')");
}

sub read_block
{
	my ($file, $blk) = @_;
	open(my $fh, '<', $file) or die "open $file: $!";
	binmode $fh;
	seek($fh, $blk * $BLCKSZ, 0) or die "seek: $!";
	my $n = read($fh, my $page, $BLCKSZ);
	close $fh;
	die "short read of block $blk" unless defined $n && $n == $BLCKSZ;
	return $page;
}

# Overwrite $bytes at $offset of block $blk, with the server stopped (a
# clean shutdown leaves nothing to replay over the edit).
sub patch_block
{
	my ($blk, $offset, $bytes) = @_;
	my $file = index_file();
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->stop;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	seek($fh, $blk * $BLCKSZ + $offset, 0) or die "seek: $!";
	print $fh $bytes;
	close $fh;
	$node->start;
	return;
}

# the block of the index's (only) leaf
sub leaf_block
{
	my $file = index_file();
	$node->safe_psql('postgres', 'CHECKPOINT');    # the pages are on disk
	my $nblocks = (-s $file) / $BLCKSZ;
	for my $blk (1 .. $nblocks - 1)
	{
		my $page = read_block($file, $blk);
		my ($flags, $page_id) = unpack('S S', substr($page, $SPECIAL + 16, 4));
		return $blk if $page_id == 0xFF8C && ($flags & 0xF) == 0x8;
	}
	die 'no leaf found';
}

# Runs $sql with verbose errors and returns stderr (with the SQLSTATE).
sub try_sql
{
	my ($sql) = @_;
	my ($r, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return $e;
}

my $insert = 'INSERT INTO t VALUES (500, fam_sig(500))';
my $scan = 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE sig % fam_sig(3)';

# A leaf's pd_lower (page header offset 12) below the content start (24) or
# not on an entry boundary: an append wrote into the page header (below) or
# misaligned entries, VACUUM rewrote the leaf from garbage. (A pd_lower past
# pd_upper never gets this far: the buffer manager rejects the page.)
for my $case ([ 8, 'below the content start' ], [ 29, 'between two entries' ])
{
	my ($lower, $what) = @$case;
	my $leaf = leaf_block();
	patch_block($leaf, 12, pack('S', $lower));
	my $e = try_sql($insert);
	like($e, qr/XX002: lsh index "t_idx" is corrupted: tree page with invalid pd_lower $lower at block $leaf/,
		"leaf pd_lower $what: insert reports corruption");
	$e = try_sql($scan);
	like($e, qr/XX002: lsh index "t_idx" is corrupted: tree page with invalid pd_lower $lower/,
		"leaf pd_lower $what: a scan reports corruption");
	# VACUUM walks the leaves only when it has dead rows to remove
	$e = try_sql('DELETE FROM t WHERE id = 7; VACUUM t');
	like($e, qr/XX002: lsh index "t_idx" is corrupted: tree page with invalid pd_lower $lower/,
		"leaf pd_lower $what: VACUUM reports corruption instead of rewriting the leaf");
	like($node->safe_psql('postgres', "SELECT string_agg(problem, E'\\n') FROM minhash_lsh_check('t_idx')"),
		qr/block $leaf: tree page with invalid pd_lower $lower/,
		"leaf pd_lower $what: minhash_lsh_check reports it");
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', "leaf pd_lower $what: clean after REINDEX");
}

# Metapage parameters (after the 24-byte page header: magic 4, version 4,
# num_perm 2, bands 2, rows 2, slots per page 2). Readers size signatures,
# band slices and slot offsets from them.
for my $case (
	[ 34, 100,  'bands * rows above num_perm', qr/metapage: invalid parameters num_perm = 128, bands = 100, rows = 4/ ],
	[ 34, 0,    'zero bands',                  qr/metapage: invalid parameters num_perm = 128, bands = 0, rows = 4/ ],
	[ 38, 16,   'too many slots per page',     qr/metapage: 16 slots per page, expected 15 for num_perm = 128/ ],
	[ 32, 2000, 'num_perm above 1024',         qr/metapage: invalid parameters num_perm = 2000/ ])
{
	my ($offset, $value, $what, $problem) = @$case;
	patch_block(0, $offset, pack('S', $value));
	for my $stmt ([ $insert, 'insert' ], [ $scan, 'scan' ])
	{
		my $e = try_sql($stmt->[0]);
		like($e, qr/XX002: lsh index "t_idx" is corrupted: invalid parameters in the metapage/,
			"metapage $what: $stmt->[1] reports corruption");
	}
	like($node->safe_psql('postgres', "SELECT string_agg(problem, E'\\n') FROM minhash_lsh_check('t_idx')"),
		$problem, "metapage $what: minhash_lsh_check reports it");
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', "metapage $what: clean after REINDEX");
}

# What only minhash_lsh_check sees: damage that leaves every page
# well-formed. A flipped byte of a band key, an entry dropped from the leaf,
# and a slot with a state that is neither FREE, LIVE nor DEAD.

# the first block of type $type (LSH_PAGE_* low bits of the flags) and its flags
sub block_of_type
{
	my ($type) = @_;
	my $file = index_file();
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $nblocks = (-s $file) / $BLCKSZ;
	for my $blk (1 .. $nblocks - 1)
	{
		my $page = read_block($file, $blk);
		my ($flags, $page_id) = unpack('S S', substr($page, $SPECIAL + 16, 4));
		return ($blk, $flags, $page) if $page_id == 0xFF8C && ($flags & 0xF) == $type;
	}
	die "no page of type $type found";
}

sub check_problems
{
	return $node->safe_psql('postgres',
		"SELECT string_agg(problem, E'\n') FROM minhash_lsh_check('t_idx')");
}

{
	# the single leaf holds keys from 0 to 2^32 - 1, so its entries are the
	# wide ones: {uint32 key; uint32 row id} from offset 24
	my ($leaf, $flags, $page) = block_of_type(0x8);
	is($flags & 0x40, 0, 'the leaf has 8-byte entries');
	my ($key, $rowid) = unpack('L L', substr($page, 24, 8));
	my $flipped = $key ^ 0xFF;
	patch_block($leaf, 24, pack('L', $flipped));
	my $p = check_problems();
	like($p, qr/entry \(key $flipped, row id $rowid\): not a band key of the row, or repeated/,
		'a flipped key byte: the entry is reported as not a band key of its row');
	like($p, qr/row \(\d+,\d+\) is visible but lacks 1 of its 30 band entries/,
		'a flipped key byte: the row is reported as lacking the entry');
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', 'flipped key byte: clean after REINDEX');
}

{
	# pd_lower one entry lower: the last entry is gone; the built leaf said
	# all its entries were in key order (format 4), which is now one too many
	my ($leaf, $flags, $page) = block_of_type(0x8);
	my $lower = unpack('S', substr($page, 12, 2));
	patch_block($leaf, 12, pack('S', $lower - 8));
	like(check_problems(),
		qr/^block $leaf: leaf with (\d+) entries in key order but (\d+) entries\nrow \(\d+,\d+\) is visible but lacks 1 of its 30 band entries$/,
		'a dropped entry: the leaf and the row lacking it are reported, and nothing else');
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', 'dropped entry: clean after REINDEX');
}

{
	# slot 0 of the first data page: tid (6 bytes) then the uint16 state
	my ($data) = block_of_type(0x2);
	patch_block($data, 24 + 6, pack('S', 0x7777));
	like(check_problems(), qr/block $data slot 0: invalid state 30583/,
		'a garbage slot state is reported');
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', 'garbage slot state: clean after REINDEX');
}

{
	# A keyed pending row (fastupdate) whose stored band key is flipped: the
	# page stays well-formed, but scans would skip the row by that key, so the
	# check compares the stored keys with the row's signature. Pending page:
	# type 0x80, keyed 0x200; a row is its uint32 row id, then its 30 keys.
	$node->safe_psql('postgres', q{
ALTER INDEX t_idx SET (fastupdate = on);
INSERT INTO t VALUES (501, fam_sig(501));
ALTER INDEX t_idx SET (fastupdate = off);
});
	my $file = index_file();
	$node->safe_psql('postgres', 'CHECKPOINT');
	my ($pending, $page);
	for my $blk (1 .. (-s $file) / $BLCKSZ - 1)
	{
		$page = read_block($file, $blk);
		my ($flags, $page_id) = unpack('S S', substr($page, $SPECIAL + 16, 4));
		if ($page_id == 0xFF8C && ($flags & 0x80) && ($flags & 0x200))
		{
			$pending = $blk;
			last;
		}
	}
	ok(defined $pending, 'the fast insert went to a keyed pending page');
	my ($rowid, $key) = unpack('L L', substr($page, 24, 8));
	patch_block($pending, 28, pack('L', $key ^ 0xFF));
	like(check_problems(), qr/^pending row id $rowid: the band keys on its pending page are not its signature's$/,
		'a flipped pending key: minhash_lsh_check reports it, and nothing else');
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	check_clean($node, 't_idx', 'flipped pending key: clean after REINDEX');
}

# A right link that skips a leaf: every page stays well-formed, but the leaf
# after the gap does not continue its new left sibling's high key. The
# check walks each level with the readers' leaf cursor, whose walk lists
# that (scans and the pairs walk raise it as XX002) and goes on: the rest
# of the level is still checked, and the check itself does not fail.
{
	$node->safe_psql('postgres', q{
CREATE TABLE w (id int, sig minhash);
INSERT INTO w SELECT g, fam_sig(g) FROM generate_series(1, 3000) g;
CREATE INDEX w_idx ON w USING lsh (sig) WITH (fastupdate = off);
CHECKPOINT;
});
	my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('w_idx')");
	my @leaves;    # [ low key, block ] of every leaf
	for my $blk (1 .. (-s $file) / $BLCKSZ - 1)
	{
		my ($low, $flags, $page_id) = unpack('L x12 S S', substr(read_block($file, $blk), $SPECIAL, 24));
		push @leaves, [ $low, $blk ] if $page_id == 0xFF8C && ($flags & 0xF) == 0x8;
	}
	@leaves = sort { $a->[0] <=> $b->[0] } @leaves;
	cmp_ok(scalar @leaves, '>=', 4, 'the second index has several leaves');
	my ($from, $to) = ($leaves[1][1], $leaves[3][1]);
	$node->stop;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	seek($fh, $from * $BLCKSZ + $SPECIAL + 8, 0) or die "seek: $!";
	print $fh pack('L', $to);
	close $fh;
	$node->start;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT string_agg(problem, E'\n') FROM minhash_lsh_check('w_idx')");
	is($ret, 0, 'a skipped leaf: minhash_lsh_check lists problems instead of failing');
	like($out, qr/^block $to: right sibling whose low key is not the high key of its left sibling$/m,
		'a skipped leaf: the check lists what the readers\' walk finds');
	like($out, qr/^block $to: low key \d+, the level above says \d+$/m,
		'a skipped leaf: and what only the check sees (the separators above)');
	like(try_sql("SELECT count(*) FROM minhash_similar_pairs('w_idx', 'id')"),
		qr/XX002: lsh index "w_idx" is corrupted: right sibling whose low key is not the high key of its left sibling at block $to/,
		'a skipped leaf: the pairs walk reports corruption');
	$node->safe_psql('postgres', 'DROP TABLE w');
}

# Every row is still found through the rebuilt index.
is(self_find_missing($node, 't', 't_idx', 'index'), '0', 'rows found by their own signature at the end');

$node->stop;
done_testing();
