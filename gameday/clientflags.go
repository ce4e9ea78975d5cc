package gameday

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// ClientFlags are the flags of the commands that call a running game day
// (fault add, clear, list): its URL and token.
type ClientFlags struct {
	URL, Token string
}

// Client is the game day's client the flags name; errors are usage
// errors.
func (f *ClientFlags) Client() (*Client, error) {
	if f.URL == "" {
		return nil, errors.New("--gameday URL is required (the URL `chaosrun gameday` printed)")
	}
	c, err := NewClient(f.URL, f.Token)
	if err != nil {
		return nil, fmt.Errorf("--gameday %w", err)
	}
	return c, nil
}

// Call calls the game day the flags name: bad flags and a request the
// game day refuses (4xx) end the command with exit 2, anything else that
// fails with 3 (130 once ctx is interrupted).
func (f *ClientFlags) Call(ctx context.Context, call func(context.Context, *Client) error) error {
	c, err := f.Client()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	err = call(ctx, c)
	if _, ok := exitcode.As(err); err == nil || ok {
		return err
	}
	if Refused(err) {
		return exitcode.Fail(exitcode.Usage, err)
	}
	return exitcode.Fail(exitcode.Harness(ctx), err)
}

// ListFaults writes the faults in force at c's game day to w (fault list).
func ListFaults(ctx context.Context, c *Client, w io.Writer) error {
	list, err := c.List(ctx)
	if err != nil {
		return err
	}
	WriteFaults(w, list)
	return nil
}

// ClearFault reverts fault name at c's game day, by who, and says so on w
// (fault clear).
func ClearFault(ctx context.Context, c *Client, name, by string, w io.Writer) error {
	if err := c.Clear(ctx, name, by); err != nil {
		return err
	}
	fmt.Fprintf(w, "cleared %s\n", name)
	return nil
}

// AddFlags are fault add's flags: the fault to inject.
type AddFlags struct {
	FaultRequest
	Attrs []string
}

// Request checks the flags and gives the fault's request; errors are
// usage errors.
func (f *AddFlags) Request() (FaultRequest, error) {
	req := f.FaultRequest
	if req.Kind == "" || (req.Edge == "") == (req.Host == "") {
		return req, errors.New("needs --kind and exactly one of --edge or --host")
	}
	var err error
	req.Attributes, err = ParseAttrs(f.Attrs)
	return req, err
}

// Inject injects the fault the flags describe at c's game day and says so
// on w (fault add); bad flags exit 2.
func (f *AddFlags) Inject(ctx context.Context, c *Client, w io.Writer) error {
	req, err := f.Request()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	af, err := c.Add(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "injected %s: %s\n", af.Name, af.Describe)
	return nil
}

// WriteFaults writes the faults in force, one a line, to w.
func WriteFaults(w io.Writer, list []ActiveFault) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no faults in force")
	}
	for _, f := range list {
		fmt.Fprintf(w, "%s\t%s\tby %s since %s\n", f.Name, f.Describe, f.By, f.Since.Format(time.TimeOnly))
	}
}
