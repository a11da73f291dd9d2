# Logical replication and logical decoding of minhash columns.
#
# A subscriber applies rows (whole transactions, and large ones streamed
# while in progress) through the type's input function (text
# subscriptions, and the initial COPY) or its receive function (binary = true),
# with the subscriber column's typmod; its own lsh indexes (plain, compact,
# oph, an expression index on a table owned by another role, pending list on
# and off) are maintained by the apply worker. After the initial sync and
# streamed INSERT / UPDATE / DELETE, the subscriber must hold the publisher's
# values, its indexes must pass minhash_lsh_check, and `%` through them must
# return the rows a sequential scan returns on the publisher. UPDATE and
# DELETE of a REPLICA IDENTITY FULL table whose only column is a minhash find
# the row by the type's equality (its btree and hash operator classes). A
# value that does not fit the subscriber's typmod is refused with the type's
# own message. test_decoding prints the text form.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

# logical_decoding_work_mem at its minimum: the text subscription's large
# transactions are streamed while in progress (streaming = on) and applied
# from the subscriber's spool file at commit
my $pub = minhash_node('pub', { allows_streaming => 'logical' }, 'autovacuum = off',
	'logical_decoding_work_mem = 64kB');
# three subscriptions at once, each an apply worker (and, from PostgreSQL 18,
# whose default streaming is parallel, parallel apply workers) beside the
# initial sync's: more than the default 4 worker slots
my $sub = minhash_node('sub', {}, 'autovacuum = off', 'max_logical_replication_workers = 12',
	'max_worker_processes = 24');
my $schema = q{
CREATE TABLE docs (id int PRIMARY KEY, sig minhash, c minhash(128, 16), o minhash);
CREATE TABLE docs_bin (LIKE docs INCLUDING ALL);
CREATE TABLE full_only (sig minhash);
ALTER TABLE full_only REPLICA IDENTITY FULL;
CREATE TABLE texts (id int PRIMARY KEY, body text);
CREATE TABLE wide (id int PRIMARY KEY, note text, sig minhash(1024));
CREATE TABLE wide_full (note text, sig minhash);
ALTER TABLE wide_full REPLICA IDENTITY FULL;
};
$pub->safe_psql('postgres', $schema . q{
CREATE TABLE narrow (id int PRIMARY KEY, sig minhash);
CREATE PUBLICATION p FOR TABLE docs, full_only, texts, wide, wide_full;
CREATE PUBLICATION pb FOR TABLE docs_bin;
CREATE PUBLICATION pn FOR TABLE narrow;
});
# the subscriber's own indexes; texts belongs to a role that is not the
# subscription's owner, so its index expression runs as that role
$sub->safe_psql('postgres', $schema . q{
CREATE INDEX docs_sig ON docs USING lsh (sig) WITH (fastupdate = on, pending_list_limit = 64);
CREATE INDEX docs_c ON docs USING lsh (c);
CREATE INDEX docs_o ON docs USING lsh (o) WITH (fastupdate = off);
CREATE INDEX docs_bin_sig ON docs_bin USING lsh (sig);
CREATE INDEX full_sig ON full_only USING lsh (sig);
CREATE INDEX wide_sig ON wide USING lsh (sig);
CREATE INDEX wide_full_sig ON wide_full USING lsh (sig);
CREATE ROLE alice;
ALTER TABLE texts OWNER TO alice;
CREATE INDEX texts_sig ON texts USING lsh (minhash(body, 'char', 4)) WITH (pending_list_limit = 64);
CREATE TABLE narrow (id int PRIMARY KEY, sig minhash(128, 16));
});

