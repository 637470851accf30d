//go:build !linux

package hugepage

// Advise does nothing but on Linux.
func Advise[T any](s []T) {}

// Populate does nothing but on Linux.
func Populate[T any](s []T) {}
