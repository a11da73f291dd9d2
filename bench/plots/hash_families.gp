# Seed 000 fig. 3, seed 004 (modular vs Jenkins), seed 002 (CRC32): hash
# families side by side on the same sets: CPU time per signature and mean
# absolute error of the estimate against the exact Jaccard.
load gpdir.'/common.gp'
stats dir.'/hash_families.tsv' skip 1 using ($2 / 1000) nooutput
tmax = STATS_max
stats dir.'/hash_families.tsv' skip 1 using 3 nooutput
emax = STATS_max
set terminal pngcairo size 1200,600 font "sans,11" linewidth 1.5
set output dir.'/hash_families.png'
set multiplot layout 1,2 title "Hash families: time per signature and error of the estimate (seed 000 fig. 3, seed 004, seed 002)\n".info."word 5-shingles, 128 functions; native = XXH3 + multiply-add-shift, datasketch = SHA-1 + mod 2^{61}-1,\nmodular/multiplicative = XXH3 key + (ax+b) mod 2^{61}-1 / multiply-shift, murmur3/jenkins/crc32 = one seeded hash per function, oph = one-permutation hashing + optimal densification"
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -35 left noenhanced
set key off
set bmargin 6
set ylabel "CPU microseconds per signature (log scale)"
set logscale y 10
set format y "%g"
set yrange [1:3 * tmax]
plot dir.'/hash_families.tsv' skip 1 using 0:($2 / 1000):xtic(1) with boxes lc rgb "#1f77b4", \
     '' skip 1 using 0:($2 / 1000):(sprintf("%.1f", $2 / 1000)) with labels offset 0,0.8
unset logscale y
set ylabel "mean |estimate - exact Jaccard|"
set yrange [0:1.25 * emax]
plot dir.'/hash_families.tsv' skip 1 using 0:3:xtic(1) with boxes lc rgb "#ff7f0e", \
     '' skip 1 using 0:3:(sprintf("%.4f", $3)) with labels offset 0,0.8
unset multiplot
