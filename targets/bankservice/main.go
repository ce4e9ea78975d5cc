package bankservice

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// seedBalance is each seeded account's balance in cents.
const seedBalance = 1_000_000

// LedgerMain runs the ledger ("chaosrun serve ledger") until ctx ends.
// Flags: the platform's plus --accounts N, --history N, --service-time D and
// --page-time D.
// With one --dep NAME=ADDR it is a front of that primary ledger: it keeps no
// state and forwards every ledger call there, so that replicas share one set
// of accounts (see LedgerFront).
func LedgerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	accounts, history, serviceTime, pageTime := 1000, 0, time.Millisecond, time.Duration(0)
	fs := flag.NewFlagSet("chaosrun serve ledger", flag.ContinueOnError)
	cfg.Register(fs)
	fs.IntVar(&accounts, "accounts", accounts, "accounts seeded acct-0..acct-(N-1), each with 1000000 cents")
	fs.IntVar(&history, "history", history, "history entries each account starts with (its opening balance in parts; at most 1000)")
	fs.DurationVar(&serviceTime, "service-time", serviceTime, "simulated work per call")
	fs.DurationVar(&pageTime, "page-time", pageTime, "simulated work per page read of GET /ledger/transactions (0: --service-time)")
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	var primary string
	for name := range cfg.Deps {
		primary = name
	}
	if len(cfg.Deps) > 1 {
		return fmt.Errorf("%s: --dep %s: a ledger takes at most one dependency, its primary ledger", fs.Name(), cfg.Deps.String())
	}
	var required []string
	if primary != "" {
		required = []string{primary}
	}
	if err := cfg.Validate(required...); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if accounts < 1 {
		return fmt.Errorf("%s: --accounts %d: must be at least 1", fs.Name(), accounts)
	}
	if history < 0 || history > maxEntries {
		return fmt.Errorf("%s: --history %d: must be 0..%d", fs.Name(), history, maxEntries)
	}
	log := newLogger(stderr, "ledger")
	srv := server.New("ledger", cfg.Config(), server.NewMetrics(), log)
	if primary != "" {
		newLedgerFront(cfg.Deps[primary][0], cfg.DepTimeout, serviceTime).Register(srv)
		log.Info("ledger front", "primary", cfg.Deps[primary][0])
	} else {
		(&ledgerAPI{Ledger: newLedgerWithHistory(accounts, seedBalance, history), ServiceTime: serviceTime, PageTime: pageTime}).Register(srv)
	}
	return srv.Run(ctx, stdout)
}

// VaultMain runs the vault ("chaosrun serve vault") until ctx ends.
// Flags: the platform's plus --cash CENTS and --service-time D.
func VaultMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	cash, serviceTime := int64(1_000_000_000_000), time.Millisecond
	fs := flag.NewFlagSet("chaosrun serve vault", flag.ContinueOnError)
	cfg.Register(fs)
	fs.Int64Var(&cash, "cash", cash, "initial cash in cents")
	fs.DurationVar(&serviceTime, "service-time", serviceTime, "simulated work per call")
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if cash < 0 {
		return fmt.Errorf("%s: --cash %d: must not be negative", fs.Name(), cash)
	}
	log := newLogger(stderr, "vault")
	srv := server.New("vault", cfg.Config(), server.NewMetrics(), log)
	(&vaultAPI{Vault: newVault(cash), ServiceTime: serviceTime}).Register(srv)
	return srv.Run(ctx, stdout)
}

