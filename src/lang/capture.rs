//! The closed capture vocabulary: tree-sitter's tags conventions plus imports.
//!
//! `tags.scm`: `@definition.<kind>` / `@reference.<kind>` mark the node, `@name` its name,
//! `@doc` an explicit doc node, `@container` an out-of-line container name (Go receivers,
//! C++ `Foo::bar` definitions). `imports.scm`: `@import` marks one imported binding,
//! `@import.path`, `@import.name`, `@import.alias`, `@import.glob`, and `@package` the package a
//! file declares; `@binding` with `@binding.name` and `@binding.value` or `@binding.type` a local
//! variable whose type can be read off its initializer or annotation. Captures whose name starts with `_` are private to a pattern's predicates.

use crate::symbols::{ReferenceKind, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    Definition(SymbolKind),
    Reference(ReferenceKind),
    Name,
    Doc,
    Container,
    Import,
    ImportPath,
    ImportName,
    ImportAlias,
    ImportGlob,
    Package,
    /// `@binding`: a local variable bound to a typed value (`x = Foo()`, `let x: T`).
    Binding,
    BindingName,
    /// The callee of the bound value (`Foo` in `x = Foo(1)`, `Foo::new` in `let x = Foo::new()`).
    BindingValue,
    /// The written type of the binding (`x: Foo = ...`, `Foo x = ...`).
    BindingType,
    /// `@_anything`: used only by predicates.
    Private,
}

impl Capture {
    /// Parses a capture name, `None` when it is outside the vocabulary.
    pub fn parse(name: &str) -> Option<Capture> {
        if name.starts_with('_') {
            return Some(Capture::Private);
        }
        if let Some(kind) = name.strip_prefix("definition.") {
            return SymbolKind::parse(kind).map(Capture::Definition);
        }
        if let Some(kind) = name.strip_prefix("reference.") {
            return ReferenceKind::parse(kind).map(Capture::Reference);
        }
        Some(match name {
            "name" => Capture::Name,
            "doc" => Capture::Doc,
            "container" => Capture::Container,
            "import" => Capture::Import,
            "import.path" => Capture::ImportPath,
            "import.name" => Capture::ImportName,
            "import.alias" => Capture::ImportAlias,
            "import.glob" => Capture::ImportGlob,
            "package" => Capture::Package,
            "binding" => Capture::Binding,
            "binding.name" => Capture::BindingName,
            "binding.value" => Capture::BindingValue,
            "binding.type" => Capture::BindingType,
            _ => return None,
        })
    }

    /// Whether this capture may appear in a `tags.scm` (`true`) or an `imports.scm` (`false`).
    pub fn belongs_to_tags(self) -> bool {
        matches!(
            self,
            Capture::Definition(_)
                | Capture::Reference(_)
                | Capture::Name
                | Capture::Doc
                | Capture::Container
                | Capture::Binding
                | Capture::BindingName
                | Capture::BindingValue
                | Capture::BindingType
                | Capture::Private
        )
    }

    pub fn belongs_to_imports(self) -> bool {
        matches!(
            self,
            Capture::Import
                | Capture::ImportPath
                | Capture::ImportName
                | Capture::ImportAlias
                | Capture::ImportGlob
                | Capture::Package
                | Capture::Private
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_closed() {
        assert_eq!(
            Capture::parse("definition.function"),
            Some(Capture::Definition(SymbolKind::Function))
        );
        assert_eq!(
            Capture::parse("reference.call"),
            Some(Capture::Reference(ReferenceKind::Call))
        );
        assert_eq!(Capture::parse("_req"), Some(Capture::Private));
        assert_eq!(Capture::parse("definition.gizmo"), None);
        assert_eq!(Capture::parse("local.scope"), None);
        assert_eq!(Capture::parse("names"), None);
    }
}
