//go:build tools

// Package tools pins the goreleaser version that builds releases
// (`make dist`, .github/workflows/release.yml).
package tools

import _ "github.com/goreleaser/goreleaser/v2"
