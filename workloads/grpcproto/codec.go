package grpcproto

import (
	"fmt"

	"google.golang.org/grpc/encoding"
)

// Raw is a request or an answer as wire bytes: the engine converts a
// request once from JSON and never decodes answers.
type Raw struct{ B []byte }

// Codec sends Raw messages as they are and keeps answers as bytes; it
// names itself proto, so the content type is application/grpc+proto.
type Codec struct{}

var _ encoding.Codec = Codec{}

// Marshal returns a Raw's bytes.
func (Codec) Marshal(v any) ([]byte, error) {
	r, ok := v.(*Raw)
	if !ok {
		return nil, fmt.Errorf("grpcproto codec: cannot send %T", v)
	}
	return r.B, nil
}

// Unmarshal keeps an answer's bytes in a Raw.
func (Codec) Unmarshal(data []byte, v any) error {
	r, ok := v.(*Raw)
	if !ok {
		return fmt.Errorf("grpcproto codec: cannot read into %T", v)
	}
	r.B = append(r.B[:0], data...)
	return nil
}

// Name is the codec's content subtype.
func (Codec) Name() string { return "proto" }
