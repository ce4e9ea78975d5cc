package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// RejectHeader names the response header that says why a request was rejected.
const RejectHeader = "X-Reject-Reason"

// Reject reasons carried in RejectHeader and in the JSON error body.
const (
	ReasonBulkhead          = "bulkhead"
	ReasonQueueTimeout      = "queue-timeout"
	ReasonDependencyTimeout = "dependency-timeout"
	ReasonDependencyError   = "dependency-error"
)

// maxBody bounds request bodies read by DecodeJSON.
const maxBody = 64 << 10

// ErrorBody is the JSON body of every failed response.
type ErrorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes a JSON ErrorBody; reasons that are rejections (see
// IsRejectReason) also go in RejectHeader.
func WriteError(w http.ResponseWriter, status int, reason, msg string) {
	if isRejectReason(reason) {
		w.Header().Set(RejectHeader, reason)
	}
	WriteJSON(w, status, ErrorBody{Error: msg, Reason: reason})
}

// DecodeJSON reads r's body into v, refusing unknown fields, trailing data and
// bodies over 64 KiB. The error says what was wrong, for a 400 answer.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("request body is empty; want a JSON object")
		}
		return fmt.Errorf("request body: %w", err)
	}
	if dec.More() {
		return errors.New("request body: want exactly one JSON object")
	}
	return nil
}
