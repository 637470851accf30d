package profiles

import (
	"errors"
	"strings"

	"github.com/google/pprof/profile"
)

// decodeProto decodes an uncompressed profile.proto message into the
// profile that google/pprof's profile.ParseUncompressed returns for it, or
// the error it returns. It fills arrays made once at the size of what raw
// repeats (counts, as protoCost counted them; or, if counts is nil, as a
// first pass over raw counts them): one string holds the string table's
// bytes, one array each the samples, values, locations, lines, mappings
// and functions, and each labelled sample gets only the label maps it
// uses. pprof's decoder appends element by element and makes three maps
// per labelled sample, sized by its label count: on crafted profiles (a
// million labels in one sample, five million strings) that growth took
// most of analyze's time. The pass that fills checks the wire format and
// field types in pprof's order.
func decodeProto(raw []byte, counts *protoCounts) (*profile.Profile, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty input file")
	}
	if counts == nil {
		var count protoDecoder
		if err := count.profile(raw); err != nil {
			return nil, err
		}
		counts = &count.n
	}
	d := newFiller(*counts)
	if err := d.profile(raw); err != nil {
		return nil, err
	}
	return d.link()
}

// Errors of the profile, as google/pprof words them.
var (
	errFirstString   = errors.New("string_table[0] must be ''")
	errConcatProfile = errors.New("concatenated profiles detected")
	errMalformed     = errors.New("malformed profile format")
)

// rawLabel is a sample's label as the file gives it: string indexes and a
// number.
type rawLabel struct{ key, str, num, unit int64 }

// What pprof makes of a label (rawLabel.kind).
const (
	droppedLabel = iota // no value and no unit
	stringLabel         // a string value
	numericLabel        // a number or a unit, no string value
)

// kind says what pprof makes of l.
func (l rawLabel) kind() int {
	switch {
	case l.str != 0:
		return stringLabel
	case l.num != 0 || l.unit != 0:
		return numericLabel
	}
	return droppedLabel
}

// protoDecoder is decodeProto's state. The first pass (fill false) counts
// the elements; the second appends them to arrays made with those counts
// as capacities, and keeps the string indexes and ids, which link resolves.
type protoDecoder struct {
	fill bool
	n    protoCounts

	sampleTypes []profile.ValueType
	typeX       [][2]int64 // type and unit of each sample type
	periodX     [2]int64   // type and unit of the period type, the last one given

	samples      []profile.Sample
	sampleLocs   []int // the start of each sample's location ids, and the end
	sampleValues []int // the start of each sample's values, and the end
	sampleLabels []int // the start of each sample's labels, and the end
	locIDs       []uint64
	values       []int64
	labels       []rawLabel

	mappings []profile.Mapping
	mappingX [][2]int64 // file and build id of each mapping

	locations  []profile.Location
	locMapping []uint64 // mapping id of each location
	lines      []profile.Line
	lineFunc   []uint64 // function id of each line

	functions []profile.Function
	functionX [][3]int64 // name, system name and file name of each function

	strBytes  strings.Builder
	strEnds   []int // the end of each string in strBytes
	commentX  []int64
	dropX     int64
	keepX     int64
	defaultX  int64
	docURLX   int64
	timeNanos int64
	duration  int64
	period    int64
}

// protoCounts counts what a profile repeats.
type protoCounts struct {
	sampleTypes, samples, locIDs, values, labels int
	mappings, locations, lines, functions, strs  int
	strBytes, comments                           int
}

// newFiller returns the decoder of the second pass, with arrays made
// with the first pass's counts n as capacities.
func newFiller(n protoCounts) *protoDecoder {
	d := &protoDecoder{fill: true}
	d.sampleTypes = make([]profile.ValueType, 0, n.sampleTypes)
	d.typeX = make([][2]int64, 0, n.sampleTypes)
	d.samples = make([]profile.Sample, 0, n.samples)
	d.sampleLocs = make([]int, 1, n.samples+1)
	d.sampleValues = make([]int, 1, n.samples+1)
	d.sampleLabels = make([]int, 1, n.samples+1)
	d.locIDs = make([]uint64, 0, n.locIDs)
	d.values = make([]int64, 0, n.values)
	d.labels = make([]rawLabel, 0, n.labels)
	d.mappings = make([]profile.Mapping, 0, n.mappings)
	d.mappingX = make([][2]int64, 0, n.mappings)
	d.locations = make([]profile.Location, 0, n.locations)
	d.locMapping = make([]uint64, 0, n.locations)
	d.lines = make([]profile.Line, 0, n.lines)
	d.lineFunc = make([]uint64, 0, n.lines)
	d.functions = make([]profile.Function, 0, n.functions)
	d.functionX = make([][3]int64, 0, n.functions)
	d.strBytes.Grow(n.strBytes)
	d.strEnds = make([]int, 0, n.strs)
	d.commentX = make([]int64, 0, n.comments)
	return d
}

