# Issue 10: recall of % at threshold t (pairs with exact J >= t + 0.1) from one
# default lsh index, a dedicated lsh index per threshold, and GIN over the
# default index's bands. Data: forest_recall.tsv (t, one column per method).
load gpdir.'/common.gp'
set output dir.'/forest_recall.png'
set title "Recall of sig % q at threshold t, pairs with exact Jaccard >= t + 0.1"
set xlabel "threshold t (minhash.similarity\\_threshold)"
set ylabel "recall"
set xrange [0.25:0.95]
set yrange [0.8:1.02]
set key bottom right box
plot dir.'/forest_recall.tsv' using 1:2 with linespoints pt 7 lc rgb "#1f77b4" title "one lsh index (threshold 0.5), probe depth from t", \
     '' using 1:3 with linespoints pt 9 lc rgb "#2ca02c" title "a dedicated lsh index per t (threshold = t)", \
     '' using 1:4 with linespoints pt 5 lc rgb "#d62728" title "GIN over minhash\\_bands (the 0.5 index's bands)"