# families of 8 rows (id / 8) sharing 60 of 62 elements: 32-bit native,
# compact 16-bit, and oph signatures
my $fill = q{
INSERT INTO %s SELECT g,
  minhash(ARRAY(SELECT (g/8)*1000 + x FROM generate_series(1, 60) x) || ARRAY[g*7+1, g*7+2]),
  minhash(ARRAY(SELECT (g/8)*1000 + x FROM generate_series(1, 60) x) || ARRAY[g*7+1, g*7+2])::minhash(128, 16),
  minhash(ARRAY(SELECT (g/8)*1000 + x FROM generate_series(1, 60) x) || ARRAY[g*7+1, g*7+2], family => 'oph')
 FROM generate_series(%d, %d) g;
};
my $texts = q{INSERT INTO texts SELECT g, repeat(md5((g/8)::text), 4) || md5(g::text) FROM generate_series(%d, %d) g;};
$pub->safe_psql('postgres', sprintf($fill, 'docs', 1, 200) . sprintf($fill, 'docs_bin', 1, 200)
	. sprintf($texts, 1, 300)
	. 'INSERT INTO full_only SELECT minhash(ARRAY[g, g + 1, g + 2]) FROM generate_series(1, 50) g;'
	# k = 1024: 4112 bytes, stored out of line (TOAST)
	. 'INSERT INTO wide SELECT g, NULL, minhash(ARRAY[g / 4, g], num_perm => 1024) FROM generate_series(1, 40) g;'
	. 'INSERT INTO wide_full SELECT NULL, minhash(ARRAY[g / 4, g], num_perm => 1024) FROM generate_series(1, 40) g;');

my $conn = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION s CONNECTION '$conn' PUBLICATION p WITH (streaming = on)");
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION sb CONNECTION '$conn' PUBLICATION pb WITH (binary = true)");
$sub->wait_for_subscription_sync($pub, 's');
$sub->wait_for_subscription_sync($pub, 'sb');

my $same = sub {
	my ($sql, $name) = @_;
	my $want = $pub->safe_psql('postgres', $sql);
	isnt($want, '', "$name: the publisher's answer is not empty");
	is($sub->safe_psql('postgres', $sql), $want, $name);
};
my $rows = q{SELECT string_agg(id || ':' || sig::text || ' ' || coalesce(c::text, '-') || ' ' || o::text, ',' ORDER BY id) FROM %s};
$same->(sprintf($rows, 'docs'), 'initial sync (text)');
$same->(sprintf($rows, 'docs_bin'), 'initial sync (binary)');

# streamed changes
$pub->safe_psql('postgres', sprintf($fill, 'docs', 201, 700) . sprintf($fill, 'docs_bin', 201, 700)
	. sprintf($texts, 301, 800) . q{
UPDATE docs SET sig = minhash(ARRAY[id, -1]) WHERE id % 10 = 3;
DELETE FROM docs WHERE id % 10 = 4;
UPDATE docs_bin SET c = NULL, sig = minhash(ARRAY[id, -1]) WHERE id % 10 = 3;
DELETE FROM docs_bin WHERE id % 10 = 4;
UPDATE texts SET body = 'x' WHERE id % 7 = 0;
UPDATE wide SET note = 'n' WHERE id % 3 = 0;
UPDATE wide_full SET note = 'n' WHERE minhash_to_array(sig) IN (SELECT minhash_to_array(sig) FROM wide_full ORDER BY sig LIMIT 10);
DELETE FROM wide_full WHERE sig IN (SELECT sig FROM wide_full ORDER BY sig LIMIT 5 OFFSET 20);
UPDATE full_only SET sig = minhash(ARRAY[-1]) WHERE sig IN (SELECT sig FROM full_only ORDER BY sig LIMIT 5);
DELETE FROM full_only WHERE sig IN (SELECT sig FROM full_only ORDER BY sig LIMIT 5 OFFSET 20);
});
$pub->wait_for_catchup('s');
$pub->wait_for_catchup('sb');
# (the walsender reports its slot's statistics when it is idle)
ok($pub->poll_query_until('postgres', "SELECT stream_txns > 0 FROM pg_stat_replication_slots WHERE slot_name = 's'"),
	'the text subscription received streamed transactions');
