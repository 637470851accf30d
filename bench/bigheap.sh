#!/usr/bin/env bash
# Measures the big-heap targets of issue 10 on three heapgen dumps:
#   - 2M nodes (about 290 MB) and 10M nodes (about 1.2 GB), as bench/holders.sh,
#   - 100,000 goroutines each holding a 4 KiB payload through a context of
#     its own (about 600 MB; heapgen -n 0 -goroutines 100000 -each 4096).
# Targets:
#   - the default "ctxleak holders DUMP --binary EXE" within 2.0x the decode
#     floor (bench/heapread -floor: decode every uvarint of every record),
#   - peak RSS (GNU time %M) at most 0.45x the dump's size,
#   - --min-size/--top variants within 1.5x the default run on the same dump.
# The machine may be shared, so each round runs the floor, the default and
# the variants of one dump back to back, and the ratios are taken per round
# before their median is taken (RUNS rounds, default 3). Page cache warm.
#
# Usage: bench/bigheap.sh
#        OUT=/tmp/bigheap RUNS=5 DUMPS="2M g100k" PAUSE=3 bench/bigheap.sh
#
# Dumps go to $OUT (default bench/out, ignored by git), mode 0600, each with
# the heapgen executable that wrote it, and are reused; the three take about
# 2.1 GB, and writing the 10M one needs about 1.6 GB of memory. It exits 1
# when a target is missed.
#
# Measured with OUT=/tmp/bigheap bench/bigheap.sh (3 rounds), on a machine
# shared with other jobs (load average 5 to 22), so wall times and their
# ratios are inflated and noisy; cpu is user+sys, median.
# On main at 451ae0b (load 4.9 to 9):
#   dump   size    run                     wall    ratio  peak RSS / size
#   2M     286MB   floor                   0.21s   -      6MiB
#   2M     286MB   default                 1.15s   5.48   180MiB  0.66
#   2M     286MB   --min-size 150B --top 3 1.53s   1.18   181MiB  0.66
#   2M     286MB   --min-size 4KiB --top 0 1.28s   1.08   177MiB  0.65
#   10M    1179MB  floor                   1.28s   -      6MiB
#   10M    1179MB  default                 7.48s   4.84   731MiB  0.65
#   10M    1179MB  --min-size 150B --top 3 11.80s  1.43   732MiB  0.65
#   10M    1179MB  --min-size 4KiB --top 0 14.43s  1.11   732MiB  0.65
#   g100k  606MB   floor                   0.33s   -      6MiB
#   g100k  606MB   default                 4.57s   10.73  340MiB  0.59
#   g100k  606MB   --min-size 4KiB --top 0 4.69s   0.97   361MiB  0.63
# On branch bigheap before merging main at d148d57 (load 13 to 21):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   default                 3.86s   8.21   1.17s  115MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 3.02s   0.81   1.03s  116MiB  0.43
#   10M    1179MB  default                 17.79s  5.68   6.01s  496MiB  0.44
#   10M    1179MB  --min-size 4KiB --top 0 15.88s  0.96   5.76s  497MiB  0.44
#   g100k  606MB   default                 3.39s   3.98   1.05s  217MiB  0.38
#   g100k  606MB   --min-size 4KiB --top 0 3.63s   1.07   1.31s  231MiB  0.40
# On branch bigheap after merging main at d148d57 (shared holdings keyed
# by holder sets, heap/shared.go), idle machine (load 0.8 to 1.1):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.18s   -      0.18s  6MiB
#   2M     286MB   default                 0.57s   3.56   0.68s  144MiB  0.53
#   2M     286MB   --min-size 150B --top 3 0.56s   0.98   0.69s  144MiB  0.53
#   2M     286MB   --min-size 4KiB --top 0 0.58s   1.04   0.71s  144MiB  0.53
#   2M     286MB   --top 1                 0.59s   1.02   0.72s  144MiB  0.53
#   10M    1179MB  floor                   0.80s   -      0.80s  6MiB
#   10M    1179MB  default                 3.17s   4.01   3.53s  644MiB  0.57
#   10M    1179MB  --min-size 150B --top 3 3.37s   1.06   3.69s  645MiB  0.57
#   10M    1179MB  --min-size 4KiB --top 0 3.63s   1.13   4.00s  645MiB  0.57
#   10M    1179MB  --top 1                 3.23s   1.02   3.59s  643MiB  0.57
#   g100k  606MB   floor                   0.24s   -      0.25s  6MiB
#   g100k  606MB   default                 2.25s   9.38   2.77s  359MiB  0.62
#   g100k  606MB   --min-size 4KiB --top 0 2.72s   1.21   3.20s  390MiB  0.68
# The --min-size/--top ratios are met (1.21 at most). The default run is
# not (3.6 to 9.4 times the floor), nor, since the merge, peak RSS: the
# shared holdings' index (heap/shared.go: about 280 MB allocated at 10M
# nodes, with its sort) comes on top of the dominator tree and the graph.
# On main at 9523854, after the shared sets came from the edges the
# dominator computation keeps (dom.KeepRootKids) and holders runs the
# collector at GOGC=25, on a machine shared with another job (load 2.2 to
# 3.3, so wall times and the default's ratio are inflated):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   default                 (ratio 6.15; wall, cpu not kept)
#   2M     286MB   --min-size 150B --top 3 0.98s   0.80   0.91s  113MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 0.93s   0.80   0.87s  113MiB  0.41
#   10M    1179MB  floor                   0.92s   -      0.78s  6MiB
#   10M    1179MB  default                 3.73s   4.50   3.61s  484MiB  0.43
#   10M    1179MB  --min-size 4KiB --top 0 4.84s   1.12   4.51s  486MiB  0.43
#   g100k  604MB   floor                   0.27s   -      0.25s  6MiB
#   g100k  604MB   default                 3.82s   10.22  3.58s  256MiB  0.44
#   g100k  604MB   --min-size 4KiB --top 0 3.79s   1.02   3.47s  271MiB  0.47
# Run again with DUMPS=2M under load 9: floor 1.13s, default 3.66s (4.42),
# cpu 1.2s, 113MiB (0.41). Peak RSS is within 0.45 but for g100k, which varies from 256 to 283 MiB
# between identical runs with when the collector runs during the read.
# On main at a3c7118 (timers found from the large objects pointed deep into,
# goroutines' labels read in one pass, pointer-free frames, root arrays
# sized up front), load 1.2 to 1.3:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.18s   -      0.18s  6MiB
#   2M     286MB   default                 0.60s   3.26   0.79s  113MiB  0.41
#   2M     286MB   --min-size 150B --top 3 0.58s   0.97   0.77s  113MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 0.54s   0.88   0.70s  113MiB  0.42
#   2M     286MB   --top 1                 0.54s   0.90   0.72s  113MiB  0.41
#   10M    1179MB  floor                   0.72s   -      0.72s  6MiB
#   10M    1179MB  default                 3.16s   4.10   3.96s  485MiB  0.43
#   10M    1179MB  --min-size 150B --top 3 3.16s   0.96   3.97s  486MiB  0.43
#   10M    1179MB  --min-size 4KiB --top 0 3.39s   1.03   4.27s  486MiB  0.43
#   10M    1179MB  --top 1                 4.07s   1.38   5.05s  484MiB  0.43
#   g100k  604MB   floor                   0.31s   -      0.31s  6MiB
#   g100k  604MB   default                 1.41s   4.55   1.76s  224MiB  0.39
#   g100k  604MB   --min-size 4KiB --top 0 1.54s   1.09   1.91s  229MiB  0.40
# Peak RSS is within 0.45 for all; the default run is 3.3 to 4.6 times the floor.
# On main at 9e8c95c (the search marks nodes in a bitset and sorts non-tree
# edges by node; the super-root's kids collected and the goroutines' labels
# read on the other core; flow edges placed while seeds are interned), just
# after a fuzzing round (load 2.4):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.16s   -      0.16s  6MiB
#   2M     286MB   default                 0.51s   3.19   0.76s  114MiB  0.42
#   2M     286MB   --min-size 150B --top 3 0.65s   1.18   0.90s  114MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 0.57s   1.08   0.80s  114MiB  0.42
#   2M     286MB   --top 1                 0.56s   1.06   0.83s  114MiB  0.42
#   10M    1179MB  floor                   0.71s   -      0.71s  6MiB
#   10M    1179MB  default                 2.78s   3.28   3.64s  486MiB  0.43
#   10M    1179MB  --min-size 150B --top 3 2.95s   1.07   3.96s  488MiB  0.43
#   10M    1179MB  --min-size 4KiB --top 0 2.55s   1.09   3.65s  487MiB  0.43
#   10M    1179MB  --top 1                 2.61s   1.07   3.71s  485MiB  0.43
#   g100k  604MB   floor                   0.28s   -      0.28s  6MiB
#   g100k  604MB   default                 1.03s   3.47   1.35s  202MiB  0.35
#   g100k  604MB   --min-size 4KiB --top 0 1.15s   1.16   1.50s  219MiB  0.38
# Interleaved with the build of 4746799 (nine runs each, medians), the
# default run went 0.52 -> 0.46 s (2M), 0.41 -> 0.35 s (1.5M) and 0.95 ->
# 0.87 s (g100k). The default run is still 2.8 to 3.5 times the floor: past
# the dominator tree, the shared holdings' sets and their groups (about
# 0.08 and 0.04 s at 2M) run on one core at a time for the most part.
# On main at a3d823b (groups scanned on both cores; retained sizes added up
# while the sets flow; roots' edges appended without copying the graph's;
# transparent huge pages asked for on Linux), on a slow turn of the machine
# (floor of 2M 0.2 to 0.3 s rather than 0.15 s; load 1.4):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.28s   -      0.27s  6MiB
#   2M     286MB   default                 0.57s   2.04   0.84s  116MiB  0.42
#   2M     286MB   --min-size 150B --top 3 0.56s   1.00   0.87s  115MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 0.60s   1.04   0.89s  115MiB  0.42
#   2M     286MB   --top 1                 0.59s   0.97   0.85s  115MiB  0.42
#   10M    1179MB  floor                   1.09s   -      1.10s  6MiB
#   10M    1179MB  default                 3.20s   2.89   4.26s  487MiB  0.43
#   10M    1179MB  --min-size 150B --top 3 3.53s   1.09   4.66s  488MiB  0.43
#   10M    1179MB  --min-size 4KiB --top 0 3.05s   0.95   4.10s  488MiB  0.43
#   10M    1179MB  --top 1                 3.05s   1.00   4.27s  486MiB  0.43
#   g100k  604MB   floor                   0.31s   -      0.31s  6MiB
#   g100k  604MB   default                 0.96s   3.19   1.27s  206MiB  0.36
#   g100k  604MB   --min-size 4KiB --top 0 1.06s   1.16   1.38s  219MiB  0.38
# Interleaved with the builds of 8be4b1e and a11cd08 (medians of 9 and 5 runs),
# the default run went 0.70 -> 0.56 s on 2M (8be4b1e: 0.48 s) and 3.46 ->
# 3.06 s on 10M (8be4b1e: 2.50 s). The parse and the dominator search
# still run on one core; they are most of the rest.
# On main at 78cb5fe (object records read on both cores from a mapped file,
# the helper taking work from the main parser; edges resolved in 8 parts per
# core; non-tree edges sorted on both cores; roots' arrays on huge pages),
# load 1.2:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.16s   -      0.16s  6MiB
#   2M     286MB   default                 0.40s   2.38   0.62s  115MiB  0.42
#   2M     286MB   --min-size 150B --top 3 0.49s   1.11   0.72s  116MiB  0.42
#   2M     286MB   --min-size 4KiB --top 0 0.38s   0.88   0.57s  116MiB  0.42
#   2M     286MB   --top 1                 0.42s   1.10   0.64s  115MiB  0.42
#   10M    1179MB  floor                   1.12s   -      1.13s  6MiB
#   10M    1179MB  default                 2.34s   2.19   3.64s  488MiB  0.43
#   10M    1179MB  --min-size 150B --top 3 1.84s   0.95   2.76s  491MiB  0.44
#   10M    1179MB  --min-size 4KiB --top 0 2.34s   0.94   3.43s  493MiB  0.44
#   10M    1179MB  --top 1                 2.12s   0.93   3.36s  493MiB  0.44
#   g100k  604MB   floor                   0.25s   -      0.25s  6MiB
#   g100k  604MB   default                 0.78s   3.65   1.07s  210MiB  0.37
#   g100k  604MB   --min-size 4KiB --top 0 0.95s   1.30   1.25s  222MiB  0.39
# Interleaved with the builds of 8be4b1e and a3d823b (medians of 9 runs,
# 7 for 10M and g100k), 8be4b1e / a3d823b / 78cb5fe: 2M 0.40 / 0.53 /
# 0.47 s, 1.5M 0.26 / 0.36 / 0.35 s, 10M 2.24 / 2.64 / 2.07 s, g100k
# 0.89 / 0.63 / 0.59 s. The dominator search and the semidominator sweep
# still run on one core.
# On main at bf321fa (the dominator search's arrays populated on the idle
# core; the parser's copies in steps a collection can interrupt; progress
# counted by the parsers), load 1.1 to 1.35:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.16s   -      0.16s  6MiB    0.03
#   2M     286MB   default                 0.39s   2.29   0.61s  118MiB  0.43
#   2M     286MB   --min-size 150B --top 3 0.37s   0.97   0.59s  116MiB  0.43
#   2M     286MB   --min-size 4KiB --top 0 0.33s   0.97   0.52s  118MiB  0.43
#   2M     286MB   --top 1                 0.33s   0.88   0.51s  117MiB  0.43
#   10M    1179MB  floor                   0.67s   -      0.67s  6MiB    0.01
#   10M    1179MB  default                 1.63s   2.43   2.59s  492MiB  0.44
#   10M    1179MB  --min-size 150B --top 3 1.40s   0.85   2.20s  491MiB  0.44
#   10M    1179MB  --min-size 4KiB --top 0 1.46s   0.89   2.28s  491MiB  0.44
#   10M    1179MB  --top 1                 1.36s   0.83   2.15s  492MiB  0.44
#   g100k  604MB   floor                   0.17s   -      0.17s  6MiB    0.01
#   g100k  604MB   default                 0.54s   3.18   0.73s  208MiB  0.36
#   g100k  604MB   --min-size 4KiB --top 0 0.61s   1.13   0.82s  221MiB  0.38
# The default run, which follows the floor's, is slower than the variants,
# which do more: on this VM, memory a process touches first costs more a
# moment after the last big run than right after it (10M: sys 0.65 to
# 0.70 s after a 6 s pause, 0.24 to 0.32 s back to back). Interleaved with
# the builds of 8be4b1e and 592718d (medians of 11 runs, 7 for 10M and
# g100k), 8be4b1e / 592718d / 8f5f149: 1.5M 0.19 / 0.24 / 0.24 s, 2M 0.26
# / 0.31 / 0.31 s, 10M 1.50 / 1.68 / 1.38 s, g100k 0.85 / 0.50 / 0.51 s.
# On main at 45586c7, dumps written anew by heapgen (load 1.2 to 1.4):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.10s   -      0.10s  6MiB    0.02
#   2M     286MB   default                 0.33s   3.11   0.51s  117MiB  0.43
#   10M    1179MB  floor                   0.56s   -      0.56s  6MiB    0.01
#   10M    1179MB  default                 1.34s   2.39   2.09s  493MiB  0.44
#   10M    1179MB  --min-size 150B --top 3 2.33s   1.53   3.30s  548MiB  0.49
#   g100k  606MB   floor                   0.19s   -      0.18s  6MiB    0.01
#   g100k  606MB   default                 0.75s   3.53   1.01s  216MiB  0.38
# (the other variants within 1.5x and 0.45x). On the new 10M dump, the
# --min-size 150B --top 3 run peaks at 531 to 550 MiB at bf321fa as at
# 45586c7: its path search from the super-root fills a parent array and a
# queue of millions of nodes on top of the analysis. At a260673 a
# collection first lets them reuse the shared holdings' dropped
# predecessors; load 0.8 to 1.1:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.11s   -      0.11s  6MiB    0.02
#   2M     286MB   default                 0.27s   2.45   0.42s  119MiB  0.44
#   2M     286MB   --min-size 150B --top 3 0.27s   1.00   0.42s  117MiB  0.43
#   2M     286MB   --min-size 4KiB --top 0 0.27s   0.96   0.42s  120MiB  0.44
#   2M     286MB   --top 1                 0.27s   1.00   0.41s  118MiB  0.43
#   10M    1179MB  floor                   0.46s   -      0.46s  6MiB    0.01
#   10M    1179MB  default                 1.18s   2.57   1.83s  494MiB  0.44
#   10M    1179MB  --min-size 150B --top 3 1.71s   1.42   2.54s  495MiB  0.44
#   10M    1179MB  --min-size 4KiB --top 0 1.16s   0.97   1.83s  498MiB  0.44
#   10M    1179MB  --top 1                 1.19s   0.92   1.83s  495MiB  0.44
#   g100k  606MB   floor                   0.13s   -      0.13s  6MiB    0.01
#   g100k  606MB   default                 0.53s   4.08   0.69s  219MiB  0.38
#   g100k  606MB   --min-size 4KiB --top 0 0.55s   1.08   0.74s  222MiB  0.39
# Peak RSS and the variants are within their targets; the default run is
# 2.5 to 4.1 times the floor. Touching 500 MB of fresh memory takes 0.2 to
# 0.5 s of system time on this VM (a program that writes one byte a page),
# which the floor, at 6 MiB, never pays.
# On main at c623b9d (the root arrays sized for the globals' slots up
# front, 5ee497e), just after the hostile run (load 1.3), then with RUNS=5
# after a pause (load 0.8 to 1.4):
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.17s   -      0.16s  6MiB    0.02
#   2M     286MB   default                 0.37s   2.18   0.57s  116MiB  0.43
#   10M    1179MB  floor                   0.60s   -      0.61s  6MiB    0.01
#   10M    1179MB  default                 1.87s   3.22   2.99s  492MiB  0.44
#   g100k  606MB   floor                   0.17s   -      0.17s  6MiB    0.01
#   g100k  606MB   default                 0.52s   2.65   0.72s  205MiB  0.36
#   (RUNS=5: default 2.36, 3.10 and 3.88 times the floor; the variants
#   0.92 to 1.16 times the default run; peak RSS 0.36 to 0.45 of the size)
# A slow turn of the machine: the 10M default run took 1.18 s at a260673.
# On g100k, 100,000 goroutines' frames fill 400,000 root slots of 72 bytes;
# the globals' few dozen came after, and grew the array by a quarter, a
# copy of 29 MB into 36 MB of fresh memory: the graph phase went 0.131 ->
# 0.087 s, the whole analysis 0.473 -> 0.396 s (bench/phases, medians of 11
# interleaved runs of b325c45 and 5ee497e).
# On main at 2712583 (the shared sets' classification, interning and flow
# edges cheaper; the kids' predecessors collected from the end of the
# dominators' Step 3; holdingTops reading the idoms by preorder position),
# load 1.3 to 1.4:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.10s   -      0.10s  6MiB    0.03
#   2M     286MB   default                 0.30s   3.00   0.44s  115MiB  0.42
#   10M    1179MB  floor                   0.49s   -      0.49s  6MiB    0.01
#   10M    1179MB  default                 1.41s   2.88   2.17s  493MiB  0.44
#   g100k  606MB   floor                   0.14s   -      0.13s  6MiB    0.01
#   g100k  606MB   default                 0.51s   3.71   0.68s  205MiB  0.36
# (the variants 0.82 to 1.23 times the default run, peak RSS 0.36 to 0.45).
# On 10M the phases after the dominator search take 0.35 s: holdingTops
# 0.06, the shares of 5M shared tops 0.2 to 0.25 (their flow alone 0.07);
# the search itself 0.3 s and Step 2 0.11 s, on one core. At eed0a19 (the
# holder scan reading bitmaps, the flow's loops inline), on a slow turn of
# the machine (2M floor 0.18 s): default 0.37 s (2.06), 1.40 s (2.19) and
# 0.46 s (3.23); the floor slows more than ctxleak on such turns.
# At cb6db0f (collectPreds and the classification on both cores, no huge
# pages asked for), on a slow turn of the machine (the 10M floor 0.7 to
# 1.1 s rather than 0.5), with PAUSE=3:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.15s   -      0.15s  6MiB    0.02
#   2M     286MB   default                 0.36s   2.33   0.56s  115MiB  0.42
#   10M    1179MB  floor                   0.78s   -      0.77s  6MiB    0.01
#   10M    1179MB  default                 1.66s   2.00   2.66s  490MiB  0.44
#   g100k  606MB   floor                   0.21s   -      0.22s  6MiB    0.01
#   g100k  606MB   default                 0.65s   3.24   0.90s  201MiB  0.35
# (the variants 0.89 to 1.30 times the default run). With PAUSE=0 the same
# build gave 2.67, 2.43 and 3.58. Against 4df2d93 in alternating order, 3 s
# apart: 10M 1.78-1.94 s against 2.22-2.38, g100k 0.68-0.89 against
# 0.95-1.17, 2M 0.39-0.45 against 0.38-0.52 (4 pairs each).
# At 8087567 (Copy faults its destination in before copying, so that a
# collection no longer signals a goroutine faulting page by page inside a
# copy; root slots without pointers; the root arrays and the room of the
# frames' arrays faulted in on the idle core), PAUSE=3, RUNS=5:
#   dump   size    run                     wall    ratio  cpu    peak RSS / size
#   2M     286MB   floor                   0.17s   -      0.16s  6MiB    0.03
#   2M     286MB   default                 0.33s   2.22   0.51s  114MiB  0.42
#   10M    1179MB  floor                   0.66s   -      0.67s  6MiB    0.01
#   10M    1179MB  default                 1.45s   2.08   2.37s  492MiB  0.44
#   g100k  606MB   floor                   0.20s   -      0.20s  6MiB    0.01
#   g100k  606MB   default                 0.52s   2.53   0.79s  209MiB  0.36
# (the variants 0.97 to 1.23 times the default run). Two runs with RUNS=3
# that day gave 1.89, 1.92, 2.32 and 2.17, 2.06, 2.56: the 2.0x target is
# met now and then on 2M and 10M, never on g100k. Against fb585ae in
# alternating order, 3 s apart, on a slow turn: g100k 0.44-0.65 s against
# 0.64-0.80 (system time 0.24-0.42 against 0.37-0.52 s); 2M and 10M within
# noise (4 pairs each). On this machine a fresh page costs the kernel
# several microseconds (the host backs it on first touch): the floor
# touches 6 MiB, the default run 114-500 MB, and faulting them in takes
# about as long as the floor's whole read. At ab00152 (roots and goroutine
# records without pointers too), RUNS=5, PAUSE=3: 2M 0.39 s against a 0.19 s
# floor (1.90), 10M 1.50 s against 0.59 (2.42), g100k 0.49 s against 0.21
# (2.30); peak RSS 0.42, 0.44 and 0.35 of the size; variants 0.97 to 1.18.
# On main at 2fc21b6 (stop 37: the collector at GOGC's default, the zero
# page's second fault and a P held in madvise avoided, the mapped file
# faulted in rather than populated), RUNS=5, PAUSE=3, three runs in a row,
# each with "ok: all targets met":
#   dump   default / floor (ratio), three runs           peak RSS / size
#   2M     0.25/0.13 (1.92)  0.24/0.12 (1.92)  0.24/0.12 (2.00)   0.41-0.42
#   10M    1.05/0.53 (2.00)  1.05/0.55 (1.93)  1.07/0.53 (2.00)   0.43
#   g100k  0.31/0.15 (2.00)  0.32/0.16 (1.88)  0.31/0.16 (2.00)   0.36
# (variants 0.96 to 1.30 times the default run). The ratios sit at the
# target: on 2c2d731, the same but for the last change, 3 of 5 runs met
# every target and 2 missed one (10M 2.02, g100k 2.06).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${OUT:-bench/out}
runs=${RUNS:-3}
dumps=${DUMPS:-"2M 10M g100k"}
mkdir -p "$out"
go build -o "$out/heapgen" ./bench/heapgen
go build -o "$out/heapread" ./bench/heapread
go build -o "$out/ctxleak" ./cmd/ctxleak

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a <= b)}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

