# A damaged lsh index gives an error, never a hang, a crash or a silently
# wrong answer from a structural defect (issue 8).
#
# Setup: $ntables tables of the same rows (the family model of MinhashTAP,
# some deleted and vacuumed so the free list is in use), each with an lsh
# index of two levels (an internal root over ~12 leaves): the odd ones of
# 32-bit signatures, the even ones of minhash(128, 16) signatures whose index
# keeps 8 bits of each value (format 5's compact slots; the executor
# rechecks), so that every kind of damage meets both layouts; and a pristine
# copy of every relation file taken with the server stopped. Then, in
# batches: stop the server, copy the pristine files back, damage each table's
# index file in one seeded way, start, and run on each damaged index
#   % (index scan), % (bitmap scan), ORDER BY <%> LIMIT, minhash_similar_pairs
#   (serial, and walked by parallel workers), minhash_clusters, minhash_match
#   (an undamaged table as the batch), minhash_lsh_check(heapallindexed), INSERT, VACUUM,
#   minhash_lsh_stats
# each under statement_timeout. Every statement must end with an error of
# class XX (XX001 data_corrupted from the buffer manager, XX002
# index_corrupted from the index; a damaged on-disk version number may also
# give 0A000 "has on-disk version"; other valid parameters in the metapage
# describe another index, which may refuse the query's signature, 22023) or
# with the answer of the undamaged index
# (itself checked against a sequential scan). The one exception is damage to
# the payload of a page (slot values or TIDs, entry keys or row ids, bytes
# that no page check can tell from data without page checksums): a wrong
# answer is then tolerated only if minhash_lsh_check(index, true) reports a
# problem (on a compact index, whose ORDER BY distances are lower bounds the
# executor checks, damaged slot values may also end ORDER BY with
# PostgreSQL's "index returned tuples in wrong order": tolerated on the same
# terms). The postmaster must never restart (pg_postmaster_start_time and
# the log), and `pg_ctl stop -m fast` must work after every batch.
#
# MINHASH_DAMAGE_SEED (default 20260817) and MINHASH_DAMAGE_VARIANTS (default
# 264: twelve rounds of the 22-entry list of kinds) pick the variants; a failure names the
# seed, the table and the damage.
use strict;
use warnings;

use File::Copy;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

my $seed = $ENV{MINHASH_DAMAGE_SEED} // 20260817;
my $nvariants = $ENV{MINHASH_DAMAGE_VARIANTS} // 264;
my $ntables = 40;
my $BLCKSZ = 8192;
my $SPECIAL = $BLCKSZ - 24;
# seconds for one variant's whole script (its statements have 3 s each)
my $psql_timeout = $ENV{MINHASH_DAMAGE_TIMEOUT} // 60;
srand($seed);
note "seed $seed, $nvariants variants";

my $node = minhash_node('damage', {}, 'autovacuum = off', 'fsync = off',
	'log_min_messages = warning', 'log_min_error_statement = panic');
create_schema($node, 'allrows', 'base');
$node->safe_psql('postgres', q{
INSERT INTO allrows SELECT g, fam_sig(g) FROM generate_series(0, 399) g;
INSERT INTO base SELECT * FROM allrows WHERE NOT (id % 8 = 7 AND id < 200);
CREATE INDEX base_idx ON base USING lsh (sig);
CREATE TABLE base16 (id bigint NOT NULL, sig minhash(128, 16));
INSERT INTO base16 SELECT id, sig::minhash(128, 16) FROM base;
CREATE INDEX base16_idx ON base16 USING lsh (sig);
});
my @qids = (3, 42, 101, 250, 333);

# ---- the answers of the undamaged index, checked against sequential scans ----

