// go_oracle: a compiler-grade oracle of call edges for Go, built on go/types.
//
// It type-checks every package of the module under REPO_DIR (as go.mod names it): each
// directory's package, its in-package tests (checked together with the package's files) and
// its external _test package. Module-local imports are type-checked from source; the
// standard library comes from export data or, failing that, from source. Type errors are
// ignored: what cannot be resolved is simply not emitted. vendor/, testdata/, hidden and
// _-prefixed dirs, nested modules and files excluded by build constraints are skipped.
//
// Usage: go run benches/oracles/go_oracle.go REPO_DIR > out.json   (standard library only; Go >= 1.19)
//
// Output (one JSON object; line and columns 0-based, columns in UTF-8 bytes, end_col exclusive):
//
//	{"encoding": "utf8", "documents": [{"path": "rel/path.go", "occurrences": [
//	  {"symbol": "rel/path.go:L:C:Name", "line": L, "col": C, "end_col": E, "def": bool, "callable": bool}]}]}
//
// A symbol is the position of the declaration's name (0-based), so it is the same in every check.
// Definitions: the names of functions, methods, interface methods and type declarations.
// References: every use of a repository function, method or named type; callable is true at
// call sites (`f(x)`, `pkg.F(x)`, `x.y.M()`, `F[T](x)`: the position of the final name).
// Conversions `T(x)`, func-typed variables and builtins are not calls.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type Occ struct {
	Symbol   string `json:"symbol"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	EndCol   int    `json:"end_col"`
	Def      bool   `json:"def"`
	Callable bool   `json:"callable"`
}

type Doc struct {
	Path        string `json:"path"`
	Occurrences []Occ  `json:"occurrences"`
}

type dirFiles struct{ pkg, test, xtest []*ast.File }

var (
	fset    = token.NewFileSet()
	root    string
	modPath string
	dirs    = map[string]*dirFiles{} // absolute dir -> parsed files
	loaded  = map[string]*types.Package{}
	infos   = map[string]*types.Info{}
	std     = importer.ForCompiler(fset, "gc", nil)
	stdSrc  = importer.ForCompiler(fset, "source", nil)
	docs    = map[string]*Doc{}
	unres   int // call sites whose callee has no object (type errors)
)

type modImporter struct{}

// Import type-checks module-local packages from source (once) and defers the rest to the stdlib.
func (modImporter) Import(path string) (*types.Package, error) {
	if path == modPath || strings.HasPrefix(path, modPath+"/") {
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(path, modPath)))
		if p, ok := loaded[dir]; ok {
			if p == nil {
				return nil, fmt.Errorf("import cycle or no package at %s", path)
			}
			return p, nil
		}
		loaded[dir] = nil
		df := dirs[dir]
		if df == nil || len(df.pkg) == 0 {
			return nil, fmt.Errorf("no package at %s", path)
		}
		p, info := check(path, df.pkg)
		loaded[dir], infos[dir] = p, info
		return p, nil
	}
	if p, err := std.Import(path); err == nil {
		return p, nil
	}
	return stdSrc.Import(path)
}

func check(path string, files []*ast.File) (*types.Package, *types.Info) {
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: modImporter{}, Error: func(error) {}}
	p, _ := conf.Check(path, fset, files, info)
	return p, info
}

func rel(pos token.Pos) (string, token.Position, bool) {
	p := fset.Position(pos)
	r, err := filepath.Rel(root, p.Filename)
	if !p.IsValid() || err != nil || strings.HasPrefix(r, "..") {
		return "", p, false
	}
	return filepath.ToSlash(r), p, true
}

// symbol names a declaration by its name's position; ok when it is in the module's sources.
func symbol(obj types.Object) (string, bool) {
	r, p, ok := rel(obj.Pos())
	inMod := obj.Pkg() != nil && (obj.Pkg().Path() == modPath || strings.HasPrefix(obj.Pkg().Path(), modPath+"/"))
	return fmt.Sprintf("%s:%d:%d:%s", r, p.Line-1, p.Column-1, obj.Name()), ok && inMod
}

func add(id *ast.Ident, sym string, def, callable bool) {
	r, p, _ := rel(id.Pos())
	d := docs[r]
	if d == nil {
		d = &Doc{Path: r, Occurrences: []Occ{}}
		docs[r] = d
	}
	d.Occurrences = append(d.Occurrences, Occ{sym, p.Line - 1, p.Column - 1, p.Column - 1 + len(id.Name), def, callable})
}

// emit records the definitions and references of the given files from one check's Info.
func emit(files []*ast.File, info *types.Info) {
	def := func(id *ast.Ident, callable bool) {
		if obj := info.Defs[id]; obj != nil {
			s, _ := symbol(obj)
			add(id, s, true, callable)
		}
	}
	for _, f := range files {
		calls := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				def(n.Name, true)
			case *ast.TypeSpec:
				def(n.Name, false)
			case *ast.InterfaceType:
				for _, m := range n.Methods.List {
					for _, id := range m.Names {
						def(id, true)
					}
				}
			case *ast.CallExpr:
				fun := n.Fun
				for p, ok := fun.(*ast.ParenExpr); ok; p, ok = fun.(*ast.ParenExpr) {
					fun = p.X
				}
				switch x := fun.(type) { // generic instantiation F[T] / F[T, U]
				case *ast.IndexExpr:
					fun = x.X
				case *ast.IndexListExpr:
					fun = x.X
				}
				var id *ast.Ident
				switch x := fun.(type) {
				case *ast.Ident:
					id = x
				case *ast.SelectorExpr:
					id = x.Sel
				}
				if id != nil {
					calls[id] = true
					if info.Uses[id] == nil {
						unres++
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			switch obj := info.Uses[id].(type) {
			case *types.Func:
				if o := obj.Origin(); o != nil {
					obj = o
				}
				if s, ok := symbol(obj); ok {
					add(id, s, false, calls[id])
				}
			case *types.TypeName:
				if _, tp := obj.Type().(*types.TypeParam); !tp {
					if s, ok := symbol(obj); ok {
						add(id, s, false, false)
					}
				}
			}
			return true
		})
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run go_oracle.go REPO_DIR > out.json")
		os.Exit(2)
	}
	root, _ = filepath.Abs(os.Args[1])
	root, _ = filepath.EvalSymlinks(root)
	gm, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "no go.mod:", err)
		os.Exit(1)
	}
	for _, l := range strings.Split(string(gm), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "module" {
			modPath = strings.Trim(f[1], `"`)
		}
	}
	var order []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n := d.Name()
		if d.IsDir() {
			if p != root && (n == "vendor" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		dir := filepath.Dir(p)
		if ok, _ := build.Default.MatchFile(dir, n); !ok || !strings.HasSuffix(n, ".go") {
			return nil // build constraints (GOOS, GOARCH, tags, Go version) as `go build` sees them
		}
		f, _ := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if f == nil {
			return nil
		}
		df := dirs[dir]
		if df == nil {
			df = &dirFiles{}
			dirs[dir] = df
			order = append(order, dir)
		}
		switch {
		case strings.HasSuffix(f.Name.Name, "_test") && strings.HasSuffix(n, "_test.go"):
			df.xtest = append(df.xtest, f)
		case strings.HasSuffix(n, "_test.go"):
			df.test = append(df.test, f)
		default:
			df.pkg = append(df.pkg, f)
		}
		return nil
	})
	imp := modImporter{}
	for _, dir := range order {
		df := dirs[dir]
		r, _ := filepath.Rel(root, dir)
		path := strings.TrimSuffix(modPath+"/"+filepath.ToSlash(r), "/.")
		if imp.Import(path); infos[dir] != nil {
			emit(df.pkg, infos[dir])
		}
		if len(df.test) > 0 {
			_, info := check(path, append(append([]*ast.File{}, df.pkg...), df.test...))
			emit(df.test, info)
		}
		if len(df.xtest) > 0 {
			_, info := check(path+"_test", df.xtest)
			emit(df.xtest, info)
		}
	}
	out := struct {
		Encoding  string `json:"encoding"`
		Documents []*Doc `json:"documents"`
	}{"utf8", []*Doc{}}
	for _, d := range docs {
		out.Documents = append(out.Documents, d)
	}
	sort.Slice(out.Documents, func(i, j int) bool { return out.Documents[i].Path < out.Documents[j].Path })
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	json.NewEncoder(w).Encode(out)
	fmt.Fprintf(os.Stderr, "go_oracle: %d documents, %d call sites without a resolved callee\n", len(docs), unres)
}
