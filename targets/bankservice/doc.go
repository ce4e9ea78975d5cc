// Package bankservice is the BankService reference target: a bank (TransactCheck,
// TransactCash, ListTransactions) in front of a ledger and a vault, each its own
// process ("chaosrun serve bankservice|ledger|vault"), built on targets/platform
// (its server and its smart client: retries, breaker, outlier ejection).
//
// TransactCheck debits the ledger. TransactCash debits the ledger and pays from
// the bank's cash drawer when it holds the amount (the drawer is refilled from
// the vault in the background), else from the vault through a fail-fast vault
// bulkhead. ListTransactions reads pages of 10 from the ledger behind its own
// API bulkhead, so long ranges cannot take the workers TransactCheck needs.
//
// Ledger replicas. Run with one --dep, a ledger is a stateless front that
// forwards to a primary ledger: three replicas share one set of accounts, so a
// retry on another replica replays the same idempotency key against the same
// state and an ejected replica loses no accounts.
//
// Money conservation. Every mutating call carries an idempotency key (the
// bank's "check:K" and "cash:K"); the ledger and the vault apply a key once
// and answer replays with the first outcome, and the bank remembers which cash
// keys it paid. A cash transaction the bank did not pay is undone by voids,
// which are safe whatever happened to the original call: the vault's void
// returns a withdrawal's cash if it was paid and closes the key if not; the
// ledger's void credits a debit back only if it was applied. Voids the vault
// or ledger cannot take now stay pending and are retried in the background;
// a replay of a pending key is refused. GET /consistency (the end-of-run
// check) waits for that to settle and checks
//
//	ledger_initial - ledger_total == net debits (check + cash)
//	vault_cash + drawer_cash + paid_out == vault_initial
//	ledger net cash debits == paid_out
//
// across every ledger replica, assuming one bank pays cash from the vault.
package bankservice
