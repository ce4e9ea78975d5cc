// Package bankservice is the BankService reference target: a bank (TransactCheck,
// TransactCash, ListTransactions) in front of a ledger and a vault, each its own
// process ("chaosrun serve bankservice|ledger|vault"), built on targets/platform.
//
// Money conservation. Let C be the sum of amounts of check transactions the bank
// answered 200, and K that of cash transactions it answered 200. Then at any quiet
// moment
//
//	ledger_initial - ledger_total == C + K   (accounts lose only what was paid out)
//	vault_initial  - vault_total  == K       (the vault hands out only paid cash)
//
// A cash transaction debits the ledger first; if the vault then refuses or fails,
// the bank credits the ledger back (idempotently, retried a few times) with the
// debit's idempotency key; the ledger then marks that debit reversed, so a client
// replaying the transaction's key gets 409 reversed instead of a second payout.
// When the debit was itself a replay (an earlier attempt with the key may have been
// paid), the bank does not refund: the key stays open and a retry settles it.
// The one case this minimal bank cannot settle is an ambiguous vault failure: the
// call timed out or the connection broke after the vault had already paid; the bank
// then refunds the account although the cash left the vault.
//
// C and K count each idempotency key once: a replayed key never moves money again.
package bankservice
