package bankservice

import "sync"

// Payout sources remembered per cash key.
const (
	sourceDrawer = "drawer"
	sourceVault  = "vault"
)

// drawerState is a snapshot of the cash drawer.
type drawerState struct {
	// Cash is on hand, Reserved of it held for transactions in flight.
	Cash, Reserved int64
	// PaidOut is all cash the bank handed out (from the drawer or the vault).
	PaidOut int64
	// Refilled is all cash taken from the vault into the drawer.
	Refilled int64
}

// drawer is the bank's cash drawer, a cache of vault cash: a cash transaction
// it covers is paid without calling the vault, and it is refilled from the
// vault in the background. It also remembers which cash keys the bank paid
// (from the drawer or the vault), so a retried transaction is paid once.
type drawer struct {
	mu            sync.Mutex
	enabled       bool
	capacity, low int64
	cash          int64 // on hand, reserved included
	reserved      int64
	paidOut       int64
	refilled      int64
	paid          *memory // cash key → outcome{reason: source}
}

// newDrawer returns an empty drawer holding up to capacity cents, refilled
// when it falls below low. Disabled, it never holds cash (every payout goes to
// the vault) but still remembers payouts.
func newDrawer(enabled bool, capacity, low int64) *drawer {
	return &drawer{enabled: enabled, capacity: capacity, low: min(low, capacity), paid: newMemory()}
}

// Enabled says whether the drawer serves cash.
func (d *drawer) Enabled() bool { return d.enabled }

// Reserve sets amount aside for a transaction if the drawer holds it.
func (d *drawer) Reserve(amount int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.enabled || d.cash-d.reserved < amount {
		return false
	}
	d.reserved += amount
	return true
}

// Release returns a reservation unpaid.
func (d *drawer) Release(amount int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reserved -= amount
}

// PaidBy says whether the bank paid key, and from where.
func (d *drawer) PaidBy(key string) (source string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.paid.get(key)
	return r.out.reason, ok
}

// Pay records that key was paid amount from source: from the drawer it takes
// a reservation made with Reserve. A key already paid is not paid again: it
// returns false (and releases a drawer reservation).
func (d *drawer) Pay(key string, amount int64, source string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if source == sourceDrawer {
		d.reserved -= amount
	}
	if _, ok := d.paid.get(key); ok {
		return false
	}
	if source == sourceDrawer {
		d.cash -= amount
	}
	d.paidOut += amount
	d.paid.put(key, "", outcome{status: 200, balance: amount, reason: source})
	return true
}

// RefillAmount is what to take from the vault now: enough to fill the
// drawer when it holds less than its low mark, else 0.
func (d *drawer) RefillAmount() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.enabled || d.cash >= d.low {
		return 0
	}
	return d.capacity - d.cash
}

// Refill adds cash taken from the vault.
func (d *drawer) Refill(amount int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cash += amount
	d.refilled += amount
}

// State returns a snapshot.
func (d *drawer) State() drawerState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return drawerState{Cash: d.cash, Reserved: d.reserved, PaidOut: d.paidOut, Refilled: d.refilled}
}
