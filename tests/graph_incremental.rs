//! The graph part is updated incrementally: a changed file re-resolves its own references and
//! the ones whose recorded dependencies it touches. Property: after any sequence of edits the
//! incrementally built graph equals the graph of a full rebuild, byte for byte; and an edit
//! that nothing depends on does not re-resolve the rest of the repository.

mod support;

use kenning::graph::CodeGraph;
use kenning::index::{IndexConfig, IndexSnapshot};
use proptest::prelude::*;
use support::{build, materialize};

/// Files whose resolution depends on each other: re-exports, star imports, bases in another
/// file, typed locals, Rust `use` and `pub use`, TypeScript imports.
const FILES: &[(&str, &[&str])] = &[
    (
        "pkg/__init__.py",
        &[
            "from .models import Request\n",
            "from .models import *\n",
            "from .other import Request\n",
            "",
        ],
    ),
    (
        "pkg/models.py",
        &[
            "from .base import Base\nclass Request(Base):\n    def send(self):\n        return self.prep()\n",
            "class Request:\n    def prep(self):\n        pass\n",
            "def helper():\n    pass\n",
            "from .base import Base\nclass Request:\n    def __init__(self):\n        self.b = Base()\n    def send(self):\n        return self.b.prep()\n",
        ],
    ),
    (
        "pkg/base.py",
        &[
            "class Base:\n    def prep(self):\n        pass\n    def send(self):\n        pass\n",
            "class Base:\n    pass\n",
            // The first body moved down and its methods' bodies changed: same interface.
            "\n\nclass Base:\n    def prep(self):\n        return 1\n    def send(self):\n        return self.prep()\n",
        ],
    ),
    (
        "pkg/other.py",
        &[
            "class Request:\n    def send(self):\n        pass\n",
            "def helper():\n    pass\n",
        ],
    ),
    (
        "app.py",
        &[
            "from pkg import Request\ndef main():\n    r = Request()\n    r.send()\n    r.prep()\n    helper()\n",
            "import pkg.models as m\ndef main():\n    m.Request().send()\n    m.helper()\n",
            "\n\nfrom pkg import Request\ndef main():\n    r = Request()\n    r.send()\n    r.prep()\n    helper()\n",
        ],
    ),
    ("Cargo.toml", &["[package]\nname = \"demo\"\n"]),
    (
        "src/lib.rs",
        &[
            "mod a;\nmod b;\npub use a::Thing;\n",
            "mod a;\nmod b;\npub fn go() { a::Thing::new().run(); b::util(); }\n",
        ],
    ),
    (
        "src/a.rs",
        &[
            "pub struct Thing;\nimpl Thing {\n    pub fn new() -> Self { Thing }\n    pub fn run(&self) { crate::b::util() }\n}\n",
            "pub fn util() {}\n",
        ],
    ),
    (
        "src/b.rs",
        &[
            "use crate::a::Thing;\npub fn util() { let t = Thing::new(); t.run(); }\n",
            "use crate::Thing;\npub fn util() { Thing::new(); }\n",
            "use super::a::*;\npub fn util() { util(); run(); }\n",
        ],
    ),
    (
        "web/store.ts",
        &[
            "export class Store { get() { return 1; } }\n",
            "export function get() { return 2; }\n",
        ],
    ),
    (
        "web/app.ts",
        &[
            "import { Store } from './store';\nconst s = new Store();\ns.get();\n",
            "import * as st from './store';\nst.get();\n",
        ],
    ),
];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize),
    Delete(usize),
    /// A blank line inserted after line `n` of a file (0: above its first): what follows
    /// moves, and may end up on a line another element shared before.
    Insert(usize, usize),
    Build,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..FILES.len(), 0..4usize).prop_map(|(f, b)| Op::Write(f, b)),
        1 => (0..FILES.len()).prop_map(Op::Delete),
        3 => (0..FILES.len(), 0..6usize).prop_map(|(f, n)| Op::Insert(f, n)),
        3 => Just(Op::Build),
    ]
}

