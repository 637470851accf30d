// Package bigarray helps with the arrays of hundreds of megabytes the
// analysis of a heap dump fills.
//
// Populate has the kernel fault an array's pages in ahead of its use, so
// that a goroutine on an idle core can take that cost off the one about to
// fill the array. Copy copies a large array, its pages faulted in first, in
// steps that a garbage collection can come between, and Grow and Append
// grow one so. CopyOnCores splits a copy among goroutines, for cores that
// would idle meanwhile.
//
// The package once asked Linux for transparent huge pages for every array
// of 4 MiB or more (madvise MADV_HUGEPAGE), which halved the page faults.
// On this project's machine, a virtual machine whose host takes back the
// memory a process frees, that cost more than it saved: with the asking,
// a run that starts after a pause spent 1.1 to 1.9 s in the kernel on a
// 10M-node dump rather than 0.7 to 1.0 s, and took 1.6 to 2.4 s rather
// than 1.4 to 1.8 s (6 pairs of runs, in alternating order); on a 2M-node
// dump and one of 100,000 goroutines it was no faster either. So it asks
// no more.
package bigarray
