//! The closed set of definition and reference kinds, named after tree-sitter's tags
//! vocabulary (`@definition.<kind>`, `@reference.<kind>`).

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Impl,
    Type,
    Module,
    Namespace,
    Constant,
    Variable,
    Field,
    Macro,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 15] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Impl,
        SymbolKind::Type,
        SymbolKind::Module,
        SymbolKind::Namespace,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::Field,
        SymbolKind::Macro,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Type => "type",
            SymbolKind::Module => "module",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::Field => "field",
            SymbolKind::Macro => "macro",
        }
    }

    pub fn parse(s: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Kinds whose children get this definition's name in their qualified name.
    pub fn is_container(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Interface
                | SymbolKind::Trait
                | SymbolKind::Impl
                | SymbolKind::Module
                | SymbolKind::Namespace
        )
    }

    /// Containers whose functions are methods (a function in a module stays a function).
    pub fn holds_methods(self) -> bool {
        self.is_container() && !matches!(self, SymbolKind::Module | SymbolKind::Namespace)
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ReferenceKind {
    /// A call site (function, method, macro or constructor call).
    Call,
    /// A use of a type name.
    Type,
    /// A class used as a base or instantiated.
    Class,
    /// A trait/interface implemented by a type.
    Implementation,
}

impl ReferenceKind {
    pub const ALL: [ReferenceKind; 4] = [
        ReferenceKind::Call,
        ReferenceKind::Type,
        ReferenceKind::Class,
        ReferenceKind::Implementation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceKind::Call => "call",
            ReferenceKind::Type => "type",
            ReferenceKind::Class => "class",
            ReferenceKind::Implementation => "implementation",
        }
    }

    pub fn parse(s: &str) -> Option<ReferenceKind> {
        ReferenceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}
