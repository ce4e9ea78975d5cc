package bankservice

import (
	"errors"
	"fmt"
	"time"
)

// Reasons in the JSON error body of business failures (no X-Reject-Reason header).
const (
	ReasonBadRequest          = "bad-request"
	ReasonUnknownAccount      = "unknown-account"
	ReasonInsufficientFunds   = "insufficient-funds"
	ReasonInsufficientCash    = "insufficient-cash"
	ReasonIdempotencyMismatch = "idempotency-mismatch"
	ReasonReversed            = "reversed"
)

// PageSize is the number of ledger entries per page.
const PageSize = 10

// LedgerOp is the body of POST /ledger/debit and POST /ledger/credit.
type LedgerOp struct {
	Account        string `json:"account"`
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// BalanceAnswer is the 200 body of ledger debits and credits.
type BalanceAnswer struct {
	Account string `json:"account"`
	Balance int64  `json:"balance"`
	// Replayed says the key had been used before: this is the first answer again.
	Replayed bool `json:"replayed,omitempty"`
}

// Entry is one ledger movement.
type Entry struct {
	Seq     int64     `json:"seq"`
	Kind    string    `json:"kind"` // debit | credit
	Amount  int64     `json:"amount"`
	Balance int64     `json:"balance"` // after the movement
	Key     string    `json:"idempotency_key,omitempty"`
	Time    time.Time `json:"time"`
}

// Page is the body of GET /ledger/transactions: newest entries first.
type Page struct {
	Account string  `json:"account"`
	Page    int     `json:"page"`
	Entries []Entry `json:"entries"`
	More    bool    `json:"more"`
}

// LedgerTotal is the body of GET /ledger/total.
type LedgerTotal struct {
	Total    int64 `json:"total"`
	Accounts int   `json:"accounts"`
	// Initial is the sum of balances at seeding.
	Initial int64 `json:"initial"`
	// NetDebits is debits minus credits by purpose: the idempotency key's
	// prefix before ":" (the bank's "check" and "cash"), "other" without one.
	NetDebits map[string]int64 `json:"net_debits"`
}

// Withdrawal is the body of POST /vault/withdraw.
type Withdrawal struct {
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// VaultTotal is the body of GET /vault/total and of a 200 withdrawal.
type VaultTotal struct {
	Cash      int64 `json:"cash"`
	Withdrawn int64 `json:"withdrawn"`
	// Initial is the cash the vault started with.
	Initial int64 `json:"initial"`
}

// Void is the body of POST /vault/void: cancel the withdrawal with this key.
type Void struct {
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key"`
}

// VoidAnswer is the 200 body of POST /vault/void.
type VoidAnswer struct {
	// Returned says the withdrawal had been paid and its cash is back in the vault.
	Returned bool  `json:"returned"`
	Cash     int64 `json:"cash"`
}

// Consistency is the body of the bank's GET /consistency.
type Consistency struct {
	OK     bool             `json:"ok"`
	Detail string           `json:"detail"`
	Values map[string]int64 `json:"values"`
}

// Transaction is the body of POST /transact/check and POST /transact/cash.
type Transaction struct {
	Account        string `json:"account"`
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// TransactionAnswer is the 200 body of a bank transaction.
type TransactionAnswer struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
	Balance int64  `json:"balance"`
}

// History is the body of GET /transactions.
type History struct {
	Account string  `json:"account"`
	Pages   int     `json:"pages"`
	Entries []Entry `json:"entries"`
}

// validate checks an account and an amount; the error names the field.
func validate(account string, needAccount bool, amount int64) error {
	if needAccount && account == "" {
		return errors.New(`field "account" is required (e.g. "acct-0")`)
	}
	if amount <= 0 {
		return fmt.Errorf(`field "amount" must be a positive number of cents, got %d`, amount)
	}
	return nil
}
