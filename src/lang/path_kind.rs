//! `PathKind`: what a file is for, told from its repository path and, where the text is at
//! hand, its first lines: code under work, a test a runner collects, test support (helpers,
//! fixtures, data), an example, a benchmark or docs; and whether it is generated or vendored.
//!
//! The one home of these conventions: the lexical priors and search's set-aside, the context
//! ranker and the overview, change impact's test selection and the graph's test-suite modules
//! all ask here, and none keeps a list of its own.
//!
//! The conventions: folders every ecosystem shares (`test/`, `tests/`, `spec/`, `__tests__/`,
//! `testdata/`, `fixtures/`, `examples/`, `benches/`, `docs/`, `vendor/`..., whole folder
//! names in any case); the file names of pytest (`test_*.py`, `*_test.py`), go test
//! (`*_test.go`), jest, vitest and mocha (`*.test.ts`, `*.spec.js`, `__tests__/`, a suite in
//! `test/`), JUnit (`*Test.java`, `*Tests.java`, `*IT.java`), cargo (`tests/*.rs`,
//! `*_test.rs`, `tests.rs`) and googletest (`*_test.cc`, `*_unittest.cc`, `tests/test_*.c`);
//! and the `test_files` globs the other languages declare in their `language.toml` (RSpec,
//! PHPUnit, xUnit, ExUnit, hspec, busted, XCTest, ScalaTest, Kotest, bats, zig).
//!
//! Invariants: a pure function of its input that never fails; a word inside a name is not a
//! folder (`latest/`, `contest.py`, `attestation.go` are code); a test folder outranks an
//! example, benchmark or docs folder around it (`examples/app/tests/x.py` is a test); data
//! folders (`testdata/`, `fixtures/`, snapshots) hold support, never a suite a runner collects.

/// What a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PathRole {
    /// Code under work: none of the others.
    #[default]
    Source,
    /// A file a test runner collects by its language's conventions.
    Test,
    /// Other test code and data: helpers (`conftest.py`, `tests/common/mod.rs`), fixtures,
    /// test data, utilities for tests (`testing/`, `src/test_utils.rs`).
    TestSupport,
    /// Examples, samples and demos.
    Example,
    /// Benchmarks.
    Bench,
    /// Code under a docs folder (`docs/conf.py`); a text file's format is `TextKind`'s.
    Doc,
}

/// What a file is for, and whether a tool wrote it or it was copied in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PathKind {
    pub role: PathRole,
    /// Written by a tool: protobuf and gRPC output (`*.pb.go`, `*_pb2.py`), `*.generated.*`,
    /// bundles and minified files, `dist/`, `generated/`, or a "do not edit" header.
    pub generated: bool,
    /// Someone else's code copied in: `vendor/`, `third_party/`, `node_modules/`.
    pub vendored: bool,
}

/// A folder's entry file, by language: what a module is when it is asked about (Rust's
/// `mod.rs` and `lib.rs`, Python's `__init__.py`, JavaScript's and TypeScript's `index.*`,
/// Java's `package-info.java`, Go's `doc.go`, Elixir's and Ruby's conventions aside).
pub const MODULE_ENTRY_FILES: &[&str] = &[
    "mod.rs",
    "lib.rs",
    "__init__.py",
    "index.ts",
    "index.tsx",
    "index.js",
    "index.mjs",
    "package-info.java",
    "doc.go",
    "init.lua",
    "main.rs",
];

impl PathKind {
    /// Whether the file is its folder's entry ([`MODULE_ENTRY_FILES`]).
    pub fn is_module_entry(path: &str) -> bool {
        let file = path.rsplit_once('/').map_or(path, |(_, f)| f);
        MODULE_ENTRY_FILES.contains(&file)
    }

    /// A number per role, for a model's feature: source 0, test 1, test support 2, example 3,
    /// benchmark 4, docs 5.
    pub fn role_code(self) -> f32 {
        match self.role {
            PathRole::Source => 0.0,
            PathRole::Test => 1.0,
            PathRole::TestSupport => 2.0,
            PathRole::Example => 3.0,
            PathRole::Bench => 4.0,
            PathRole::Doc => 5.0,
        }
    }
}

