package resilience

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
)

// jsToxiproxy is toxiproxy(url, {token}): a client of a Toxiproxy API.
func (mi *ModuleInstance) jsToxiproxy(call sobek.FunctionCall) sobek.Value {
	rt := mi.vu.Runtime()
	o := newOpts("resilience.toxiproxy()", call.Argument(1))
	token := o.str("token", "")
	if o.err != nil {
		common.Throw(rt, o.err)
	}
	tp, err := NewToxiproxy(call.Argument(0).String(), token)
	if err != nil {
		common.Throw(rt, err)
	}
	tp.OnChange = mi.pushFault
	j := &jsTP{mi: mi, rt: rt, tp: tp}
	obj := rt.NewObject()
	for k, f := range j.methods() {
		must(rt, obj.Set(k, f))
	}
	return obj
}

// jsTP is a Toxiproxy client as a script sees it: its methods throw
// JavaScript exceptions.
type jsTP struct {
	mi *ModuleInstance
	rt *sobek.Runtime
	tp *Toxiproxy
}

// ctx is the VU's context for every call; the init context has none to change faults in.
func (j *jsTP) ctx(what string) context.Context {
	if j.mi.vu.State() == nil {
		common.Throw(j.rt, fmt.Errorf("toxiproxy.%s: call it from setup(), default or a scenario's exec, not the init context", what))
	}
	if err := j.mi.permitted(j.tp.Host()); err != nil {
		common.Throw(j.rt, fmt.Errorf("toxiproxy.%s: %w", what, err))
	}
	return j.mi.vu.Context()
}

// str is the call's argument i, a required string.
func (j *jsTP) str(c sobek.FunctionCall, i int, what, name string) string {
	v := c.Argument(i)
	if sobek.IsUndefined(v) || sobek.IsNull(v) || v.String() == "" {
		common.Throw(j.rt, fmt.Errorf("toxiproxy.%s: %s is required", what, name))
	}
	return v.String()
}

// ret is a JSON answer as a JavaScript value.
func (j *jsTP) ret(raw json.RawMessage, err error) sobek.Value {
	if err != nil {
		common.Throw(j.rt, err)
	}
	return jsonParse(j.rt, raw)
}

// done is the answer of a call that returns nothing.
func (j *jsTP) done(err error) sobek.Value {
	if err != nil {
		common.Throw(j.rt, err)
	}
	return sobek.Undefined()
}

// toxic is the call's argument i as a Toxic.
func (j *jsTP) toxic(c sobek.FunctionCall, i int, what string) Toxic {
	var t Toxic
	b, err := json.Marshal(c.Argument(i).Export())
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		common.Throw(j.rt, fmt.Errorf("toxiproxy.%s: toxic must be {name, type, stream, toxicity, attributes}: %w", what, err))
	}
	return t
}

// createProxy is toxiproxy.createProxy({name, listen, upstream, enabled}).
func (j *jsTP) createProxy(c sobek.FunctionCall) sobek.Value {
	var p Proxy
	p.Enabled = true
	b, err := json.Marshal(c.Argument(0).Export())
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil || p.Name == "" || p.Upstream == "" {
		common.Throw(j.rt, fmt.Errorf("toxiproxy.createProxy: want {name, listen, upstream, enabled} with name and upstream set (%v)", err))
	}
	if p.Listen == "" {
		p.Listen = "127.0.0.1:0"
	}
	return j.ret(j.tp.CreateProxy(j.ctx("createProxy"), p))
}

// methods are the client's methods by their JavaScript names.
func (j *jsTP) methods() map[string]func(sobek.FunctionCall) sobek.Value {
	tp := j.tp
	return map[string]func(sobek.FunctionCall) sobek.Value{
		"createProxy": j.createProxy,
		"deleteProxy": func(c sobek.FunctionCall) sobek.Value {
			return j.done(tp.DeleteProxy(j.ctx("deleteProxy"), j.str(c, 0, "deleteProxy", "proxy name")))
		},
		"proxy": func(c sobek.FunctionCall) sobek.Value {
			return j.ret(tp.Proxy(j.ctx("proxy"), j.str(c, 0, "proxy", "proxy name")))
		},
		"proxies": func(sobek.FunctionCall) sobek.Value { return j.ret(tp.Proxies(j.ctx("proxies"))) },
		"enable": func(c sobek.FunctionCall) sobek.Value {
			return j.done(tp.SetEnabled(j.ctx("enable"), j.str(c, 0, "enable", "proxy name"), true))
		},
		"disable": func(c sobek.FunctionCall) sobek.Value {
			return j.done(tp.SetEnabled(j.ctx("disable"), j.str(c, 0, "disable", "proxy name"), false))
		},
		"addToxic": func(c sobek.FunctionCall) sobek.Value {
			proxy := j.str(c, 0, "addToxic", "proxy name")
			return j.ret(tp.AddToxic(j.ctx("addToxic"), proxy, j.toxic(c, 1, "addToxic")))
		},
		"updateToxic": func(c sobek.FunctionCall) sobek.Value {
			proxy, name := j.str(c, 0, "updateToxic", "proxy name"), j.str(c, 1, "updateToxic", "toxic name")
			return j.ret(tp.UpdateToxic(j.ctx("updateToxic"), proxy, name, j.toxic(c, 2, "updateToxic")))
		},
		"removeToxic": func(c sobek.FunctionCall) sobek.Value {
			proxy, name := j.str(c, 0, "removeToxic", "proxy name"), j.str(c, 1, "removeToxic", "toxic name")
			return j.done(tp.RemoveToxic(j.ctx("removeToxic"), proxy, name))
		},
		"reset": func(sobek.FunctionCall) sobek.Value { return j.done(tp.Reset(j.ctx("reset"))) },
	}
}

// permitted applies k6's blacklistIPs and blockHostnames options to the
// Toxiproxy API's host, as k6's own http module does to every request.
func (mi *ModuleInstance) permitted(hostport string) error {
	st := mi.vu.State()
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if st.Options.BlockedHostnames.Valid && st.Options.BlockedHostnames.Trie != nil {
		if pat, ok := st.Options.BlockedHostnames.Trie.Contains(host); ok {
			return fmt.Errorf("host %s is blocked by blockHostnames pattern %q", host, pat)
		}
	}
	if len(st.Options.BlacklistIPs) == 0 {
		return nil
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(mi.vu.Context(), host)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", host, err)
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		for _, n := range st.Options.BlacklistIPs {
			if n != nil && n.Contains(ip) {
				return fmt.Errorf("IP %s of %s is in blacklistIPs %s", ip, host, n.String())
			}
		}
	}
	if len(ips) == 0 {
		return errors.New("no address for " + host)
	}
	return nil
}
