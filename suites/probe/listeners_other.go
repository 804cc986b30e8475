//go:build !linux

package probe

import "errors"

func listenersDiag() ([]Listener, error) { return nil, errors.New("sock_diag is Linux's") }