fail=0
miss() {
	echo "MISSED: $*"
	fail=1
}

genargs() {
	case $1 in
	2M) echo "-n 2000000" ;;
	10M) echo "-n 10000000" ;;
	g100k) echo "-n 0 -goroutines 100000 -each 4096" ;;
	*) echo "unknown dump $1" >&2; exit 2 ;;
	esac
}
variants() {
	case $1 in
	g100k) echo "--min-size=4KiB,--top=0" ;;
	*) echo "--min-size=150B,--top=3 --min-size=4KiB,--top=0 --top=1" ;;
	esac
}

# timed LABEL CMD...: runs CMD under GNU time, appends "LABEL wall rss" to $out/times.
# It first waits $PAUSE seconds (default 3): on a virtual machine whose host
# takes back the memory a process frees (free page reporting, ballooning),
# a run that starts right after another reuses memory still backed and
# spends far less time in the kernel than one that starts after a pause
# (10M nodes: 0.5 rather than 1.6 s of system time), so that back-to-back
# runs alternate between the two. The pause makes every run a fresh one, as
# a user's single run is. PAUSE=0 runs them back to back.
timed() {
	label=$1
	shift
	rc=0
	sleep "${PAUSE:-3}"
	/usr/bin/time -f '%e %M %U %S' -o "$out/time" "$@" >"$out/stdout" 2>"$out/stderr" || rc=$?
	if [ "$rc" -gt 1 ]; then
		cat "$out/stderr" >&2
		echo "$*: exit status $rc" >&2
		exit 2
	fi
	echo "$label $(tail -n 1 "$out/time")" >>"$out/times"
}

