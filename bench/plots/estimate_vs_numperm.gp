# Seed 000 fig. 5: the estimate for one pair against num_perm.
load gpdir.'/common.gp'
set output dir.'/estimate_vs_numperm.png'
set title sprintf("Estimated Jaccard vs number of permutations for one pair (%s),\n9-character shingles, exact J = %.3f (seed 000 fig. 5); 20 seeds of the hash family", pair, truej)
set xlabel "num\\_perm (log scale)"
set ylabel "jaccard(minhash(a), minhash(b))"
set logscale x 2
set xrange [0.8:1300]
set yrange [-0.02:1.05]
set key bottom right
plot dir.'/estimate_vs_numperm.tsv' using 1:3 with points pt 7 ps 0.5 lc rgb "#7f7f7f" title "estimate, each seed", \
     '' using 1:3 smooth unique with linespoints pt 7 ps 0.8 lc rgb "#1f77b4" title "mean of 20 seeds", \
     truej with lines dt 2 lc rgb "#d62728" title "exact Jaccard", \
     truej + 2 * sqrt(truej * (1 - truej) / x) with lines dt 3 lc rgb "#ff9896" title "±2 standard errors", \
     truej - 2 * sqrt(truej * (1 - truej) / x) with lines dt 3 lc rgb "#ff9896" notitle
