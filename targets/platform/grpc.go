package platform

import (
	"net/http"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
)

// The platform's services also speak gRPC, on the same port as HTTP (h2c):
// each API routed as "METHOD /svc/op" is the unary method /platform.Svc/Op,
// its request and answer a google.protobuf.Value holding the JSON body.
// The same admission path serves both, and a platform caller over gRPC
// sees the same statuses it would over HTTP.
const (
	// GRPCPackage is the protobuf package of the platform's gRPC services.
	GRPCPackage = "platform"
	// TrailerHTTPStatus carries the HTTP status a platform server answered
	// with, so a platform client maps it back exactly (other servers' codes
	// map through HTTPStatusOf).
	TrailerHTTPStatus = "x-http-status"
	// TrailerPushback is gRPC's retry pushback in milliseconds: a
	// RESOURCE_EXHAUSTED with it asks the caller to back off (the
	// platform's back pressure, X-Backpressure with Retry-After over HTTP).
	TrailerPushback = "grpc-retry-pushback-ms"
	// TrailerReason carries RejectHeader's reason.
	TrailerReason = "x-reject-reason"
)

// GRPCMethod names the gRPC method of an HTTP route's path:
// "/ledger/debit" is "/platform.Ledger/Debit", "/transact/cash-drawer"
// "/platform.Transact/CashDrawer"; ok is false for a path of fewer than
// two segments or with wildcards.
func GRPCMethod(path string) (string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 2 || strings.ContainsAny(path, "{}") {
		return "", false
	}
	var op strings.Builder
	for _, s := range segs[1:] {
		op.WriteString(camel(s))
	}
	return "/" + GRPCPackage + "." + camel(segs[0]) + "/" + op.String(), true
}

// camel writes s with each word (split at - and _) capitalised.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '-' || r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// GRPCCodeOf is the gRPC code for an HTTP status (back pressure: a 503
// that asks the caller to back off, RESOURCE_EXHAUSTED with pushback).
func GRPCCodeOf(status int, backpressure bool) codes.Code {
	switch {
	case status >= 200 && status <= 299:
		return codes.OK
	case status == http.StatusServiceUnavailable && backpressure:
		return codes.ResourceExhausted
	}
	switch status {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.Aborted
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case 499:
		return codes.Canceled
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	}
	if status >= 400 && status <= 499 {
		return codes.FailedPrecondition
	}
	return codes.Internal
}

// HTTPStatusOf is the HTTP status a platform caller treats a gRPC code as,
// when the server did not say (the mapping grpc-gateway uses).
func HTTPStatusOf(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.Canceled:
		return 499
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
