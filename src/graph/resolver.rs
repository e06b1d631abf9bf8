//! `Resolver`: ties the references of one file to definitions, with a provenance for each.
//!
//! Order of rules (the first that answers wins): keywords (`self`, `Self`, `this`, `crate`,
//! `super`); typed parameters of the enclosing functions; the lexical scope of the file;
//! the file's imports (following package re-exports); glob imports; the same package (Go,
//! Java); included headers (C, C++). A receiver path is then walked segment by segment
//! through modules, types (their members and bases) and typed values. Only when the chain
//! breaks on a value of unknown type (or, for C and files with unresolved glob imports, on
//! an unbound name) does it fall back to name matching, kept as `name-unique` or
//! `name-ambiguous` with every candidate counted. A name bound to something outside the
//! repository stays unresolved and is counted as external: it is never guessed.

mod declared;

use std::collections::{HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use super::symbol_table::is_type_like;
use super::{
    BindingNode, ClassBases, DepSet, Deps, Family, FileSkeleton, Name, Provenance, RefNode, Space, SymbolId,
    SymbolTable,
};
use crate::lang::{ImportsName, LanguageSpec, PathKind};
use crate::symbols::{FileId, Import, ReferenceKind, SymbolKind};
use crate::util::{join_relative, strip_js_ext};
use declared::declared;

/// Most targets kept for one ambiguous reference (the count of all candidates is kept).
pub const MAX_TARGETS: usize = 8;
/// Re-export chains and base-class walks are bounded.
const MAX_DEPTH: u32 = 6;
const MAX_BASE_TYPES: usize = 64;

/// The targets of one resolution.
pub type Targets = smallvec::SmallVec<[SymbolId; 2]>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resolution {
    /// `None`: unresolved.
    pub provenance: Option<Provenance>,
    /// Inline up to two: most resolutions have one target, and a graph holds millions.
    pub targets: Targets,
    /// All candidates (more than `targets` when truncated).
    pub candidates: u32,
    /// Unresolved because the name is bound outside the repository (or is a builtin).
    pub external: bool,
}

impl Resolution {
    fn unresolved(external: bool) -> Resolution {
        Resolution {
            provenance: None,
            targets: Targets::new(),
            candidates: 0,
            external,
        }
    }

    fn of(provenance: Provenance, mut targets: Vec<SymbolId>) -> Resolution {
        targets.sort_unstable();
        targets.dedup();
        let candidates = targets.len() as u32;
        targets.truncate(MAX_TARGETS);
        Resolution {
            provenance: Some(provenance),
            targets: targets.into(),
            candidates,
            external: false,
        }
    }
}

/// Where an import leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportTarget {
    pub files: Vec<FileId>,
    pub external: bool,
}