# the query signature of row $q for a table of width $w (32 or 16)
sub qsig { my ($q, $w) = @_; return $w == 16 ? "fam_sig($q)::minhash(128, 16)" : "fam_sig($q)"; }
sub q_similar { my ($t, $q, $w) = @_; return "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '-') FROM $t WHERE sig % " . qsig($q, $w); }
sub q_nearest { my ($t, $q, $w) = @_; my $s = qsig($q, $w); return "SELECT string_agg(d, ',') FROM (SELECT round((sig <%> $s)::numeric, 6)::text AS d FROM $t ORDER BY sig <%> $s LIMIT 5) s"; }
sub q_pairs { my ($i) = @_; return "SELECT count(*) || ':' || coalesce(sum(key_a * 1000 + key_b), 0) FROM minhash_similar_pairs('$i', 'id')"; }
sub q_clusters { my ($i) = @_; return "SELECT count(*) || ':' || count(DISTINCT cluster_id) || ':' || coalesce(sum(key * cluster_id), 0) FROM minhash_clusters('$i', 'id')"; }
# the batch: the undamaged table of the same width ($b)
sub q_match { my ($i, $b) = @_; return "SELECT count(*) || ':' || coalesce(sum(batch_key * 1000 + key), 0) FROM minhash_match('$i', 'id', '$b', 'id', 'sig')"; }

# the width of table d$t's signatures: odd tables 32 bits, even ones 16
sub width_of { my ($t) = @_; return $t % 2 ? 32 : 16; }

my (%want_similar, %want_nearest, %want_pairs, %want_clusters, %want_match);
for my $w (32, 16)
{
	my $base = $w == 16 ? 'base16' : 'base';
	for my $q (@qids)
	{
		my $idx = $node->safe_psql('postgres', "SET enable_seqscan = off; " . q_similar($base, $q, $w));
		my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; " . q_similar($base, $q, $w));
		is($idx, $seq, "$w bits, query $q: the undamaged index answers % as a sequential scan does");
		$want_similar{$w}{$q} = $seq;
		$idx = $node->safe_psql('postgres', "SET enable_seqscan = off; " . q_nearest($base, $q, $w));
		$seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; " . q_nearest($base, $q, $w));
		is($idx, $seq, "$w bits, query $q: the undamaged index answers ORDER BY <%> LIMIT 5 as a sequential scan does");
		$want_nearest{$w}{$q} = $seq;
	}
	$want_pairs{$w} = $node->safe_psql('postgres', q_pairs("${base}_idx"));
	my $seq_pairs = $node->safe_psql('postgres',
		"SELECT count(*) || ':' || sum(a.id * 1000 + b.id) FROM $base a JOIN $base b ON a.id < b.id AND a.sig % b.sig");
	is($want_pairs{$w}, $seq_pairs, "$w bits: the undamaged index finds every similar pair a self-join finds");
	$want_clusters{$w} = $node->safe_psql('postgres', q_clusters("${base}_idx"));
	$want_match{$w} = $node->safe_psql('postgres', q_match("${base}_idx", $base));
	my $join_match = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SELECT count(*) || ':' || sum(n.id * 1000 + o.id) FROM $base n JOIN $base o ON o.sig % n.sig");
	is($want_match{$w}, $join_match, "$w bits: the undamaged index matches a batch as the per-row join through it does");
}

# ---- the tables, their files, and a pristine copy ----

my $setup = '';
for my $t (1 .. $ntables)
{
	my $type = width_of($t) == 16 ? 'minhash(128, 16)' : 'minhash';
	$setup .= "CREATE TABLE d$t (id bigint NOT NULL, sig $type);\n"
	  . "INSERT INTO d$t SELECT id, sig::$type FROM allrows;\n"
	  . "CREATE INDEX d${t}_idx ON d$t USING lsh (sig);\n"
	  . "DELETE FROM d$t WHERE id % 8 = 7 AND id < 200;\n";
}
$node->safe_psql('postgres', $setup);
# the deleted rows' slots become free: data pages on the free list
$node->safe_psql('postgres', "VACUUM d$_") for 1 .. $ntables;
is($node->safe_psql('postgres', "SELECT height || ':' || (free_slots > 15)::text FROM minhash_lsh_stats('d1_idx')"),
	'2:true', 'the indexes have an internal root and data pages on the free list');
is($node->safe_psql('postgres', "SELECT height || ':' || (free_slots >= 25)::text || ':' || data_pages FROM minhash_lsh_stats('d2_idx')"),
	'2:true:7', 'the compact indexes too, 59 slots of 8-bit values a data page');
