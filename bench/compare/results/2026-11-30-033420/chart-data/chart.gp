set terminal pngcairo size 1280,1140 font 'sans,10'
set output '/work/main/bench/compare/results/2026-11-30-033420/chart.png'
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
set yrange [1.5448:10236.6]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/fib-32.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'nqueens 12: ms per run, lower is better'
set yrange [2.9092:2670.8]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/nqueens-12.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T1: ms per run, lower is better'
set yrange [92.3076:16470.6]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/uts-T1.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T3: ms per run, lower is better'
set yrange [87.8408:7474.19]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/uts-T3.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'fanout 1000000: ms per run, lower is better'
set yrange [0.15:2486.76]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/fanout-1000000.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'tri 34000: ms per run, lower is better'
set yrange [236.377:1942.88]
plot '/work/main/bench/compare/results/2026-11-30-033420/chart-data/tri-34000.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
unset multiplot
