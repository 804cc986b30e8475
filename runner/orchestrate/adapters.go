package orchestrate

import _ "github.com/sandcheck/sandcheck/targets/adapters" // every adapter, by name
