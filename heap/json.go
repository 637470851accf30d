package heap

import "encoding/json"

// holdersSchema names the JSON document a Report is written as. A new
// version comes with any key that is renamed, removed or changes meaning.
const holdersSchema = "ctxleak.holders/v2"

// MarshalJSON writes the report as the document "ctxleak.holders/v2": the
// key "schema" first, then the report's keys; a list is [] when empty,
// never null. Sizes end in _bytes, counts in _objects or _count.
func (r Report) MarshalJSON() ([]byte, error) {
	type report Report // the same fields, without this method
	c := report(r)
	c.Unknown = nonNil(c.Unknown)
	c.Groups = nonNil(c.Groups)
	c.Overlaps = nonNil(c.Overlaps)
	return json.Marshal(struct {
		Schema string `json:"schema"`
		*report
	}{holdersSchema, &c})
}

// MarshalJSON writes the group with its lists as [] when empty and its
// names escaped (Escaped).
func (g Group) MarshalJSON() ([]byte, error) {
	type group Group
	c := group(*g.Escaped())
	c.OtherRoots = nonNil(c.OtherRoots)
	c.HeldBy = nonNil(c.HeldBy)
	c.Path = nonNil(c.Path)
	c.Goroutines = nonNil(c.Goroutines)
	c.MadeOf = nonNil(c.MadeOf)
	c.Inside = nonNil(c.Inside)
	return json.Marshal(&c)
}

// MarshalJSON writes the object with its allocation stack as [] when the
// dump has no sample for it, and its names escaped.
func (o Object) MarshalJSON() ([]byte, error) {
	type object Object
	c := object(o.escaped())
	c.AllocStack = nonNil(c.AllocStack)
	return json.Marshal(&c)
}

// nonNil returns s, or an empty slice for nil, which JSON writes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
