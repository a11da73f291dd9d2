# Seed 004 figs. 27-32: probability of becoming a candidate against similarity.
# Variables: n curves, b1..b3, r1..r3, l1..l3 (labels).
load gpdir.'/common.gp'
set output dir.'/scurve.png'
set title "LSH S-curves: P(pair shares a band) = 1 - (1 - s^r)^b, and the measured share of\nplanted pairs whose minhash\\_bands overlap, per exact-Jaccard bin (seed 004 figs. 27-32)"
set xlabel "exact Jaccard similarity s"
set ylabel "candidate probability"
set xrange [0:1]
set yrange [-0.02:1.05]
set key top left box Left reverse samplen 2 font ",9"
P(s, b, r) = 1 - (1 - s**r)**b
if (!exists("b3")) { b3 = 1; r3 = 1; l3 = "" }
plot P(x, b1, r1) with lines lc rgb "#1f77b4" title sprintf("%s: b = %d, r = %d (model)", l1, b1, r1), \
     dir.'/scurve.tsv' index 0 using 2:3 with points pt 7 lc rgb "#1f77b4" title "measured", \
     P(x, b2, r2) with lines lc rgb "#d62728" title sprintf("%s: b = %d, r = %d (model)", l2, b2, r2), \
     '' index 1 using 2:3 with points pt 9 lc rgb "#d62728" title "measured", \
     (n >= 3 ? P(x, b3, r3) : NaN) with lines lc rgb "#2ca02c" title (n >= 3 ? sprintf("%s: b = %d, r = %d (model)", l3, b3, r3) : ""), \
     '' index (n >= 3 ? 2 : 0) using 2:(n >= 3 ? $3 : NaN) with points pt 5 lc rgb "#2ca02c" title (n >= 3 ? "measured" : "")
