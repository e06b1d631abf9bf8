//! Property: after any sequence of edits, deletions and additions — including same-size
//! rewrites made right after a build (the "racily clean" case) — an incremental build holds
//! exactly what a full rebuild of the same tree holds.

mod support;

use kenning::index::IndexConfig;
use proptest::prelude::*;
use support::{build, logical_dump};

const PATHS: &[&str] = &[
    "a.py",
    "pkg/b.py",
    "pkg/__init__.py",
    "src/lib.rs",
    "src/m/mod.rs",
    "Cargo.toml",
];

/// Contents of equal length, so only the hash can tell some rewrites apart.
const BODIES: &[&str] = &[
    "def f():\n    return g()\n",
    "def g():\n    return f()\n",
    "class K:\n    def m(self): pass\n",
    "pub fn f() { g() }\n",
    "pub fn g() { f() }\n",
    "[package]\nname = \"aa\"\n",
    "[package]\nname = \"bb\"\n",
];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize),
    Delete(usize),
    Build,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..PATHS.len(), 0..BODIES.len()).prop_map(|(p, b)| Op::Write(p, b)),
        1 => (0..PATHS.len()).prop_map(Op::Delete),
        3 => Just(Op::Build),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn incremental_build_equals_full_rebuild(ops in proptest::collection::vec(op(), 1..12)) {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let inc = IndexConfig::default();
        for op in &ops {
            match *op {
                Op::Write(p, b) => {
                    let path = root.join(PATHS[p]);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, BODIES[b]).unwrap();
                }
                Op::Delete(p) => {
                    let _ = std::fs::remove_file(root.join(PATHS[p]));
                }
                Op::Build => {
                    build(root, &inc);
                }
            }
        }
        build(root, &inc);
        let full_dir = tempfile::tempdir().unwrap();
        let full = IndexConfig { index_dir: Some(full_dir.path().join("idx")), full: true, ..IndexConfig::default() };
        build(root, &full);
        prop_assert_eq!(
            logical_dump(&root.join(".kenning")),
            logical_dump(&full_dir.path().join("idx"))
        );
    }
}
