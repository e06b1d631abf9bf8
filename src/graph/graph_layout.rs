//! `GraphBodies` and the stored layout of a `CodeGraph`: one section of heads (every file's
//! path, language, module and definitions, with the PageRank and the aliases) and one byte
//! string per file for its body (references, imports, bindings and their resolution).
//!
//! A reader that needs only names, spans and centrality (`ken context`) decodes the heads and
//! keeps the bodies as bytes, decoding a file's body when it is asked for; a full decode
//! decodes the bodies on every core. Both give the same graph (tested).

use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize, Serializer};

use super::{BindingNode, CodeGraph, DefNode, FileResolution, FileSkeleton, Name, RefNode};
use crate::symbols::{Import, RepoPath};

/// The bodies of a graph decoded heads-only: the bytes read, and each file's body in them.
#[derive(Debug, PartialEq)]
pub struct GraphBodies {
    bytes: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}

impl GraphBodies {
    /// File `i`'s references and their resolutions, decoded now.
    pub fn body(&self, i: usize) -> Option<(Vec<RefNode>, FileResolution)> {
        let &(a, b) = self.ranges.get(i)?;
        let body: Body = postcard::from_bytes(self.bytes.get(a..b)?).ok()?;
        Some((body.refs, body.resolution))
    }
}

struct AsBytes<'a>(&'a [u8]);

impl Serialize for AsBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[derive(Serialize)]
struct WireOut<'a> {
    version: u32,
    heads: AsBytes<'a>,
    bodies: Vec<AsBytes<'a>>,
}

#[derive(Deserialize)]
struct WireIn<'a> {
    version: u32,
    #[serde(borrow)]
    heads: &'a [u8],
    #[serde(borrow)]
    bodies: Vec<&'a [u8]>,
}

#[derive(Serialize)]
struct HeadRef<'a> {
    path: &'a RepoPath,
    language: &'a Name,
    module: &'a Name,
    defs: &'a [DefNode],
}

#[derive(Deserialize)]
struct Head {
    path: RepoPath,
    language: Name,
    module: Name,
    defs: Vec<DefNode>,
}

#[derive(Serialize)]
struct HeadsRef<'a> {
    files: Vec<HeadRef<'a>>,
    rank: &'a [Vec<f32>],
    js_aliases: &'a [(String, String)],
}

#[derive(Deserialize)]
struct Heads {
    files: Vec<Head>,
    rank: Vec<Vec<f32>>,
    js_aliases: Vec<(String, String)>,
}

#[derive(Serialize)]
struct BodyRef<'a> {
    refs: &'a [RefNode],
    imports: &'a [Import],
    bindings: &'a [BindingNode],
    resolution: &'a FileResolution,
}

#[derive(Deserialize)]
struct Body {
    refs: Vec<RefNode>,
    imports: Vec<Import>,
    bindings: Vec<BindingNode>,
    resolution: FileResolution,
}

const NO_RESOLUTION: FileResolution = FileResolution {
    refs: Vec::new(),
    imports: Vec::new(),
    deps: super::Deps {
        files: Vec::new(),
        names: Vec::new(),
        modules: Vec::new(),
    },
};

impl CodeGraph {
    /// The stored form: heads, then one body per file (encoded on every core).
    pub fn encode(&self) -> Result<Vec<u8>, postcard::Error> {
        let heads = postcard::to_stdvec(&HeadsRef {
            files: self
                .files
                .iter()
                .map(|f| HeadRef {
                    path: &f.path,
                    language: &f.language,
                    module: &f.module,
                    defs: &f.defs,
                })
                .collect(),
            rank: &self.rank,
            js_aliases: &self.js_aliases,
        })?;
        let bodies: Vec<Vec<u8>> = self
            .files
            .par_iter()
            .enumerate()
            .map(|(i, f)| {
                postcard::to_stdvec(&BodyRef {
                    refs: &f.refs,
                    imports: &f.imports,
                    bindings: &f.bindings,
                    resolution: self.resolved.get(i).unwrap_or(&NO_RESOLUTION),
                })
            })
            .collect::<Result<_, _>>()?;
        postcard::to_stdvec(&WireOut {
            version: self.version,
            heads: AsBytes(&heads),
            bodies: bodies.iter().map(|b| AsBytes(b)).collect(),
        })
    }

    /// The whole graph, bodies decoded on every core.
    pub fn decode(bytes: &[u8]) -> Result<CodeGraph, postcard::Error> {
        let wire: WireIn<'_> = postcard::from_bytes(bytes)?;
        let heads: Heads = postcard::from_bytes(wire.heads)?;
        if wire.bodies.len() != heads.files.len() {
            return Err(postcard::Error::DeserializeUnexpectedEnd);
        }
        let bodies: Vec<Body> = wire
            .bodies
            .par_iter()
            .map(|b| postcard::from_bytes(b))
            .collect::<Result<_, _>>()?;
        let mut files = Vec::with_capacity(bodies.len());
        let mut resolved = Vec::with_capacity(bodies.len());
        for (h, b) in heads.files.into_iter().zip(bodies) {
            files.push(FileSkeleton {
                path: h.path,
                language: h.language,
                module: h.module,
                defs: h.defs,
                refs: b.refs,
                imports: b.imports,
                bindings: b.bindings,
            });
            resolved.push(b.resolution);
        }
        Ok(CodeGraph {
            version: wire.version,
            files,
            resolved,
            rank: heads.rank,
            js_aliases: heads.js_aliases,
            bodies: None,
        })
    }

