package dom

import (
	"math/bits"
	"runtime"
	"sync"
)

// parallelMinEdges is the number of non-tree edges from which
// groupByTarget sorts them on every core; tests lower it.
var parallelMinEdges = 1 << 16

// groupWorkers returns the number of cores groupByTarget sorts m edges on.
func groupWorkers(m int) int {
	if m < parallelMinEdges {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), 8)
}

// groupByTarget sorts the edges of l, which are among r nodes, by target, as
// its doc says, and returns the set of targets that have any. It is a least
// significant digit radix sort in two passes, low digit then high, through
// (target, source) pairs in ab, or a buffer of their own when ab cannot
// hold them. When the search added the targets as numbers (numbered), it
// sorts them on one core. Otherwise it added them as nodes, whose number
// is pre of them, in ab's first half, and it sorts them on every core:
// when ab can hold the pairs, those are first put in order of their nodes'
// high bits in spare, or a buffer of their own, so that the reads of pre
// stay within a few pages at a time; with more edges than ab holds, the
// targets are turned into numbers in place.
func (l *edges) groupByTarget(r int, pre []uint32, ab, spare []uint64, numbered bool) bitset {
	m := 0
	for i := range l.n {
		if l.at(i)&mark == 0 {
			m++
		}
	}
	if numbered {
		return l.group(1, m, r, nil, ab, nil)
	}
	return l.group(groupWorkers(m), m, r, pre, ab, spare)
}

// group is groupByTarget for m edges on k cores (k may be 1), with the
// targets as nodes numbered by pre, or as numbers if pre is nil: each
// worker takes a contiguous share of the input of each pass and writes,
// stably, after the shares of the workers before it in each bucket. The
// result does not depend on k.
func (l *edges) group(k, m, r int, pre []uint32, ab, spare []uint64) bitset {
	keyBits := bits.Len32(uint32(r - 1))
	digit := max(1, (keyBits+1)/2) // two passes: low digit, then high
	mask := uint32(1)<<digit - 1
	share := func(w, n int) (int, int) { return w * n / k, (w + 1) * n / k }

	// Pass 1: into buf as target<<32 | source, by the low digit.
	var buf []uint64
	if pre == nil {
		buf = l.pairsByDigit(m, mask, ab)
	} else if m <= len(ab) {
		pairs := l.pairsByNode(k, m, pre, spare)
		buf = ab[:m]
		lo := bucketsInParallel(k, 1<<digit, func(w int, count []int) {
			from, to := share(w, m)
			for _, y := range pairs[from:to] {
				count[uint32(y>>32)&mask]++
			}
		})
		parallel(k, func(w int) {
			at := lo[w]
			from, to := share(w, m)
			for _, y := range pairs[from:to] {
				d := uint32(y>>32) & mask
				buf[at[d]] = y
				at[d]++
			}
		})
	} else {
		for i := range l.n {
			if x := l.at(i); x&mark == 0 {
				l.set(i, pre[x])
			}
		}
		buf = l.pairsByDigit(m, mask, nil)
	}

	// Pass 2: back into l, by the high digit, sources only, the first of
	// each target's group marked: by each worker in its share, then again
	// where a target's group runs on from one worker's share into the
	// next's.
	hi := bucketsInParallel(k, 1<<digit, func(w int, count []int) {
		from, to := share(w, m)
		for _, y := range buf[from:to] {
			count[uint32(y>>32)>>digit]++
		}
	})
	starts := make([][]int, k) // where each worker's share of a bucket starts
	for w := range k {
		starts[w] = append([]int(nil), hi[w]...)
	}
	firsts, lasts := make([][]uint32, k), make([][]uint32, k)
	has := make([]bitset, k)
	parallel(k, func(w int) {
		at, first, last := hi[w], make([]uint32, len(hi[w])), make([]uint32, len(hi[w]))
		for d := range last {
			first[d], last[d] = None, None
		}
		has[w] = newBitset(r)
		from, to := share(w, m)
		for _, y := range buf[from:to] {
			t, v := uint32(y>>32), uint32(y)
			d := t >> digit
			if last[d] != t {
				if last[d] == None {
					first[d] = t
				}
				last[d] = t
				v |= mark
				has[w].set(t)
			}
			l.set(at[d], v)
			at[d]++
		}
		firsts[w], lasts[w] = first, last
	})
	for d := range hi[0] {
		prev := None // the last target of the shares before, in bucket d
		for w := range k {
			if firsts[w][d] == None {
				continue
			}
			if firsts[w][d] == prev {
				l.set(starts[w][d], l.at(starts[w][d])&^mark)
			}
			prev = lasts[w][d]
		}
	}
	for w := 1; w < k; w++ {
		for i, x := range has[w] {
			has[0][i] |= x
		}
	}
	l.n = m
	return has[0]
}

