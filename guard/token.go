package guard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// AdminTokenEnv is the environment variable that gives a control plane its
// token (Toxiproxy's API, a target's admin endpoints) when no flag does.
const AdminTokenEnv = "CHAOSRUN_TOKEN"

// NewToken returns a fresh random token: 32 hex digits.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b) //nolint:errcheck // crypto/rand does not fail
	return hex.EncodeToString(b)
}

// TokenMatches reports, in constant time, whether got is the token want.
// An empty want matches nothing.
func TokenMatches(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// RequireToken serves next only to requests that carry token in one of the
// forms control planes accept: "Authorization: Bearer TOKEN", the password
// of HTTP basic auth (a URL like http://:TOKEN@host), or ?token=TOKEN.
// Other requests go to refuse; nil refuse answers 401 in plain text. An
// empty token lets nothing through.
func RequireToken(token string, refuse http.HandlerFunc, next http.Handler) http.Handler {
	if refuse == nil {
		refuse = func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "chaosrun: this control plane needs the run's token", http.StatusUnauthorized)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !carries(r, token) {
			refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// carries reports whether any form of r's credentials is token. Every form
// is compared, so the time taken does not say which one came close.
func carries(r *http.Request, token string) bool {
	ok := false
	if b, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		ok = TokenMatches(b, token) || ok
	}
	if _, pw, found := r.BasicAuth(); found {
		ok = TokenMatches(pw, token) || ok
	}
	if q := r.URL.Query(); q.Has("token") {
		ok = TokenMatches(q.Get("token"), token) || ok
	}
	return ok
}
