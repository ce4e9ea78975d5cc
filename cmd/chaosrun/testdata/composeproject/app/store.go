package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// item is one row of the items table.
type item struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Seen    bool      `json:"seen"`
	Created time.Time `json:"created"`
}

// store is the service's data: PostgreSQL (the truth), Redis (the cached
// list, and the queue of item events the worker consumes).
type store struct {
	db    *pgxpool.Pool
	cache *redis.Client
	// timeout bounds a read, writeTimeout a write (0: unbounded)
	timeout, writeTimeout time.Duration

	mu    sync.Mutex
	acked []int64 // ids of rows this process wrote and acknowledged
}

const (
	schema     = `CREATE TABLE IF NOT EXISTS items (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, seen BOOLEAN NOT NULL DEFAULT false, created TIMESTAMPTZ NOT NULL DEFAULT now())`
	listKey    = "items:latest"
	eventsKey  = "items:events"
	cacheBound = 300 * time.Millisecond
)

// openStore connects to both and creates the schema, retrying while the
// database comes up (bounded: a minute).
func openStore(ctx context.Context, cfg config) (*store, error) {
	pc, err := pgxpool.ParseConfig(cfg.dsn)
	if err != nil {
		return nil, fmt.Errorf("database settings: %w", err)
	}
	pc.MaxConns = 32
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	st := &store{db: db, timeout: cfg.dbTimeout, writeTimeout: cfg.writeTimeout, cache: redis.NewClient(&redis.Options{Addr: cfg.redisAddr,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, ContextTimeoutEnabled: true,
		MaxRetries: -1, DisableIdentity: true, Protocol: 2})}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err = db.Exec(ctx, schema)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		log.Printf("database not ready: %v", err)
		time.Sleep(time.Second)
	}
	if err != nil {
		st.close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return st, nil
}

func (s *store) close() {
	s.db.Close()
	s.cache.Close()
}

// bound limits ctx by timeout (none when it is 0).
func bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}

// latest reads the newest items from the database, and on success
// refreshes their cached copy.
func (s *store) latest(ctx context.Context) ([]item, error) {
	dctx, cancel := bound(ctx, s.timeout)
	defer cancel()
	rows, err := s.db.Query(dctx, `SELECT id, name, seen, created FROM items ORDER BY id DESC LIMIT 20`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []item{}
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.ID, &it.Name, &it.Seen, &it.Created); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if b, err := json.Marshal(items); err == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheBound)
		s.cache.Set(cctx, listKey, b, 10*time.Minute) //nolint:errcheck // a lost refresh leaves an older copy
		cancel()
	}
	return items, nil
}

// cached returns the cached copy of the newest items.
func (s *store) cached(ctx context.Context) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, cacheBound)
	defer cancel()
	return s.cache.Get(cctx, listKey).Bytes()
}

// add writes an item, remembers it was acknowledged, and queues its event
// for the worker.
func (s *store) add(ctx context.Context, name string) (int64, error) {
	dctx, cancel := bound(ctx, s.writeTimeout)
	defer cancel()
	var id int64
	if err := s.db.QueryRow(dctx, `INSERT INTO items (name) VALUES ($1) RETURNING id`, name).Scan(&id); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.acked = append(s.acked, id)
	s.mu.Unlock()
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), cacheBound)
	defer ccancel()
	s.cache.LPush(cctx, eventsKey, id) //nolint:errcheck // the worker's mark is best effort
	return id, nil
}

// missing counts the acknowledged rows the database no longer has.
func (s *store) missing(ctx context.Context) (acked, present int, err error) {
	s.mu.Lock()
	ids := append([]int64(nil), s.acked...)
	s.mu.Unlock()
	err = s.db.QueryRow(ctx, `SELECT count(*) FROM items WHERE id = ANY($1)`, ids).Scan(&present)
	return len(ids), present, err
}

// work consumes item events from Redis and marks each item seen, until
// ctx ends.
func (s *store) work(ctx context.Context) error {
	log.Printf("worker consuming %s", eventsKey)
	for ctx.Err() == nil {
		res, err := s.cache.BRPop(ctx, 2*time.Second, eventsKey).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			log.Printf("worker: %v", err)
			time.Sleep(500 * time.Millisecond)
			continue
		}
		dctx, cancel := bound(ctx, s.writeTimeout)
		_, err = s.db.Exec(dctx, `UPDATE items SET seen = true WHERE id = $1`, res[1])
		cancel()
		if err != nil {
			log.Printf("worker: item %s: %v", res[1], err)
		}
	}
	return ctx.Err()
}