/// Folders whose files are test code (besides .NET's `Foo.Tests/`, by [`TEST_DIR_SUFFIXES`]).
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "__tests__",
    "spec",
    "e2e",
    "testdata",
    "test_data",
    "fixture",
    "fixtures",
    "__fixtures__",
    "__snapshots__",
    "mocks",
    "__mocks__",
    "testutil",
    "testutils",
    "test_utils",
    "test-utils",
    "testhelpers",
    "test_helpers",
    // Gradle source sets beside `src/test/`.
    "androidtest",
    "integrationtest",
    "functionaltest",
    "testfixtures",
];
const TEST_DIR_SUFFIXES: &[&str] = &[".tests", ".test", ".unittests", ".integrationtests", ".specs"];
/// Test folders of data: no runner collects a suite in them (go test skips `testdata/`).
const DATA_DIRS: &[&str] = &[
    "testdata",
    "test_data",
    "fixture",
    "fixtures",
    "__fixtures__",
    "__snapshots__",
];
/// Modules cargo's integration suites share rather than suites of their own.
const RUST_HELPERS: &[&str] = &[
    "util.rs",
    "utils.rs",
    "common.rs",
    "macros.rs",
    "mod.rs",
    "helpers.rs",
    "support.rs",
];
/// Folders of a JavaScript `test/` folder that support its suites.
const JS_SUPPORT_DIRS: &[&str] = &[
    "fixtures",
    "fixture",
    "__fixtures__",
    "support",
    "helpers",
    "mocks",
    "__mocks__",
    "utils",
    "__snapshots__",
];
const JS_EXTENSIONS: &[&str] = &["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"];
const C_EXTENSIONS: &[&str] = &["c", "cc", "cpp", "cxx", "c++"];
const EXAMPLE_DIRS: &[&str] = &["example", "examples", "_examples", "samples", "demo", "demos"];
const BENCH_DIRS: &[&str] = &["bench", "benches", "benchmarks", "asv_bench", "jmh"];
const DOC_DIRS: &[&str] = &["doc", "docs", "documentation"];
const GENERATED_DIRS: &[&str] = &["dist", "generated", "__generated__"];
const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "_vendor",
    "third_party",
    "thirdparty",
    "3rdparty",
    "node_modules",
    "bower_components",
];
/// Ends of generated file names (lowercase).
const GENERATED_ENDS: &[&str] = &[
    ".min.js",
    ".min.mjs",
    ".min.cjs",
    ".bundle.js",
    "-umd.js",
    ".umd.js",
    "-esm.js",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
    ".pb.gw.go",
    ".pb.cc",
    ".pb.h",
    ".pb.swift",
    ".grpc.swift",
    "_pb.rb",
    "_pb.js",
    "_pb.d.ts",
    ".designer.cs",
    ".g.cs",
    ".g.i.cs",
];
/// Words in a file's first lines that say a tool wrote it (lowercase).
const GENERATED_MARKS: &[&str] = &[
    "do not edit",
    "@generated",
    "<auto-generated",
    "automatically generated",
    "autogenerated",
    "code generated by",
];
const HEADER_LINES: usize = 10;
const HEADER_BYTES: usize = 2048;

impl PathKind {
    /// The kind of the file at `path` (repository-relative, `/`-separated).
    pub fn of(path: &str) -> PathKind {
        let p = Parts::new(path);
        PathKind {
            role: role(&p),
            generated: p.in_dir(GENERATED_DIRS) || generated_name(&p.file_lower),
            vendored: p.in_dir(VENDORED_DIRS),
        }
    }

    /// [`Self::of`], generated as well when the text's first lines say so (`// Code generated
    /// by X. DO NOT EDIT.`, `// @generated`, `<auto-generated>`, "automatically generated").
    pub fn of_file(path: &str, text: &[u8]) -> PathKind {
        let mut kind = PathKind::of(path);
        kind.generated |= generated_header(text);
        kind
    }

    /// Test code: a test a runner collects or what supports tests.
    pub fn is_test(self) -> bool {
        matches!(self.role, PathRole::Test | PathRole::TestSupport)
    }

    /// A file a test runner collects.
    pub fn is_test_suite(self) -> bool {
        self.role == PathRole::Test
    }

    /// The first `test` or `tests` folder on the path (any case), the root a runner starts
    /// from: the folder holding it (`pkg/`, empty at the repository root) and its name as
    /// written.
    pub fn test_folder(path: &str) -> Option<(&str, &str)> {
        let (dirs, _) = path.rsplit_once('/')?;
        let mut start = 0;
        for seg in dirs.split('/') {
            if seg.eq_ignore_ascii_case("test") || seg.eq_ignore_ascii_case("tests") {
                return Some((&path[..start], seg));
            }
            start += seg.len() + 1;
        }
        None
    }
}