printf '%-6s %-8s %-26s %-8s %-6s %-7s %-9s %-8s %s\n' dump size run wall ratio cpu peak_rss rss/size load
for d in $dumps; do
	dump="$out/heap-$d.dump"
	exe="$out/heap-$d.heapgen"
	if [ ! -f "$dump" ] || [ ! -f "$exe" ]; then
		rm -f "$dump" "$exe"
		# shellcheck disable=SC2046
		"$out/heapgen" $(genargs "$d") -o "$dump" >/dev/null
		cp "$out/heapgen" "$exe"
	fi
	size=$(stat -L -c %s "$dump")
	cat "$dump" >/dev/null
	load=$(cut -d' ' -f1 /proc/loadavg)
	: >"$out/times"
	for _ in $(seq "$runs"); do
		timed floor "$out/heapread" -floor "$dump"
		timed default "$out/ctxleak" holders "$dump" --binary "$exe"
		for v in $(variants "$d"); do
			# shellcheck disable=SC2086
			timed "$v" "$out/ctxleak" holders "$dump" --binary "$exe" ${v//,/ }
		done
	done
	# Ratios per round: the floor and default of round i are lines i of each.
	ratios() { paste <(awk -v l="$1" '$1 == l {print $2}' "$out/times") <(awk -v l="$2" '$1 == l {print $2}' "$out/times") | awk '{print $1 / $2}' | median | awk '{printf "%.2f", $1}'; }
	for label in floor default $(variants "$d"); do
		wall=$(awk -v l="$label" '$1 == l {print $2}' "$out/times" | median)
		rss=$(awk -v l="$label" '$1 == l {print $3}' "$out/times" | median)
		cpu=$(awk -v l="$label" '$1 == l {print $4 + $5}' "$out/times" | median)
		case $label in
		floor) ratio=- ;;
		default) ratio=$(ratios default floor) ;;
		*) ratio=$(ratios "$label" default) ;;
		esac
		rssratio=$(div "$((rss * 1024))" "$size")
		printf '%-6s %-8s %-26s %-8s %-6s %-7s %-9s %-8s %s\n' "$d" "$((size / 1000000))MB" "${label//,/ }" "${wall}s" "$ratio" "${cpu}s" "$((rss / 1024))MiB" "$rssratio" "$load"
		case $label in
		floor) continue ;;
		default) le "$ratio" 2.0 || miss "$d: default run ${ratio}x the decode floor, want at most 2.0x" ;;
		*) le "$ratio" 1.5 || miss "$d: ${label//,/ } ${ratio}x the default run, want at most 1.5x" ;;
		esac
		le "$rssratio" 0.45 || miss "$d: ${label//,/ } peak RSS ${rssratio}x the dump, want at most 0.45x"
	done
done
if [ "$fail" != 0 ]; then
	echo "FAIL: targets missed"
	exit 1
fi
echo "ok: all targets met"