// profile decodes the fields of a Profile message, in the order and with
// the checks of pprof's decoder.
func (d *protoDecoder) profile(raw []byte) error {
	return walk(raw, func(f field) error {
		switch f.num {
		case 1:
			x, err := valueType(f)
			if err == nil {
				d.n.sampleTypes++
				if d.fill {
					d.sampleTypes = append(d.sampleTypes, profile.ValueType{})
					d.typeX = append(d.typeX, x)
				}
			}
			return err
		case 2:
			return d.sample(f)
		case 3:
			return d.mapping(f)
		case 4:
			return d.location(f)
		case 5:
			return d.function(f)
		case 6:
			s, err := messageBody(f)
			if err != nil {
				return err
			}
			if d.n.strs == 0 && len(s) != 0 {
				return errFirstString
			}
			d.n.strs++
			d.n.strBytes += len(s)
			if d.fill {
				d.strBytes.Write(s)
				d.strEnds = append(d.strEnds, d.strBytes.Len())
			}
			return nil
		case 7:
			return setVarint(f, &d.dropX)
		case 8:
			return setVarint(f, &d.keepX)
		case 9:
			if d.timeNanos != 0 {
				return errConcatProfile
			}
			return setVarint(f, &d.timeNanos)
		case 10:
			return setVarint(f, &d.duration)
		case 11:
			x, err := valueType(f)
			d.periodX = x
			return err
		case 12:
			return setVarint(f, &d.period)
		case 13:
			return repeatedVarints(f, func(u uint64) {
				d.n.comments++
				if d.fill {
					d.commentX = append(d.commentX, int64(u))
				}
			})
		case 14:
			return setVarint(f, &d.defaultX)
		case 15:
			return setVarint(f, &d.docURLX)
		}
		return nil
	})
}

// setVarint sets *x to the value of varint field f.
func setVarint(f field, x *int64) error {
	u, err := varintValue(f)
	if err == nil {
		*x = int64(u)
	}
	return err
}

// valueType decodes a ValueType message: its type and unit strings.
func valueType(f field) ([2]int64, error) {
	var x [2]int64
	err := walkMessage(f, func(f field) error {
		if f.num == 1 || f.num == 2 {
			return setVarint(f, &x[f.num-1])
		}
		return nil
	})
	return x, err
}

// sample decodes a Sample message: location ids, values and labels.
func (d *protoDecoder) sample(f field) error {
	err := walkMessage(f, func(f field) error {
		switch f.num {
		case 1:
			return repeatedVarints(f, func(u uint64) {
				d.n.locIDs++
				if d.fill {
					d.locIDs = append(d.locIDs, u)
				}
			})
		case 2:
			return repeatedVarints(f, func(u uint64) {
				d.n.values++
				if d.fill {
					d.values = append(d.values, int64(u))
				}
			})
		case 3:
			var l rawLabel
			err := walkMessage(f, func(f field) error {
				switch f.num {
				case 1:
					return setVarint(f, &l.key)
				case 2:
					return setVarint(f, &l.str)
				case 3:
					return setVarint(f, &l.num)
				case 4:
					return setVarint(f, &l.unit)
				}
				return nil
			})
			d.n.labels++
			if d.fill {
				d.labels = append(d.labels, l)
			}
			return err
		}
		return nil
	})
	d.n.samples++
	if d.fill {
		d.samples = append(d.samples, profile.Sample{})
		d.sampleLocs = append(d.sampleLocs, len(d.locIDs))
		d.sampleValues = append(d.sampleValues, len(d.values))
		d.sampleLabels = append(d.sampleLabels, len(d.labels))
	}
	return err
}

// mapping decodes a Mapping message.
func (d *protoDecoder) mapping(f field) error {
	var m profile.Mapping
	var x [2]int64
	err := walkMessage(f, func(f field) error {
		var err error
		switch f.num {
		case 1:
			m.ID, err = varintValue(f)
		case 2:
			m.Start, err = varintValue(f)
		case 3:
			m.Limit, err = varintValue(f)
		case 4:
			m.Offset, err = varintValue(f)
		case 5, 6:
			err = setVarint(f, &x[f.num-5])
		case 7:
			m.HasFunctions, err = boolValue(f)
		case 8:
			m.HasFilenames, err = boolValue(f)
		case 9:
			m.HasLineNumbers, err = boolValue(f)
		case 10:
			m.HasInlineFrames, err = boolValue(f)
		}
		return err
	})
	d.n.mappings++
	if d.fill {
		d.mappings = append(d.mappings, m)
		d.mappingX = append(d.mappingX, x)
	}
	return err
}

