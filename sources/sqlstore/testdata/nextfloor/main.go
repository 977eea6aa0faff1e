// Command nextfloor is the floor of an agent's `claimdeck next` on SQLite
// for BenchmarkNextCommand: a Go process that links only database/sql and
// the SQLite driver claimdeck uses, opens the file with the store's DSN and
// runs the store's SELECT with its arguments, printing the id it finds.
//
//	nextfloor DSN STATEMENT ARG...
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: nextfloor DSN STATEMENT ARG...")
		os.Exit(2)
	}
	args := make([]any, 0, len(os.Args)-3)
	for _, a := range os.Args[3:] { // numbers bound as numbers, as the store binds them
		if n, err := strconv.ParseInt(a, 10, 64); err == nil {
			args = append(args, n)
		} else {
			args = append(args, a)
		}
	}
	if err := next(os.Args[1], os.Args[2], args); err != nil {
		fmt.Fprintln(os.Stderr, "nextfloor:", err)
		os.Exit(1)
	}
}

func next(dsn, statement string, args []any) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(statement, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if !rows.Next() {
		return rows.Err()
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err
	}
	fmt.Printf("%s\n", vals[0])
	return rows.Err()
}
