//! What Kenning extracts from one file, with the queries of a `grammars/` folder read from disk,
//! so a language's queries can be edited and tried without rebuilding:
//!
//!   cargo run --release --example extract -- grammars/ path/to/file.rb [more files...]
//!
//! Prints the same rendering as the language fixture snapshots (`tests/lang_fixtures.rs`):
//! one line per definition, reference, import and diagnostic.

use std::path::Path;

use kenning::{FileParser, LanguageRegistry};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: extract GRAMMARS_DIR FILE..."))?;
    let registry = LanguageRegistry::from_dir(Path::new(&dir))?;
    let mut parser = FileParser::new();
    for file in args {
        let spec = registry
            .for_file_name(&file)
            .map(|(_, s)| s)
            .ok_or_else(|| anyhow::anyhow!("{file}: no language in {dir} has its extension"))?;
        spec.validate()?;
        let source = std::fs::read(&file).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let symbols = parser.parse(spec, &source);
        println!("# {file} ({})", spec.name);
        print!("{}", symbols.render("", &spec.separator));
    }
    Ok(())
}