// BankMain runs the bank ("chaosrun serve bankservice") until ctx ends. It needs
// --dep ledger=ADDR[,ADDR…] and --dep vault=ADDR. Flags: the platform's server
// and smart-client flags plus --bulkheads on|off, --ledger-limit N,
// --vault-limit N, --ledger-bulkhead and --vault-bulkhead hard|shadow|off,
// --list-bulkhead hard|shadow|off, --list-limit N,
// --drawer on|off, --drawer-capacity CENTS and --drawer-low CENTS.
func BankMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	cc := client.DefaultConfig()
	bc := defaultBankConfig()
	fs := flag.NewFlagSet("chaosrun serve bankservice", flag.ContinueOnError)
	cfg.Register(fs)
	cc.Register(fs)
	fs.Var((*onOff)(&bc.Bulkheads), "bulkheads", "per-dependency bulkheads: on or off")
	fs.IntVar(&bc.LedgerLimit, "ledger-limit", bc.LedgerLimit, "concurrent calls to the ledger (bulkhead)")
	fs.IntVar(&bc.VaultLimit, "vault-limit", bc.VaultLimit, "concurrent calls to the vault (bulkhead)")
	fs.Var(bulkheadModeFlag{&bc.LedgerMode}, "ledger-bulkhead", "the ledger bulkhead: hard, shadow (count what it would reject, reject nothing) or off")
	fs.Var(bulkheadModeFlag{&bc.VaultMode}, "vault-bulkhead", "the vault bulkhead: hard, shadow (count what it would reject, reject nothing) or off")
	fs.Var(bulkheadModeFlag{&bc.ListMode}, "list-bulkhead", "ListTransactions API bulkhead: hard, shadow (count only) or off")
	fs.IntVar(&bc.ListLimit, "list-limit", bc.ListLimit, "concurrent ListTransactions requests (API bulkhead)")
	fs.Var((*onOff)(&bc.Drawer), "drawer", "cash drawer in front of the vault: on or off")
	fs.Int64Var(&bc.DrawerCapacity, "drawer-capacity", bc.DrawerCapacity, "most cash the drawer holds, in cents")
	fs.Int64Var(&bc.DrawerLow, "drawer-low", bc.DrawerLow, "drawer level in cents below which it is refilled from the vault")
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate("ledger", "vault"); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if err := cc.Validate(); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if bc.LedgerLimit < 1 || bc.VaultLimit < 1 || bc.ListLimit < 1 {
		return fmt.Errorf("%s: --ledger-limit %d, --vault-limit %d, --list-limit %d: each must be at least 1",
			fs.Name(), bc.LedgerLimit, bc.VaultLimit, bc.ListLimit)
	}
	if bc.DrawerCapacity < 0 || bc.DrawerLow < 0 || bc.DrawerLow > bc.DrawerCapacity {
		return fmt.Errorf("%s: --drawer-capacity %d, --drawer-low %d: want 0 <= low <= capacity",
			fs.Name(), bc.DrawerCapacity, bc.DrawerLow)
	}
	bc.LedgerReplicas, bc.VaultAddrs = cfg.Deps["ledger"], cfg.Deps["vault"]
	m := server.NewMetrics()
	opts := []client.Option{client.WithConfig(cc), client.WithRegisterer(m.Registry()), client.WithCaller("bankservice")}
	ledger, err := client.New("ledger", cfg.Deps["ledger"], cfg.DepTimeout, opts...)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	defer ledger.Close()
	vault, err := client.New("vault", cfg.Deps["vault"], cfg.DepTimeout, opts...)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	defer vault.Close()
	log := newLogger(stderr, "bankservice")
	srv := server.New("bankservice", cfg.Config(), m, log)
	b := newBank(bc, ledger, vault, m, log)
	b.Register(srv)
	log.Info("bank configured", "bulkheads", bc.Bulkheads, "ledger_limit", bc.LedgerLimit,
		"vault_limit", bc.VaultLimit, "ledger_bulkhead", bc.LedgerMode.String(), "vault_bulkhead", bc.VaultMode.String(), "list_bulkhead", bc.ListMode.String(), "list_limit", bc.ListLimit,
		"drawer", bc.Drawer, "drawer_capacity", bc.DrawerCapacity, "drawer_low", bc.DrawerLow,
		"deps", cfg.Deps.String(), "dep_timeout", cfg.DepTimeout, "retry_mode", cc.RetryMode, "retries", cc.Retries,
		"breaker", cc.Breaker, "outlier", cc.Outlier.Enabled, "balancer", cc.Balancer, "deadline_propagation", cc.PropagateDeadline)
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.Run(rctx) })
	err = srv.Run(ctx, stdout)
	stop()
	wg.Wait()
	return err
}

// bulkheadModeFlag is a server.BulkheadMode flag: hard, shadow or off.
type bulkheadModeFlag struct{ m *server.BulkheadMode }

func (f bulkheadModeFlag) String() string {
	if f.m == nil {
		return server.BulkheadHard.String()
	}
	return f.m.String()
}

func (f bulkheadModeFlag) Set(s string) error {
	m, err := server.ParseBulkheadMode(s)
	if err != nil {
		return err
	}
	*f.m = m
	return nil
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
