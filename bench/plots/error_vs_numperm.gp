# Seed 004 figs. 13-15: mean absolute error of the estimate against num_perm.
load gpdir.'/common.gp'
set output dir.'/error_vs_numperm.png'
set title "Mean absolute error of the Jaccard estimate vs number of permutations\n300 planted pairs, word 5-shingles (seed 004 figs. 13-15)"
set xlabel "num\\_perm (log scale)"
set ylabel "mean |estimate - exact Jaccard| (log scale)"
set logscale xy 2
set format y "%g"
set key top right
plot dir.'/error_vs_numperm.tsv' using 1:2 with linespoints pt 7 lc rgb "#1f77b4" title "measured", \
     '' using 1:3 with lines dt 2 lc rgb "#d62728" title "model: sqrt(2/pi) * sqrt(J(1-J)/k), averaged over the pairs"
