// Command sizes lists the non-test Go files over -file lines and the
// functions over -func lines (from "func" to the closing brace, doc comment
// excluded) under each directory given, testdata and hidden directories
// skipped, and prints the two counts.
//
//	go run ./bench/sizes .
//	go run ./bench/sizes binsym
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	maxFile := flag.Int("file", 600, "list files over this many lines")
	maxFunc := flag.Int("func", 80, "list functions over this many lines")
	flag.Parse()
	fset := token.NewFileSet()
	files, funcs := 0, 0
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if n := fset.File(f.Pos()).LineCount(); n > *maxFile {
				files++
				fmt.Printf("file %s: %d lines\n", path, n)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				start := fset.Position(fd.Pos())
				if n := fset.Position(fd.End()).Line - start.Line + 1; n > *maxFunc {
					funcs++
					fmt.Printf("func %s:%d %s: %d lines\n", path, start.Line, fd.Name.Name, n)
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "sizes:", err)
			os.Exit(2)
		}
	}
	fmt.Printf("%d files over %d lines, %d functions over %d lines\n", files, *maxFile, funcs, *maxFunc)
}
