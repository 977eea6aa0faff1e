// Command emptygo is the floor of any Go process for BenchmarkNextCommand:
// the runtime starts, prints one line and exits.
package main

import "os"

func main() { os.Stdout.WriteString("bench-\n") }
