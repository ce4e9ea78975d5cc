package stream

import "github.com/chaosrun/chaosrun/record"

// MergeWindows merges several window lists (e.g. one per load shard) into
// one: windows with the same start are merged exactly (counts add, HDR
// histograms merge), and the result is sorted by start.
func MergeWindows(lists ...[]record.Window) ([]record.Window, error) {
	var st state
	for _, l := range lists {
		for _, w := range l {
			// merge keeps the series it is given: copy them first.
			cp := record.Window{Start: w.Start, Series: append([]record.Series(nil), w.Series...)}
			if err := st.merge(cp); err != nil {
				return nil, err
			}
		}
	}
	return st.summary().Windows, nil
}
