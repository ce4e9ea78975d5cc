package platform

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDeadlineHeader(t *testing.T) {
	arrival := time.Unix(1000, 0)
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"250", 250 * time.Millisecond, false},
		{" 0 ", 0, false},
		{"-5", -5 * time.Millisecond, false},
		{"999999999999", 24 * time.Hour, false}, // capped
		{"1.5", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		at, err := ParseDeadline(tt.in, arrival)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDeadline(%q) err = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && at.Sub(arrival) != tt.want {
			t.Errorf("ParseDeadline(%q) = arrival + %s, want + %s", tt.in, at.Sub(arrival), tt.want)
		}
	}
	for d, want := range map[time.Duration]string{1999 * time.Microsecond: "1", -time.Second: "0", 3 * time.Second: "3000"} {
		if got := FormatBudget(d); got != want {
			t.Errorf("FormatBudget(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestCallerBudget(t *testing.T) {
	if _, ok := CallerBudget(context.Background()); ok {
		t.Error("a context without a caller deadline has a caller budget")
	}
	at := time.Now().Add(time.Hour)
	for _, enforce := range []bool{true, false} {
		ctx, cancel := WithCallerDeadline(context.Background(), at, enforce)
		b, ok := CallerBudget(ctx)
		_, hasDeadline := ctx.Deadline()
		cancel()
		if !ok || b < 59*time.Minute || hasDeadline != enforce {
			t.Errorf("enforce %v: budget %s %v, context deadline %v", enforce, b, ok, hasDeadline)
		}
	}
}

func TestWriteErrorAndDecode(t *testing.T) {
	for reason, header := range map[string]string{ReasonBulkhead: ReasonBulkhead, ReasonCodel: ReasonCodel, "bad-request": ""} {
		w := httptest.NewRecorder()
		WriteError(w, http.StatusServiceUnavailable, reason, "full")
		if got := w.Header().Get(RejectHeader); got != header {
			t.Errorf("%s: %s = %q, want %q", reason, RejectHeader, got, header)
		}
		if body := w.Body.String(); body != `{"error":"full","reason":"`+reason+`"}`+"\n" {
			t.Errorf("%s: body %q", reason, body)
		}
	}
	tests := []struct{ body, wantErr string }{
		{`{"a":1}`, ""},
		{``, "empty"},
		{`{"b":1}`, "unknown field"},
		{`{"a":1}{"a":2}`, "exactly one"},
		{`{"a":"` + strings.Repeat("x", maxBody) + `"}`, "too large"},
	}
	for _, tt := range tests {
		var v struct{ A int }
		r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
		err := DecodeJSON(httptest.NewRecorder(), r, &v)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("DecodeJSON(%.20q) = %v, want %q", tt.body, err, tt.wantErr)
		}
	}
}
