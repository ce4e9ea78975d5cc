package testenv

import "testing"

func TestToolFound(t *testing.T) {
	if p := Tool(t, "sh", "dash"); p == "" {
		t.Fatal("sh not found, yet no failure or skip")
	}
}

func TestInCI(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"true", true}, {"", false}, {"1", false}} {
		t.Setenv("CI", tc.env)
		if got := InCI(); got != tc.want {
			t.Errorf("CI=%q: InCI() = %v, want %v", tc.env, got, tc.want)
		}
	}
}
