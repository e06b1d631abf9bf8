//! A qualified name as a user or a model writes it, in any language's notation: `a.b.C`,
//! `a::b::C`, PHP's `\A\B\C`, Ruby's `C#method`, PHP's `$x->method`. Lookups read every form
//! with one separator, so a name copied from a stack trace or a doc finds its definition.

/// What may separate the parts of a qualified name in some language: `.`, `::`, `\` (PHP
/// namespaces), `#` (Ruby instance methods), `->` (ends in `>`).
pub const NAME_SEPARATORS: [char; 5] = ['.', ':', '\\', '#', '>'];

/// `name` with every language's separators written as `sep`, without a leading one
/// (`\Slim\App`, `::Foo`).
pub fn with_separator(name: &str, sep: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for piece in name.split("::").flat_map(|p| p.split("->")) {
        let mut start = 0;
        let mut prev: Option<char> = None;
        for (i, c) in piece.char_indices() {
            // `#` separates Ruby's `Base#halt`, but begins JavaScript's private `#send`
            // (`Client.#send`, or a name on its own).
            let splits = c == '.' || c == '\\' || (c == '#' && prev.is_some_and(|p| p != '.'));
            if splits {
                parts.push(&piece[start..i]);
                start = i + c.len_utf8();
            }
            prev = Some(c);
        }
        parts.push(&piece[start..]);
    }
    let start = parts.iter().position(|p| !p.is_empty()).unwrap_or(parts.len());
    parts[start..].join(sep)
}

/// The last part of `name` as [`with_separator`] reads it: what a definition's own name is.
pub fn last_part(name: &str) -> String {
    with_separator(name, ".")
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_string()
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
        assert_eq!(with_separator("Client.#send", "."), "Client.#send");
        assert_eq!(with_separator("#retries", "."), "#retries");
        assert_eq!(super::last_part("Client.#send"), "#send");
        assert_eq!(super::last_part("Sinatra::Base#halt"), "halt");
    }
}
