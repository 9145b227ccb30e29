package agentlooptest

import "crypto/tls"

// ServerOptions configures a server started with [StartWith]. The zero
// value is the server [Start] gives: HTTP/1.1 only.
type ServerOptions struct {
	// H2C makes the server also speak HTTP/2 without TLS ("h2c"), to
	// clients that open the connection with the HTTP/2 preface (prior
	// knowledge, e.g. an http.Transport whose Protocols hold only
	// UnencryptedHTTP2); other clients keep getting HTTP/1.1. Over HTTP/2
	// many requests share one connection, as they do against the real API
	// over TLS, so a load test of thousands of concurrent requests needs a
	// few connections instead of one each. The URL stays http://. A reply
	// that breaks off (CutAfter, StallAfter, an aborted Delay) resets its
	// stream instead of closing the connection. Flow control is per
	// stream, as front ends such as nginx set it: the connection's window
	// is the largest HTTP/2 allows, so requests on one connection never
	// wait for each other's bodies.
	H2C bool
	// TLS, when set, makes the server speak HTTPS with this configuration
	// (its Certificates), offering HTTP/2 and HTTP/1.1 by ALPN as the real
	// API does; the URL is then https://. Clients must trust the
	// certificate. Flow control is as with H2C.
	TLS *tls.Config
	// MessageCacheBytes bounds the cache of decoded messages shared by
	// all requests (each distinct message is decoded once while it stays
	// cached), counted in bytes of the messages' JSON: 0 means
	// [DefaultMessageCacheBytes], a negative value turns the cache off. The
	// decoded values take memory of their own beside that, about as much.
	MessageCacheBytes int
}