// boolValue returns the value of varint field f as a bool.
func boolValue(f field) (bool, error) {
	u, err := varintValue(f)
	return u != 0, err
}

// location decodes a Location message and its lines.
func (d *protoDecoder) location(f field) error {
	var l profile.Location
	var mapping uint64
	first := len(d.lines)
	err := walkMessage(f, func(f field) error {
		var err error
		switch f.num {
		case 1:
			l.ID, err = varintValue(f)
		case 2:
			mapping, err = varintValue(f)
		case 3:
			l.Address, err = varintValue(f)
		case 4:
			err = d.line(f)
		case 5:
			l.IsFolded, err = boolValue(f)
		}
		return err
	})
	d.n.locations++
	if d.fill {
		if end := len(d.lines); end > first {
			l.Line = d.lines[first:end:end]
		}
		d.locations = append(d.locations, l)
		d.locMapping = append(d.locMapping, mapping)
	}
	return err
}

// line decodes a Line message.
func (d *protoDecoder) line(f field) error {
	var ln profile.Line
	var function uint64
	err := walkMessage(f, func(f field) error {
		var err error
		switch f.num {
		case 1:
			function, err = varintValue(f)
		case 2:
			err = setVarint(f, &ln.Line)
		case 3:
			err = setVarint(f, &ln.Column)
		}
		return err
	})
	d.n.lines++
	if d.fill {
		d.lines = append(d.lines, ln)
		d.lineFunc = append(d.lineFunc, function)
	}
	return err
}

// function decodes a Function message.
func (d *protoDecoder) function(f field) error {
	var fn profile.Function
	var x [3]int64
	err := walkMessage(f, func(f field) error {
		var err error
		switch f.num {
		case 1:
			fn.ID, err = varintValue(f)
		case 2, 3, 4:
			err = setVarint(f, &x[f.num-2])
		case 5:
			err = setVarint(f, &fn.StartLine)
		}
		return err
	})
	d.n.functions++
	if d.fill {
		d.functions = append(d.functions, fn)
		d.functionX = append(d.functionX, x)
	}
	return err
}

// link builds the profile from the second pass's arrays, as pprof's
// postDecode does: it resolves string indexes, which must be in the string
// table, and ids, which resolve to nil when no element has them (the last
// of several with one id wins), and gathers each sample's labels by key.
func (d *protoDecoder) link() (*profile.Profile, error) {
	all := d.strBytes.String()
	table := make([]string, len(d.strEnds))
	start := 0
	for i, end := range d.strEnds {
		table[i], start = all[start:end], end
	}
	bad := false
	str := func(x int64) string {
		if x < 0 || x >= int64(len(table)) {
			bad = true
			return ""
		}
		return table[x]
	}
	p := &profile.Profile{TimeNanos: d.timeNanos, DurationNanos: d.duration, Period: d.period}

	mappings := newIDIndex[profile.Mapping](len(d.mappings))
	p.Mapping = pointers(d.mappings)
	for i, m := range p.Mapping {
		m.File, m.BuildID = str(d.mappingX[i][0]), str(d.mappingX[i][1])
		mappings.add(m.ID, m)
		const prefix = "[kernel.kallsyms]"
		if strings.HasPrefix(m.File, prefix) {
			m.KernelRelocationSymbol = m.File[len(prefix):]
		}
	}
	functions := newIDIndex[profile.Function](len(d.functions))
	p.Function = pointers(d.functions)
	for i, f := range p.Function {
		x := d.functionX[i]
		f.Name, f.SystemName, f.Filename = str(x[0]), str(x[1]), str(x[2])
		functions.add(f.ID, f)
	}
	locations := newIDIndex[profile.Location](len(d.locations))
	p.Location = pointers(d.locations)
	for i, l := range p.Location {
		l.Mapping = mappings.get(d.locMapping[i])
		locations.add(l.ID, l)
	}
	for i := range d.lines {
		if id := d.lineFunc[i]; id != 0 {
			d.lines[i].Function = functions.get(id)
		}
	}
	p.SampleType = pointers(d.sampleTypes)
	for i, st := range p.SampleType {
		st.Type, st.Unit = str(d.typeX[i][0]), str(d.typeX[i][1])
	}

	locs := make([]*profile.Location, len(d.locIDs))
	for i, id := range d.locIDs {
		locs[i] = locations.get(id)
	}
	var labels sampleLabels
	labels.allocate(d.labels)
	p.Sample = pointers(d.samples)
	for i, s := range p.Sample {
		lo, hi := d.sampleLocs[i], d.sampleLocs[i+1]
		s.Location = locs[lo:hi:hi]
		if lo, hi := d.sampleValues[i], d.sampleValues[i+1]; hi > lo {
			s.Value = d.values[lo:hi:hi]
		}
		if ls := d.labels[d.sampleLabels[i]:d.sampleLabels[i+1]]; len(ls) > 0 {
			labels.set(s, ls, str)
		}
	}

	p.DropFrames, p.KeepFrames = str(d.dropX), str(d.keepX)
	p.PeriodType = &profile.ValueType{Type: str(d.periodX[0]), Unit: str(d.periodX[1])}
	for _, x := range d.commentX {
		p.Comments = append(p.Comments, str(x))
	}
	p.DefaultSampleType, p.DocURL = str(d.defaultX), str(d.docURLX)
	if bad {
		return nil, errMalformed
	}
	return p, nil
}

