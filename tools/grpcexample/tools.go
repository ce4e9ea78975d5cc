//go:build tools

// Package tools pins the grpc-go examples version whose reflection server
// (bin/grpc-example-server) the native engine's gRPC tests load: a real
// gRPC server that chaosrun did not write, with Greeter.SayHello,
// Echo.UnaryEcho and server reflection.
package tools

import _ "google.golang.org/grpc/examples/features/reflection/server"
