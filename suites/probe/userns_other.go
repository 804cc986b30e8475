//go:build !linux

package probe

import "errors"

const usernsArg = "__sandcheck_userns"

func usernsOp(FSCheck, *FSResult) error { return errors.New("user namespaces are Linux's") }

func usernsChild(string) int { return 2 }
