//! A qualified name as a user or a model writes it, in any language's notation: `a.b.C`,
//! `a::b::C`, PHP's `\A\B\C`, Ruby's `C#method`, PHP's `$x->method`. Lookups read every form
//! with one separator, so a name copied from a stack trace or a doc finds its definition.

/// What separates the parts of a qualified name in some language: `.`, `::`, `\` (PHP
/// namespaces), `#` (Ruby instance methods), `->` (ends in `>`).
pub const NAME_SEPARATORS: [char; 5] = ['.', ':', '\\', '#', '>'];

/// `name` with every language's separators written as `sep`, without a leading one
/// (`\Slim\App`, `::Foo`).
pub fn with_separator(name: &str, sep: &str) -> String {
    let parts: Vec<&str> = name
        .split("::")
        .flat_map(|p| p.split("->"))
        .flat_map(|p| p.split(['.', '\\', '#']))
        .collect();
    let start = parts.iter().position(|p| !p.is_empty()).unwrap_or(parts.len());
    parts[start..].join(sep)
}

#[cfg(test)]
mod tests {
    use super::with_separator;

    #[test]
    fn names_written_as_any_language_writes_them_read_with_one_separator() {
        assert_eq!(
            with_separator("\\Slim\\Exception\\HttpError", "."),
            "Slim.Exception.HttpError"
        );
        assert_eq!(with_separator("Sinatra::Base#halt", "."), "Sinatra.Base.halt");
        assert_eq!(with_separator("std::vec::Vec", "::"), "std::vec::Vec");
        assert_eq!(with_separator("a.b.C", "::"), "a::b::C");
        assert_eq!(with_separator("::Foo::Bar", "."), "Foo.Bar");
        assert_eq!(with_separator("$repo->find", "."), "$repo.find");
    }
}
