package bankservice

// maxRemembered bounds how many idempotency keys a store remembers (oldest forgotten).
const maxRemembered = 1 << 20

// outcome is the remembered answer to an idempotent operation.
type outcome struct {
	status  int
	balance int64 // or cash left, for the vault
	reason  string
	msg     string
	// replayed: this answer was remembered, not applied now.
	replayed bool
}

// remembered is an outcome with the request it answered, to spot key reuse.
type remembered struct {
	fingerprint string
	out         outcome
}

// memory maps idempotency keys to outcomes; the owner locks it.
type memory struct {
	byKey map[string]remembered
	order []string // insertion order, for forgetting the oldest
	head  int
}

func newMemory() *memory { return &memory{byKey: map[string]remembered{}} }

func (m *memory) get(key string) (remembered, bool) {
	r, ok := m.byKey[key]
	return r, ok
}

func (m *memory) put(key, fingerprint string, out outcome) {
	if len(m.byKey) >= maxRemembered {
		delete(m.byKey, m.order[m.head])
		m.order[m.head] = key
		m.head = (m.head + 1) % len(m.order)
	} else {
		m.order = append(m.order, key)
	}
	m.byKey[key] = remembered{fingerprint: fingerprint, out: out}
}
