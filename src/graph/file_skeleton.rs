//! `FileSkeleton`: what resolution needs from one file — its definitions (with nesting and
//! parameter types), references and imports — without bodies, signatures or docs.
//!
//! A skeleton is a pure function of the file's record, language and module path, so the
//! graph part of an index generation keeps the skeletons of unchanged files and never has to
//! decode symbol segments to update the graph.

use serde::{Deserialize, Serialize};

use crate::symbols::{FileSymbols, Import, ReferenceKind, RepoPath, SymbolKind};

/// Languages that can see each other's definitions.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Family {
    Python,
    Rust,
    /// JavaScript, TypeScript and TSX.
    Js,
    Go,
    /// Java, Kotlin, Scala, C# and PHP.
    Java,
    /// C and C++.
    C,
    Other,
}

impl Family {
    pub fn of(language: &str) -> Family {
        match language {
            "python" => Family::Python,
            "rust" => Family::Rust,
            "javascript" | "typescript" | "tsx" => Family::Js,
            "go" => Family::Go,
            // Package- or namespace-scoped languages on the JVM and .NET, and PHP's
            // namespaces: a file declares its package, imports name a package and a type.
            "java" | "kotlin" | "scala" | "csharp" | "php" => Family::Java,
            "c" | "cpp" => Family::C,
            _ => Family::Other,
        }
    }

    /// Joins module, containers and name in qualified names.
    pub fn separator(self) -> &'static str {
        match self {
            Family::Rust | Family::C => "::",
            _ => ".",
        }
    }
}

/// A name in a skeleton: most identifiers fit in its 24 bytes inline, so a graph of millions
/// of references decodes without an allocation for each name (decoding was bound by them).
pub type Name = compact_str::CompactString;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DefNode {
    #[schemars(with = "String")]
    pub name: Name,
    pub kind: SymbolKind,
    #[schemars(with = "Vec<String>")]
    pub container: Box<[Name]>,
    /// The innermost enclosing definition in the same file.
    pub parent: Option<u32>,
    pub line: u32,
    pub end_line: u32,
    /// Byte offset of the name.
    pub name_byte: u32,
    /// The written types, boxed and only where there are any: a definition is 72 bytes, not
    /// 120, and a capped first build holds every definition of the tree (207,570 on 2.8M
    /// lines) while it resolves.
    pub typing: Option<Box<DefTypes>>,
}

/// A definition's written types.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DefTypes {
    /// Parameters with a written type (`request: Request` -> `("request", "Request")`), the
    /// type reduced to its path (`&mut Option<a::B>` -> `a::B`).
    #[schemars(with = "Vec<(String, String)>")]
    pub params: Box<[(Name, Name)]>,
    /// The written return type's path (`-> Response`, `): Promise<User>` -> `User`); for a
    /// field or variable, its declared type (`session: Session`, `private Repo repo;`).
    #[schemars(with = "Option<String>")]
    pub returns: Option<Name>,
}

impl DefTypes {
    /// `None` where there is no type to hold.
    pub fn boxed(params: Box<[(Name, Name)]>, returns: Option<Name>) -> Option<Box<DefTypes>> {
        (!params.is_empty() || returns.is_some()).then(|| Box::new(DefTypes { params, returns }))
    }
}

impl DefNode {
    /// [`DefTypes::params`], empty where none was written.
    pub fn params(&self) -> &[(Name, Name)] {
        self.typing.as_deref().map_or(&[], |t| &t.params)
    }

    /// [`DefTypes::returns`].
    pub fn returns(&self) -> Option<&Name> {
        self.typing.as_deref().and_then(|t| t.returns.as_ref())
    }
}

