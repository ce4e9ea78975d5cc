//go:build tools

// Package tools pins the xk6 version the harness builds k6 with.
package tools

import _ "go.k6.io/xk6/cmd/xk6"
