//go:build !linux

package vmagent

// MaybeRun does nothing: the agent runs inside Linux guests only.
func MaybeRun() {}
