package leakedg

// MaxGroupIDs is how many goroutine ids a Group lists.
const MaxGroupIDs = 10

// Group is leaked goroutines alike: the same function and location, wait
// reason and creation site.
type Group struct {
	Count     int    `json:"goroutine_count"`
	Function  string `json:"function"`
	Location  string `json:"location"`
	Wait      string `json:"wait"`
	CreatedBy string `json:"created_by,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	// RetainedBytes adds up what its goroutines retain (Retained).
	RetainedBytes uint64 `json:"retained_bytes"`
	// IDs are its first goroutines' ids, at most MaxGroupIDs.
	IDs []uint64 `json:"goroutine_ids"`
}

// Groups groups gs, in the order of each group's first goroutine.
func Groups(gs []Goroutine) []Group {
	type key struct{ fn, loc, wait, by, at string }
	idx := make(map[key]int)
	groups := []Group{}
	for _, g := range gs {
		k := key{g.Function, g.Location, g.Wait, g.CreatedBy, g.CreatedAt}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, Group{Function: g.Function, Location: g.Location, Wait: g.Wait,
				CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt, IDs: []uint64{}})
		}
		gr := &groups[i]
		gr.Count++
		gr.RetainedBytes += g.Retained
		if len(gr.IDs) < MaxGroupIDs {
			gr.IDs = append(gr.IDs, g.ID)
		}
	}
	return groups
}
