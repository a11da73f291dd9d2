# Compact signatures: mean absolute error and bias of jaccard() against the
# exact Jaccard similarity, by bits kept of each value and num_perm.
load gpdir.'/common.gp'
set output dir.'/bbit_error.png'
set terminal pngcairo size 1200,520 font "sans,11" linewidth 1.5
set multiplot layout 1,2 title "Compact signatures: error of jaccard() by bits and num\\_perm (".info.", word 5-shingles)"
set xlabel "num\\_perm (log scale)"
set logscale x 2
set key top right
set title "mean |estimate - exact Jaccard|"
set logscale y 2
set format y "%g"
plot dir.'/bbit_error.tsv' using ($2 == 32 ? $1 : 1/0):4 with linespoints pt 7 lc rgb "#1f77b4" title "32 bits", \
     '' using ($2 == 16 ? $1 : 1/0):4 with linespoints pt 5 lc rgb "#2ca02c" title "16 bits", \
     '' using ($2 == 8 ? $1 : 1/0):4 with linespoints pt 9 lc rgb "#d62728" title "8 bits"
set title "bias: mean (estimate - exact Jaccard)"
unset logscale y
set yrange [-0.02:0.03]
plot dir.'/bbit_error.tsv' using ($2 == 32 ? $1 : 1/0):3 with linespoints pt 7 lc rgb "#1f77b4" title "32 bits", \
     '' using ($2 == 16 ? $1 : 1/0):3 with linespoints pt 5 lc rgb "#2ca02c" title "16 bits", \
     '' using ($2 == 8 ? $1 : 1/0):3 with linespoints pt 9 lc rgb "#d62728" title "8 bits", \
     '' using ($2 == 8 ? $1 : 1/0):5 with linespoints dt 2 pt 8 lc rgb "#ff7f0e" title "8 bits, share of equal values (no correction)", \
     0 with lines lc rgb "#888888" notitle
unset multiplot
