package faults

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWaitForProxies(t *testing.T) {
	api, _ := startToxiproxy(t, startEcho(t), "bank->vault", "bank->ledger")
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "needs the token", http.StatusUnauthorized)
	}))
	defer denied.Close()
	tests := []struct {
		name, url string
		proxies   []string
		want      string // "" for success
	}{
		{"all there", api, []string{"bank->vault", "bank->ledger"}, ""},
		{"one missing", api, []string{"bank->vault", "bank->cache"}, "no proxy bank->cache"},
		{"token refused", denied.URL, []string{"bank->vault"}, "refused the token"},
		{"nothing listens", "127.0.0.1:1", []string{"bank->vault"}, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := WaitForProxies(ctx, tt.url, tt.proxies, 50*time.Millisecond)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
