package bankservice

import (
	"errors"
	"fmt"
	"time"
)

// Reasons in the JSON error body of business failures (no X-Reject-Reason header).
const (
	reasonBadRequest          = "bad-request"
	reasonUnknownAccount      = "unknown-account"
	reasonInsufficientFunds   = "insufficient-funds"
	reasonInsufficientCash    = "insufficient-cash"
	reasonIdempotencyMismatch = "idempotency-mismatch"
	reasonReversed            = "reversed"
)

// pageSize is the number of ledger entries per page.
const pageSize = 10

// ledgerOp is the body of POST /ledger/debit and POST /ledger/credit.
type ledgerOp struct {
	Account        string `json:"account"`
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// balanceAnswer is the 200 body of ledger debits and credits.
type balanceAnswer struct {
	Account string `json:"account"`
	Balance int64  `json:"balance"`
	// Replayed says the key had been used before: this is the first answer again.
	Replayed bool `json:"replayed,omitempty"`
}

// entry is one ledger movement.
type entry struct {
	Seq     int64     `json:"seq"`
	Kind    string    `json:"kind"` // debit | credit
	Amount  int64     `json:"amount"`
	Balance int64     `json:"balance"` // after the movement
	Key     string    `json:"idempotency_key,omitempty"`
	Time    time.Time `json:"time"`
}

// ledgerPage is the body of GET /ledger/transactions: newest entries first.
type ledgerPage struct {
	Account string  `json:"account"`
	Page    int     `json:"page"`
	Entries []entry `json:"entries"`
	More    bool    `json:"more"`
}

// ledgerTotal is the body of GET /ledger/total.
type ledgerTotal struct {
	Total    int64 `json:"total"`
	Accounts int   `json:"accounts"`
	// Initial is the sum of balances at seeding.
	Initial int64 `json:"initial"`
	// NetDebits is debits minus credits by purpose: the idempotency key's
	// prefix before ":" (the bank's "check" and "cash"), "other" without one.
	NetDebits map[string]int64 `json:"net_debits"`
}

// withdrawal is the body of POST /vault/withdraw.
type withdrawal struct {
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// vaultTotal is the body of GET /vault/total and of a 200 withdrawal.
type vaultTotal struct {
	Cash      int64 `json:"cash"`
	Withdrawn int64 `json:"withdrawn"`
	// Initial is the cash the vault started with.
	Initial int64 `json:"initial"`
}

// void is the body of POST /vault/void: cancel the withdrawal with this key.
type void struct {
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key"`
}

// voidAnswer is the 200 body of POST /vault/void.
type voidAnswer struct {
	// Returned says the withdrawal had been paid and its cash is back in the vault.
	Returned bool  `json:"returned"`
	Cash     int64 `json:"cash"`
}

// consistency is the body of the bank's GET /consistency.
type consistency struct {
	OK     bool             `json:"ok"`
	Detail string           `json:"detail"`
	Values map[string]int64 `json:"values"`
}

// transaction is the body of POST /transact/check and POST /transact/cash.
type transaction struct {
	Account        string `json:"account"`
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// transactionAnswer is the 200 body of a bank transaction.
type transactionAnswer struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
	Balance int64  `json:"balance"`
}

// historyAnswer is the body of GET /transactions.
type historyAnswer struct {
	Account string  `json:"account"`
	Pages   int     `json:"pages"`
	Entries []entry `json:"entries"`
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