/// A local variable with a visible type: `value` is a callee (`Session`, `Cache::new`) whose
/// result it holds, or `type_name` its written type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BindingNode {
    #[schemars(with = "String")]
    pub name: Name,
    #[schemars(with = "Option<String>")]
    pub value: Option<Name>,
    #[schemars(with = "Option<String>")]
    pub type_name: Option<Name>,
    pub line: u32,
    pub enclosing: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefNode {
    pub kind: ReferenceKind,
    #[schemars(with = "String")]
    pub name: Name,
    #[schemars(with = "Option<String>")]
    pub receiver: Option<Name>,
    /// A macro invocation (`format!(..)`): only macros can be its target.
    pub macro_call: bool,
    pub line: u32,
    /// Byte offset of the name.
    pub name_byte: u32,
    pub enclosing: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileSkeleton {
    pub path: RepoPath,
    #[schemars(with = "String")]
    pub language: Name,
    #[schemars(with = "String")]
    pub module: Name,
    pub defs: Vec<DefNode>,
    pub refs: Vec<RefNode>,
    pub imports: Vec<Import>,
    pub bindings: Vec<BindingNode>,
}

impl FileSkeleton {
    /// The references of a skeleton made from `symbols`, alone (a build that reads them a
    /// batch of files at a time).
    pub fn refs_of(symbols: &FileSymbols) -> Vec<RefNode> {
        symbols.references.iter().map(ref_node).collect()
    }

    /// The typed local variables of a skeleton made from `symbols`, alone.
    pub fn bindings_of(symbols: &FileSymbols) -> Vec<BindingNode> {
        symbols
            .bindings
            .iter()
            .map(|b| BindingNode {
                name: Name::from(b.name.as_str()),
                value: b.value.as_deref().map(Name::from),
                type_name: b.type_name.as_deref().and_then(type_path).map(Name::from),
                line: b.line,
                enclosing: b.enclosing,
            })
            .collect()
    }

    pub fn new(path: RepoPath, language: &str, module: &str, symbols: &FileSymbols) -> FileSkeleton {
        let mut sk = FileSkeleton::heads(path, language, module, symbols);
        sk.refs = FileSkeleton::refs_of(symbols);
        sk.bindings = FileSkeleton::bindings_of(symbols);
        sk
    }

    /// What a build that resolves a batch of files at a time holds of every file: what other
    /// files resolve against (the definitions, the imports, the references naming a type's
    /// bases and [`FileSkeleton::interface_bindings`]). The other references and bindings,
    /// which only the file's own resolution reads, come with its batch; references are
    /// never made here, so that the heads of a whole tree are not scattered in memory among
    /// what they dropped.
    pub fn interface(path: RepoPath, language: &str, module: &str, symbols: &FileSymbols) -> FileSkeleton {
        let mut sk = FileSkeleton::heads(path, language, module, symbols);
        // Made one at a time and kept or dropped at once (a name fits inline: no allocation).
        let refs: Vec<RefNode> = symbols
            .references
            .iter()
            .map(ref_node)
            .filter(|r| super::Resolver::is_base_ref(&sk, r))
            .collect();
        sk.refs = refs;
        sk.bindings = FileSkeleton::bindings_of(symbols);
        sk.bindings = sk.interface_bindings();
        sk
    }

    /// The skeleton cut down to [`FileSkeleton::interface`].
    pub fn keep_interface(&mut self) {
        super::keep_base_refs(self);
        self.bindings = self.interface_bindings();
    }

    /// The bindings another file's resolution reads: a type's attributes assigned in its
    /// methods (`self.x = Session()`, `this.repo = ...`, read when another file calls
    /// through them), and every binding in scope where one is made (its value may name a
    /// local: `self.x = s.open()`) or where a type names its bases (`class A(make_base())`,
    /// resolved when another file asks for `A`'s bases), up to the module's.
    pub fn interface_bindings(&self) -> Vec<BindingNode> {
        let attributes = self
            .bindings
            .iter()
            .filter(|b| b.name.starts_with("self.") || b.name.starts_with("this."))
            .map(|b| b.enclosing);
        let bases = self
            .refs
            .iter()
            .filter(|r| super::Resolver::is_base_ref(self, r))
            .map(|r| r.enclosing);
        let mut scopes: Vec<Option<u32>> = Vec::new();
        for mut at in attributes.chain(bases) {
            while !scopes.contains(&at) {
                scopes.push(at);
                let Some(e) = at else { break };
                at = self.defs.get(e as usize).and_then(|d| d.parent);
            }
        }
        self.bindings
            .iter()
            .filter(|b| scopes.contains(&b.enclosing))
            .cloned()
            .collect()
    }

    /// Definitions and imports; no references, no bindings.
    fn heads(path: RepoPath, language: &str, module: &str, symbols: &FileSymbols) -> FileSkeleton {
        let family = Family::of(language);
        let parents = parents(symbols);
        let defs = symbols
            .definitions
            .iter()
            .zip(parents)
            .map(|(d, parent)| DefNode {
                name: Name::from(d.name.as_str()),
                kind: d.kind,
                container: d.container.iter().map(|c| Name::from(c.as_str())).collect(),
                parent,
                line: d.span.start_line,
                end_line: d.span.end_line,
                name_byte: d.name_span.start_byte,
                typing: DefTypes::boxed(
                    match d.kind {
                        SymbolKind::Function | SymbolKind::Method => {
                            let mut p = params(family, &d.signature);
                            if family == Family::Js {
                                jsdoc_params(d.doc.as_deref(), &mut p);
                            }
                            p.into_iter()
                                .map(|(a, b)| (Name::from(a), Name::from(b)))
                                .collect()
                        }
                        _ => Box::default(),
                    },
                    match d.kind {
                        SymbolKind::Function | SymbolKind::Method => match family {
                            Family::Java => java_returns(&d.signature, &d.name),
                            _ => returns(family, &d.signature).or_else(|| {
                                (family == Family::Js)
                                    .then(|| jsdoc_returns(d.doc.as_deref()?))
                                    .flatten()
                            }),
                        },
                        SymbolKind::Field | SymbolKind::Variable | SymbolKind::Constant => {
                            declared_type(family, &d.signature)
                        }
                        _ => None,
                    }
                    .map(Name::from),
                ),
            })
            .collect();
        FileSkeleton {
            path,
            language: Name::from(language),
            module: Name::from(module),
            defs,
            refs: Vec::new(),
            imports: symbols.imports.clone(),
            bindings: Vec::new(),
        }
    }

    pub fn family(&self) -> Family {
        Family::of(&self.language)
    }

    /// `module` + containers + name of definition `i`.
    pub fn qualified(&self, i: u32) -> String {
        self.qualify(self.local_name(i))
    }

    /// Containers + name of definition `i` (`Request.register_hook`), without the module.
    pub fn local_name(&self, i: u32) -> String {
        self.defs
            .get(i as usize)
            .map_or_else(String::new, |d| self.local_of(d))
    }

    /// Containers + name of `d`, a definition of this file (its `defs` may be held apart).
    pub fn local_of(&self, d: &DefNode) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(d.container.len() + 1);
        parts.extend(d.container.iter().map(Name::as_str));
        parts.push(&d.name);
        parts.join(self.family().separator())
    }

    /// `local` qualified by the module.
    pub fn qualify(&self, local: String) -> String {
        match self.module.is_empty() {
            true => local,
            false => format!("{}{}{local}", self.module, self.family().separator()),
        }
    }
}