/// A path taken apart once: its file name as written and lowercase, and its folders.
struct Parts<'a> {
    path: &'a str,
    file: &'a str,
    file_lower: String,
    /// The folders, lowercase, `/`-separated.
    dirs_lower: String,
    /// The file's last extension, lowercase (empty without one).
    ext: String,
}

impl<'a> Parts<'a> {
    fn new(path: &'a str) -> Parts<'a> {
        let (dirs, file) = path.rsplit_once('/').unwrap_or(("", path));
        let file_lower = file.to_ascii_lowercase();
        let ext = file_lower.rsplit_once('.').map_or("", |(_, e)| e).to_string();
        Parts {
            path,
            file,
            file_lower,
            dirs_lower: dirs.to_ascii_lowercase(),
            ext,
        }
    }

    /// The folders, lowercase, innermost first.
    fn dirs(&self) -> impl Iterator<Item = &str> {
        self.dirs_lower.rsplit('/').filter(|d| !d.is_empty())
    }

    fn in_dir(&self, names: &[&str]) -> bool {
        self.dirs().any(|d| names.contains(&d))
    }

    /// The lowercase file name without its last extension.
    fn stem_lower(&self) -> &str {
        self.file_lower
            .rsplit_once('.')
            .map_or(&self.file_lower, |(s, _)| s)
    }

    fn ext_in(&self, exts: &[&str]) -> bool {
        exts.contains(&self.ext.as_str())
    }
}

/// The role: a test by name or folder first, then the innermost example, benchmark or docs
/// folder, then a benchmark by name.
fn role(p: &Parts) -> PathRole {
    if let Some(test) = test_role(p) {
        return test;
    }
    p.dirs()
        .find_map(|d| {
            if EXAMPLE_DIRS.contains(&d) {
                Some(PathRole::Example)
            } else if BENCH_DIRS.contains(&d) {
                Some(PathRole::Bench)
            } else {
                DOC_DIRS.contains(&d).then_some(PathRole::Doc)
            }
        })
        .or_else(|| bench_name(p).then_some(PathRole::Bench))
        .unwrap_or(PathRole::Source)
}

fn test_role(p: &Parts) -> Option<PathRole> {
    let in_data_dir = p.in_dir(DATA_DIRS);
    if !in_data_dir && (collected_by_name(p) || declared_by_language(p.path)) {
        return Some(PathRole::Test);
    }
    if p.dirs().any(is_test_dir) {
        let suite = !in_data_dir && (rust_suite(p) || js_suite(p) || c_suite(p));
        return Some(if suite {
            PathRole::Test
        } else {
            PathRole::TestSupport
        });
    }
    let f = &p.file_lower;
    let stem = p.stem_lower();
    let named =
        f.starts_with("test_") || f == "conftest.py" || stem.ends_with("_test") || stem.ends_with("_tests");
    named.then_some(PathRole::TestSupport)
}

fn is_test_dir(d: &str) -> bool {
    TEST_DIRS.contains(&d)
        || TEST_DIR_SUFFIXES
            .iter()
            .any(|s| d.len() > s.len() && d.ends_with(s))
}

/// A test file by its name, for the languages whose conventions are not globs in their
/// `language.toml`.
fn collected_by_name(p: &Parts) -> bool {
    let f = p.file_lower.as_str();
    let stem = p.stem_lower();
    match p.ext.as_str() {
        "py" => f.starts_with("test_") || stem.ends_with("_test"),
        "go" => stem.ends_with("_test"),
        "rs" => stem.ends_with("_test") || stem.ends_with("_tests") || f == "tests.rs",
        "java" => java_test_class(p.file.rsplit_once('.').map_or(p.file, |(s, _)| s)),
        _ if p.ext_in(C_EXTENSIONS) => stem.ends_with("_test") || stem.ends_with("_unittest"),
        _ if p.ext_in(JS_EXTENSIONS) => stem.ends_with(".test") || stem.ends_with(".spec"),
        _ => false,
    }
}

/// Surefire's and Failsafe's class names: `CartTest`, `CartTests`, `CartTestCase`, `CartIT`
/// (not `Test` itself, nor `Latest` or `GIT`).
fn java_test_class(stem: &str) -> bool {
    let named = |suffix: &str| {
        stem.strip_suffix(suffix)
            .is_some_and(|rest| rest.chars().last().is_some_and(char::is_alphanumeric))
    };
    named("Test")
        || named("Tests")
        || named("TestCase")
        || stem
            .strip_suffix("IT")
            .and_then(|rest| rest.chars().last())
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// A test file by the `test_files` globs of its language's `language.toml`.
fn declared_by_language(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    super::LanguageRegistry::builtin()
        .ok()
        .and_then(|r| r.for_file_name(file))
        .is_some_and(|(_, spec)| spec.is_test_file(path))
}

/// A cargo integration suite, or a module of one: a `.rs` file under `tests/` that is not a
/// helper the suites share.
fn rust_suite(p: &Parts) -> bool {
    p.ext == "rs" && p.dirs().any(|d| d == "tests") && !RUST_HELPERS.contains(&p.file_lower.as_str())
}

/// A C or C++ test program in a test folder: `tests/test_parse.c` (outside one, `test_case.cpp`
/// is as likely a test framework's own source).
fn c_suite(p: &Parts) -> bool {
    p.ext_in(C_EXTENSIONS) && p.stem_lower().starts_with("test_")
}

/// A jest suite under `__tests__/`, or a mocha or ava suite in a `test/` folder outside its
/// support folders; never a declaration file.
fn js_suite(p: &Parts) -> bool {
    if !p.ext_in(JS_EXTENSIONS) || p.file_lower.ends_with(".d.ts") {
        return false;
    }
    if p.dirs().any(|d| d == "__tests__") {
        return true;
    }
    let mut between = p.dirs().take_while(|d| *d != "test" && *d != "tests");
    let supported = between.any(|d| JS_SUPPORT_DIRS.contains(&d));
    !supported && p.dirs().any(|d| d == "test" || d == "tests")
}

/// Benchmarks by name: vitest's `*.bench.ts`, Google Benchmark's `*_benchmark.cc`.
fn bench_name(p: &Parts) -> bool {
    let stem = p.stem_lower();
    (p.ext_in(JS_EXTENSIONS) && stem.ends_with(".bench"))
        || (p.ext_in(C_EXTENSIONS) && stem.ends_with("_benchmark"))
}

fn generated_name(file_lower: &str) -> bool {
    GENERATED_ENDS.iter().any(|e| file_lower.ends_with(e))
        || file_lower.contains(".generated.")
        || file_lower.starts_with("zz_generated")
}

/// Whether the first lines of `text` say a tool wrote it.
fn generated_header(text: &[u8]) -> bool {
    let head = &text[..text.len().min(HEADER_BYTES)];
    String::from_utf8_lossy(head)
        .lines()
        .take(HEADER_LINES)
        .any(|line| {
            let l = line.to_ascii_lowercase();
            GENERATED_MARKS.iter().any(|m| l.contains(m))
        })
}

#[cfg(test)]
mod tests {
    use super::PathRole::{Bench, Doc, Example, Source, Test, TestSupport};
    use super::*;

    /// Every path of `rows` has the role given, by language.
    fn check(rows: &[(&str, PathRole)]) {
        let wrong: Vec<String> = rows
            .iter()
            .filter(|(path, want)| PathKind::of(path).role != *want)
            .map(|(path, want)| format!("{path}: {:?}, want {want:?}", PathKind::of(path).role))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn python_tests_by_pytest_and_django_conventions() {
        check(&[
            ("tests/test_models.py", Test),
            ("xarray/tests/test_dataset.py", Test),
            ("pkg/models_test.py", Test),
            ("test_api.py", Test),
            // Django's app `tests.py` is also jinja2's module of template tests.
            ("shop/tests.py", Source),
            ("tests/conftest.py", TestSupport),
            ("conftest.py", TestSupport),
            ("tests/util.py", TestSupport),
            ("tests/test_apps/cliapp/app.py", TestSupport),
            ("tests/data/cases/type_params.py", TestSupport),
            ("tests/fixtures/test_sample.py", TestSupport),
            ("pkg/models_tests.py", TestSupport),
            ("numpy/testing/_private/utils.py", TestSupport),
            ("requests/models.py", Source),
            ("contest.py", Source),
            ("src/flask/testing.py", Source),
            ("pkg/latest/models.py", Source),
            ("pkg/attestation.py", Source),
            ("pkg/testament.py", Source),
            ("docs/conf.py", Doc),
            ("asv_bench/benchmarks/groupby.py", Bench),
            ("examples/tutorial/app.py", Example),
        ]);
    }

    #[test]
    fn go_tests_and_their_data() {
        check(&[
            ("pkg/server_test.go", Test),
            ("pkg/server_bench_test.go", Test),
            ("internal/testutil/server.go", TestSupport),
            ("pkg/testdata/server_test.go", TestSupport),
            ("pkg/testdata/input.go", TestSupport),
            ("pkg/attestation.go", Source),
            ("pkg/latest/server.go", Source),
            ("pkg/contest.go", Source),
            ("_examples/chat/main.go", Example),
        ]);
    }

    #[test]
    fn rust_suites_unit_test_files_and_helpers() {
        check(&[
            ("tests/regression.rs", Test),
            ("crates/grep-cli/tests/it.rs", Test),
            ("tests/cli/main.rs", Test),
            ("src/parser/tests.rs", Test),
            ("src/parser_tests.rs", Test),
            ("src/parser_test.rs", Test),
            ("tests/util.rs", TestSupport),
            ("tests/common/mod.rs", TestSupport),
            ("tests/fixtures/lang/rust/lib.rs", TestSupport),
            ("src/test_utils.rs", TestSupport),
            ("src/testament.rs", Source),
            ("src/latest/mod.rs", Source),
            ("src/test.rs", Source),
            ("benches/search.rs", Bench),
            ("examples/extract.rs", Example),
            ("src/benchmark/options.rs", Source),
            ("fixtures/lang/rust/lib.rs", TestSupport),
        ]);
    }

    #[test]
    fn javascript_and_typescript_suites_of_jest_vitest_and_mocha() {
        check(&[
            ("src/x.test.ts", Test),
            ("src/button.spec.tsx", Test),
            ("lib/router.test.mjs", Test),
            ("src/__tests__/router.js", Test),
            ("test/app.router.js", Test),
            ("packages/core/test/request.ts", Test),
            ("test/fixtures/server.js", TestSupport),
            ("test/support/env.js", TestSupport),
            ("test/types.d.ts", TestSupport),
            ("src/__mocks__/fs.js", TestSupport),
            ("test/unit/util/security.js", Test),
            ("src/latest.ts", Source),
            ("src/contest.js", Source),
            ("src/spec.ts", Source),
            ("src/parse.bench.ts", Bench),
            ("docs/.vitepress/config.ts", Doc),
        ]);
    }

    #[test]
    fn jvm_and_dotnet_test_classes() {
        check(&[
            ("src/test/java/com/acme/CartTest.java", Test),
            ("src/main/java/com/acme/CartTests.java", Test),
            ("src/it/java/com/acme/CartIT.java", Test),
            ("src/test/java/com/acme/Fixtures.java", TestSupport),
            ("src/main/java/org/junit/Test.java", Source),
            ("src/main/java/com/acme/Latest.java", Source),
            ("src/main/java/com/acme/Contest.java", Source),
            ("src/main/java/com/acme/GIT.java", Source),
            ("src/test/kotlin/com/acme/CartTest.kt", Test),
            ("app/src/androidTest/java/com/acme/CartUi.java", TestSupport),
            ("core/src/main/kotlin/Cart.kt", Source),
            ("modules/core/src/test/scala/CartSpec.scala", Test),
            ("src/main/scala/Cart.scala", Source),
            ("Shop.Tests/CartTests.cs", Test),
            ("Shop.Tests/Helpers.cs", Test),
            ("Shop.Tests/data.json", TestSupport),
            ("src/Shop/Cart.cs", Source),
            ("src/jmh/java/com/acme/CartBench.java", Bench),
        ]);
    }

    #[test]
    fn ruby_php_elixir_haskell_lua_swift_zig_bash_and_c_conventions() {
        check(&[
            ("spec/models/user_spec.rb", Test),
            ("spec/spec_helper.rb", TestSupport),
            ("test/models/user_test.rb", Test),
            ("app/models/user.rb", Source),
            ("tests/Unit/CartTest.php", Test),
            ("src/Latest.php", Source),
            ("test/shop/cart_test.exs", Test),
            ("test/test_helper.exs", TestSupport),
            ("lib/shop/cart.ex", Source),
            ("test/CartSpec.hs", Test),
            ("src/Cart.hs", Source),
            ("spec/cart_spec.lua", Test),
            ("lua/cart.lua", Source),
            ("Tests/AppTests/CartTests.swift", Test),
            ("Sources/App/Cart.swift", Source),
            ("src/cart_test.zig", Test),
            ("src/cart.zig", Source),
            ("test/deploy.bats", Test),
            ("scripts/deploy.sh", Source),
            ("tests/test_parse.c", Test),
            ("src/parse_unittest.cc", Test),
            ("src/parse_test.cpp", Test),
            ("tests/helpers.h", TestSupport),
            ("src/parse.c", Source),
            ("src/parse_benchmark.cc", Bench),
            ("doctest/parts/private/test_case.cpp", TestSupport),
        ]);
    }

    #[test]
    fn generated_and_vendored_files() {
        let generated = |p: &str| PathKind::of(p).generated;
        let vendored = |p: &str| PathKind::of(p).vendored;
        for p in [
            "api/v1/service.pb.go",
            "proto/service_pb2.py",
            "proto/service_pb2_grpc.py",
            "web/service_pb.js",
            "src/Form1.Designer.cs",
            "pkg/apis/zz_generated.deepcopy.go",
            "src/schema.generated.ts",
            "dist/underscore-umd.js",
            "static/app.min.js",
            "src/__generated__/Query.graphql.ts",
        ] {
            assert!(generated(p), "{p}");
        }
        for p in [
            "src/generator.rs",
            "src/is_generated.rs",
            "cmd/protoc-gen-go/main.go",
            "src/minify.js",
        ] {
            assert!(!generated(p), "{p}");
        }
        assert!(vendored("vendor/github.com/pkg/errors/errors.go"));
        assert!(vendored("third_party/zlib/inflate.c"));
        assert!(vendored("src/pip/_vendor/rich/console.py"));
        assert!(vendored("web/node_modules/react/index.js"));
        assert!(!vendored("src/vendors.py") && !vendored("src/vendoring/lock.go"));
        assert!(!vendored("docs/third-party/derive.mdx"));
        let both = PathKind::of("vendor/github.com/x/api_test.go");
        assert!(both.vendored && both.is_test_suite());
    }

    #[test]
    fn a_generated_header_marks_the_file_whatever_its_name() {
        let go = b"// Code generated by protoc-gen-go. DO NOT EDIT.\n// source: x.proto\n\npackage x\n";
        assert!(PathKind::of_file("api/x.go", go).generated);
        assert!(
            PathKind::of_file(
                "src/bindings.rs",
                b"/* automatically generated by rust-bindgen */\n"
            )
            .generated
        );
        assert!(PathKind::of_file("src/lib.rs", b"// @generated by build.rs\n").generated);
        assert!(PathKind::of_file("Model.cs", b"//------\n// <auto-generated>\n").generated);
        assert!(!PathKind::of_file("src/lib.rs", b"//! A library.\nfn main() {}\n").generated);
        let late = format!("{}// DO NOT EDIT\n", "fn x() {}\n".repeat(40));
        assert!(!PathKind::of_file("src/lib.rs", late.as_bytes()).generated);
    }

    #[test]
    fn a_test_folder_outranks_the_example_or_docs_folder_around_it() {
        check(&[
            ("examples/app/tests/test_views.py", Test),
            ("docs/examples/quickstart.py", Example),
            ("examples/docs/build.py", Doc),
        ]);
    }

    #[test]
    fn the_first_test_folder_and_the_folder_holding_it() {
        assert_eq!(PathKind::test_folder("tests/it.rs"), Some(("", "tests")));
        assert_eq!(
            PathKind::test_folder("crates/cli/tests/common/mod.rs"),
            Some(("crates/cli/", "tests"))
        );
        assert_eq!(
            PathKind::test_folder("Tests/AppTests/CartTests.swift"),
            Some(("", "Tests"))
        );
        assert_eq!(PathKind::test_folder("test/pkg/tests/x.rs"), Some(("", "test")));
        assert_eq!(PathKind::test_folder("src/latest/x.rs"), None);
        assert_eq!(PathKind::test_folder("tests"), None);
        assert_eq!(PathKind::test_folder("src/contests/x.rs"), None);
    }
}
