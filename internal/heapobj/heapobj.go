// Package heapobj finds the heap object behind a Go value handed to a
// tracker (retain.Tracker.Track, watch.Watcher.Track), or says why the
// runtime could never report it freed.
package heapobj

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"unsafe"
)

// ErrNotTrackable is wrapped by every error a tracker returns for a value
// the runtime could never report as freed.
var ErrNotTrackable = errors.New("value cannot be tracked")

// tinySize is the runtime's tiny allocator block: pointer-free allocations
// smaller than this share a block and are freed only together.
const tinySize = 16

// Object is the heap object behind a value.
type Object struct {
	// Ptr is the address of the object: the pointed-to value, the first
	// element of a slice, the first byte of a string, the runtime's header
	// of a map or channel, or the closure of a func.
	Ptr unsafe.Pointer
	// Size is how many bytes from Ptr are known to belong to the value; 0
	// for maps, channels and funcs.
	Size uintptr
	// Type is the type of the value, nil for a nil interface.
	Type reflect.Type
}

// Reasons, worded for an error message.
const (
	reasonNil        = "it is nil: there is nothing to free"
	reasonZeroSize   = "it is zero-size: all zero-size values share one address, never freed"
	reasonTiny       = "pointer-free and under 16 bytes: the tiny allocator shares its block with other values, so it may never be freed; track what holds it"
	reasonNotRef     = "not a reference: pass a pointer to it (&v)"
	reasonUnsafe     = "unsafe.Pointer has no type, so its allocation is unknown: convert it to a typed pointer"
	reasonGlobal     = "not on the heap: a global, or a value the linker allocated (var p = &T{...}); never freed"
	reasonRodata     = "not on the heap: read-only data such as a string literal; never freed"
	reasonStaticFunc = "a function, or a closure that captures nothing, is static data; never freed"
	reasonNoCap      = "it has no capacity, so no backing array to free"
	reasonEmpty      = "it is empty: there are no bytes to free"
)

// Of returns the heap object behind v, a pointer, slice, string, map,
// channel or func, and "" ; or, when the runtime could never free such an
// object on its own, a reason in words (Object.Type is then set when v has
// a type).
func Of(v any) (Object, string) {
	o, reason := classify(v)
	if reason == "" {
		reason = onHeap(o.Ptr, o.Type.Kind())
	}
	return o, reason
}

// classify finds the heap object behind v, or says why there is none the
// runtime could ever free. It does not check that the object is on the heap;
// onHeap does.
func classify(v any) (Object, string) {
	if v == nil {
		return Object{}, reasonNil
	}
	rv := reflect.ValueOf(v)
	t := rv.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return Object{Type: t}, reasonNil
		}
		return sized(Object{Ptr: rv.UnsafePointer(), Size: t.Elem().Size(), Type: t}, hasPointers(t.Elem()))
	case reflect.Slice:
		if rv.IsNil() {
			return Object{Type: t}, reasonNil
		}
		if rv.Cap() == 0 {
			return Object{Type: t}, reasonNoCap
		}
		size := uintptr(rv.Cap()) * t.Elem().Size()
		return sized(Object{Ptr: rv.UnsafePointer(), Size: size, Type: t}, hasPointers(t.Elem()))
	case reflect.String:
		s := rv.String()
		if len(s) == 0 {
			return Object{Type: t}, reasonEmpty
		}
		return sized(Object{Ptr: unsafe.Pointer(unsafe.StringData(s)), Size: uintptr(len(s)), Type: t}, false)
	case reflect.Map, reflect.Chan:
		if rv.IsNil() {
			return Object{Type: t}, reasonNil
		}
		// The runtime's header; its size is not visible from here.
		return Object{Ptr: rv.UnsafePointer(), Type: t}, ""
	case reflect.Func:
		if rv.IsNil() {
			return Object{Type: t}, reasonNil
		}
		// A func value is a pointer to its closure, and an interface holds
		// pointer-shaped values directly in its data word.
		// (reflect.Value.UnsafePointer would give the code pointer instead.)
		closure := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]
		return Object{Ptr: closure, Type: t}, ""
	case reflect.UnsafePointer:
		return Object{Type: t}, reasonUnsafe
	default:
		return Object{Type: t}, reasonNotRef
	}
}

// sized refuses the allocations the runtime can never free on their own
// because of their size: zero-size values and tiny pointer-free ones.
func sized(o Object, pointers bool) (Object, string) {
	switch {
	case o.Size == 0:
		return o, reasonZeroSize
	case !pointers && o.Size < tinySize:
		return o, reasonTiny
	}
	return o, ""
}

// hasPointers reports whether values of type t hold pointers, which decides
// whether the runtime may place them in the tiny allocator (it does only for
// pointer-free allocations under 16 bytes).
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface, reflect.Slice, reflect.String:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// onHeap reports why p is not an object of the Go heap, or "" if it is.
//
// runtime.AddCleanup is the probe: it returns a no-op Cleanup for globals,
// linker-allocated values and the zero-size base (the runtime's own list of
// data and bss segments), and panics for any other pointer outside the heap,
// such as read-only data or a stack. weak.Make cannot be the probe: it
// throws, fatally, on read-only data. The probe cleanup is stopped at once.
func onHeap(p unsafe.Pointer, kind reflect.Kind) (reason string) {
	defer func() {
		if r := recover(); r != nil {
			reason = reasonRodata
			if kind == reflect.Func {
				reason = reasonStaticFunc
			}
			reason = fmt.Sprintf("%s (%v)", reason, r)
		}
	}()
	c := runtime.AddCleanup((*byte)(p), func(struct{}) {}, struct{}{})
	if c == (runtime.Cleanup{}) {
		// GODEBUG=sbrk=1 also makes every cleanup a no-op; it never frees
		// anything either.
		if kind == reflect.Func {
			return reasonStaticFunc
		}
		return reasonGlobal
	}
	c.Stop()
	runtime.KeepAlive(p)
	return ""
}
