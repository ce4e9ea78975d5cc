package resilience

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/metrics"
	"go.k6.io/k6/output"
)

// Timing of the output's flusher: the native engine's (a window written
// 500 ms after its second, checked every 250 ms), so that windows, and
// the checks judged live on them, come as soon on either engine.
const (
	flushEvery = 250 * time.Millisecond
	// grace is how long after a second ends its window is still kept open
	// for late samples; a later one goes out as another window of the same
	// start, which the receiver merges.
	grace = 500 * time.Millisecond
	// connectWait is how long Start tries to reach the TCP receiver.
	connectWait = 3 * time.Second
)

// config is the parsed --out resilience=ARG.
type config struct {
	tcpAddr string // host:port, or ""
	// token is sent in the TCP hello; the receiver then answers it.
	token string
	// tls, when set, makes the TCP connection TLS.
	tls  *tls.Config
	path string // file path, or ""
	tags []string
}

func parseConfig(arg string, env map[string]string) (config, error) {
	var c config
	switch {
	case arg == "":
		return c, errors.New("resilience output: no destination; use --out resilience=tcp://HOST:PORT or --out resilience=PATH")
	case strings.HasPrefix(arg, "tcp://"):
		if err := parseTCP(arg, env, &c); err != nil {
			return c, err
		}
	case strings.Contains(arg, "://"):
		return c, fmt.Errorf("resilience output: unsupported destination %q; allowed: tcp://HOST:PORT or a file path", arg)
	default:
		c.path = arg
	}
	c.tags = DefaultTags
	if v, ok := env["K6_RESILIENCE_TAGS"]; ok && strings.TrimSpace(v) != "" {
		c.tags = nil
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				c.tags = append(c.tags, t)
			}
		}
	}
	return c, nil
}

// Output is the "resilience" k6 output.
type Output struct {
	cfg    config
	shard  string
	logger logrus.FieldLogger
	now    func() time.Time

	mu  sync.Mutex
	agg *aggregator

	sink      sink
	lost      int64 // samples in windows the sink failed to take (flusher only)
	warnedOut bool
	stop      chan struct{}
	done      chan struct{}
}

var _ output.Output = new(Output)

// New builds the output from k6's parameters (see output.Constructor).
func New(p output.Params) (output.Output, error) {
	cfg, err := parseConfig(p.ConfigArgument, p.Environment)
	if err != nil {
		return nil, err
	}
	cfg.tags = withThresholdTags(cfg.tags, p.ScriptOptions.Thresholds)
	logger := p.Logger
	if logger == nil {
		logger = logrus.StandardLogger()
	}
	return &Output{
		cfg:    cfg,
		shard:  shardName(p.ScriptOptions),
		logger: logger.WithField("output", "resilience"),
		now:    time.Now,
		agg:    newAggregator(cfg.tags),
	}, nil
}

// Description names the output and its destination.
func (o *Output) Description() string {
	dest := o.cfg.path
	if o.cfg.tcpAddr != "" {
		dest = "tcp://" + o.cfg.tcpAddr
		if o.cfg.tls != nil {
			dest += ", TLS"
		}
		if o.cfg.token != "" {
			dest += ", token"
		}
	}
	return fmt.Sprintf("resilience (%s) xk6-resilience %s", dest, Version)
}

// Start opens the destination, sends hello and starts the flusher.
func (o *Output) Start() error {
	// Only a TCP hello carries the token: a file is no place for it.
	token := ""
	if o.cfg.tcpAddr != "" {
		token = o.cfg.token
	}
	hello, err := helloLine(k6Version(), Version, o.shard, token)
	if err != nil {
		return err
	}
	if o.cfg.tcpAddr != "" {
		o.sink, err = dialTCP(tcpOptions{addr: o.cfg.tcpAddr, tls: o.cfg.tls, awaitAnswer: token != ""}, hello, connectWait)
	} else {
		o.sink, err = openFile(o.cfg.path, hello)
	}
	if err != nil {
		return err
	}
	o.stop = make(chan struct{})
	o.done = make(chan struct{})
	go o.run()
	return nil
}

// AddMetricSamples folds samples into their windows; it never waits on the
// destination.
func (o *Output) AddMetricSamples(containers []metrics.SampleContainer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range containers {
		for _, s := range c.GetSamples() {
			o.agg.add(s)
		}
	}
}

// run flushes complete windows until Stop.
func (o *Output) run() {
	defer close(o.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			o.flush(o.now().Add(-grace))
		}
	}
}

// flush sends every window that ended at or before cut (all when cut is zero).
func (o *Output) flush(cut time.Time) {
	o.mu.Lock()
	ws := o.agg.take(cut)
	o.mu.Unlock()
	for _, w := range ws {
		o.send(w)
	}
}

func (o *Output) send(w *window) {
	defer w.release()
	b, err := windowLine(w)
	if err == nil {
		err = o.sink.write(b)
	}
	if err != nil {
		o.lost += w.samples
		if !o.warnedOut {
			o.warnedOut = true
			o.logger.WithError(err).Warn("dropping windows; the count of dropped samples is in the stream's end message")
		}
	}
}

// Stop flushes every remaining window, writes the end message and closes
// the destination.
func (o *Output) Stop() error {
	if o.stop == nil {
		return nil
	}
	close(o.stop)
	<-o.done
	o.flush(time.Time{})
	o.mu.Lock()
	dropped := o.agg.dropped + o.lost
	o.mu.Unlock()
	if dropped > 0 {
		o.logger.Warnf("%d samples were dropped", dropped)
	}
	end, err := endLine(dropped)
	if err == nil {
		err = o.sink.write(end)
	}
	return errors.Join(err, o.sink.close())
}

// withThresholdTags adds to tags the tags the script's thresholds select
// on (http_req_duration{type:API} needs type), in name order, so that
// whoever reads the stream can judge every threshold.
func withThresholdTags(tags []string, thresholds map[string]metrics.Thresholds) []string {
	var more []string
	for key := range thresholds {
		_, kvs, err := metrics.ParseMetricName(key)
		if err != nil {
			continue // k6 refuses the key itself
		}
		for _, kv := range kvs {
			name, _, _ := strings.Cut(kv, ":")
			if name = strings.TrimSpace(name); !slices.Contains(tags, name) && !slices.Contains(more, name) {
				more = append(more, name)
			}
		}
	}
	slices.Sort(more)
	return append(slices.Clip(tags), more...)
}
