// Package stats holds streaming estimators in constant memory: P² quantiles
// (P2) and Space-Saving top-k counts (SpaceSaving).
package stats
