# Shared look of the benchmark's plots.
set terminal pngcairo size 960,600 font "sans,11" linewidth 1.5
set datafile separator "\t"
set grid lc rgb "#dddddd"
set key box opaque