    /// The heads only: every file's path, language, module and definitions, and the PageRank;
    /// references, imports, bindings and resolutions stay bytes, read with
    /// [`CodeGraph::file_body`]. For readers that need names and spans of every file but the
    /// references of a few.
    pub fn decode_heads(bytes: Vec<u8>) -> Result<CodeGraph, postcard::Error> {
        let (version, heads, ranges) = {
            let wire: WireIn<'_> = postcard::from_bytes(&bytes)?;
            let base = bytes.as_ptr() as usize;
            let ranges: Vec<(usize, usize)> = wire
                .bodies
                .iter()
                .map(|b| {
                    let a = (b.as_ptr() as usize).saturating_sub(base);
                    (a, a + b.len())
                })
                .collect();
            let heads: Heads = postcard::from_bytes(wire.heads)?;
            (wire.version, heads, ranges)
        };
        if ranges.len() != heads.files.len() {
            return Err(postcard::Error::DeserializeUnexpectedEnd);
        }
        let files = heads
            .files
            .into_iter()
            .map(|h| FileSkeleton {
                path: h.path,
                language: h.language,
                module: h.module,
                defs: h.defs,
                refs: Vec::new(),
                imports: Vec::new(),
                bindings: Vec::new(),
            })
            .collect();
        Ok(CodeGraph {
            version,
            files,
            resolved: Vec::new(),
            rank: heads.rank,
            js_aliases: heads.js_aliases,
            bodies: Some(Arc::new(GraphBodies { bytes, ranges })),
        })
    }

    /// Whether only the heads are decoded (`files[i].refs` and `resolved` are then empty).
    pub fn heads_only(&self) -> bool {
        self.bodies.is_some()
    }

    /// File `i`'s references and their resolutions, from either form.
    pub fn file_body(
        &self,
        i: usize,
    ) -> Option<(
        std::borrow::Cow<'_, [RefNode]>,
        std::borrow::Cow<'_, FileResolution>,
    )> {
        use std::borrow::Cow;
        match &self.bodies {
            Some(b) => b.body(i).map(|(r, res)| (Cow::Owned(r), Cow::Owned(res))),
            None => Some((
                Cow::Borrowed(self.files.get(i)?.refs.as_slice()),
                Cow::Borrowed(self.resolved.get(i)?),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;

    fn graph() -> CodeGraph {
        let registry = LanguageRegistry::builtin().unwrap();
        let mut parser = FileParser::new();
        let sources = [
            (
                "shop/cart.py",
                "python",
                "shop.cart",
                "from shop.pricing import apply\nclass Cart:\n    def total(self):\n        return apply(self.sum())\n    def sum(self):\n        return 1\n",
            ),
            (
                "shop/pricing.py",
                "python",
                "shop.pricing",
                "def apply(x):\n    return x * 0.9\n",
            ),
            ("shop/empty.py", "python", "shop.empty", ""),
        ];
        let files = sources
            .iter()
            .map(|(path, lang, module, text)| {
                let symbols = parser.parse(registry.by_name(lang).unwrap(), text.as_bytes());
                FileSkeleton::new(RepoPath::parse(path).unwrap(), lang, module, &symbols)
            })
            .collect();
        CodeGraph::build(files, vec![("@shop/x".to_string(), "shop/x".to_string())], None).0
    }

    #[test]
    fn both_decodings_give_the_graph_that_was_encoded() {
        let g = graph();
        assert!(
            g.resolved
                .iter()
                .any(|r| r.refs.iter().any(|x| !x.targets.is_empty()))
        );
        let bytes = g.encode().unwrap();
        let full = CodeGraph::decode(&bytes).unwrap();
        assert_eq!(full, g);
        let heads = CodeGraph::decode_heads(bytes.clone()).unwrap();
        assert!(heads.heads_only() && !full.heads_only());
        assert_eq!(heads.rank, g.rank);
        assert_eq!(heads.js_aliases, g.js_aliases);
        for (i, f) in g.files.iter().enumerate() {
            assert_eq!((&heads.files[i].path, &heads.files[i].defs), (&f.path, &f.defs));
            let (refs, res) = heads.file_body(i).unwrap();
            assert_eq!((refs.as_ref(), res.as_ref()), (f.refs.as_slice(), &g.resolved[i]));
            let (refs, res) = full.file_body(i).unwrap();
            assert_eq!((refs.as_ref(), res.as_ref()), (f.refs.as_slice(), &g.resolved[i]));
        }
        assert!(heads.file_body(g.files.len()).is_none());
        // A cut graph is an error, not a shorter graph.
        assert!(CodeGraph::decode(&bytes[..bytes.len() - 5]).is_err());
        assert!(CodeGraph::decode_heads(bytes[..bytes.len() - 5].to_vec()).is_err());
    }
}
