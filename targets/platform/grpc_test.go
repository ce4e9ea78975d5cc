package platform

import (
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestGRPCMethod: a route's path names its gRPC method; paths that cannot
// are refused.
func TestGRPCMethod(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"/ledger/debit", "/platform.Ledger/Debit", true},
		{"/vault/total", "/platform.Vault/Total", true},
		{"/transact/cash-drawer", "/platform.Transact/CashDrawer", true},
		{"/kv_store/get/many", "/platform.KvStore/GetMany", true},
		{"/healthz", "", false},
		{"/", "", false},
		{"/items/{id}", "", false},
	} {
		got, ok := GRPCMethod(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("GRPCMethod(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

// TestGRPCStatusMapping: each HTTP status the platform answers with has a
// gRPC code that maps back to a status a caller treats the same way
// (retried or not, a client error or a server one).
func TestGRPCStatusMapping(t *testing.T) {
	for _, tc := range []struct {
		status       int
		backpressure bool
		code         codes.Code
		back         int
	}{
		{200, false, codes.OK, 200},
		{400, false, codes.InvalidArgument, 400},
		{401, false, codes.Unauthenticated, 401},
		{404, false, codes.NotFound, 404},
		{409, false, codes.Aborted, 409},
		{422, false, codes.FailedPrecondition, 400},
		{429, false, codes.ResourceExhausted, 429},
		{500, false, codes.Internal, 500},
		{502, false, codes.Unavailable, 503},
		{503, false, codes.Unavailable, 503},
		{503, true, codes.ResourceExhausted, 429},
		{504, false, codes.DeadlineExceeded, 504},
	} {
		code := GRPCCodeOf(tc.status, tc.backpressure)
		if code != tc.code || HTTPStatusOf(code) != tc.back {
			t.Errorf("%d (back pressure %v): code %v, back %d; want %v, %d", tc.status, tc.backpressure, code, HTTPStatusOf(code), tc.code, tc.back)
		}
		if (tc.status >= 500) != (tc.back >= 500) && !tc.backpressure {
			t.Errorf("%d maps back to %d: a server error became a client one", tc.status, tc.back)
		}
	}
	if HTTPStatusOf(codes.DataLoss) != http.StatusInternalServerError {
		t.Error("an unlisted code is not a 500")
	}
}
