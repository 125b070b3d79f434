set terminal pngcairo size 1280,1140 font 'sans,10'
set output '/work/main/bench/compare/results/2026-11-30-030029/chart.png'
set datafile missing 'NaN'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set logscale y
set ylabel 'ms (median, min-max)'
set xtics rotate by -30 nomirror
set key above horizontal
set grid ytics
set multiplot layout 3,2
set title 'fib 32: ms per run, lower is better'
set yrange [1.498:7141.65]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/fib-32.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'nqueens 12: ms per run, lower is better'
set yrange [2.866:2343.31]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/nqueens-12.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T1: ms per run, lower is better'
set yrange [82.6928:13545.3]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/uts-T1.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T3: ms per run, lower is better'
set yrange [92.4084:8027.32]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/uts-T3.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'fanout 1000000: ms per run, lower is better'
set yrange [0.1468:2394.83]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/fanout-1000000.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'tri 34000: ms per run, lower is better'
set yrange [242.994:2017.56]
plot '/work/main/bench/compare/results/2026-11-30-030029/chart-data/tri-34000.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
unset multiplot