// pointers returns pointers to the elements of s, or nil for none, as
// pprof's decoder leaves a repeated field it did not see.
func pointers[T any](s []T) []*T {
	if len(s) == 0 {
		return nil
	}
	ps := make([]*T, len(s))
	for i := range s {
		ps[i] = &s[i]
	}
	return ps
}

// idIndex finds the elements of a profile by id: ids up to the number of
// elements in an array, any other in a map.
type idIndex[T any] struct {
	dense  []*T
	sparse map[uint64]*T
}

func newIDIndex[T any](n int) idIndex[T] { return idIndex[T]{dense: make([]*T, n+1)} }

// add gives id to v, in place of any element that had it.
func (x *idIndex[T]) add(id uint64, v *T) {
	if id < uint64(len(x.dense)) {
		x.dense[id] = v
		return
	}
	if x.sparse == nil {
		x.sparse = map[uint64]*T{}
	}
	x.sparse[id] = v
}

// get returns the element with id, or nil.
func (x *idIndex[T]) get(id uint64) *T {
	if id < uint64(len(x.dense)) {
		return x.dense[id]
	}
	return x.sparse[id]
}

// sampleLabels gathers samples' labels by key into their maps. The first
// value of each key of a sample is carved from one array of the
// profile's string values, or of its numbers, so that a million labels
// are not a million small slices; a key's further values are appended.
type sampleLabels struct {
	strs []string
	nums []int64
}

// allocate makes room for the values of labels, all the profile's.
func (sl *sampleLabels) allocate(labels []rawLabel) {
	var count [3]int
	for _, l := range labels {
		count[l.kind()]++
	}
	sl.strs = make([]string, 0, count[stringLabel])
	sl.nums = make([]int64, 0, count[numericLabel])
}

// set gives sample s its labels ls, whose strings str resolves. As in
// pprof: a label with a string value is a string label, one with a
// number or a unit a numeric label, and any other is dropped; a key's
// units are padded with empty ones to its numbers; NumUnit is set with
// NumLabel.
func (sl *sampleLabels) set(s *profile.Sample, ls []rawLabel, str func(int64) string) {
	var count [3]int
	units := 0
	for _, l := range ls {
		count[l.kind()]++
		if l.kind() == numericLabel && l.unit != 0 {
			units++
		}
	}
	var labels map[string][]string
	var numLabels map[string][]int64
	var numUnits map[string][]string
	if count[stringLabel] > 0 {
		labels = make(map[string][]string, count[stringLabel])
	}
	if count[numericLabel] > 0 {
		numLabels = make(map[string][]int64, count[numericLabel])
		numUnits = make(map[string][]string, units)
	}
	for _, l := range ls {
		key := str(l.key)
		switch l.kind() {
		case stringLabel:
			v := str(l.str)
			if vs, ok := labels[key]; ok {
				labels[key] = append(vs, v)
			} else {
				labels[key] = carve(&sl.strs, v)
			}
		case numericLabel:
			values := numLabels[key]
			if l.unit != 0 {
				numUnits[key] = append(padStrings(numUnits[key], len(values)), str(l.unit))
			}
			if values != nil {
				numLabels[key] = append(values, l.num)
			} else {
				numLabels[key] = carve(&sl.nums, l.num)
			}
		}
	}
	if len(labels) > 0 {
		s.Label = labels
	}
	if len(numLabels) > 0 {
		s.NumLabel = numLabels
		for key, u := range numUnits {
			if len(u) > 0 {
				numUnits[key] = padStrings(u, len(numLabels[key]))
			}
		}
		s.NumUnit = numUnits
	}
}

// carve appends v to the shared array *pool and returns it as a slice of
// its own, full, so that appending to that slice copies it rather than
// write over the next value carved.
func carve[T any](pool *[]T, v T) []T {
	*pool = append(*pool, v)
	n := len(*pool)
	return (*pool)[n-1 : n : n]
}

// padStrings returns s with empty strings appended up to length n.
func padStrings(s []string, n int) []string {
	if n <= len(s) {
		return s
	}
	return append(s, make([]string, n-len(s))...)
}
