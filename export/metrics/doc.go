// Package metrics sends a finished run record to the monitoring systems
// teams already watch: its per-window series, verdicts, fault windows and
// the targets' scraped metrics to Prometheus remote write (1.0, through
// client_golang's remote API) and to OTLP/HTTP (through OpenTelemetry's Go
// SDK exporter), each point at the run's real time; its fault windows and
// the run itself as Grafana annotations.
//
// It reads package record only (and the record's histogram codec). Every
// metric name starts with chaosrun_; docs/export.md lists them all, with
// their labels, and dashboards/chaosrun.json reads them.
package metrics