fn ref_node(r: &crate::symbols::Reference) -> RefNode {
    RefNode {
        kind: r.kind,
        name: Name::from(r.name.as_str()),
        receiver: r.receiver.as_deref().map(Name::from),
        macro_call: r.callee.ends_with('!'),
        line: r.name_span.start_line,
        name_byte: r.name_span.start_byte,
        enclosing: r.enclosing,
    }
}

/// The innermost enclosing definition of each definition (definitions come outer-first).
fn parents(symbols: &FileSymbols) -> Vec<Option<u32>> {
    let defs = &symbols.definitions;
    let mut out = Vec::with_capacity(defs.len());
    let mut stack: Vec<usize> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        while let Some(&top) = stack.last() {
            if defs[top].span.contains(&d.span) && defs[top].span != d.span {
                break;
            }
            stack.pop();
        }
        out.push(stack.last().map(|&p| p as u32));
        stack.push(i);
    }
    out
}

/// Typed parameters from a signature. Python, Rust and TypeScript write `name: Type`, Go
/// `name Type` (its method receiver included), Java and C `Type name`.
fn params(family: Family, signature: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = signature;
    // Go methods have the receiver in the first parentheses, parameters in the second.
    let groups = if family == Family::Go { 2 } else { 1 };
    for _ in 0..groups {
        let Some((inner, after)) = parenthesized(rest) else {
            break;
        };
        rest = after;
        for p in split_top_level(inner) {
            if let Some((name, ty)) = param(family, p.trim()) {
                out.push((name, ty));
            }
        }
    }
    out
}

