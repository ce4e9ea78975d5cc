package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/gameday"
)

// cmdFault adds, clears and lists faults of a running game day.
func cmdFault(ctx context.Context, st *State, args []string) int {
	usage := func() {
		fmt.Fprintln(st.Stderr, `usage: chaosrun fault add   --gameday URL [--token T] --kind KIND (--edge FROM->TO | --host SVC) [--attr NAME=VALUE ...] [--name N] [--by WHO]
       chaosrun fault clear --gameday URL [--token T] [--by WHO] NAME
       chaosrun fault list  --gameday URL [--token T]
       chaosrun fault apply [--toxiproxy URL] [--token T] [--delay D] SCENARIO.yaml   (a scenario's schedule against a Toxiproxy)`)
	}
	if len(args) > 0 && args[0] == "apply" {
		return cmdFaultApply(ctx, st, args[1:])
	}
	if len(args) == 0 || (args[0] != "add" && args[0] != "clear" && args[0] != "list") {
		usage()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("fault "+sub, flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	fs.Usage = func() { usage(); fs.PrintDefaults() }
	base := fs.String("gameday", st.Getenv("CHAOSRUN_GAMEDAY"), "URL of the running game day (as it printed; env CHAOSRUN_GAMEDAY)")
	token := fs.String("token", st.Getenv("CHAOSRUN_GAMEDAY_TOKEN"), "the game day's token, if it has one (env CHAOSRUN_GAMEDAY_TOKEN)")
	by := fs.String("by", defaultUser(), "who acts, for the timeline")
	kind := fs.String("kind", "", "fault kind (add)")
	edge := fs.String("edge", "", "edge FROM->TO or FROM->TO.N (add, edge kinds)")
	host := fs.String("host", "", "instance SVC or SVC.N (add, host kinds)")
	name := fs.String("name", "", "the fault's name (add; default KIND@TARGET)")
	direction := fs.String("direction", "", "downstream (default) or upstream (add)")
	var attrs stringList
	fs.Var(&attrs, "attr", "attribute NAME=VALUE, e.g. latency=2000 (add; repeatable)")
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if *base == "" {
		fmt.Fprintf(st.Stderr, "chaosrun fault %s: --gameday URL is required (the URL `chaosrun gameday` printed)\n", sub)
		return exitUsage
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(st.Stderr, "chaosrun fault %s: --gameday %q is not an http(s) URL\n", sub, *base)
		return exitUsage
	}
	if t := u.Query().Get("token"); t != "" && *token == "" {
		*token = t
	}
	u.RawQuery, u.Path = "", strings.TrimSuffix(u.Path, "/")
	c := &faultClient{base: u.String(), token: *token, st: st}

	switch sub {
	case "list":
		if fs.NArg() != 0 {
			usage()
			return exitUsage
		}
		var list []gameday.ActiveFault
		if code := c.do(ctx, http.MethodGet, "/api/faults", nil, &list); code != exitOK {
			return code
		}
		if len(list) == 0 {
			fmt.Fprintln(st.Stdout, "no faults in force")
		}
		for _, f := range list {
			fmt.Fprintf(st.Stdout, "%s\t%s\tby %s since %s\n", f.Name, f.Describe, f.By, f.Since.Format(time.TimeOnly))
		}
		return exitOK
	case "clear":
		if fs.NArg() != 1 {
			usage()
			return exitUsage
		}
		if code := c.do(ctx, http.MethodDelete, "/api/faults/"+url.PathEscape(fs.Arg(0))+"?by="+url.QueryEscape(*by), nil, nil); code != exitOK {
			return code
		}
		fmt.Fprintf(st.Stdout, "cleared %s\n", fs.Arg(0))
		return exitOK
	}
	if fs.NArg() != 0 || *kind == "" || (*edge == "") == (*host == "") {
		fmt.Fprintln(st.Stderr, "chaosrun fault add: needs --kind and exactly one of --edge or --host")
		return exitUsage
	}
	req := gameday.FaultRequest{Name: *name, Kind: *kind, Edge: *edge, Host: *host, Direction: *direction, By: *by, Attributes: map[string]float64{}}
	for _, a := range attrs {
		k, v, ok := strings.Cut(a, "=")
		f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || perr != nil || k == "" {
			fmt.Fprintf(st.Stderr, "chaosrun fault add: --attr %q: want NAME=NUMBER, e.g. latency=2000\n", a)
			return exitUsage
		}
		req.Attributes[strings.TrimSpace(k)] = f
	}
	var af gameday.ActiveFault
	if code := c.do(ctx, http.MethodPost, "/api/faults", req, &af); code != exitOK {
		return code
	}
	fmt.Fprintf(st.Stdout, "injected %s: %s\n", af.Name, af.Describe)
	return exitOK
}

type faultClient struct {
	base, token string
	st          *State
}

// do calls the game day's API; 4xx answers are usage errors (exit 2),
// anything else that fails a run error (exit 3).
func (c *faultClient) do(ctx context.Context, method, path string, in, out any) int {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		fmt.Fprintf(c.st.Stderr, "chaosrun fault: %v\n", err)
		return exitUsage
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(c.st.Stderr, "chaosrun fault: the game day at %s: %v\n", c.base, err)
		return exitRunError
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		fmt.Fprintf(c.st.Stderr, "chaosrun fault: %s %s: %s: %s\n", method, path, resp.Status, msg)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return exitUsage
		}
		return exitRunError
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			fmt.Fprintf(c.st.Stderr, "chaosrun fault: answer of %s: %v\n", path, err)
			return exitRunError
		}
	}
	return exitOK
}

func defaultUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username + " (terminal)"
	}
	return "terminal"
}
