package main

import "github.com/sandcheck/sandcheck/suites/probe"

func main() { probe.MaybeRun() }
