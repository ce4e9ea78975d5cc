//go:build tools

// Package tools pins the actionlint version `make lint-workflows` checks the
// GitHub workflows with.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
