package bankservice

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// SeedBalance is each seeded account's balance in cents.
const SeedBalance = 1_000_000

// LedgerMain runs the ledger ("chaosrun serve ledger") until ctx ends.
// Flags: the platform's plus --accounts N and --service-time D.
func LedgerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := platform.DefaultConfig()
	accounts, serviceTime := 1000, time.Millisecond
	fs := flag.NewFlagSet("chaosrun serve ledger", flag.ContinueOnError)
	cfg.Register(fs)
	fs.IntVar(&accounts, "accounts", accounts, "accounts seeded acct-0..acct-(N-1), each with 1000000 cents")
	fs.DurationVar(&serviceTime, "service-time", serviceTime, "simulated work per call")
	if err := platform.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if accounts < 1 {
		return fmt.Errorf("%s: --accounts %d: must be at least 1", fs.Name(), accounts)
	}
	log := newLogger(stderr, "ledger")
	srv := platform.NewServer("ledger", cfg.ServerConfig(), platform.NewMetrics(), log)
	(&LedgerAPI{Ledger: NewLedger(accounts, SeedBalance), ServiceTime: serviceTime}).Register(srv)
	return srv.Run(ctx, stdout)
}

// VaultMain runs the vault ("chaosrun serve vault") until ctx ends.
// Flags: the platform's plus --cash CENTS and --service-time D.
func VaultMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := platform.DefaultConfig()
	cash, serviceTime := int64(1_000_000_000_000), time.Millisecond
	fs := flag.NewFlagSet("chaosrun serve vault", flag.ContinueOnError)
	cfg.Register(fs)
	fs.Int64Var(&cash, "cash", cash, "initial cash in cents")
	fs.DurationVar(&serviceTime, "service-time", serviceTime, "simulated work per call")
	if err := platform.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if cash < 0 {
		return fmt.Errorf("%s: --cash %d: must not be negative", fs.Name(), cash)
	}
	log := newLogger(stderr, "vault")
	srv := platform.NewServer("vault", cfg.ServerConfig(), platform.NewMetrics(), log)
	(&VaultAPI{Vault: NewVault(cash), ServiceTime: serviceTime}).Register(srv)
	return srv.Run(ctx, stdout)
}

// BankMain runs the bank ("chaosrun serve bankservice") until ctx ends. It needs
// --dep ledger=ADDR and --dep vault=ADDR. Flags: the platform's plus
// --bulkheads on|off, --ledger-limit N and --vault-limit N.
func BankMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := platform.DefaultConfig()
	bc := BankConfig{Bulkheads: true, LedgerLimit: 32, VaultLimit: 8}
	fs := flag.NewFlagSet("chaosrun serve bankservice", flag.ContinueOnError)
	cfg.Register(fs)
	fs.Var((*onOff)(&bc.Bulkheads), "bulkheads", "per-dependency bulkheads: on or off")
	fs.IntVar(&bc.LedgerLimit, "ledger-limit", bc.LedgerLimit, "concurrent calls to the ledger (bulkhead)")
	fs.IntVar(&bc.VaultLimit, "vault-limit", bc.VaultLimit, "concurrent calls to the vault (bulkhead)")
	if err := platform.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate("ledger", "vault"); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if bc.LedgerLimit < 1 || bc.VaultLimit < 1 {
		return fmt.Errorf("%s: --ledger-limit %d, --vault-limit %d: both must be at least 1", fs.Name(), bc.LedgerLimit, bc.VaultLimit)
	}
	ledger, err := platform.NewClient("ledger", cfg.Deps["ledger"], cfg.DepTimeout)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	defer ledger.Close()
	vault, err := platform.NewClient("vault", cfg.Deps["vault"], cfg.DepTimeout)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	defer vault.Close()
	log := newLogger(stderr, "bankservice")
	m := platform.NewMetrics()
	srv := platform.NewServer("bankservice", cfg.ServerConfig(), m, log)
	NewBank(bc, ledger, vault, m, log).Register(srv)
	log.Info("bank configured", "bulkheads", bc.Bulkheads, "ledger_limit", bc.LedgerLimit,
		"vault_limit", bc.VaultLimit, "deps", cfg.Deps.String(), "dep_timeout", cfg.DepTimeout)
	return srv.Run(ctx, stdout)
}

func newLogger(w io.Writer, target string) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil)).With("target", target)
}

// onOff is a bool flag spelled on|off.
type onOff bool

func (o *onOff) String() string {
	if o != nil && *o {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}
