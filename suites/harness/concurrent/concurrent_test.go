//go:build linux

package concurrent

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// Each session of a concurrent trial gets its own requests, the connections that carried them,
// and whatever no session's nonce claims; never another session's requests.
func TestSessionHits(t *testing.T) {
	hits := []model.Hit{
		{Role: "allowed", Proto: "tcp", From: "a:1"}, {Role: "allowed", Proto: "http", Path: "/http/n1", From: "a:1"},
		{Role: "allowed", Proto: "tcp", From: "a:2"}, {Role: "allowed", Proto: "http", Path: "/http/n2", From: "a:2"},
		{Role: "denied", Proto: "dns", Path: "q-n2.denied.sandcheck.test", From: "a:3"},
		{Role: "denied", Proto: "tcp", From: "a:4"}, // accepted, then silent: nobody's
	}
	var got []string
	for _, h := range sessionHits(hits, "n1", []string{"n1", "n2"}) {
		got = append(got, h.Proto+h.Path+"@"+h.From)
	}
	if want := "tcp@a:1 http/http/n1@a:1 tcp@a:4"; strings.Join(got, " ") != want {
		t.Fatalf("session n1 hits = %q, want %q", strings.Join(got, " "), want)
	}
}
