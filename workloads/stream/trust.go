package stream

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/url"
)

// TrustOptions are the output options a k6 on this machine needs to reach
// a TLS receiver that serves the PEM certificate certPEM, kept at caPath:
// the certificate itself as the CA (ca) and a name it carries (server_name).
func TrustOptions(certPEM []byte, caPath string) (url.Values, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	var name string
	switch {
	case len(cert.DNSNames) > 0:
		name = cert.DNSNames[0]
	case len(cert.IPAddresses) > 0:
		name = cert.IPAddresses[0].String()
	default:
		return nil, errors.New("names no host (no DNS or IP subject alternative name)")
	}
	return url.Values{"ca": {caPath}, "server_name": {name}}, nil
}
