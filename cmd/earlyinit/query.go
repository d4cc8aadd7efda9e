package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/instance"
)

func init() {
	verbs["query"] = verb{"print instance data keys, as cloud-init query", query}
}

// query prints instance-data keys like `cloud-init query`: root reads the
// sensitive file, others the redacted one. --root reads a mounted image.
func query(args []string) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	root := fs.String("root", "/", "the root whose state to read")
	all := fs.Bool("all", false, "print all instance data")
	listKeys := fs.Bool("list-keys", false, "list the keys under KEY (or the top)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	key := strings.Join(fs.Args(), " ")
	if fs.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "query: one KEY at most")
		return 2
	}
	if key == "" && !*all && !*listKeys {
		fmt.Fprintln(os.Stderr, "query: give a KEY, --all or --list-keys")
		return 2
	}
	uid := os.Getuid()
	data, err := instance.ReadQueryData(instance.DefaultQueryPaths(*root, uid), uid == 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "query: %v\n", err)
		return 1
	}
	if *listKeys {
		keys, err := instance.ListKeys(data, key)
		if err != nil {
			fmt.Fprintf(os.Stderr, "query: %v\n", err)
			return 1
		}
		fmt.Println(strings.Join(keys, "\n"))
		return 0
	}
	out, err := instance.Query(data, key)
	if err != nil {
		fmt.Fprintf(os.Stderr, "query: %v\n", err)
		return 1
	}
	fmt.Println(out)
	return 0
}
