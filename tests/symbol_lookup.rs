//! `ken symbol` narrows the files to decode with the lexical index; it must answer exactly
//! what a scan of every file answers, for every name, prefix and qualified form.

mod support;

use kenning::index::{IndexConfig, IndexSnapshot, SymbolLookup};
use support::{build, index_dir, materialize, write_tree};

#[test]
fn narrowed_lookup_equals_full_scan() {
    let repo = materialize(
        "//- pkg/__init__.py\n//- pkg/models.py\nclass Request:\n    def register_hook(self):\n        pass\n    def send(self):\n        pass\n\
         //- pkg/sessions.py\nclass Session:\n    def send(self):\n        pass\ndef session():\n    pass\n\
         //- src/lib.rs\npub struct Searcher;\nimpl Searcher {\n    pub fn new() -> Self { Searcher }\n}\npub mod sink;\n\
         //- src/sink.rs\npub trait Sink { fn matched(&self); }\n",
    );
    // A generated table: more minor definitions than the lexical index keeps per file.
    let table: String = (0..400)
        .map(|i| format!("pub const CODE_{i}: u32 = {i};\n"))
        .collect();
    write_tree(repo.path(), &format!("//- src/table.rs\n{table}"));
    build(repo.path(), &IndexConfig::default());
    let snap = IndexSnapshot::open(&index_dir(repo.path(), &IndexConfig::default())).unwrap();
    let lookup = SymbolLookup::new(&snap).unwrap();
    let mut queries: Vec<String> = snap
        .load_symbols()
        .unwrap()
        .iter()
        .flat_map(|s| s.definitions.iter().map(|d| d.name.clone()))
        .collect();
    queries.extend(
        [
            "send",
            "SEND",
            "sess",
            "Sess",
            "Request.send",
            "pkg.models",
            "pkg.models.Request.register_hook",
            "Searcher::new",
            "crate::Searcher",
            "CODE_399",
            "code_39",
            "matched",
            "nothing_here",
            "pkg.mod",
        ]
        .map(String::from),
    );
    let render = |hits: Vec<kenning::index::SymbolHit>| -> Vec<String> {
        hits.into_iter()
            .map(|h| format!("{:?} {} {}:{}", h.quality, h.qualified_name, h.path, h.line))
            .collect()
    };
    for q in &queries {
        let narrowed = render(lookup.find(q).unwrap());
        let scanned = render(lookup.find_by_scan(q).unwrap());
        assert_eq!(narrowed, scanned, "query {q:?}");
    }
    assert_eq!(
        render(lookup.find("CODE_399").unwrap()).len(),
        1,
        "beyond the lexical cap, still found"
    );
}