my $datadir = $node->data_dir;
my %files;    # table number => [ heap file, index file ]
for my $t (1 .. $ntables)
{
	my ($h, $i) = split /\|/, $node->safe_psql('postgres',
		"SELECT pg_relation_filepath('d$t') || '|' || pg_relation_filepath('d${t}_idx')");
	$files{$t} = [ "$datadir/$h", "$datadir/$i" ];
}
$node->stop('fast');
my $pristine = PostgreSQL::Test::Utils::tempdir();
my @saved;    # [ pristine copy, relation file ]
for my $t (1 .. $ntables)
{
	for my $f (@{ $files{$t} })
	{
		for my $fork ('', '_fsm', '_vm')
		{
			next unless -e "$f$fork";
			my $copy = "$pristine/" . ($f =~ s{.*/}{}r) . $fork;
			copy("$f$fork", $copy) or die "copy $f$fork: $!";
			push @saved, [ $copy, "$f$fork" ];
		}
	}
}

# ---- damage ----

sub u16 { my ($p, $o) = @_; return unpack('S', substr($$p, $o, 2)); }
sub u32 { my ($p, $o) = @_; return unpack('L', substr($$p, $o, 4)); }
sub put16 { my ($p, $o, $v) = @_; substr($$p, $o, 2) = pack('S', $v); return; }
sub put32 { my ($p, $o, $v) = @_; substr($$p, $o, 4) = pack('L', $v); return; }
sub pick { return $_[ int(rand(scalar @_)) ]; }
sub rnd16 { return pick(0, 1, 2, 8, 24, 0xFF, 0xFFFF, int(rand(65536))); }
sub rnd32 { my ($nb) = @_; return pick(0, 1, $nb - 1, $nb, $nb + 7, 0xFFFFFFFF, int(rand(2**32))); }

# Pages of an index image: type (META, DATA, INTERNAL, LEAF or OTHER) per block
sub classify
{
	my ($img) = @_;
	my $nb = length($$img) / $BLCKSZ;
	my %by;
	for my $b (0 .. $nb - 1)
	{
		my $flags = u16($img, $b * $BLCKSZ + $SPECIAL + 16);
		my $type = { 1 => 'META', 2 => 'DATA', 4 => 'INTERNAL', 8 => 'LEAF' }->{ $flags & 0xF } // 'OTHER';
		push @{ $by{$type} }, $b;
	}
	return ($nb, \%by);
}

# The leaves in key order (from the metapage's leftmost leaf along the right links)
sub leaf_chain
{
	my ($img) = @_;
	my @chain;
	my $b = u32($img, 60);
	while ($b != 0xFFFFFFFF && @chain < 1000)
	{
		push @chain, $b;
		$b = u32($img, $b * $BLCKSZ + $SPECIAL + 8);
	}
	return @chain;
}

