package profiles

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The protobuf wire format, read as google/pprof's decoder reads it (the
// same limits), for the cost estimate that runs before pprof decodes.

// Errors of the wire format, as google/pprof words them.
var (
	errBadVarint     = errors.New("bad varint")
	errNotEnoughData = errors.New("not enough data")
	errTooMuchData   = errors.New("too much data")
)

// Protobuf wire types.
const (
	wireVarint = 0
	wireBytes  = 2
)

// field is one field of a protobuf message.
type field struct {
	num  uint64 // field number
	wire int    // wire type
	u64  uint64 // the value of a varint, fixed64 or fixed32
	body []byte // the body of a length-delimited field
}

// protoVarint decodes the varint at the start of data, as pprof does: at
// most ten bytes, the bits past 64 dropped.
func protoVarint(data []byte) (uint64, []byte, error) {
	var u uint64
	for i := 0; ; i++ {
		if i >= 10 || i >= len(data) {
			return 0, nil, errBadVarint
		}
		u |= uint64(data[i]&0x7f) << uint(7*i)
		if data[i]&0x80 == 0 {
			return u, data[i+1:], nil
		}
	}
}

// readField decodes the field at the start of data and returns the rest.
func readField(data []byte) (field, []byte, error) {
	x, data, err := protoVarint(data)
	if err != nil {
		return field{}, nil, err
	}
	f := field{num: x >> 3, wire: int(x & 7)}
	switch f.wire {
	case wireVarint:
		if f.u64, data, err = protoVarint(data); err != nil {
			return field{}, nil, err
		}
	case 1: // fixed64
		if len(data) < 8 {
			return field{}, nil, errNotEnoughData
		}
		f.u64, data = binary.LittleEndian.Uint64(data), data[8:]
	case wireBytes:
		var n uint64
		if n, data, err = protoVarint(data); err != nil {
			return field{}, nil, err
		}
		if n > uint64(len(data)) {
			return field{}, nil, errTooMuchData
		}
		f.body, data = data[:n], data[n:]
	case 5: // fixed32
		if len(data) < 4 {
			return field{}, nil, errNotEnoughData
		}
		f.u64, data = uint64(binary.LittleEndian.Uint32(data)), data[4:]
	default:
		return field{}, nil, fmt.Errorf("unknown wire type: %d", f.wire)
	}
	return f, data, nil
}
