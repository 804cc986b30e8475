//go:build !unix

package npmcache

import (
	"context"
	"sync"
)

// Windows drives its trials inside WSL, which installs versions with its own (unix) build; here a
// process-wide mutex is enough.
var installMu sync.Mutex

func lock(context.Context, string) (func(), error) {
	installMu.Lock()
	return installMu.Unlock, nil
}