# Damage the image in place; returns (description, payload_only). $slot is
# the size of a data slot, $spp the slots a data page holds.
sub damage
{
	my ($img, $kind, $slot, $spp) = @_;
	my ($nb, $by) = classify($img);
	my @leaves = leaf_chain($img);
	my @data = @{ $by->{DATA} // [] };
	my $root = u32($img, 56);
	my $o = sub { return $_[0] * $BLCKSZ; };    # block offset

	if ($kind eq 'random_bytes')
	{
		my $b = int(rand($nb));
		my $n = 1 + int(rand(12));
		my $type = u16($img, $o->($b) + $SPECIAL + 16) & 0xF;
		my @at;
		for (1 .. $n)
		{
			my $off = int(rand($BLCKSZ));
			substr($$img, $o->($b) + $off, 1) = chr(int(rand(256)));
			push @at, $off;
		}
		# bytes between the header and the special space of a data page or a leaf
		# are signatures and entries (or free space): payload; so are the
		# header's pd_prune_xid (bytes 20-23), which nothing of lsh reads, and
		# a changed byte there must not make the entries' damage count as the
		# header's
		my $payload = ($type == 2 || $type == 8) && !grep { $_ < 20 || $_ >= $SPECIAL } @at;
		return ("random bytes in block $b at " . join(',', @at), $payload);
	}
	if ($kind eq 'rightlink_cycle')
	{
		my $i = int(rand(@leaves - 1));
		my $b = $leaves[$i];
		my $to = pick($b, $leaves[0], $leaves[ int(rand($i + 1)) ]);
		put32($img, $o->($b) + $SPECIAL + 8, $to);
		# a high key at the low key makes every scan that reaches the leaf follow the link
		put32($img, $o->($b) + $SPECIAL + 4, u32($img, $o->($b) + $SPECIAL)) if rand() < 0.7;
		return ("right link of leaf $b to leaf $to", 0);
	}
	if ($kind eq 'wrong_level')
	{
		my $b = pick(@leaves, $root);
		my $v = pick(0, 1, 2, 3, 100, 0xFFFF);
		put16($img, $o->($b) + $SPECIAL + 14, $v);
		return ("level of block $b set to $v", 0);
	}
	if ($kind eq 'wrong_type')
	{
		my $b = int(rand($nb));
		my $flags = u16($img, $o->($b) + $SPECIAL + 16);
		my $t = pick(1, 2, 4, 8, 0, 3, 0xF);
		put16($img, $o->($b) + $SPECIAL + 16, ($flags & ~0xF) | $t);
		return ("page type of block $b set to $t", 0);
	}
	if ($kind eq 'wrong_flags')
	{
		my $b = int(rand($nb));
		my $flags = u16($img, $o->($b) + $SPECIAL + 16);
		my $f = pick(0x10, 0x20, 0x40, 0x80, 0x8000);
		put16($img, $o->($b) + $SPECIAL + 16, $flags ^ $f);
		return (sprintf("flag 0x%x of block %d flipped", $f, $b), 0);
	}
	if ($kind eq 'free_head_zero')
	{
		# block 0 is the metapage, which an insert holds locked while it takes a free slot
		put32($img, 64, 0);
		return ('metapage free_head set to 0', 0);
	}
	if ($kind eq 'free_head')
	{
		my $v = pick($root, $leaves[0], @data, $nb, $nb + 100, 0xFFFFFFFE);
		put32($img, 64, $v);
		return ("metapage free_head set to $v", 0);
	}
	if ($kind eq 'free_cycle')
	{
		my $b = pick(@data);
		put32($img, $o->($b) + $SPECIAL + 8, pick($b, 0, @data));
		put16($img, $o->($b) + $SPECIAL + 16, u16($img, $o->($b) + $SPECIAL + 16) | 0x20);
		put32($img, 64, $b) if rand() < 0.5;
		return ("data page $b linked into a free-list cycle", 0);
	}
	if ($kind eq 'pd_lower' || $kind eq 'pd_upper')
	{
		my $b = int(rand($nb));
		my $at = $kind eq 'pd_lower' ? 12 : 14;
		my $cur = u16($img, $o->($b) + $at);
		my $v = pick(0, 8, 23, 24, $cur - 1, $cur + 1, $cur - 7, $cur - 8, $cur + 8, $SPECIAL, $SPECIAL + 1, $BLCKSZ, rnd16());
		$v &= 0xFFFF;
		put16($img, $o->($b) + $at, $v);
		# a leaf's pd_lower moved to another entry boundary is a well-formed leaf
		# with entries dropped or garbage added: payload, only the check can see it
		my $flags = u16($img, $o->($b) + $SPECIAL + 16);
		my $esize = ($flags & 0x40) ? 7 : 8;
		my $payload = $kind eq 'pd_lower' && ($flags & 0xF) == 8 && $v >= 24 && $v <= $SPECIAL
		  && ($v - 24) % $esize == 0;
		return ("$kind of block $b from $cur to $v", $payload);
	}
	if ($kind eq 'special')
	{
		my $b = int(rand($nb));
		my $v = pick(0, 8000, $SPECIAL - 8, $SPECIAL + 8, $BLCKSZ);
		put16($img, $o->($b) + 16, $v);
		return ("pd_special of block $b set to $v", 0);
	}
	if ($kind eq 'truncate')
	{
		my $keep = int(rand($nb));
		$$img = substr($$img, 0, $keep * $BLCKSZ + pick(0, 0, 100));
		return ("relation truncated to $keep blocks", 0);
	}
	if ($kind eq 'zero_meta')
	{
		substr($$img, 0, $BLCKSZ) = "\0" x $BLCKSZ;
		return ('zeroed metapage', 0);
	}
	if ($kind eq 'zero_page')
	{
		my $b = 1 + int(rand($nb - 1));
		substr($$img, $o->($b), $BLCKSZ) = "\0" x $BLCKSZ;
		return ("zeroed block $b", 0);
	}
	if ($kind eq 'meta_field')
	{
		# magic, version, num_perm, bands, rows, slots per page, root, leftmost,
		# height, and (format 5) the width codes of the signatures and the slots
		my ($name, $off, $size) = @{ pick([ 'magic', 24, 4 ], [ 'version', 28, 4 ], [ 'num_perm', 32, 2 ],
				[ 'bands', 34, 2 ], [ 'rows', 36, 2 ], [ 'slots_per_page', 38, 2 ], [ 'root', 56, 4 ],
				[ 'leftmost', 60, 4 ], [ 'height', 68, 2 ], [ 'sig_width', 424, 2 ], [ 'slot_width', 426, 2 ]) };
		my $v = $size == 4 ? pick(rnd32($nb), $root, @leaves ? $leaves[-1] : 1, @data ? $data[0] : 1)
		  : $name =~ /width/ ? pick(0, 1, 2, 3, rnd16()) : rnd16();
		$size == 4 ? put32($img, $off, $v) : put16($img, $off, $v);
		# other valid parameters describe another index, which answers differently
		# (or refuses the query's signature, 22023): only the check can tell
		return ("metapage $name set to $v", ($name =~ /^(num_perm|bands|rows|sig_width|slot_width)$/) ? 2 : 0);
	}
	if ($kind eq 'child')
	{
		my $n = (u16($img, $o->($root) + 12) - 24) / 8;
		my $i = int(rand($n));
		my $v = pick(0, $root, @data ? $data[0] : 0, $nb, $nb + 50, 0xFFFFFFFF, $leaves[ int(rand(@leaves)) ]);
		put32($img, $o->($root) + 24 + 8 * $i + 4, $v);
		return ("child $i of the root set to $v", 0);
	}
	if ($kind eq 'keys')
	{
		# a tree page's key range: low above high, or a huge range on a narrow leaf
		my $b = pick(@leaves, $root);
		my $f = pick(0, 4);
		put32($img, $o->($b) + $SPECIAL + $f, pick(0, 0xFFFFFFFF, int(rand(2**32))));
		return ("key range of block $b damaged at +$f", 0);
	}
	if ($kind eq 'leaf_sorted')
	{
		# a leaf's count of entries in key order (lsh_leaf_sorted): past its entries
		# the page check refuses it; within them an unsorted tail may be
		# binary-searched and entries missed, which only the check can see
		my $b = pick(@leaves);
		my $flags = u16($img, $o->($b) + $SPECIAL + 16);
		my $n = (u16($img, $o->($b) + 12) - 24) / (($flags & 0x40) ? 7 : 8);
		my $v = pick(0, 1, $n - 1, $n, $n + 1, 0xFFFF, int(rand($n + 1)));
		put16($img, $o->($b) + $SPECIAL + 12, $v);
		return ("sorted entries of leaf $b ($n entries) set to $v", $v <= $n ? 1 : 0);
	}
	if ($kind eq 'slot')
	{
		my $b = pick(@data);
		my $s = int(rand($spp));
		my $at = $o->($b) + 24 + $s * $slot;
		my $what = pick('state', 'tid_block', 'tid_offset', 'count');
		if ($what eq 'state') { put16($img, $at + 6, pick(0, 1, 2, 3, 0xFFFF)); }
		elsif ($what eq 'tid_block') { put16($img, $at, pick(0, 0xFFFF)); put16($img, $at + 2, rnd16()); }
		elsif ($what eq 'tid_offset') { put16($img, $at + 4, pick(0, 1, 291, 292, 0xFFFF)); }
		else { put16($img, $o->($b) + $SPECIAL + 12, rnd16()); }
		# a state or TID change of a slot is payload: only the check can see it
		return ("slot $s of data page $b: $what", $what ne 'count');
	}
	die "unknown kind $kind";
}

my @kinds = qw(random_bytes random_bytes random_bytes rightlink_cycle rightlink_cycle
  wrong_level wrong_type wrong_flags free_head free_head_zero free_cycle pd_lower pd_upper special
  truncate zero_meta zero_page meta_field meta_field child keys slot leaf_sorted);
# MINHASH_DAMAGE_KINDS=a,b restricts the kinds (e.g. to show a hang on an older build)
@kinds = split /,/, $ENV{MINHASH_DAMAGE_KINDS} if $ENV{MINHASH_DAMAGE_KINDS};

# ---- running the statements ----

# One psql session for a variant; returns, per statement, [ output, sqlstate or undef, message ].
sub run_variant
{
	my ($t, $q) = @_;
	my $w = width_of($t);
	my $type = $w == 16 ? 'minhash(128, 16)' : 'minhash';
	my @stmts = (
		[ 'similar', "SET enable_seqscan = off; SET enable_bitmapscan = off;\n" . q_similar("d$t", $q, $w) ],
		[ 'similar_bitmap', "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_bitmapscan = on;\n" . q_similar("d$t", $q, $w) ],
		[ 'nearest', "SET enable_seqscan = off; SET enable_bitmapscan = on; SET enable_indexscan = on;\n" . q_nearest("d$t", $q, $w) ],
		[ 'pairs', q_pairs("d${t}_idx") ],
		# the walk cut into key ranges among parallel workers and the leader
		[ 'pairs_parallel', "SET minhash.pairs_min_parallel_index_size = 0; SET max_parallel_workers_per_gather = 2;\n"
			  . q_pairs("d${t}_idx") . ";\nRESET minhash.pairs_min_parallel_index_size" ],
		[ 'clusters', q_clusters("d${t}_idx") ],
		[ 'match', q_match("d${t}_idx", width_of($t) == 16 ? 'base16' : 'base') ],
		# the problems listed, and how many of them repeat a line
		[ 'check', "SELECT count(*) || ' listed, ' || (count(*) - count(DISTINCT p)) || ' repeated' FROM minhash_lsh_check('d${t}_idx', true) p" ],
		[ 'insert', "INSERT INTO d$t SELECT id + 1000, sig::$type FROM base WHERE id < 24" ],
		[ 'vacuum', "DELETE FROM d$t WHERE id % 8 = 3;\nVACUUM d$t" ],
		[ 'stats', "SELECT num_perm FROM minhash_lsh_stats('d${t}_idx')" ]);
	my $script = "\\set VERBOSITY verbose\nSET statement_timeout = '3s';\n";
	for my $i (0 .. $#stmts)
	{
		$script .= "\\echo \@\@S $i\n\\warn \@\@S $i\n$stmts[$i][1];\n";
	}
	$script .= "\\echo \@\@S end\n";
	my ($out, $err, $timed_out) = ('', '', 0);
	$node->psql('postgres', $script, stdout => \$out, stderr => \$err, on_error_stop => 0,
		timeout => $psql_timeout, timed_out => \$timed_out);
	my (%o, %e);
	my $cur;
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^\@\@S (\S+)$/) { $cur = $1; $o{$cur} = ''; next; }
		$o{$cur} .= ($o{$cur} eq '' ? '' : "\n") . $line if defined $cur;
	}
	undef $cur;
	for my $line (split /\n/, $err)
	{
		if ($line =~ /^\@\@S (\S+)$/) { $cur = $1; $e{$cur} = ''; next; }
		$e{$cur} .= "$line\n" if defined $cur;
	}
	my @res;
	for my $i (0 .. $#stmts)
	{
		my $msg = $e{$i} // '';
		my ($state) = $msg =~ /(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}):/;
		$state = 'CONN' if !defined $state && $msg =~ /server closed the connection|connection to server was lost|no connection to the server/;
		push @res, [ $stmts[$i][0], $o{$i}, $state, $msg ];
	}
	return (\@res, $timed_out, defined $o{end});
}

