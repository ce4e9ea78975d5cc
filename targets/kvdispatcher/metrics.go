package kvdispatcher

import "github.com/prometheus/client_golang/prometheus"

// dispMetrics are the dispatcher's decisions as Prometheus series.
type dispMetrics struct {
	ruCharged    *prometheus.CounterVec // caller, tier
	shed         *prometheus.CounterVec // tier, reason
	ratio        prometheus.Gauge
	p95          *prometheus.GaugeVec // term
	tierLevel    prometheus.Gauge
	hotKeys      prometheus.Gauge
	cacheHits    prometheus.Counter
	cacheMisses  prometheus.Counter
	coalesced    prometheus.Counter
	backendReads *prometheus.CounterVec // shard, key_class
	hotReads     *prometheus.CounterVec // key
	shardErrors  *prometheus.CounterVec // shard, kind
}

func newDispMetrics(reg prometheus.Registerer) *dispMetrics {
	m := &dispMetrics{
		ruCharged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvdispatcher_ru_charged_total", Help: "Request units charged, by caller and tier (1 per request when --ru off).",
		}, []string{"caller", "tier"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvdispatcher_shed_total", Help: "Requests refused by the dispatcher, by tier and reason.",
		}, []string{"tier", "reason"}),
		ratio: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kvdispatcher_latency_ratio", Help: "Long-term p95 / short-term p95 of backend latency at the last window.",
		}),
		p95: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kvdispatcher_backend_p95_seconds", Help: "P² estimates of backend latency p95, long and short term.",
		}, []string{"term"}),
		tierLevel: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kvdispatcher_tier_level", Help: "Tiers whose RU price is raised: 0 none, 1 sheddable, 2 sheddable and default.",
		}),
		hotKeys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kvdispatcher_hot_keys", Help: "Keys currently hot (served from the local cache).",
		}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kvdispatcher_cache_hits_total", Help: "Hot-key reads served from the local cache.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kvdispatcher_cache_misses_total", Help: "Hot-key reads not in the local cache.",
		}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kvdispatcher_coalesced_waiters_total", Help: "Hot-key misses answered by another request's backend read.",
		}),
		backendReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvdispatcher_backend_reads_total", Help: "Reads sent to a shard, by shard and key class (hot or other).",
		}, []string{"shard", "key_class"}),
		hotReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvdispatcher_hot_key_backend_reads_total", Help: "Backend reads of keys that were hot, by key (at most 100 keys).",
		}, []string{"key"}),
		shardErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvdispatcher_shard_errors_total", Help: "Failed shard calls, by shard and kind.",
		}, []string{"shard", "kind"}),
	}
	reg.MustRegister(m.ruCharged, m.shed, m.ratio, m.p95, m.tierLevel, m.hotKeys, m.cacheHits,
		m.cacheMisses, m.coalesced, m.backendReads, m.hotReads, m.shardErrors)
	return m
}
