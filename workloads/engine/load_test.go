package engine

import (
	"strings"
	"testing"
)

func TestShardListen(t *testing.T) {
	tests := []struct {
		addr    string
		shard   int
		want    string
		wantErr string
	}{
		{"", 3, "", ""},
		{"0.0.0.0:7000", 0, "0.0.0.0:7000", ""},
		{"0.0.0.0:7000", 2, "0.0.0.0:7002", ""},
		{"[::]:7000", 1, "[::]:7001", ""},
		{"10.0.0.5:0", 4, "10.0.0.5:0", ""},
		{"10.0.0.5:65535", 1, "", "room for one per shard"},
		{"10.0.0.5", 1, "", "not HOST:PORT"},
	}
	for _, tt := range tests {
		got, err := shardListen(tt.addr, tt.shard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("shardListen(%q, %d): err = %v, want %q", tt.addr, tt.shard, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("shardListen(%q, %d) = %q, %v; want %q", tt.addr, tt.shard, got, err, tt.want)
		}
	}
}
