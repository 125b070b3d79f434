set terminal pngcairo size 1280,760 font 'sans,10'
set output '/work/main/bench/compare/results/2026-11-30-055426/chart.png'
set datafile missing 'NaN'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set logscale y
set ylabel 'ms (median, min-max)'
set xtics rotate by -30 nomirror
set key above horizontal
set grid ytics
set multiplot layout 2,2
set title 'fib 32: ms per run, lower is better'
set yrange [1.4848:6878.14]
plot '/work/main/bench/compare/results/2026-11-30-055426/chart-data/fib-32.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'nqueens 12: ms per run, lower is better'
set yrange [2.9512:3119.53]
plot '/work/main/bench/compare/results/2026-11-30-055426/chart-data/nqueens-12.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T1: ms per run, lower is better'
set yrange [76.742:12689]
plot '/work/main/bench/compare/results/2026-11-30-055426/chart-data/uts-T1.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
set title 'uts T3: ms per run, lower is better'
set yrange [81.8844:6994.17]
plot '/work/main/bench/compare/results/2026-11-30-055426/chart-data/uts-T3.dat' using 2:3:4:xtic(1) title '1 worker', '' using 5:6:7 title '2 workers'
unset multiplot
