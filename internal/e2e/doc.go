// Package e2e holds the tests that run claimdeck as a process: the
// dashboard in tmux, signals and kills, ntask called by its name, agents
// as processes, the relay and every door walked end to end. The test
// binary is the program: TestMain (binary_test.go) runs rootcmd.Main when
// it is started under the name claimdeck or ntask, so it is built once per
// run, by go test itself. The tests that need no process are beside their
// code, and those that need the whole command tree in internal/rootcmd.
package e2e