fn param(family: Family, p: &str) -> Option<(String, String)> {
    let p = p.split('=').next().unwrap_or(p).trim();
    let (name, ty) = match family {
        Family::Python | Family::Rust | Family::Js => {
            let (n, t) = p.split_once(':')?;
            let n = n.trim().trim_end_matches('?');
            let n = n.rsplit(char::is_whitespace).next().unwrap_or(n);
            (n.trim_start_matches("mut ").trim_start_matches('*'), t)
        }
        Family::Go => {
            let (n, t) = p.split_once(char::is_whitespace)?;
            (n, t)
        }
        Family::Java | Family::C => {
            let (t, n) = p.rsplit_once(char::is_whitespace)?;
            (n.trim_start_matches(['*', '&']), t)
        }
        Family::Other => return None,
    };
    let ty = type_path(ty)?;
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    ident(name).then(|| (name.to_string(), ty))
}

/// A field's or variable's declared type: `map: HashMap<K, V>`, `private final Repo repo;`,
/// `Addr string`, `session: Session = ...`.
fn declared_type(family: Family, signature: &str) -> Option<String> {
    const MODIFIERS: [&str; 10] = [
        "pub ",
        "private ",
        "public ",
        "protected ",
        "static ",
        "final ",
        "readonly ",
        "volatile ",
        "transient ",
        "declare ",
    ];
    let mut s = signature.split(['=', ';']).next().unwrap_or(signature).trim();
    loop {
        let before = s;
        for m in MODIFIERS {
            s = s.strip_prefix(m).unwrap_or(s).trim_start();
        }
        if let Some(rest) = s.strip_prefix("pub(")
            && let Some((_, after)) = rest.split_once(')')
        {
            s = after.trim_start();
        }
        if s == before {
            break;
        }
    }
    param(family, s).map(|(_, ty)| ty)
}

/// A Java method's return type, written before its name: `public static Element parse(..)`,
/// `<T> List<T> all()` (`void` and constructors give none).
fn java_returns(signature: &str, name: &str) -> Option<String> {
    let at = signature.find(&format!("{name}("))?;
    let before = signature[..at].trim_end();
    // The last type token at generic depth 0: `Map<String, List<X>>` stays one token.
    let mut depth = 0i32;
    let mut start = 0usize;
    for (i, c) in before.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let ty = &before[start..];
    const MODIFIERS: [&str; 10] = [
        "public",
        "private",
        "protected",
        "static",
        "final",
        "abstract",
        "synchronized",
        "native",
        "default",
        "strictfp",
    ];
    if ty.is_empty() || ty == "void" || ty.starts_with(['<', '@']) || MODIFIERS.contains(&ty) {
        return None;
    }
    type_path(ty)
}

/// JSDoc's `@returns {Command}` / `@return {Promise<User>}`: a plain JavaScript function's
/// written return type.
fn jsdoc_returns(doc: &str) -> Option<String> {
    doc.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("@returns").or_else(|| l.strip_prefix("@return"))?;
        // `@returns Command`, without braces, names a type when it is capitalized.
        let bare = || {
            let word = rest.split_whitespace().next()?;
            let word = word.trim_end_matches(['.', ',']);
            let typed = word.starts_with(|c: char| c.is_uppercase())
                && word
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'));
            typed.then(|| word.to_string())
        };
        jsdoc_type(rest).map(|(ty, _)| ty).or_else(bare)
    })
}

/// JSDoc's `@param {Option} option`: parameter types the signature does not write (those it
/// does write win).
fn jsdoc_params(doc: Option<&str>, params: &mut Vec<(String, String)>) {
    for l in doc.unwrap_or("").lines() {
        let Some(rest) = l.trim().strip_prefix("@param") else {
            continue;
        };
        let Some((ty, after)) = jsdoc_type(rest) else {
            continue;
        };
        let name: String = after
            .trim_start()
            .trim_start_matches('[')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if !name.is_empty() && !params.iter().any(|(n, _)| *n == name) {
            params.push((name, ty));
        }
    }
}

