# The seed papers' experiments, regenerated through the extension's SQL
# functions on the benchmark corpus, as PNG plots (gnuplot):
#   jaccard_vs_k.png        seed 000 fig. 2 (and seed 004 figs. 6, 9)
#   estimate_vs_numperm.png seed 000 fig. 5
#   error_vs_numperm.png    seed 004 figs. 13-15
#   scurve.png              seed 004 figs. 27-32: P(candidate) vs similarity
#   time_vs_n.png           seed 000 fig. 4: brute force vs signatures vs LSH
#   hash_families.png       seed 000 fig. 3, seed 004, seed 002: hash families
#                           (bench/hash_families.cpp, the core alone)
# Data go to $RESULTS/plots/*.tsv, pictures to $RESULTS/plots/ and, for a
# full (non-smoke) run, to bench/plots/.

plot_tsv() { q -F$'\t' -c "$2" >"$PLOTS/$1.tsv"; }

gp() {  # script, extra gnuplot assignments
    gnuplot -e "dir='$PLOTS'; gpdir='$bench/plots'; $2" "$bench/plots/$1.gp"
}

section_plots() {
    section "seed experiments (plots)"
    PLOTS=$RESULTS/plots
    mkdir -p "$PLOTS"
    plot_hash_families
    if [ "$have_ext" != 1 ] || ! have_fn minhash_shingles || ! have_fn jaccard; then
        not_available "minhash_shingles / jaccard (SQL functions) for the plots"
        return
    fi

    # Seed 000 §8.1: 20 random permutations of one 50-word document, all 190
    # pairs, exact Jaccard against shingle size.
    plot_tsv jaccard_vs_k "
        SELECT u.unit, k, avg(j), min(j), max(j)
        FROM (VALUES ('char'), ('char_nospace'), ('word')) u(unit), generate_series(1, 20) k,
             LATERAL (SELECT jaccard(minhash_shingles(a.body, k, u.unit), minhash_shingles(b.body, k, u.unit)) AS j
                      FROM perms a JOIN perms b ON a.id < b.id) x
        WHERE u.unit <> 'word' OR k <= 8
        GROUP BY 1, 2 ORDER BY 1, 2"
    gp jaccard_vs_k ""

    # Seed 000 §8.4: one pair with exact 9-character-shingle Jaccard near 0.6,
    # the estimate against num_perm, for 20 seeds of the hash family.
    local pair
    pair=$(q -F' ' -c "
        SELECT t.a, t.b, jaccard(minhash_shingles(x.body, 9, 'char'), minhash_shingles(y.body, 9, 'char')) AS j
        FROM truth t JOIN docs x ON x.id = t.a JOIN docs y ON y.id = t.b
        WHERE t.a <= 3000 AND t.j BETWEEN 0.3 AND 0.9 ORDER BY abs(jaccard(minhash_shingles(x.body, 9, 'char'), minhash_shingles(y.body, 9, 'char')) - 0.6), t.a LIMIT 1")
    read -r pa pb pj <<<"$pair"
    plot_tsv estimate_vs_numperm "
        SELECT n, s, jaccard(minhash(x.body, 'char', 9, n, s), minhash(y.body, 'char', 9, n, s))
        FROM docs x, docs y, unnest(ARRAY[1,2,3,4,5,6,8,10,12,16,20,25,32,40,50,64,80,100,128,160,200,256,320,400,512,640,800,1024]) n,
             generate_series(1, 20) s
        WHERE x.id = $pa AND y.id = $pb ORDER BY n, s"
    gp estimate_vs_numperm "truej=$pj; pair='rows $pa and $pb'"

    # Seed 004 figs. 13-15: mean absolute error of the estimate over 300
    # planted pairs (word 5-shingles, exact J from the generator) against
    # num_perm, beside the binomial model's sqrt(2/pi) * sqrt(J(1-J)/k).
    plot_tsv error_vs_numperm "
        WITH p AS (SELECT t.a, t.b, t.j FROM truth t WHERE t.planted AND t.j BETWEEN 0.05 AND 0.95
                   ORDER BY hashint8(t.a::int8 * 7919 + t.b) LIMIT 300)
        SELECT n, avg(abs(jaccard(minhash(x.body, 'word', 0, n), minhash(y.body, 'word', 0, n)) - p.j)),
               avg(sqrt(2 / pi()) * sqrt(p.j * (1 - p.j) / n))
        FROM p JOIN docs x ON x.id = p.a JOIN docs y ON y.id = p.b,
             unnest(ARRAY[1,2,4,8,16,32,64,128,256,512,1024]) n
        GROUP BY n ORDER BY n"
    gp error_vs_numperm ""

    plot_scurve
    plot_time_vs_n
    if [ "$smoke" != 1 ]; then
        cp "$PLOTS"/*.png "$bench/plots/"
    fi
    echo "plots: $(cd "$PLOTS" && ls ./*.png | tr '\n' ' ')"
}

# Seed 004 figs. 27-32: for the (b, r) that minhash_lsh_params picks at
# thresholds 0.5 and 0.8, and the lsh index's own, the share of planted pairs
# sharing a band (minhash_bands overlap), by exact Jaccard, beside
# 1 - (1 - s^r)^b.
plot_scurve() {
    if ! have_fn minhash_bands || ! have_fn minhash_lsh_params; then
        not_available "minhash_bands / minhash_lsh_params (S-curve plot)"
        return
    fi
    local t b r args="" i=1 label
    : >"$PLOTS/scurve.tsv"
    # The balanced optimiser at 0.5 and 0.8, and the lsh index's own choice
    # for threshold = 0.5 (its default weights lean to recall).
    for t in 0.5 0.8 index; do
        if [ "$t" = index ]; then
            [ "${LSH_INDEX:-0}" = 1 ] && have_fn minhash_lsh_stats || continue
            read -r b r < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('docs_sig_lsh')")
            label="lsh index, t = 0.5"
        else
            read -r b r < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_params($t, 128)")
            label="balanced, t = $t"
        fi
        q -F$'\t' -c "
            SELECT $i, (floor(p.j * 20) + 0.5) / 20, avg((minhash_bands(x.sig, $b, $r) && minhash_bands(y.sig, $b, $r))::int), count(*)
            FROM truth p JOIN docs x ON x.id = p.a JOIN docs y ON y.id = p.b
            WHERE p.planted AND p.a <= 200000
            GROUP BY 2 ORDER BY 2" >>"$PLOTS/scurve.tsv"
        printf '\n\n' >>"$PLOTS/scurve.tsv"
        args+="b$i=$b; r$i=$r; l$i='${label//_/\\_}'; "
        i=$((i + 1))
    done
    gp scurve "$args n=$((i - 1));"
}

# Total milliseconds of the statements of one psql script (\timing summed).
script_ms() {
    psql -X -q -v ON_ERROR_STOP=1 -c '\timing on' -f - | awk '/^Time: / { t += $2 } END { print t + 0 }'
}

# Seed 000 fig. 4: find all pairs with (estimated) Jaccard >= 0.5 among the
# first n rows, from the text, by brute force (exact Jaccard of shingle
# arrays), by signatures (all pairs with %), and by LSH (band hashes joined
# in SQL; the lsh index self-join; minhash_similar_pairs when built). n
# doubles until a method takes longer than PLOT_BUDGET_S.
plot_time_vs_n() {
    local have_bands=0
    have_fn minhash_bands && have_fn minhash_lsh_params && have_bands=1
    local b=0 r=0
    [ "$have_bands" = 1 ] && read -r b r < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_params(0.5, 128)")
    : >"$PLOTS/time_vs_n.tsv"
    local methods=(brute signatures)
    [ "$have_bands" = 1 ] && methods+=(lsh_sql)
    [ "${LSH_INDEX:-0}" = 1 ] && methods+=(lsh_index)
    [ "${LSH_INDEX:-0}" = 1 ] && have_allpairs && methods+=(all_pairs)
    local m n ms
    for m in "${methods[@]}"; do
        n=100
        while :; do
            ms=$(time_method "$m" "$n" "$b" "$r")
            printf '%s\t%d\t%.4f\n' "$m" "$n" "$(calc "$ms / 1000")" >>"$PLOTS/time_vs_n.tsv"
            awk -v ms="$ms" -v budget="$PLOT_BUDGET_S" 'BEGIN { exit !(ms / 1000 > budget) }' && break
            [ "$n" -ge "$ROWS" ] && break
            n=$((n * 2 < ROWS ? n * 2 : ROWS))   # the whole table is the last step
        done
    done
    local has=""
    for m in lsh_sql lsh_index all_pairs; do
        has+="has_$m=$(printf '%s\n' "${methods[@]}" | grep -cx "$m" || true); "
    done
    gp time_vs_n "budget=$PLOT_BUDGET_S; $has"
}

time_method() {  # method, n, bands, rows -> milliseconds
    local m=$1 n=$2 b=$3 r=$4
    case "$m" in
    brute) script_ms <<SQL ;;
SELECT count(*) FROM (
  WITH s AS MATERIALIZED (SELECT id, minhash_shingles(body) AS sh FROM docs WHERE id <= $n)
  SELECT 1 FROM s a JOIN s b ON a.id < b.id WHERE jaccard(a.sh, b.sh) >= 0.5) x;
SQL
    signatures) script_ms <<SQL ;;
SELECT count(*) FROM (
  WITH s AS MATERIALIZED (SELECT id, minhash(body) AS sig FROM docs WHERE id <= $n)
  SELECT 1 FROM s a JOIN s b ON a.id < b.id WHERE a.sig % b.sig) x;
SQL
    lsh_sql) script_ms <<SQL ;;
SET enable_nestloop = off;  -- buckets are a hash join; CTE row estimates can mislead the planner
SELECT count(*) FROM (
  WITH s AS MATERIALIZED (SELECT id, minhash(body) AS sig FROM docs WHERE id <= $n),
       h AS MATERIALIZED (SELECT id, unnest(minhash_bands(sig, $b, $r)) AS band FROM s),
       c AS (SELECT DISTINCT x.id AS a, y.id AS b FROM h x JOIN h y ON x.band = y.band AND x.id < y.id)
  SELECT 1 FROM c JOIN s sa ON sa.id = c.a JOIN s sb ON sb.id = c.b WHERE sa.sig % sb.sig) x;
SQL
    lsh_index) script_ms <<SQL ;;
CREATE TEMP TABLE s AS SELECT id, minhash(body) AS sig FROM docs WHERE id <= $n;
CREATE INDEX ON s USING lsh (sig) WITH (threshold = 0.5);
ANALYZE s;
SET enable_seqscan = off;
SELECT count(*) FROM s a CROSS JOIN LATERAL (SELECT id FROM s b WHERE b.sig % a.sig OFFSET 0) b WHERE a.id < b.id;
SQL
    all_pairs) script_ms <<SQL ;;
CREATE TEMP TABLE s AS SELECT id, minhash(body) AS sig FROM docs WHERE id <= $n;
CREATE INDEX s_lsh ON s USING lsh (sig) WITH (threshold = 0.5);
SELECT count(*) FROM minhash_similar_pairs('s_lsh', 'id', 0.5);
SQL
    esac
}

# Seed 000 fig. 3 (modular, multiplicative, Murmur3), seed 004 (modular vs
# Jenkins), seed 002 (CRC32), and the extension's native and datasketch
# families: CPU time per signature and mean absolute error against the exact
# Jaccard of the planted pairs, the same sets for every family (word
# 5-shingles of the first HASH_FAMILY_ROWS documents, default 10,000).
plot_hash_families() {
    local n=${HASH_FAMILY_ROWS:-10000}
    [ "$smoke" = 1 ] && n=${HASH_FAMILY_ROWS:-2000}   # the slow families take minutes at 10,000
    [ "$n" -gt "$ROWS" ] && n=$ROWS
    nice "$BENCH_BIN/hash_families" "$DATA/docs.tsv" "$DATA/truth.tsv" "$n" 128 >"$PLOTS/hash_families.tsv"
    {
        echo
        echo "Hash families ($n documents, 128 functions; bench/hash_families.cpp):"
        echo
        echo "| family | µs per signature (CPU) | mean abs. error | pairs |"
        echo "|---|---|---|---|"
        awk -F'\t' 'NR > 1 { printf "| %s | %.1f | %.4f | %s |\n", $1, $2 / 1000, $3, $4 }' "$PLOTS/hash_families.tsv"
    } | tee -a "$RESULTS/report.md"
    gp hash_families "info='$n documents, '"
}
