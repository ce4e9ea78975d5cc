// Package layout holds the test that enforces the repository's import
// rules (DESIGN.md, "What a line of code may touch"): which packages may
// not depend, directly or through others, on which.
package layout