/// `{Type} rest` -> the type reduced to its path (a union or a record type gives none), and
/// the text after it.
fn jsdoc_type(text: &str) -> Option<(String, &str)> {
    let inner = text.trim_start().strip_prefix('{')?;
    let (ty, after) = inner.split_once('}')?;
    let ty = ty.trim().trim_start_matches(['?', '!']);
    let ty = ty.strip_prefix("Promise<").unwrap_or(ty);
    if ty.contains(['|', '(', '{', ',']) {
        return None;
    }
    Some((type_path(ty)?, after))
}

/// The return type written after the parameters: `-> T` (Python, Rust), `): T` (TypeScript),
/// `) T` (Go).
fn returns(family: Family, signature: &str) -> Option<String> {
    let (_, mut after) = parenthesized(signature)?;
    // A Go method: the receiver's parentheses came first; the parameters follow the name.
    if family == Family::Go && signature.starts_with("func (") {
        after = parenthesized(after)?.1;
    }
    let after = after.trim();
    let ty = match family {
        Family::Python | Family::Rust => after.strip_prefix("->")?,
        Family::Js => after.strip_prefix(':')?,
        // `(*Node, error)`, `(n *Node, err error)`: the first result's type.
        Family::Go => match after.strip_prefix('(') {
            Some(list) => {
                let first = list.split([',', ')']).next().unwrap_or(list).trim();
                first.rsplit(' ').next().unwrap_or(first)
            }
            None => after,
        },
        _ => return None,
    };
    let ty = ty.split(['{', ':']).next().unwrap_or(ty).trim();
    let ty = ty.strip_prefix("Promise<").unwrap_or(ty);
    let ty = ty.strip_prefix("Result<").unwrap_or(ty);
    type_path(ty)
}

/// `&mut Option<a::B<T>>` -> `a::B`; `Optional["Session"]` -> `Session`; `*http.Request` ->
/// `http.Request`. Wrappers that only add optionality or ownership are looked through.
fn type_path(ty: &str) -> Option<String> {
    const WRAPPERS: [&str; 13] = [
        "Option",
        "Optional",
        "Box",
        "Rc",
        "Arc",
        "RefCell",
        "Mutex",
        "Type",
        "unique_ptr",
        "shared_ptr",
        "weak_ptr",
        "optional",
        "reference_wrapper",
    ];
    let mut t = ty.trim();
    loop {
        t = t.trim_start_matches(['&', '*', '\'', '"', ' ', '[', ']']);
        let mut changed = false;
        for prefix in [
            "mut ",
            "dyn ",
            "impl ",
            "const ",
            "final ",
            "readonly ",
            "struct ",
        ] {
            if let Some(r) = t.strip_prefix(prefix) {
                t = r;
                changed = true;
            }
        }
        // A lifetime (`'a `) left after the `&`.
        if t.starts_with(|c: char| c.is_ascii_lowercase())
            && ty.contains('\'')
            && let Some((_, r)) = t.split_once(' ')
        {
            t = r;
            changed = true;
        }
        let end = t
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':' || c == '$'))
            .unwrap_or(t.len());
        let head = &t[..end];
        let last = head.rsplit(['.', ':']).next().unwrap_or(head);
        if WRAPPERS.contains(&last) && t[end..].starts_with(['<', '[']) {
            t = &t[end + 1..];
            continue;
        }
        if !changed {
            let head = head.trim_matches(|c| c == ':' || c == '.');
            return (!head.is_empty() && !head.starts_with(|c: char| c.is_ascii_digit()))
                .then(|| head.to_string());
        }
    }
}