#[derive(Debug, Clone)]
enum Entity {
    Module(String),
    Symbols(Vec<SymbolId>),
    /// A value whose type is known.
    Instance(SymbolId),
    External,
    /// A value of unknown type: name matching may guess.
    Unknown,
    /// A name that should be in the repository and is not: no guess.
    Missing,
    /// Files an import binds as a value (`local m = require("a.b")`, `@import("x.zig")`):
    /// their top-level definitions are its members.
    Files(Vec<FileId>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Via {
    Import,
    Qualified,
    Receiver,
    Scope,
}

impl Via {
    fn provenance(self) -> Provenance {
        match self {
            Via::Import => Provenance::Import,
            Via::Qualified => Provenance::Qualified,
            Via::Receiver => Provenance::Receiver,
            Via::Scope => Provenance::Scope,
        }
    }
}

pub struct Resolver<'t, 'a> {
    table: &'t SymbolTable<'a>,
    bases: &'t ClassBases<'t, 'a>,
    file: FileId,
    sk: &'a FileSkeleton,
    /// The file's typed local variables: its skeleton's, or given apart from it.
    bindings: &'a [BindingNode],
    fam: Family,
    /// The name space of this file's language (see `Space`).
    space: Space,
    /// This file's language, for the resolution a language outside the built-in families
    /// declares in its `language.toml`.
    spec: Option<&'static LanguageSpec>,
    sep: &'static str,
    /// (parent, name) -> definitions of this file.
    local: HashMap<(Option<u32>, &'a str), Vec<u32>>,
    /// JavaScript: top-level names of this file that CommonJS members were assigned to.
    js_objects: HashSet<&'a str>,
    /// C++: definitions outside their class body (`void Emitter::write() {..}`) -> the class.
    out_of_line: HashMap<u32, SymbolId>,
    import_lines: HashSet<u32>,
    open_glob: Option<bool>,
    merged_bases: HashSet<FileId>,
    /// Line of the reference being resolved (a binding must come before it).
    at_line: u32,
    /// Types of fields and attributes resolved in their own files, by (file, text).
    foreign_types: HashMap<(FileId, String), Option<SymbolId>>,
    binding_depth: u32,
    /// What `in_globs` found for a name in this file.
    glob_names: HashMap<String, Option<Vec<SymbolId>>>,
    /// The language's standard-library method names never matched by name on an unknown
    /// receiver (`grammars/<lang>/language.toml`'s `common_members`).
    common: Option<&'static HashSet<String>>,
    pub deps: DepSet,
}

impl<'t, 'a> Resolver<'t, 'a> {
    pub fn new(
        table: &'t SymbolTable<'a>,
        bases: &'t ClassBases<'t, 'a>,
        file: FileId,
    ) -> Option<Resolver<'t, 'a>> {
        let sk = table.file(file)?;
        let fam = sk.family();
        let space = table.space(file);
        let spec = crate::lang::LanguageRegistry::builtin()
            .ok()
            .and_then(|r| r.by_name(&sk.language));
        let local = local_names(sk, fam);
        let js_objects = js_objects(sk, fam, &local);
        // Their classes are looked up by name: a file depends on those names.
        let mut deps = DepSet::default();
        let out_of_line = out_of_line_defs(table, sk, fam, space, &mut deps);
        Some(Resolver {
            table,
            bases,
            file,
            sk,
            bindings: &sk.bindings,
            fam,
            space,
            spec,
            sep: fam.separator(),
            local,
            js_objects,
            out_of_line,
            import_lines: sk.imports.iter().map(|i| i.line).collect(),
            open_glob: None,
            merged_bases: HashSet::new(),
            at_line: 0,
            foreign_types: HashMap::new(),
            binding_depth: 0,
            glob_names: HashMap::new(),
            common: spec.map(|l| &l.common_members),
            deps,
        })
    }

    /// Whether reference `r` names a base of the type it sits in (`class A(B)`, `impl T for X`,
    /// `implements I`).
    pub fn is_base_ref(sk: &FileSkeleton, r: &RefNode) -> bool {
        let Some(d) = r.enclosing.and_then(|e| sk.defs.get(e as usize)) else {
            return false;
        };
        is_type_like(d.kind)
            && (r.kind == ReferenceKind::Implementation
                || (r.kind == ReferenceKind::Class && d.line == r.line))
    }

    /// The file's bindings given apart from the skeleton the table holds (a build holding a
    /// batch of files' bindings at a time).
    pub fn with_bindings(mut self, bindings: &'a [BindingNode]) -> Resolver<'t, 'a> {
        self.bindings = bindings;
        self
    }

    /// Resolves every reference and import of the file.
    pub fn resolve_file(self) -> (Vec<Resolution>, Vec<ImportTarget>, Deps) {
        let sk = self.sk;
        self.resolve_file_with(&sk.refs)
    }

    /// [`Resolver::resolve_file`] with the file's references given apart from the skeleton
    /// the table holds (a build holding a batch of files' references at a time).
    pub fn resolve_file_with(mut self, refs: &[RefNode]) -> (Vec<Resolution>, Vec<ImportTarget>, Deps) {
        let refs = refs.iter().map(|r| self.resolve(r)).collect();
        let imports = self.sk.imports.iter().map(|i| self.import_target(i)).collect();
        (refs, imports, self.deps.finish())
    }

    pub fn resolve(&mut self, r: &RefNode) -> Resolution {
        self.at_line = r.line;
        if r.macro_call {
            return self.resolve_macro(r);
        }
        let member_call = r.receiver.is_some();
        let (e, via) = match r.receiver.as_deref() {
            None => self.head(&r.name, r.enclosing, false, false),
            Some(recv) => self.through_receiver(r, recv),
        };
        let (e, via) = self.through_includers(r, e, via);
        // `x.len()` on a value whose type the graph cannot see is almost always the standard
        // library's `len`: the repository's one `len` must not collect every such call.
        let common_member = member_call && self.common.is_some_and(|c| c.contains(r.name.as_str()));
        match e {
            Entity::Symbols(v) if !v.is_empty() => Resolution::of(via.provenance(), v),
            Entity::External => Resolution::unresolved(true),
            Entity::Unknown if common_member => Resolution::unresolved(false),
            Entity::Unknown => self.by_name(r, member_call),
            // A receiver whose type is known but has no such member (it comes through a base
            // the graph cannot see): the name is still worth matching.
            Entity::Symbols(_) if via == Via::Receiver && !common_member => self.by_name(r, member_call),
            _ => Resolution::unresolved(false),
        }
    }

    /// What `r.name` is on the receiver `recv`: a path walked segment by segment, a value of
    /// a known type (`new(T)`, a cast, a call chain's result), or a base's member (`super()`).
    fn through_receiver(&mut self, r: &RefNode, recv: &str) -> (Entity, Via) {
        match segments(recv) {
            Some(segs) => self.along_path(r, recv, &segs),
            // Go's `new(Route).Path(..)`: a value of the argument's type.
            None if self.fam == Family::Go && recv.starts_with("new(") && recv.ends_with(')') => {
                let ty = &recv[4..recv.len() - 1];
                self.member_of_type(ty, &r.name)
            }
            // `((TextNode) node).text()`, `(x as Foo).bar()`: a value of the cast's type.
            None if let Some(ty) = cast_type(recv) => self.member_of_type(ty, &r.name),
            None if !recv.starts_with("super(") && last_callee(recv).is_some() => {
                // `make().send()`, `Base().check()`, `new Command().option(..).parse()`:
                // the result type of the call chain.
                match self.chain_type(recv, r.enclosing, 0) {
                    Some(t) => {
                        let found = self.member(t, &r.name);
                        (Entity::Symbols(found), Via::Receiver)
                    }
                    None => (Entity::Unknown, Via::Receiver),
                }
            }
            None if recv == "super()" || recv.starts_with("super(") => {
                match self.enclosing_type(r.enclosing) {
                    Some(t) => {
                        let found = self.member_in_bases(t, &r.name);
                        (Entity::Symbols(found), Via::Receiver)
                    }
                    None => (Entity::Unknown, Via::Receiver),
                }
            }
            None => (Entity::Unknown, Via::Receiver),
        }
    }

    /// A receiver path (`a.b`, `m::T`) walked from its head (or from the longest prefix a
    /// declared language names) segment by segment, then `r.name` on what it reached.
    fn along_path(&mut self, r: &RefNode, recv: &str, segs: &[&str]) -> (Entity, Via) {
        let is_path = recv.contains("::");
        let declared = match self.fam == Family::Other && segs.len() > 1 {
            true => self.declared_prefix(segs),
            false => None,
        };
        let (mut e, mut via, rest) = match declared {
            Some((e, k)) => (e, Via::Qualified, &segs[k..]),
            None => {
                let (e, via) = self.head(segs[0], r.enclosing, is_path, true);
                (e, via, &segs[1..])
            }
        };
        for s in rest {
            (e, via) = self.step(e, via, s, 0);
        }
        self.step(e, via, &r.name, 0)
    }

    /// `name` as a member of the type `ty` names, on a value of that type.
    fn member_of_type(&mut self, ty: &str, name: &str) -> (Entity, Via) {
        match self.type_entity(ty) {
            Entity::Symbols(v) => match v.into_iter().find(|s| self.is_type(*s)) {
                Some(t) => (Entity::Symbols(self.member(t, name)), Via::Receiver),
                None => (Entity::Unknown, Via::Receiver),
            },
            _ => (Entity::Unknown, Via::Receiver),
        }
    }

    /// A call on the implicit or explicit `self` of a mixin (a Ruby module's `halt`, a Python
    /// mixin's `self.render()`) that the type itself does not define: a method of the
    /// classes that include or inherit it. Anything else passes through.
    fn through_includers(&mut self, r: &RefNode, e: Entity, via: Via) -> (Entity, Via) {
        let nothing = match &e {
            // (Ruby calls any name it cannot see in scope external: `puts`, `raise`...)
            Entity::Unknown | Entity::Missing | Entity::External => true,
            Entity::Symbols(v) => v.is_empty(),
            _ => false,
        };
        match nothing && self.on_self(r) {
            true => match self.includers_members(r) {
                Some(v) => (Entity::Symbols(v), Via::Receiver),
                None => (e, via),
            },
            false => (e, via),
        }
    }

    /// Macros are visible crate-wide once exported or `#[macro_use]`d: the crate's own macro
    /// of that name, else name matching among macros; never a function of the same name.
    fn resolve_macro(&mut self, r: &RefNode) -> Resolution {
        self.deps.name(&r.name);
        let t = self.table;
        let root = |m: &str| m.split(self.sep).next().unwrap_or(m).to_string();
        let own = root(&self.sk.module);
        let macros: Vec<SymbolId> = t
            .by_name(self.space, &r.name)
            .iter()
            .copied()
            .filter(|s| t.def(*s).is_some_and(|d| d.kind == SymbolKind::Macro))
            .collect();
        let same_crate: Vec<SymbolId> = macros
            .iter()
            .copied()
            .filter(|s| t.file(s.file).is_some_and(|f| root(&f.module) == own))
            .collect();
        match (same_crate.is_empty(), macros.len()) {
            (false, _) => Resolution::of(Provenance::Scope, same_crate),
            (true, 0) => Resolution::unresolved(true),
            (true, 1) => Resolution::of(Provenance::NameUnique, macros),
            (true, _) => Resolution::of(Provenance::NameAmbiguous, macros),
        }
    }

    /// Name matching, restricted to members for `x.f()` and to non-members for `f()`.
    fn by_name(&mut self, r: &RefNode, member: bool) -> Resolution {
        self.deps.name(&r.name);
        let t = self.table;
        let fits = |s: &SymbolId| {
            t.def(*s).is_some_and(|d| {
                let is_member = d.kind == SymbolKind::Method
                    || d.parent
                        .and_then(|p| t.file(s.file).and_then(|f| f.defs.get(p as usize)))
                        .is_some_and(|p| is_type_like(p.kind));
                let kind_ok = match r.kind {
                    ReferenceKind::Call => matches!(
                        d.kind,
                        SymbolKind::Function
                            | SymbolKind::Method
                            | SymbolKind::Class
                            | SymbolKind::Struct
                            | SymbolKind::Macro
                    ),
                    _ => is_type_like(d.kind),
                };
                kind_ok && (is_member == member || !matches!(r.kind, ReferenceKind::Call))
            })
        };
        let found: Vec<SymbolId> = t
            .by_name(self.space, &r.name)
            .iter()
            .copied()
            .filter(fits)
            .collect();
        // Definitions sharing one qualified name are one symbol: a C++ declaration and its
        // out-of-line definition, overloads.
        let one_symbol = found.len() > 1 && {
            let q = |s: &SymbolId| t.file(s.file).map(|f| f.qualified(s.def));
            let first = q(&found[0]);
            first.is_some() && found.iter().all(|s| q(s) == first)
        };
        match found.len() {
            0 => Resolution::unresolved(false),
            1 => Resolution::of(Provenance::NameUnique, found),
            _ if one_symbol => Resolution::of(Provenance::NameUnique, found),
            _ => Resolution::of(Provenance::NameAmbiguous, found),
        }
    }

    /// `is_path`: written with `::`; `receiver`: the first segment of a receiver chain (an
    /// unbound lowercase name there is a local value, not something external).
    fn head(&mut self, h: &str, enclosing: Option<u32>, is_path: bool, receiver: bool) -> (Entity, Via) {
        if let Some(e) = self.keyword(h, enclosing, is_path) {
            return e;
        }
        if let Some(ty) = self.param_type(h, enclosing) {
            return match self.type_entity(&ty) {
                Entity::Symbols(v) => match v.into_iter().find(|s| self.is_type(*s)) {
                    Some(t) => (Entity::Instance(t), Via::Receiver),
                    None => (Entity::Unknown, Via::Receiver),
                },
                _ => (Entity::Unknown, Via::Receiver),
            };
        }
        // `res.send(..)` in the file that assigns `res.send = function ..`: the object's
        // member, whatever `res` was bound to.
        if receiver && let Some(m) = self.js_object(h) {
            return (Entity::Module(m), Via::Scope);
        }
        if let Some(e) = self.binding(h, enclosing) {
            return (e, Via::Receiver);
        }
        self.name_in_scope(h, enclosing, receiver)
    }

    /// A local variable of the enclosing functions whose type its initializer or annotation
    /// shows: the nearest scope's last binding before the reference.
    fn binding(&mut self, h: &str, enclosing: Option<u32>) -> Option<Entity> {
        if self.binding_depth > 2 {
            return None;
        }
        let (sk, bindings) = (self.sk, self.bindings);
        let mut at = enclosing;
        let found = loop {
            let mut candidates = bindings.iter().filter(|b| b.enclosing == at && b.name == h);
            let before = candidates.clone().rfind(|b| b.line <= self.at_line);
            if let Some(b) = before.or_else(|| candidates.next()) {
                break b;
            }
            at = sk.defs.get(at? as usize).and_then(|d| d.parent);
        };
        self.binding_depth += 1;
        let e = match (&found.type_name, &found.value) {
            (Some(ty), _) => self.type_entity(ty),
            (None, Some(v)) => self.value_type(v, enclosing),
            (None, None) => Entity::Unknown,
        };
        self.binding_depth -= 1;
        Some(match e {
            Entity::Symbols(v) => match v.into_iter().find(|s| self.is_type(*s)) {
                Some(t) => Entity::Instance(t),
                None => Entity::Unknown,
            },
            Entity::Instance(t) => Entity::Instance(t),
            _ => Entity::Unknown,
        })
    }

    /// The type of what calling `callee` returns: a class (its constructor), or a function
    /// whose written return type is `Self`, its own type, or a type of its module.
    fn value_type(&mut self, callee: &str, enclosing: Option<u32>) -> Entity {
        let Some(segs) = segments(callee) else {
            return Entity::Unknown;
        };
        let is_path = callee.contains("::");
        let (mut e, mut via) = self.head(segs[0], enclosing, is_path, segs.len() > 1);
        for s in &segs[1..] {
            (e, via) = self.step(e, via, s, 0);
        }
        let Entity::Symbols(v) = e else {
            return Entity::Unknown;
        };
        self.result_of(v)
    }

    /// The type a call chain evaluates to: `make()`, `new a.B(x)`, `a.b(x).c()` (each step a
    /// method's written result type), at most a few calls deep.
    fn chain_type(&mut self, recv: &str, enclosing: Option<u32>, depth: u32) -> Option<SymbolId> {
        if depth > 4 {
            return None;
        }
        let callee = last_callee(recv)?;
        let callee = callee.strip_prefix("new ").unwrap_or(callee).trim();
        // A chain over several lines: `program\n  .option(..)`.
        let compact: String = match callee.contains(['(', '"', '\'', '`']) {
            true => callee.to_string(),
            false => callee.split_whitespace().collect(),
        };
        let e = match segments(&compact) {
            Some(_) => self.value_type(&compact, enclosing),
            None => {
                let (obj, method) = callee.rsplit_once('.')?;
                let t = self.chain_type(obj.trim(), enclosing, depth + 1)?;
                let m = self.member(t, method.trim());
                self.result_of(m)
            }
        };
        match e {
            Entity::Instance(t) => Some(t),
            _ => None,
        }
    }

    /// What calling one of `v` gives: an instance of a class (its constructor), or of the
    /// written return type.
    fn result_of(&mut self, v: Vec<SymbolId>) -> Entity {
        let t = self.table;
        for s in v {
            let Some(d) = t.def(s) else { continue };
            if is_type_like(d.kind) {
                return Entity::Instance(s);
            }
            let Some(ret) = d.returns() else { continue };
            let Some(fsk) = t.file(s.file) else { continue };
            let owner = d.parent.and_then(|p| fsk.defs.get(p as usize).map(|pd| (p, pd)));
            if let Some((p, pd)) = owner
                && is_type_like(pd.kind)
                && (ret == "Self" || ret == "this" || *ret == pd.name)
            {
                let ty = SymbolId { file: s.file, def: p };
                // An impl block stands for its type.
                if pd.kind == SymbolKind::Impl {
                    let key = format!("{}{}{}", fsk.module, fsk.family().separator(), pd.name);
                    self.deps.name(&pd.name);
                    if let Some(real) = t.qualified(t.space(s.file), &key).first() {
                        return Entity::Instance(*real);
                    }
                }
                return Entity::Instance(ty);
            }
            let last = ret.rsplit(['.', ':']).next().unwrap_or(ret);
            let key = format!("{}{}{last}", fsk.module, fsk.family().separator());
            self.deps.name(last);
            if let Some(real) = t
                .qualified(t.space(s.file), &key)
                .iter()
                .find(|x| self.is_type(**x))
            {
                return Entity::Instance(*real);
            }
            // A type the function's file imports (`@return {Option}` with `Option` imported).
            let ret = ret.clone();
            if let Some(ty) = self.in_file(s.file, &ret, |r| r.type_entity(&ret)) {
                return Entity::Instance(ty);
            }
        }
        Entity::Unknown
    }

    /// A name without keywords or parameters: scope, imports, globs, package, includes.
    fn name_in_scope(&mut self, h: &str, enclosing: Option<u32>, receiver: bool) -> (Entity, Via) {
        // Only Python lets a module-level definition shadow an import of the same name; in
        // the other languages the two would conflict, so an import settles the name (and a
        // nameless top-level function, like an object literal's method, cannot take it).
        let python = self.fam == Family::Python;
        if let Some(v) = self.scope(h, enclosing, python) {
            return (Entity::Symbols(v), Via::Scope);
        }
        let sk = self.sk;
        let other = self.fam == Family::Other;
        let bound = |i: &&Import| match other {
            true => self.declared_binding(i) == Some(h),
            false => binding(self.fam, i) == Some(h),
        };
        if let Some(imp) = sk.imports.iter().rev().find(bound) {
            return (self.import_entity(self.file, imp, 0), Via::Import);
        }
        if !python && let Some(v) = self.visible(None, h) {
            return (Entity::Symbols(v), Via::Scope);
        }
        if self.fam == Family::Rust && self.table.is_root(self.space, h) {
            self.deps.module(h);
            return (Entity::Module(h.to_string()), Via::Qualified);
        }
        if let Some(v) = self.in_globs(h) {
            return (Entity::Symbols(v), Via::Import);
        }
        if other && let Some(found) = self.declared_unbound(h, enclosing) {
            return found;
        }
        if matches!(self.fam, Family::Go | Family::Java) && !sk.module.is_empty() {
            self.deps.name(h);
            let found = self
                .table
                .qualified(self.space, &format!("{}{}{h}", sk.module, self.sep));
            if !found.is_empty() {
                return (Entity::Symbols(found.to_vec()), Via::Scope);
            }
        }
        if self.fam == Family::C
            && let Some(v) = self.in_includes(h)
        {
            return (Entity::Symbols(v), Via::Import);
        }
        let open = self.fam == Family::C || self.has_open_glob();
        let value_like = h.starts_with(|c: char| c.is_lowercase() || c == '_');
        if open || (receiver && (value_like || self.fam == Family::Python)) {
            return (Entity::Unknown, Via::Scope);
        }
        (Entity::External, Via::Scope)
    }

    fn keyword(&mut self, h: &str, enclosing: Option<u32>, is_path: bool) -> Option<(Entity, Via)> {
        let fam = self.fam;
        let instance = match (fam, h) {
            (Family::Python, "self" | "cls")
            | (Family::Js | Family::Java | Family::C, "this")
            | (Family::Java, "$this") => true,
            (Family::Rust, "self") if !is_path => true,
            _ => false,
        };
        if instance {
            return Some(match self.enclosing_type(enclosing) {
                Some(t) => (Entity::Instance(t), Via::Receiver),
                None => match self.enclosing_object(enclosing) {
                    Some(m) => (Entity::Module(m), Via::Receiver),
                    None => (Entity::Unknown, Via::Receiver),
                },
            });
        }
        if fam != Family::Rust {
            return None;
        }
        let module = self.sk.module.as_str();
        let m = match h {
            "Self" => {
                return Some(match self.enclosing_type(enclosing) {
                    Some(t) => (Entity::Instance(t), Via::Receiver),
                    None => (Entity::Unknown, Via::Receiver),
                });
            }
            "self" => module.to_string(),
            "crate" => module.split("::").next().unwrap_or(module).to_string(),
            "super" => parent_module(module, "::"),
            _ => return None,
        };
        Some((Entity::Module(m), Via::Qualified))
    }

    /// Definitions named `h` visible from `enclosing`: nested first, then outwards. Class
    /// bodies are not scopes for their methods except in Java and C++.
    fn scope(&mut self, h: &str, enclosing: Option<u32>, top_level: bool) -> Option<Vec<SymbolId>> {
        // Ruby and Swift methods call their siblings without `self`; a Zig container's
        // declarations are in scope in its body.
        let class_scopes = matches!(self.fam, Family::Java | Family::C | Family::Other);
        let mut at = enclosing;
        for _ in 0..64 {
            if at.is_none() && !top_level {
                return None;
            }
            let skip = at
                .and_then(|a| self.sk.defs.get(a as usize))
                .is_some_and(|d| is_type_like(d.kind) && !class_scopes);
            if !skip && let Some(v) = self.visible(at, h) {
                return Some(v);
            }
            // `void Emitter::Write() { m_pState->.. }`: the class's members are in scope.
            if let Some(class) = at.and_then(|a| self.out_of_line_class(a)) {
                let m = self.member(class, h);
                if !m.is_empty() {
                    return Some(m);
                }
            }
            at = self.sk.defs.get(at? as usize).and_then(|d| d.parent);
        }
        None
    }

    /// The class of a C++ member defined outside its class body (`void Emitter::Write() {..}`
    /// in a `.cpp`), found by its qualified name.
    fn out_of_line_class(&self, def: u32) -> Option<SymbolId> {
        self.out_of_line.get(&def).copied()
    }

    fn visible(&self, at: Option<u32>, h: &str) -> Option<Vec<SymbolId>> {
        let v: Vec<SymbolId> = self
            .local
            .get(&(at, h))?
            .iter()
            .filter(|&&i| {
                // `x = require("x")` is both a constant and an import: the import wins.
                self.sk.defs.get(i as usize).is_some_and(|d| {
                    !(matches!(d.kind, SymbolKind::Variable | SymbolKind::Constant)
                        && self.import_lines.contains(&d.line))
                })
            })
            .map(|&i| SymbolId {
                file: self.file,
                def: i,
            })
            .collect();
        (!v.is_empty()).then_some(v)
    }

    fn param_type(&self, h: &str, enclosing: Option<u32>) -> Option<String> {
        let mut at = enclosing;
        for _ in 0..64 {
            let d = self.sk.defs.get(at? as usize)?;
            if let Some((_, ty)) = d.params().iter().find(|(n, _)| n == h) {
                return Some(ty.to_string());
            }
            at = d.parent;
        }
        None
    }

    /// A written type (`models.Session`, `crate::a::B`) to what it names.
    fn type_entity(&mut self, ty: &str) -> Entity {
        let Some(segs) = segments(ty) else {
            return Entity::Unknown;
        };
        let (mut e, mut via) = match self.keyword(segs[0], None, true) {
            Some(k) => k,
            None => self.name_in_scope(segs[0], None, false),
        };
        for s in &segs[1..] {
            (e, via) = self.step(e, via, s, 0);
        }
        e
    }

    fn enclosing_type(&self, enclosing: Option<u32>) -> Option<SymbolId> {
        let mut at = enclosing;
        for _ in 0..64 {
            let i = at?;
            let d = self.sk.defs.get(i as usize)?;
            if is_type_like(d.kind) {
                return Some(SymbolId {
                    file: self.file,
                    def: i,
                });
            }
            if let Some(class) = self.out_of_line_class(i) {
                return Some(class);
            }
            at = d.parent;
        }
        None
    }

    /// JavaScript's CommonJS members (`res.send = function ..`, `Foo.prototype.bar = ..`):
    /// the object an enclosing method was assigned to, as the namespace its members are
    /// qualified in (`lib/response.res`).
    fn enclosing_object(&self, enclosing: Option<u32>) -> Option<String> {
        if self.fam != Family::Js {
            return None;
        }
        let mut at = enclosing;
        for _ in 0..64 {
            let d = self.sk.defs.get(at? as usize)?;
            if d.kind == SymbolKind::Method && !d.container.is_empty() && d.parent.is_none() {
                return self.js_object(&d.container.join(self.sep));
            }
            at = d.parent;
        }
        None
    }

    /// A name declared at the top of this file that CommonJS members were assigned to (`res`
    /// of `var res = ..; res.send = ..`); a global (`Date.now = ..` in a test) is not one.
    fn js_object(&self, h: &str) -> Option<String> {
        self.js_objects
            .contains(h)
            .then(|| format!("{}{}{h}", self.sk.module, self.sep))
    }

    fn is_type(&self, s: SymbolId) -> bool {
        self.table.def(s).is_some_and(|d| is_type_like(d.kind))
    }

    /// One segment further along a path.
    fn step(&mut self, e: Entity, via: Via, seg: &str, depth: u32) -> (Entity, Via) {
        match e {
            Entity::Module(m) => (self.in_module(&m, seg, depth), via),
            Entity::Symbols(v) => {
                let Some(&first) = v.iter().find(|s| self.is_type(**s)).or(v.first()) else {
                    return (Entity::Missing, via);
                };
                let Some(d) = self.table.def(first) else {
                    return (Entity::Missing, via);
                };
                let via = if via == Via::Scope { Via::Qualified } else { via };
                if matches!(d.kind, SymbolKind::Module | SymbolKind::Namespace) {
                    let q = self
                        .table
                        .file(first.file)
                        .map(|f| f.qualified(first.def))
                        .unwrap_or_default();
                    return (self.in_module(&q, seg, depth), via);
                }
                if is_type_like(d.kind) {
                    let found = self.member(first, seg);
                    return match found.is_empty() {
                        true => (Entity::Unknown, via),
                        false => (Entity::Symbols(found), via),
                    };
                }
                // A field or variable with a declared type: a value of that type.
                if let Some(ty) = self.declared_type_of(first) {
                    return self.step(Entity::Instance(ty), Via::Receiver, seg, depth);
                }
                (Entity::Unknown, via)
            }
            Entity::Files(files) => match self.file_members(&files, seg) {
                v if v.is_empty() => (Entity::Missing, via),
                v => (Entity::Symbols(v), via),
            },
            Entity::Instance(t) => {
                let found = self.member(t, seg);
                if found.is_empty()
                    && let Some(ty) = self.attribute_type(t, seg)
                {
                    // `self.session = Session()` in a method: an attribute without a definition.
                    return (Entity::Instance(ty), Via::Receiver);
                }
                match found.is_empty() {
                    true => (Entity::Unknown, Via::Receiver),
                    false => (Entity::Symbols(found), Via::Receiver),
                }
            }
            other => (other, via),
        }
    }

    /// The type a field or variable is declared with, resolved where it is declared.
    fn declared_type_of(&mut self, s: SymbolId) -> Option<SymbolId> {
        let d = self.table.def(s)?;
        if !matches!(
            d.kind,
            SymbolKind::Field | SymbolKind::Variable | SymbolKind::Constant
        ) {
            return None;
        }
        let ty = d.returns()?.as_str();
        self.in_file(s.file, ty, |r| r.type_entity(ty))
    }

    /// The type of `self.<attr>` / `this.<attr>` assigned a constructed value in a method of
    /// type `t` (in `t`'s own file).
    fn attribute_type(&mut self, t: SymbolId, attr: &str) -> Option<SymbolId> {
        let fsk = self.table.file(t.file)?;
        self.deps.files.insert(t.file.0);
        let b = fsk.bindings.iter().find(|b| {
            b.name
                .strip_prefix("self.")
                .or_else(|| b.name.strip_prefix("this."))
                == Some(attr)
                && b.enclosing
                    .and_then(|e| fsk.defs.get(e as usize))
                    .is_some_and(|m| m.parent == Some(t.def))
        })?;
        let value = b.value.clone()?;
        let enclosing = b.enclosing;
        let key = format!("{value}\u{0}{enclosing:?}");
        self.in_file(t.file, &key, |r| r.value_type(&value, enclosing))
    }

    /// Runs `f` as the resolver of `file` (this one, or a nested one whose reads are added to
    /// this file's dependencies), keeping a type, memoized by `key`.
    fn in_file(
        &mut self,
        file: FileId,
        key: &str,
        f: impl FnOnce(&mut Resolver<'t, 'a>) -> Entity,
    ) -> Option<SymbolId> {
        let memo = (file, key.to_string());
        if let Some(hit) = self.foreign_types.get(&memo) {
            return *hit;
        }
        if self.binding_depth > 2 {
            return None;
        }
        let instance = |r: &Resolver<'t, 'a>, e: Entity| match e {
            Entity::Instance(t) => Some(t),
            Entity::Symbols(v) => v.into_iter().find(|s| r.is_type(*s)),
            _ => None,
        };
        let found = if file == self.file {
            self.binding_depth += 1;
            let e = f(self);
            self.binding_depth -= 1;
            instance(self, e)
        } else {
            let mut sub = Resolver::new(self.table, self.bases, file)?;
            sub.binding_depth = self.binding_depth + 1;
            sub.at_line = u32::MAX;
            let e = f(&mut sub);
            let found = instance(&sub, e);
            self.deps.absorb(sub.deps);
            self.deps.files.insert(file.0);
            found
        };
        self.foreign_types.insert(memo, found);
        found
    }

    /// `seg` inside module `m`: a submodule, a definition, or a re-export of the module.
    fn in_module(&mut self, m: &str, seg: &str, depth: u32) -> Entity {
        let (t, fam, sep, space) = (self.table, self.fam, self.sep, self.space);
        let sub = match m.is_empty() {
            true => seg.to_string(),
            false => format!("{m}{sep}{seg}"),
        };
        self.deps.module(&sub);
        self.deps.name(seg);
        if !t.module(space, &sub).is_empty() {
            return Entity::Module(sub);
        }
        let found = t.qualified(space, &sub);
        if !found.is_empty() {
            return Entity::Symbols(found.to_vec());
        }
        // `mod testenv;` in `tests/cli.rs`: a module under `tests/` is shared by the suites
        // that declare it and is named on its own (`testenv`), not `cli::testenv`.
        if fam == Family::Rust
            && !m.contains("::")
            && in_test_suite(self.sk.path.as_str())
            && t.module(space, seg)
                .iter()
                .any(|f| t.file(*f).is_some_and(|x| in_test_suite(x.path.as_str())))
        {
            self.deps.module(seg);
            return Entity::Module(seg.to_string());
        }
        self.deps.module(m);
        let files = t.module(space, m);
        // Java packages and Go packages re-export nothing: what a file of the package imports
        // is not a name of the package, so there is no walk through the package's files (on
        // a large package reached through glob imports that walk was most of a build).
        if depth >= MAX_DEPTH || matches!(fam, Family::Java | Family::Go) {
            return match files.is_empty() && !self.in_repo(m) {
                true => Entity::External,
                false => Entity::Missing,
            };
        }
        for &f in files {
            self.deps.files.insert(f.0);
            let Some(fsk) = t.file(f) else { continue };
            if let Some(imp) = fsk.imports.iter().rev().find(|i| binding(fam, i) == Some(seg)) {
                return self.import_entity(f, imp, depth + 1);
            }
            for imp in fsk.imports.iter().filter(|i| i.glob && i.alias.is_none()) {
                if let Some(m2) = self.import_module(f, &imp.path)
                    && let e @ (Entity::Symbols(_) | Entity::Module(_)) = self.in_module(&m2, seg, depth + 1)
                {
                    return e;
                }
            }
        }
        match files.is_empty() && !self.in_repo(m) {
            true => Entity::External,
            false => Entity::Missing,
        }
    }

    fn in_repo(&mut self, m: &str) -> bool {
        let root = m.split(self.sep).next().unwrap_or(m);
        self.deps.module(root);
        self.table.is_root(self.space, root)
    }

    /// Whether `r` is a call on `self`: written so (`self.x()`), or a receiver-less call in a
    /// Ruby method, where `self` is implicit.
    fn on_self(&self, r: &RefNode) -> bool {
        r.kind == ReferenceKind::Call
            && match r.receiver.as_deref() {
                Some(recv) => recv == "self",
                None => self.sk.language == "ruby",
            }
    }

    /// Methods named as `r` calls of the types that include or inherit the type enclosing `r`
    /// (bounded), each looked up with its own bases.
    fn includers_members(&mut self, r: &RefNode) -> Option<Vec<SymbolId>> {
        // A Ruby module is no type, but it is what `include` names.
        let mut at = r.enclosing;
        let mixin = loop {
            let i = at?;
            let d = self.sk.defs.get(i as usize)?;
            if is_type_like(d.kind) || d.kind == SymbolKind::Module {
                break SymbolId {
                    file: self.file,
                    def: i,
                };
            }
            at = d.parent;
        };
        self.deps.name(&r.name);
        // The first by id, not by the map's order: which types are read (and so the
        // resolution and what it depends on) must not change from one run to the next.
        let mut includers: Vec<SymbolId> = self.bases.includers(mixin);
        includers.sort_unstable();
        includers.truncate(MAX_BASE_TYPES);
        let mut found: Vec<SymbolId> = Vec::new();
        for t in includers {
            self.merge_base_deps(t.file);
            for s in self.member(t, &r.name) {
                if !found.contains(&s) {
                    found.push(s);
                }
            }
        }
        found.sort_unstable();
        (!found.is_empty()).then_some(found)
    }

    /// Members named `name` of type `t`, then of its bases (breadth first, bounded).
    fn member(&mut self, t: SymbolId, name: &str) -> Vec<SymbolId> {
        let mut queue = VecDeque::from([t]);
        let mut seen = HashSet::new();
        while let Some(ty) = queue.pop_front() {
            if !seen.insert(ty) || seen.len() > MAX_BASE_TYPES {
                continue;
            }
            let found = self.own_member(ty, name);
            if !found.is_empty() {
                return found;
            }
            if let Some(bs) = self.bases.of(ty) {
                self.merge_base_deps(ty.file);
                queue.extend(bs);
            }
        }
        Vec::new()
    }

    fn member_in_bases(&mut self, t: SymbolId, name: &str) -> Vec<SymbolId> {
        self.merge_base_deps(t.file);
        let bases = self.bases.of(t).unwrap_or_default();
        bases
            .into_iter()
            .map(|b| self.member(b, name))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    }

    fn merge_base_deps(&mut self, f: FileId) {
        if self.merged_bases.insert(f)
            && let Some(d) = self.bases.deps_of(f)
        {
            self.deps.merge(&d);
        }
        self.deps.files.insert(f.0);
    }

    fn own_member(&mut self, ty: SymbolId, name: &str) -> Vec<SymbolId> {
        let t = self.table;
        self.deps.files.insert(ty.file.0);
        self.deps.name(name);
        let Some(fsk) = t.file(ty.file) else {
            return Vec::new();
        };
        let fam = fsk.family();
        let key = format!("{}{}{name}", fsk.qualified(ty.def), fam.separator());
        let found = t.qualified(t.space(ty.file), &key);
        if !found.is_empty() {
            return found.to_vec();
        }
        let Some(d) = t.def(ty) else {
            return Vec::new();
        };
        if !matches!(fam, Family::Rust | Family::Go | Family::C) {
            return Vec::new();
        }
        let root = |m: &str| -> String {
            match fam {
                Family::Rust => m.split("::").next().unwrap_or(m).to_string(),
                _ => m.to_string(),
            }
        };
        let own_root = root(&fsk.module);
        t.members(t.space(ty.file), &d.name, name)
            .into_iter()
            .filter(|s| fam == Family::C || t.file(s.file).is_some_and(|f| root(&f.module) == own_root))
            .collect()
    }

    /// `h` through the file's glob imports, once per name and file: the answer (and the
    /// dependencies it recorded) holds for every later reference to the same name.
    fn in_globs(&mut self, h: &str) -> Option<Vec<SymbolId>> {
        if let Some(known) = self.glob_names.get(h) {
            return known.clone();
        }
        let sk = self.sk;
        let mut found = None;
        for imp in sk.imports.iter().filter(|i| i.glob && i.alias.is_none()) {
            let Some(m) = self.import_module(self.file, &imp.path) else {
                continue;
            };
            if let Entity::Symbols(v) = self.in_module(&m, h, MAX_DEPTH - 2) {
                found = Some(v);
                break;
            }
        }
        self.glob_names.insert(h.to_string(), found.clone());
        found
    }

    fn has_open_glob(&mut self) -> bool {
        if let Some(o) = self.open_glob {
            return o;
        }
        let sk = self.sk;
        let mut open = false;
        for imp in sk.imports.iter().filter(|i| i.glob && i.alias.is_none()) {
            open |= self.import_module(self.file, &imp.path).is_none();
        }
        self.open_glob = Some(open);
        open
    }

    fn in_includes(&mut self, h: &str) -> Option<Vec<SymbolId>> {
        let files: HashSet<FileId> = self
            .sk
            .imports
            .iter()
            .flat_map(|i| self.include_files(self.file, &i.path))
            .collect();
        if files.is_empty() {
            return None;
        }
        self.deps.name(h);
        let t = self.table;
        let v: Vec<SymbolId> = t
            .by_name(self.space, h)
            .iter()
            .copied()
            .filter(|s| files.contains(&s.file) && t.def(*s).is_some_and(|d| d.container.is_empty()))
            .collect();
        (!v.is_empty()).then_some(v)
    }

    fn include_files(&mut self, from: FileId, path: &str) -> Vec<FileId> {
        let t = self.table;
        let dir = t.file(from).map(|f| f.path.parent()).unwrap_or("");
        let joined = join_relative(dir, path);
        self.deps.module(&joined);
        if let Some(f) = t.path(&joined) {
            return vec![f];
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        self.deps.module(name);
        t.files_named(name)
            .iter()
            .copied()
            .filter(|f| t.file(*f).is_some_and(|s| s.path.as_str().ends_with(path)))
            .collect()
    }

    fn import_entity(&mut self, from: FileId, imp: &Import, depth: u32) -> Entity {
        if let Some(e) = self.declared_import(from, imp, depth) {
            return e;
        }
        let Some(m) = self.import_module(from, &imp.path) else {
            return Entity::External;
        };
        let fam = self.table.family(from);
        if fam == Family::Js && imp.name.is_none() && !imp.glob {
            // A default import: what the module exports as default is not modelled.
            self.deps.module(&m);
            return Entity::Unknown;
        }
        match &imp.name {
            Some(n) => self.in_module(&m, n, depth),
            None if fam == Family::Python && imp.alias.is_none() => {
                // `import a.b.c` binds `a`.
                Entity::Module(m.split('.').next().unwrap_or(&m).to_string())
            }
            None => Entity::Module(m),
        }
    }

    /// The module an import path names, as seen from file `from`; `None` when it is outside
    /// the repository.
    fn import_module(&mut self, from: FileId, path: &str) -> Option<String> {
        let t = self.table;
        let fsk = t.file(from)?;
        let fam = fsk.family();
        let space = t.space(from);
        let m = match fam {
            Family::Python => python_module(fsk, path),
            Family::Rust => self.rust_module(fsk, space, path),
            Family::Js => return self.js_module(fsk, space, path),
            Family::Go | Family::Java => path.to_string(),
            Family::Other => return self.declared_module(fsk, space, path),
            Family::C => return None,
        };
        let sep = fam.separator();
        let root = m.split(sep).next().unwrap_or(&m);
        self.deps.module(root);
        self.deps.module(&m);
        let in_repo = match fam {
            Family::Python | Family::Rust => t.is_root(space, root),
            _ => !t.module(space, &m).is_empty(),
        };
        in_repo.then_some(m)
    }

    /// A Rust `use` path as a module: `crate`, `self` and `super` made absolute, a first
    /// segment naming a child module of this one made relative to it.
    fn rust_module(&mut self, fsk: &FileSkeleton, space: Space, path: &str) -> String {
        let t = self.table;
        let module = fsk.module.as_str();
        let mut segs = path.split("::");
        let first = segs.next().unwrap_or("");
        let rest: Vec<&str> = segs.collect();
        let mut base = match first {
            "crate" => module.split("::").next().unwrap_or(module).to_string(),
            "self" => module.to_string(),
            "super" => parent_module(module, "::"),
            _ => {
                let relative = format!("{module}::{first}");
                self.deps.module(&relative);
                self.deps.name(first);
                let local_mod =
                    !t.module(space, &relative).is_empty() || !t.qualified(space, &relative).is_empty();
                match local_mod {
                    true => relative,
                    false => first.to_string(),
                }
            }
        };
        let mut rest = rest.as_slice();
        // `use crate::testenv::..` in a suite under `tests/`: see `in_module`.
        if first == "crate"
            && in_test_suite(fsk.path.as_str())
            && let Some((next, more)) = rest.split_first()
            && t.module(space, &format!("{base}::{next}")).is_empty()
            && !t.module(space, next).is_empty()
        {
            base = next.to_string();
            rest = more;
        }
        for s in rest {
            base = match *s {
                "super" => parent_module(&base, "::"),
                _ => format!("{base}::{s}"),
            };
        }
        base
    }

    /// A JavaScript import path as a module (relative, or a package or alias the repository
    /// holds); `None` when it is outside the repository.
    fn js_module(&mut self, fsk: &FileSkeleton, space: Space, path: &str) -> Option<String> {
        let t = self.table;
        let joined = match path.starts_with('.') {
            true => join_relative(fsk.path.parent(), path),
            // A package importing itself by name, a workspace sibling, a tsconfig path.
            false => t.js_alias(path)?,
        };
        let stripped = strip_js_ext(&joined);
        // `./index.js` at the root is the root module, named `""`.
        let m = match stripped {
            "index" => String::new(),
            _ => stripped.strip_suffix("/index").unwrap_or(stripped).to_string(),
        };
        self.deps.module(&m);
        (!t.module(space, &m).is_empty()).then_some(m)
    }

    /// An import of a language that declares what its imports name (modules or definitions);
    /// `None` when it is outside the repository.
    fn declared_module(&mut self, fsk: &FileSkeleton, space: Space, path: &str) -> Option<String> {
        let t = self.table;
        match declared(&fsk.language).map(|s| s.imports_name) {
            Some(ImportsName::Modules) => {
                self.deps.module(path);
                (!t.module(space, path).is_empty()).then(|| path.to_string())
            }
            Some(ImportsName::Definitions) => {
                self.deps.name(path.rsplit('.').next().unwrap_or(path));
                self.deps.name(path);
                (!t.qualified(space, path).is_empty()).then(|| path.to_string())
            }
            _ => None,
        }
    }

    /// The files an import leads to.
    fn import_target(&mut self, imp: &Import) -> ImportTarget {
        if let Some(mut files) = self.declared_import_files(imp) {
            files.sort_unstable();
            files.dedup();
            files.retain(|f| *f != self.file);
            let external = files.is_empty();
            return ImportTarget { files, external };
        }
        if self.fam == Family::C {
            let files = self.include_files(self.file, &imp.path);
            let external = files.is_empty();
            return ImportTarget { files, external };
        }
        let Some(m) = self.import_module(self.file, &imp.path) else {
            return ImportTarget {
                files: Vec::new(),
                external: true,
            };
        };
        let mut files: Vec<FileId> = match &imp.name {
            Some(n) => match self.in_module(&m, n, 0) {
                Entity::Module(sub) => self.table.module(self.space, &sub).to_vec(),
                Entity::Symbols(v) => v.iter().map(|s| s.file).collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        if files.is_empty() {
            files = self.table.module(self.space, &m).to_vec();
        }
        files.sort_unstable();
        files.dedup();
        files.retain(|f| *f != self.file);
        ImportTarget {
            files,
            external: false,
        }
    }
}

/// The local name an import binds (`import numpy as np` -> `np`, `from x import y` -> `y`).
pub fn binding(fam: Family, i: &Import) -> Option<&str> {
    if i.glob {
        // `import * as ns` / `const ns = require(..)` bind the namespace; `use a::*` nothing.
        return i.alias.as_deref();
    }
    if let Some(a) = &i.alias {
        return Some(a);
    }
    if let Some(n) = &i.name {
        return Some(n);
    }
    match fam {
        Family::Python => i.path.split('.').find(|s| !s.is_empty()),
        Family::Go => i.path.rsplit('/').next(),
        Family::Rust => i.path.rsplit("::").next(),
        Family::Java => i.path.rsplit('.').next(),
        _ => None,
    }
}

/// Identifier segments of a receiver or type path (`self.a`, `crate::b::C`, `Vec::<u8>`),
/// generic arguments skipped; `None` for expressions (calls, indexing, literals).
pub fn segments(s: &str) -> Option<Vec<&str>> {
    let b = s.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut out = Vec::new();
    let (mut i, mut expect_ident) = (0usize, true);
    while i < b.len() {
        let c = b[i];
        if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            if !expect_ident {
                return None;
            }
            out.push(&s[start..i]);
            expect_ident = false;
        } else if s[i..].starts_with("::") || s[i..].starts_with("->") {
            i += 2;
            expect_ident = true;
        } else if c == b'.' {
            i += 1;
            expect_ident = true;
        } else if c == b'<' {
            let mut depth = 0i32;
            while i < b.len() {
                match b[i] {
                    b'<' => depth += 1,
                    b'>' => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            expect_ident = false;
        } else if c == b' ' {
            i += 1;
        } else {
            return None;
        }
    }
    (!out.is_empty() && !expect_ident).then_some(out)
}

/// `a.b(x, y)` -> `a.b`: the callee of a receiver that is one call on a plain path.
/// The type a parenthesized cast names: `((TextNode) node)` -> `TextNode`, `(x as Foo)` ->
/// `Foo`.
fn cast_type(recv: &str) -> Option<&str> {
    let inner = recv.strip_prefix('(')?.strip_suffix(')')?.trim();
    let ty = match inner.strip_prefix('(') {
        Some(rest) => rest.split_once(')')?.0.trim(),
        None => inner.rsplit_once(" as ")?.1.trim(),
    };
    segments(ty).is_some().then_some(ty)
}

/// A Rust file under a `tests/` folder (the first test folder on its path, by
/// [`PathKind::test_folder`]): an integration suite or a module suites share.
fn in_test_suite(path: &str) -> bool {
    PathKind::test_folder(path).is_some_and(|(_, folder)| folder.eq_ignore_ascii_case("tests"))
}

/// The callee text of the last call in `recv` (`a.b(x).c` of `a.b(x).c(y)`), `None` when
/// `recv` is not a call.
fn last_callee(recv: &str) -> Option<&str> {
    let body = recv.trim_end().strip_suffix(')')?;
    let mut depth = 1i32;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let callee = body[..i].trim_end();
                    return (!callee.is_empty()).then_some(callee);
                }
            }
            _ => {}
        }
    }
    None
}

/// (parent, name) -> the file's definitions that are names in their scope.
fn local_names(sk: &FileSkeleton, fam: Family) -> HashMap<(Option<u32>, &str), Vec<u32>> {
    let mut local: HashMap<(Option<u32>, &str), Vec<u32>> = HashMap::new();
    for (i, d) in sk.defs.iter().enumerate() {
        // A Go method (`func (f *FlagSet) Set`) or a CommonJS member (`res.send = ..`) sits
        // at the top level of its file but is not a name there: only its receiver reaches it.
        let out_of_line =
            matches!(fam, Family::Go | Family::Js) && d.parent.is_none() && !d.container.is_empty();
        if d.kind != SymbolKind::Impl && !out_of_line {
            local
                .entry((d.parent, d.name.as_str()))
                .or_default()
                .push(i as u32);
        }
    }
    local
}

/// JavaScript: `res.send = function ..` with `res` declared at the top of the file.
fn js_objects<'a>(
    sk: &'a FileSkeleton,
    fam: Family,
    local: &HashMap<(Option<u32>, &'a str), Vec<u32>>,
) -> HashSet<&'a str> {
    match fam {
        Family::Js => sk
            .defs
            .iter()
            .filter(|d| d.kind == SymbolKind::Method && d.parent.is_none())
            .filter_map(|d| d.container.first().map(Name::as_str))
            .filter(|h| local.contains_key(&(None, *h)))
            .collect(),
        _ => HashSet::new(),
    }
}

/// C++: definitions outside their class body (`void Emitter::write() {..}`) -> the class,
/// looked up by name (recorded in `deps`).
fn out_of_line_defs(
    table: &SymbolTable,
    sk: &FileSkeleton,
    fam: Family,
    space: Space,
    deps: &mut DepSet,
) -> HashMap<u32, SymbolId> {
    match fam {
        Family::C => sk
            .defs
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                let in_body = d
                    .parent
                    .and_then(|p| sk.defs.get(p as usize))
                    .is_some_and(|p| is_type_like(p.kind));
                !d.container.is_empty()
                    && !in_body
                    && matches!(d.kind, SymbolKind::Method | SymbolKind::Function)
            })
            .filter_map(|(i, d)| {
                deps.name(d.container.last()?);
                let class = table
                    .qualified(space, &d.container.join("::"))
                    .iter()
                    .copied()
                    .find(|s| table.def(*s).is_some_and(|x| is_type_like(x.kind)))?;
                Some((i as u32, class))
            })
            .collect(),
        _ => HashMap::new(),
    }
}

/// A Python import path as a module: leading dots climb from the importing file's package.
fn python_module(fsk: &FileSkeleton, path: &str) -> String {
    let dots = path.chars().take_while(|&c| c == '.').count();
    if dots == 0 {
        return path.to_string();
    }
    let module = fsk.module.as_str();
    let is_init = fsk.path.file_name().starts_with("__init__.");
    let mut base = if is_init {
        module.to_string()
    } else {
        parent_module(module, ".")
    };
    for _ in 1..dots {
        base = parent_module(&base, ".");
    }
    let rest = &path[dots..];
    match (base.is_empty(), rest.is_empty()) {
        (_, true) => base,
        (true, false) => rest.to_string(),
        (false, false) => format!("{base}.{rest}"),
    }
}

fn parent_module(m: &str, sep: &str) -> String {
    m.rsplit_once(sep).map(|(p, _)| p.to_string()).unwrap_or_default()
}
