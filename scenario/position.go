package scenario

import "strings"

// position is where a value came from: a file position, or a --set flag.
type position struct {
	file      string
	line, col int
}

// meta is what the decoder learnt about a scenario beyond its values.
type meta struct {
	// pos maps a field path to the position of its value; keyPos to the
	// position of its key (struct fields and map entries).
	pos, keyPos map[string]position
	// bad holds paths whose value could not be decoded (or is missing), so
	// validation does not report them twice.
	bad map[string]bool
	// order holds the keys of each decoded mapping, in file order.
	order map[string][]string
	// defaultBaseline marks assertions whose baseline was filled by default
	// and is recomputed when the faults change.
	defaultBaseline map[int]bool
}

func newMeta() *meta {
	return &meta{
		pos:             map[string]position{},
		keyPos:          map[string]position{},
		bad:             map[string]bool{},
		order:           map[string][]string{},
		defaultBaseline: map[int]bool{},
	}
}

// metaOf returns the scenario's meta, creating an empty one for scenarios
// built in Go.
func metaOf(s *Scenario) *meta {
	if s.meta == nil {
		s.meta = newMeta()
	}
	return s.meta
}

// parent strips the last segment of a field path: "a.b[2]" → "a.b",
// "a.b" → "a", "a" → "".
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// at returns the position of path's value, or of its nearest ancestor.
func (m *meta) at(path string, file string) position {
	for p := path; ; p = parent(p) {
		if pos, ok := m.pos[p]; ok {
			return pos
		}
		if p == "" {
			return position{file: file}
		}
	}
}

// atKey returns the position of path's key when known, else of its value.
func (m *meta) atKey(path string, file string) position {
	if pos, ok := m.keyPos[path]; ok {
		return pos
	}
	return m.at(path, file)
}

// isBad reports whether path or one of its ancestors failed to decode.
func (m *meta) isBad(path string) bool {
	for p := path; ; p = parent(p) {
		if m.bad[p] {
			return true
		}
		if p == "" {
			return false
		}
	}
}

// overridden records that path's value now comes from a --set flag, and
// forgets what was known of its old value and everything under it.
func (m *meta) overridden(path, flag string) {
	for k := range m.pos {
		if k == path || strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") {
			delete(m.pos, k)
			delete(m.bad, k)
		}
	}
	delete(m.bad, path)
	m.pos[path] = position{file: "--set " + flag}
	m.keyPos[path] = position{file: "--set " + flag}
}