sub start_time { return $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'); }

my ($nfail, $nerrors, $nanswers, $ntolerated) = (0, 0, 0, 0);
my %kind_count;
my $done = 0;
my $batch = 0;
while ($done < $nvariants)
{
	$batch++;
	my $n = $nvariants - $done < $ntables ? $nvariants - $done : $ntables;
	# restore the pristine files, then damage one index per table
	for my $s (@saved)
	{
		copy($s->[0], $s->[1]) or die "restore $s->[1]: $!";
	}
	my %variant;
	for my $t (1 .. $n)
	{
		my $kind = $kinds[ ($done + $t - 1) % @kinds ];
		my $file = $files{$t}[1];
		open(my $fh, '<', $file) or die "open $file: $!";
		binmode $fh;
		local $/;
		my $img = <$fh>;
		close $fh;
		my ($desc, $payload) = width_of($t) == 16 ? damage(\$img, $kind, 136, 59) : damage(\$img, $kind, 520, 15);
		open($fh, '>', $file) or die "write $file: $!";
		binmode $fh;
		print $fh $img;
		close $fh;
		$variant{$t} = [ $kind, $desc, $payload, pick(@qids) ];
		$kind_count{$kind}++;
	}
	my $logstart = -s $node->logfile;
	$node->start;
	my $started = start_time();
	for my $t (1 .. $n)
	{
		my ($kind, $desc, $payload, $q) = @{ $variant{$t} };
		my $name = "seed $seed batch $batch table d$t: $desc";
		my $t0 = time();
		my ($res, $timed_out, $complete) = run_variant($t, $q);
		note sprintf("%s: %.2fs", $name, time() - $t0) if time() - $t0 > 0.5;
		my @wrong;
		if ($timed_out || !$complete)
		{
			fail("$name: the statements did not all end within ${psql_timeout}s (hang)");
			$nfail++;
			# a backend looping under a buffer lock cannot be cancelled: only an immediate stop ends it
			$node->stop('immediate');
			$node->start;
			$started = start_time();
			next;
		}
		my $check_found;
		for my $r (@$res)
		{
			my ($stmt, $out, $state, $msg) = @$r;
			if (defined $state)
			{
				$nerrors++;
				if ($state eq '22023' && $payload == 2 && $msg =~ /does not match lsh index/)
				{
					push @wrong, "$stmt refused the signature";
					next;
				}
				# a compact index's ORDER BY distances are lower bounds the executor
				# checks against the table: damaged slot values can break the bound,
				# which PostgreSQL reports itself; like a wrong answer, only with the
				# damage found by the check
				if ($state eq 'XX000' && $stmt eq 'nearest' && width_of($t) == 16
					&& $msg =~ /index returned tuples in wrong order/)
				{
					push @wrong, "$stmt: $msg";
					next;
				}
				if (!($state =~ /^XX00[12]$/ || ($state eq '0A000' && $msg =~ /has on-disk version/)))
				{
					fail("$name: $stmt ended with $state, not an XX error: $msg");
					$nfail++;
				}
				$check_found = 1 if $stmt eq 'check';
				next;
			}
			$nanswers++;
			my $w = width_of($t);
			my $want = $stmt eq 'similar' || $stmt eq 'similar_bitmap' ? $want_similar{$w}{$q}
			  : $stmt eq 'nearest' ? $want_nearest{$w}{$q}
			  : $stmt eq 'pairs' || $stmt eq 'pairs_parallel' ? $want_pairs{$w}
			  : $stmt eq 'clusters' ? $want_clusters{$w}
			  : $stmt eq 'match' ? $want_match{$w}
			  : undef;
			$check_found = 1 if $stmt eq 'check' && $out !~ /^0 listed/;
			if ($stmt eq 'check' && $out !~ / 0 repeated$/)
			{
				fail("$name: minhash_lsh_check listed a problem more than once ($out)");
				$nfail++;
			}
			push @wrong, "$stmt gave '$out', expected '$want'" if defined $want && $out ne $want;
		}
		if (@wrong)
		{
			if ($payload && $check_found)
			{
				$ntolerated++;
			}
			else
			{
				fail("$name: wrong answers without an error: " . join('; ', @wrong)
					  . ($payload ? ' (and minhash_lsh_check found nothing)' : ''));
				$nfail++;
			}
		}
	}
	is(start_time(), $started, "batch $batch: the postmaster never restarted");
	my $log = slurp_file($node->logfile, $logstart);
	unlike($log, qr/terminated by signal|was terminated by exception|server process .* exited with exit code [^0]/,
		"batch $batch: no server process crashed");
	my $ok = system('pg_ctl', '-D', $datadir, '-m', 'fast', '-t', '60', '-w', 'stop') == 0;
	ok($ok, "batch $batch: pg_ctl stop -m fast works");
	if (!$ok)
	{
		$node->stop('immediate');
		$nfail++;
	}
	else
	{
		$node->_update_pid(0);
	}
	$done += $n;
}
note "$done variants: $nerrors statements ended in an error, $nanswers with an answer, "
  . "$ntolerated variants with payload damage found by minhash_lsh_check; "
  . join(', ', map { "$_ $kind_count{$_}" } sort keys %kind_count);
is($nfail, 0, "every statement on $done damaged indexes ended in time with an XX error or the right answer");

done_testing();
