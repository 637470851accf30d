package binsym

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// Struct descriptors that all share one array of maxArray fields make
// every decode read that array: decoding stops once the fields read reach
// maxDecoded, a few times what the section can hold, rather than read
// maxArray fields for each descriptor the builds and the walk meet.
func TestDescriptorsSharingFields(t *testing.T) {
	const start, descs = 0x100000, 1000
	const descSize = 80
	name := uint64(descs * descSize)     // an empty name: flags 0, length 0
	fields := uint64(descs*descSize + 8) // maxArray fields, each of the first struct
	data := make([]byte, fields+maxArray*structFieldSize)
	le := binary.LittleEndian
	for i := range uint64(descs) {
		d := data[i*descSize:]
		le.PutUint64(d[0:], 8)                           // size
		d[21], d[22], d[23] = 8, 8, byte(reflect.Struct) // align, field align, kind
		le.PutUint32(d[40:], uint32(name))               // str
		le.PutUint64(d[56:], start+fields)               // fields: pointer, length, capacity
		le.PutUint64(d[64:], maxArray)
		le.PutUint64(d[72:], maxArray)
	}
	for i := range uint64(maxArray) {
		f := data[fields+i*structFieldSize:]
		le.PutUint64(f[0:], start+name) // name
		le.PutUint64(f[8:], start)      // type: the first struct
	}
	x := &descIndex{
		b:            &Binary{},
		start:        start,
		data:         string(data),
		built:        map[uint64]*Type{},
		ptrTo:        map[*Type]*Type{},
		basic:        map[reflect.Kind]*Type{},
		maxParts:     len(data)/8 + maxArray,
		maxDecoded:   4 * (len(data)/8 + maxArray),
		maxNameBytes: 16*len(data) + maxNameLen,
	}
	roots := make([]uint64, descs)
	for i := range roots {
		roots[i] = start + uint64(i)*descSize
	}
	x.mu.Lock()
	types := x.build(roots)
	x.mu.Unlock()
	if types[0] == nil || types[0].Kind != reflect.Struct || len(types[0].Fields) != maxArray {
		t.Fatalf("the first struct: %+v, want one of %d fields", types[0], maxArray)
	}
	if x.decoded != x.maxDecoded {
		t.Errorf("%d fields decoded for %d descriptors, want decoding to stop at %d", x.decoded, descs, x.maxDecoded)
	}
	if last := types[len(types)-1]; last != nil {
		t.Errorf("the last struct: %+v, want none", last)
	}
}
