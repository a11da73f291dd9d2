# docs/dedup.md's SQL runs as written and does what the text says, so the
# recipe cannot rot: its steps 1-6 (signatures and lengths as generated
# columns, the index, representative clusters kept by the longest text with
# exact verification, the look before deleting, the DELETE), then its batch
# of new rows (the rows minhash_match pairs with indexed ones, and the INSERT
# of the new rows that duplicate nothing).
#
# The table: 60 base texts of 60 distinct words, and for each two variants
# with j = 1 or 2 words replaced in the middle: exact 5-word Jaccard 51/61 =
# 0.84 and 50/62 = 0.81 to their base, 51/61 to each other, so each group is
# one cluster at 0.8 with exact verification, and the base is its longest
# text (the replacing words are shorter). The new rows: 20 texts with their
# base's last word replaced (Jaccard 55/57 = 0.96, far above 0.8 for the
# estimate too) and 20 texts unlike any.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MinhashTAP;

open(my $fh, '<', "$ENV{MINHASH_SRC}/docs/dedup.md") or die "docs/dedup.md: $!";
my $doc = do { local $/; <$fh> };
close $fh;
my ($recipe) = $doc =~ /^## The recipe\n.*?^```sql\n(.*?)^```/ms
  or die 'docs/dedup.md has no ```sql block under "## The recipe"';
my ($batch) = $doc =~ /^\*\*New rows against a deduplicated table\.\*\*.*?^```sql\n(.*?)^```/ms
  or die 'docs/dedup.md has no ```sql block after "New rows against a deduplicated table"';

my $node = minhash_node('dedup_recipe');

# base text b: 60 long words; variant(b, first, j, tag) replaces its words
# first .. first + j - 1 by short ones
$node->safe_psql('postgres', q{
CREATE FUNCTION variant(b int, first int, j int, tag text) RETURNS text LANGUAGE sql IMMUTABLE
  RETURN (SELECT string_agg(CASE WHEN w >= first AND w < first + j THEN tag || w
                                 ELSE 'word' || md5(b || '-' || w) END, ' ' ORDER BY w)
          FROM generate_series(1, 60) w);
CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL);
INSERT INTO docs SELECT b, variant(b, 0, 0, '') FROM generate_series(1, 60) b;
INSERT INTO docs SELECT 1000 * j + b, variant(b, 30, j, 'v') FROM generate_series(1, 60) b, generate_series(1, 2) j;
CREATE TABLE new_docs (id int PRIMARY KEY, body text NOT NULL,
                       sig minhash GENERATED ALWAYS AS (minhash(body)) STORED);
INSERT INTO new_docs (id, body) SELECT 5000 + b, variant(b, 60, 1, 'n') FROM generate_series(1, 20) b;
INSERT INTO new_docs (id, body) SELECT 6000 + b, variant(100 + b, 0, 0, '') FROM generate_series(1, 20) b;
});

$node->safe_psql('postgres', $recipe);
is($node->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT cluster_id), bool_and(cluster_id <= 60) FROM dups'),
	'180|60|t', 'the recipe groups each base text with its two variants, named by the base (the longest)');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM dups d JOIN docs r ON r.id = d.key
WHERE d.key <> d.cluster_id}), '0', 'its DELETE kept one row per group and deleted the others');
is($node->safe_psql('postgres', 'SELECT count(*), min(id), max(id) FROM docs'),
	'60|1|60', 'the table is left with the base texts');

# what the batch block must load: the new rows no indexed row is similar to,
# by the per-row join the text gives as the equivalent
my $unmatched = $node->safe_psql('postgres', q{
SET minhash.similarity_threshold = 0.8;
SELECT string_agg(id::text, ',' ORDER BY id) FROM new_docs
WHERE NOT EXISTS (SELECT FROM docs o WHERE o.sig % new_docs.sig)});
is($unmatched, join(',', 6001 .. 6020), 'the new texts unlike any indexed one are 6001-6020');

$node->safe_psql('postgres', $batch);
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM docs WHERE id > 60'),
	$unmatched, 'the batch block loaded exactly the new rows that duplicate nothing');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE id > 60 AND (sig IS DISTINCT FROM minhash(body) OR body_length <> octet_length(body))}),
	'0', 'with their signatures and lengths computed by the table');

$node->stop;
done_testing();
