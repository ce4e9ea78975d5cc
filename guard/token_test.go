package guard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTokenMatches(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		ok        bool
	}{
		{"s3cret", "s3cret", true},
		{"s3cre", "s3cret", false},
		{"s3cret!", "s3cret", false},
		{"S3CRET", "s3cret", false},
		{"", "s3cret", false},
		{"", "", false}, // no token set: nothing matches
		{"x", "", false},
	} {
		if got := TokenMatches(tc.got, tc.want); got != tc.ok {
			t.Errorf("TokenMatches(%q, %q) = %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}

func TestRequireToken(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	refuse := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }
	cases := []struct {
		name, token, path, auth string
		basic                   *[2]string
		refuse                  http.HandlerFunc
		want                    int
	}{
		{"bearer", "s3cret", "/", "Bearer s3cret", nil, refuse, http.StatusTeapot},
		{"wrong bearer", "s3cret", "/", "Bearer nope", nil, refuse, http.StatusForbidden},
		{"bearer without the space", "s3cret", "/", "Bearers3cret", nil, refuse, http.StatusForbidden},
		{"basic-auth password", "s3cret", "/", "", &[2]string{"", "s3cret"}, refuse, http.StatusTeapot},
		{"basic-auth password with a user", "s3cret", "/", "", &[2]string{"me", "s3cret"}, refuse, http.StatusTeapot},
		{"token as basic-auth user", "s3cret", "/", "", &[2]string{"s3cret", ""}, refuse, http.StatusForbidden},
		{"query", "s3cret", "/api?token=s3cret", "", nil, refuse, http.StatusTeapot},
		{"wrong query", "s3cret", "/api?token=nope", "", nil, refuse, http.StatusForbidden},
		{"wrong bearer, right query", "s3cret", "/api?token=s3cret", "Bearer nope", nil, refuse, http.StatusTeapot},
		{"nothing", "s3cret", "/", "", nil, refuse, http.StatusForbidden},
		{"default refusal", "s3cret", "/", "", nil, nil, http.StatusUnauthorized},
		{"empty token lets nothing through", "", "/?token=", "Bearer ", nil, refuse, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.basic != nil {
				req.SetBasicAuth(tc.basic[0], tc.basic[1])
			}
			rr := httptest.NewRecorder()
			RequireToken(tc.token, tc.refuse, next).ServeHTTP(rr, req)
			if rr.Code != tc.want {
				t.Errorf("status %d, want %d", rr.Code, tc.want)
			}
		})
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if len(a) != 32 || a == b {
		t.Errorf("NewToken gave %q and %q: want two different 32-digit tokens", a, b)
	}
}
