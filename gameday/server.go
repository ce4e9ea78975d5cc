package gameday

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/scenario"
)

//go:embed page
var pageFS embed.FS

// Meta is what the page needs once: the scenario's edges, hosts, fault
// kinds with their attributes, and the scenario's own faults as presets.
type Meta struct {
	Scenario string     `json:"scenario"`
	Edges    []string   `json:"edges"`
	Hosts    []string   `json:"hosts"`
	Kinds    []KindInfo `json:"kinds"`
	Presets  []Preset   `json:"presets"`
	Guards   []string   `json:"guards"`
	Grace    string     `json:"grace"`
	Slide    string     `json:"slide"`
}

// KindInfo is one fault kind and its attributes.
type KindInfo struct {
	Kind  string     `json:"kind"`
	Host  bool       `json:"host"`
	Attrs []AttrInfo `json:"attrs"`
}

// AttrInfo is one attribute of a fault kind.
type AttrInfo struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Required bool    `json:"required"`
	Doc      string  `json:"doc,omitempty"`
}

// Preset is a fault of the scenario, offered as one click.
type Preset struct {
	Name       string             `json:"name"`
	Kind       string             `json:"kind"`
	Edge       string             `json:"edge,omitempty"`
	Host       string             `json:"host,omitempty"`
	Attributes map[string]float64 `json:"attributes,omitempty"`
}

func kindInfos() []KindInfo {
	var out []KindInfo
	for _, k := range faults.Kinds() {
		ki := KindInfo{Kind: k, Host: faults.IsHostKind(k), Attrs: []AttrInfo{}}
		attrs, _ := faults.Attrs(k)
		for _, a := range attrs {
			ki.Attrs = append(ki.Attrs, AttrInfo{Name: a.Name, Unit: a.Unit, Min: a.Min, Max: a.Max, Required: a.Required, Doc: a.Doc})
		}
		out = append(out, ki)
	}
	return out
}

// handler is the game day's web page and JSON API.
func (g *gameDay) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", g.servePage("page/index.html"))
	mux.HandleFunc("GET /page/{file}", func(w http.ResponseWriter, r *http.Request) {
		g.servePage("page/"+path.Base(r.PathValue("file")))(w, r)
	})
	mux.HandleFunc("GET /api/meta", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, g.meta) })
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(g.snapshotJSON())
	})
	mux.HandleFunc("GET /api/events", g.hub.serveEvents)
	mux.HandleFunc("GET /api/faults", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, g.ctl.List()) })
	mux.HandleFunc("POST /api/faults", g.addFault)
	mux.HandleFunc("DELETE /api/faults/{name}", g.clearFault)
	mux.HandleFunc("POST /api/stop", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			By string `json:"by"`
		}
		if !readJSON(w, r, &body) {
			return
		}
		g.requestStop(who(body.By))
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "stopping"})
	})
	return g.guard(mux)
}

// guard checks the token (when one is set) and, without one, that the Host
// header is a loopback name (no DNS rebinding).
func (g *gameDay) guard(next http.Handler) http.Handler {
	if g.token != "" {
		return guard.RequireToken(g.token, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusUnauthorized, errBody("missing or wrong token (send Authorization: Bearer TOKEN or ?token=TOKEN)"))
		}, next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !guard.IsLoopbackHost(r.Host) {
			writeJSON(w, http.StatusForbidden, errBody("host "+r.Host+" is not loopback; serve with --token to allow other addresses"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g *gameDay) servePage(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := pageFS.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
		w.Write(b)
	}
}

func (g *gameDay) addFault(w http.ResponseWriter, r *http.Request) {
	var req FaultRequest
	if !readJSON(w, r, &req) {
		return
	}
	if g.stopping() {
		writeJSON(w, http.StatusConflict, errBody("the game day is ending; no new faults"))
		return
	}
	// The game day's context: a client that leaves mid-apply must not
	// leave a fault half applied and untracked.
	af, err := g.ctl.Add(g.ctx, req)
	switch {
	case errors.Is(err, ErrBadRequest):
		writeJSON(w, http.StatusBadRequest, errBody(err.Error()))
	case errors.Is(err, ErrEnding):
		writeJSON(w, http.StatusConflict, errBody(err.Error()))
	case err != nil:
		writeJSON(w, http.StatusBadGateway, errBody(err.Error()))
	default:
		g.kick()
		writeJSON(w, http.StatusCreated, af)
	}
}

func (g *gameDay) clearFault(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if len(name) > maxNameLen {
		writeJSON(w, http.StatusBadRequest, errBody(fmt.Sprintf("fault name of %d bytes: no fault has one that long (allowed: %s)", len(name), scenario.FaultNameAllowed)))
		return
	}
	err := g.ctl.Clear(g.ctx, name, r.URL.Query().Get("by"), "")
	switch {
	case errors.Is(err, ErrNoSuchFault):
		writeJSON(w, http.StatusNotFound, errBody(err.Error()))
	case errors.Is(err, ErrEnding):
		writeJSON(w, http.StatusConflict, errBody(err.Error()))
	case err != nil:
		writeJSON(w, http.StatusBadGateway, errBody(err.Error()))
	default:
		g.kick()
		w.WriteHeader(http.StatusNoContent)
	}
}

// maxNameLen bounds the names of faults in force: a name given (see
// scenario.CheckFaultName) or the default KIND@FROM->TO.N.
const maxNameLen = 3 * scenario.MaxFaultName

// maxBody bounds a request's JSON body.
const maxBody = 64 << 10

// readJSON decodes a JSON body of at most maxBody bytes, one JSON value. It
// demands the JSON content type, so that other sites' plain forms cannot
// post.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errBody("send the body as Content-Type: application/json"))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, errBody(fmt.Sprintf("body: larger than %d KiB (allowed: a fault request of a few hundred bytes)", maxBody>>10)))
		return false
	case err != nil && !errors.Is(err, io.EOF):
		writeJSON(w, http.StatusBadRequest, errBody("body: "+err.Error()))
		return false
	}
	return true
}

func errBody(msg string) map[string]string { return map[string]string{"error": msg} }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client left
}