/// The text inside the first balanced parentheses, and what follows them.
fn parenthesized(s: &str) -> Option<(&str, &str)> {
    let open = s.find('(')?;
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&s[open + 1..open + i], &s[open + i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits on commas outside brackets.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_field_types_per_language() {
        assert_eq!(
            declared_type(Family::Rust, "pub map: HashMap<K, V>"),
            Some("HashMap".into())
        );
        assert_eq!(
            declared_type(Family::Python, "session: Session = None"),
            Some("Session".into())
        );
        assert_eq!(declared_type(Family::Python, "timeout = DEFAULT_TIMEOUT"), None);
        assert_eq!(
            declared_type(Family::Java, "private final Repo repo;"),
            Some("Repo".into())
        );
        assert_eq!(
            declared_type(Family::Js, "private cache: Map<string, User> = new Map()"),
            Some("Map".into())
        );
        assert_eq!(
            declared_type(Family::Go, "handler nethttp.Handler"),
            Some("nethttp.Handler".into())
        );
    }

    #[test]
    fn return_types_per_language() {
        assert_eq!(
            returns(Family::Python, "def get(self, url) -> Response"),
            Some("Response".into())
        );
        assert_eq!(
            returns(Family::Rust, "pub fn new(cap: usize) -> Self"),
            Some("Self".into())
        );
        assert_eq!(
            returns(Family::Rust, "fn open(p: &Path) -> Result<Index, Error>"),
            Some("Index".into())
        );
        assert_eq!(
            returns(Family::Js, "async get(id: UserId): Promise<User>"),
            Some("User".into())
        );
        assert_eq!(
            returns(Family::Go, "func (s *Server) Client() *http.Client"),
            Some("http.Client".into())
        );
        assert_eq!(
            returns(Family::Go, "func (n *Node) Parent() (*Node, error)"),
            Some("Node".into())
        );
        assert_eq!(
            returns(Family::Go, "func Open(path string) *File"),
            Some("File".into())
        );
        assert_eq!(returns(Family::Python, "def f(x)"), None);
        assert_eq!(
            type_path("std::unique_ptr<EmitterState>").as_deref(),
            Some("EmitterState")
        );
        assert_eq!(
            type_path("const std::shared_ptr<detail::node>&").as_deref(),
            Some("detail::node")
        );
        assert_eq!(
            java_returns("public Element head()", "head").as_deref(),
            Some("Element")
        );
        assert_eq!(
            java_returns(
                "public static <T> Map<String, List<T>> group(List<T> xs)",
                "group"
            )
            .as_deref(),
            Some("Map")
        );
        assert_eq!(java_returns("public void run()", "run"), None);
        assert_eq!(java_returns("public Parser(TreeBuilder b)", "Parser"), None);
        assert_eq!(
            jsdoc_returns("Add an option.\n@param {string} flags\n@return {Command} `this` command")
                .as_deref(),
            Some("Command")
        );
        assert_eq!(jsdoc_returns("@returns {Promise<Help>}").as_deref(), Some("Help"));
        assert_eq!(jsdoc_returns("@returns {string | undefined}"), None);
        assert_eq!(jsdoc_returns("@returns Command").as_deref(), Some("Command"));
        assert_eq!(jsdoc_returns("@returns the number of lines"), None);
        let mut p = vec![("flags".to_string(), "Flags".to_string())];
        jsdoc_params(
            Some("@param {string} flags\n@param {Option} [option] the option"),
            &mut p,
        );
        assert_eq!(
            p,
            [
                ("flags".into(), "Flags".into()),
                ("option".into(), "Option".into())
            ]
        );
    }

    #[test]
    fn parameter_types_per_language() {
        assert_eq!(
            params(
                Family::Python,
                "def prepare(self, request: Request, n: int = 3) -> X"
            ),
            vec![("request".into(), "Request".into()), ("n".into(), "int".into())]
        );
        assert_eq!(
            params(Family::Python, "def f(s: Optional[models.Session])"),
            vec![("s".into(), "models.Session".into())]
        );
        assert_eq!(
            params(
                Family::Rust,
                "fn f<'a>(&self, c: &'a mut Cache<K, V>, o: Option<Box<dyn a::Tr>>)"
            ),
            vec![("c".into(), "Cache".into()), ("o".into(), "a::Tr".into())]
        );
        assert_eq!(
            params(
                Family::Go,
                "func (s *Server) Serve(w nethttp.ResponseWriter, n int) error"
            ),
            vec![
                ("s".into(), "Server".into()),
                ("w".into(), "nethttp.ResponseWriter".into()),
                ("n".into(), "int".into())
            ]
        );
        assert_eq!(
            params(Family::Java, "public void add(final List<T> items, int n)"),
            vec![("items".into(), "List".into()), ("n".into(), "int".into())]
        );
        assert_eq!(
            params(
                Family::Js,
                "constructor(private readonly http: HttpClient, id?: string)"
            ),
            vec![
                ("http".into(), "HttpClient".into()),
                ("id".into(), "string".into())
            ]
        );
    }
}
