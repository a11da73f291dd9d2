# Seed 000 fig. 4: time to find all similar pairs against the number of documents.
load gpdir.'/common.gp'
set output dir.'/time_vs_n.png'
set title sprintf("Time to find all pairs with Jaccard >= 0.5 among n documents, from the text, in SQL\n(seed 000 fig. 4); each method stops after a step over %g s", budget)
set xlabel "n documents (log scale)"
set ylabel "seconds (log scale)"
set logscale xy
set format y "%g"
set key bottom right
f(m) = (strcol(1) eq m)
plot dir.'/time_vs_n.tsv' using 2:(f('brute') ? $3 : NaN) with linespoints pt 7 lc rgb "#d62728" title "brute force: exact Jaccard of shingle arrays, all pairs", \
     '' using 2:(f('signatures') ? $3 : NaN) with linespoints pt 5 lc rgb "#ff7f0e" title "signatures: minhash, then % on all pairs", \
     '' using 2:(f('lsh_sql') ? $3 : NaN) with linespoints pt 9 lc rgb "#2ca02c" title (has_lsh_sql ? "LSH in plain SQL: minhash\\_bands join, then %" : ""), \
     '' using 2:(f('lsh_index') ? $3 : NaN) with linespoints pt 11 lc rgb "#1f77b4" title (has_lsh_index ? "LSH index: CREATE INDEX USING lsh + self-join" : ""), \
     '' using 2:(f('all_pairs') ? $3 : NaN) with linespoints pt 13 lc rgb "#9467bd" title (has_all_pairs ? "LSH index: CREATE INDEX + minhash\\_similar\\_pairs" : "")
