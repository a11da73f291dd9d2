# Seed 000 fig. 2: exact Jaccard against shingle size (run by bench/lib/section_plots.sh).
load gpdir.'/common.gp'
set output dir.'/jaccard_vs_k.png'
set title "Jaccard vs shingle size k: all 190 pairs of 20 random permutations\nof one 50-word document (seed 000 fig. 2); line = mean, bars = min..max"
set xlabel "shingle size k"
set ylabel "exact Jaccard similarity"
set xrange [0.5:20.5]
set yrange [-0.02:1.05]
set xtics 1
set key top right
f(u) = (strcol(1) eq u)
plot dir.'/jaccard_vs_k.tsv' using ($2 - 0.1):(f('char') ? $3 : NaN):4:5 with yerrorlines lc rgb "#1f77b4" pt 7 ps 0.6 title "characters (spaces kept)", \
     '' using 2:(f('char_nospace') ? $3 : NaN):4:5 with yerrorlines lc rgb "#ff7f0e" pt 5 ps 0.6 title "characters, spaces dropped", \
     '' using ($2 + 0.1):(f('word') ? $3 : NaN):4:5 with yerrorlines lc rgb "#2ca02c" pt 9 ps 0.8 title "words"