// pairsByNode returns the m edges of l as target number<<32 | source, in
// order of the high bits of the target's node, in buf or, when it is too
// short, a buffer of their own. Each of the k workers takes the edges of a
// share of the sources, cut where a source begins.
func (l *edges) pairsByNode(k, m int, pre []uint32, buf []uint64) []uint64 {
	const parts = 1 << 12
	shift := max(0, bits.Len32(uint32(len(pre)-1))-bits.Len32(parts-1))
	cuts := make([]int, k+1)
	cuts[k] = l.n
	for w := 1; w < k; w++ {
		i := max(w*l.n/k, cuts[w-1])
		for i < l.n && l.at(i)&mark == 0 {
			i++
		}
		cuts[w] = i
	}
	at := bucketsInParallel(k, parts, func(w int, count []int) {
		for i := cuts[w]; i < cuts[w+1]; i++ {
			if x := l.at(i); x&mark == 0 {
				count[x>>shift]++
			}
		}
	})
	if len(buf) < m {
		buf = make([]uint64, m)
	}
	buf = buf[:m]
	parallel(k, func(w int) {
		at := at[w]
		src := uint64(0)
		for i := cuts[w]; i < cuts[w+1]; i++ {
			if x := l.at(i); x&mark != 0 {
				src = uint64(x &^ mark)
			} else {
				buf[at[x>>shift]] = uint64(x)<<32 | src
				at[x>>shift]++
			}
		}
	})
	parallel(k, func(w int) {
		for i := w * m / k; i < (w+1)*m/k; i++ {
			y := buf[i]
			buf[i] = uint64(pre[y>>32])<<32 | y&(1<<32-1)
		}
	})
	return buf
}

// pairsByDigit returns the m edges of l, whose targets are numbers, as
// target<<32 | source in order of the target's low digit (mask), in buf
// or, when it is too short, a buffer of their own.
func (l *edges) pairsByDigit(m int, mask uint32, buf []uint64) []uint64 {
	if len(buf) < m {
		buf = make([]uint64, m)
	}
	buf = buf[:m]
	at := bucketsInParallel(1, int(mask)+1, func(_ int, count []int) {
		for i := range l.n {
			if x := l.at(i); x&mark == 0 {
				count[x&mask]++
			}
		}
	})[0]
	src := uint64(0)
	for i := range l.n {
		if x := l.at(i); x&mark != 0 {
			src = uint64(x &^ mark)
		} else {
			buf[at[x&mask]] = uint64(x)<<32 | src
			at[x&mask]++
		}
	}
	return buf
}

// bucketsInParallel has each of k workers count its share of the input in
// n buckets (count), and returns where each worker's share of each bucket
// starts in the output: bucket by bucket, the workers in order.
func bucketsInParallel(k, n int, count func(w int, count []int)) [][]int {
	counts := make([][]int, k)
	parallel(k, func(w int) {
		counts[w] = make([]int, n)
		count(w, counts[w])
	})
	at := 0
	for d := range n {
		for w := range k {
			c := counts[w][d]
			counts[w][d] = at
			at += c
		}
	}
	return counts
}

// parallel runs f(0) to f(k-1) at once and waits for them; f(0) alone on
// the calling goroutine.
func parallel(k int, f func(w int)) {
	if k == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for w := range k {
		wg.Go(func() { f(w) })
	}
	wg.Wait()
}