fn graph(dir: &std::path::Path) -> CodeGraph {
    IndexSnapshot::open(dir).expect("open").graph().expect("graph")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn incremental_graph_equals_full_rebuild(ops in proptest::collection::vec(op(), 1..14)) {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        for (path, bodies) in FILES {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bodies[0]).unwrap();
        }
        let inc = IndexConfig::default();
        build(root, &inc);
        for op in &ops {
            match *op {
                Op::Write(f, b) => {
                    let (path, bodies) = FILES[f];
                    let p = root.join(path);
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(p, bodies[b % bodies.len()]).unwrap();
                }
                Op::Delete(f) => {
                    let _ = std::fs::remove_file(root.join(FILES[f].0));
                }
                Op::Insert(f, n) => {
                    let p = root.join(FILES[f].0);
                    if let Ok(text) = std::fs::read_to_string(&p) {
                        let mut lines: Vec<&str> = text.lines().collect();
                        lines.insert(n.min(lines.len()), "");
                        std::fs::write(p, lines.join("\n") + "\n").unwrap();
                    }
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
        let a = graph(&root.join(".kenning"));
        let b = graph(&full_dir.path().join("idx"));
        prop_assert_eq!(a.files.len(), b.files.len());
        for (i, (x, y)) in a.resolved.iter().zip(&b.resolved).enumerate() {
            prop_assert_eq!(x, y, "resolution of {} differs", a.files[i].path);
        }
        prop_assert!(a == b, "graphs differ outside resolutions (skeletons or ranks)");
    }
}

#[test]
fn an_unrelated_edit_resolves_only_what_depends_on_it() {
    let mut spec = String::from("//- pkg/__init__.py\n//- pkg/core.py\ndef shared():\n    pass\n");
    for i in 0..40 {
        spec.push_str(&format!(
            "//- pkg/m{i}.py\nfrom .core import shared\ndef f{i}():\n    shared()\n    return g{i}()\ndef g{i}():\n    pass\n"
        ));
    }
    let repo = materialize(&spec);
    let config = IndexConfig::default();
    build(repo.path(), &config);
    let updated = |r: &kenning::BuildReport| r.manifest.parts.graph.as_ref().unwrap().update.files_resolved;

    // A body change in one leaf module: only that file is resolved again.
    std::fs::write(
        repo.path().join("pkg/m7.py"),
        "from .core import shared\ndef f7():\n    shared()\n    shared()\n    return g7()\ndef g7():\n    pass\n",
    )
    .unwrap();
    let r = build(repo.path(), &config);
    assert_eq!(updated(&r), 1, "{:?}", r.manifest.parts.graph);
    assert!(
        !r.manifest.parts.graph.as_ref().unwrap().update.rank_kept,
        "a new call edge"
    );

    // Moving code in what 40 files import, without changing what it defines: only that file.
    std::fs::write(
        repo.path().join("pkg/core.py"),
        "# moved down\n\n\ndef shared():\n    x = 1\n    return x\n",
    )
    .unwrap();
    let r = build(repo.path(), &config);
    // Its lines only moved: its resolution is kept, and no symbol table is made.
    let update = &r.manifest.parts.graph.as_ref().unwrap().update;
    assert_eq!((update.files_moved, update.files_resolved), (1, 0), "{update:?}");
    // ... and, the symbol graph's edges being the same, PageRank is not run again: the
    // ranks kept are exactly a full rebuild's.
    assert!(r.manifest.parts.graph.as_ref().unwrap().update.rank_kept);
    let full_dir = tempfile::tempdir().unwrap();
    let full = IndexConfig {
        index_dir: Some(full_dir.path().join("idx")),
        full: true,
        ..IndexConfig::default()
    };
    build(repo.path(), &full);
    assert_eq!(
        graph(&repo.path().join(".kenning")).rank,
        graph(&full_dir.path().join("idx")).rank
    );

    // Changing what many files import re-resolves exactly those files.
    std::fs::write(
        repo.path().join("pkg/core.py"),
        "def shared():\n    return 1\ndef other():\n    pass\n",
    )
    .unwrap();
    let r = build(repo.path(), &config);
    assert_eq!(updated(&r), 41, "{:?}", r.manifest.parts.graph);
    assert!(
        !r.manifest.parts.graph.as_ref().unwrap().update.rank_kept,
        "a new definition"
    );
}