$same->(sprintf($rows, 'docs'), 'streamed changes (text)');
$same->(sprintf($rows, 'docs_bin'), 'streamed changes (binary)');
$same->(q{SELECT count(*) || ' ' || string_agg(sig::text, ',' ORDER BY sig) FROM full_only},
	'UPDATE and DELETE of a REPLICA IDENTITY FULL table of one minhash column');

$same->(q{SELECT string_agg(id || coalesce(note, '-') || sig::text, ',' ORDER BY id) FROM wide},
	'an UPDATE of another column keeps an out-of-line signature (unchanged TOAST)');
$same->(q{SELECT count(*) || ' ' || string_agg(coalesce(note, '-') || sig::text, ',' ORDER BY sig) FROM wide_full},
	'REPLICA IDENTITY FULL finds rows by out-of-line signatures');
for my $index ('docs_sig', 'docs_c', 'docs_o', 'docs_bin_sig', 'full_sig', 'texts_sig', 'wide_sig', 'wide_full_sig')
{
	is($sub->safe_psql('postgres', "SELECT count(*) FROM minhash_lsh_check('$index', heapallindexed => true)"),
		'0', "$index, maintained by the apply worker, is clean");
}
# % through the subscriber's indexes finds what a scan finds on the publisher
my $through_index = 'SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off; ';
for my $col ('sig', 'c', 'o')
{
	my $q = "SELECT string_agg(q.id || '~' || d.id, ',' ORDER BY q.id, d.id) FROM docs q, docs d "
	  . "WHERE q.id IN (17, 250, 555) AND d.$col % q.$col";
	like($sub->safe_psql('postgres', $through_index . "EXPLAIN $q"), qr/Index Cond: \($col % q\.$col\)/,
		"% on $col uses the subscriber's index");
	$same->($q, "% on $col: the subscriber's index finds the publisher's rows");
}
my $tq = q{SELECT string_agg(q.id || '~' || t.id, ',' ORDER BY q.id, t.id) FROM texts q, texts t
	WHERE q.id IN (9, 501) AND minhash(t.body, 'char', 4) % minhash(q.body, 'char', 4)};
like($sub->safe_psql('postgres', $through_index . "EXPLAIN $tq"), qr/texts_sig/, "% on texts uses the expression index");
$same->($tq, "% through the expression index finds the publisher's rows");
my $log = slurp_file($sub->logfile);
unlike($log, qr/ERROR|TRAP|terminated by signal/, "the subscriber's log has no error");

# a 32-bit signature into a minhash(128, 16) column of the subscriber: the
# apply worker's COPY fails with the type's message and hint
my $offset = -s $sub->logfile;
$pub->safe_psql('postgres', 'INSERT INTO narrow VALUES (1, minhash(ARRAY[1, 2]))');
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION sn CONNECTION '$conn' PUBLICATION pn WITH (binary = true)");
$sub->wait_for_log(qr/ERROR:  minhash signature keeps 32 bits of each value, but the type is minhash\(128,16\)\n.*HINT:  An explicit cast/, $offset);
ok(1, 'a value wider than the subscriber column is refused with the typmod message');
$sub->safe_psql('postgres', 'DROP SUBSCRIPTION sn');

# test_decoding prints the text form, which reads back as the same value
$pub->safe_psql('postgres', "SELECT pg_create_logical_replication_slot('td', 'test_decoding')");
$pub->safe_psql('postgres', q{INSERT INTO docs VALUES (9999, minhash(ARRAY[1, 2, 3]), minhash(ARRAY[1, 2, 3])::minhash(128, 16), NULL)});
my $dec = $pub->safe_psql('postgres', "SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('td', NULL, NULL)");
my ($sig, $c) = $dec =~ /sig\[minhash\]:'([^']*)' c\[minhash\]:'([^']*)'/;
ok(defined $sig, 'test_decoding prints the minhash columns') or diag($dec);
is($pub->safe_psql('postgres', "SELECT '$sig'::minhash = sig AND '$c'::minhash(128, 16) = c FROM docs WHERE id = 9999"),
	't', "test_decoding's text reads back as the stored values");

$sub->stop;
$pub->stop;
done_testing();
