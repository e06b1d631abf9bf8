//! Methods a language calls without naming them at the call site: constructors (`Foo(..)`,
//! `new Foo`), Python's protocol methods (`__eq__`, `__set__`, `__iter__`), properties,
//! the interfaces and traits of a standard library that dispatch by type (`ServeHTTP`,
//! `String`, `fmt`, `drop`, `toString`, `equals`). A caller reaches such a method through
//! its type, so whatever reaches the type may reach the method: a change to one must widen
//! to the type's users, since no call edge names it.

/// Whether `name`, a method of type `container` in `language`, is called implicitly.
pub fn invoked_implicitly(language: &str, name: &str, container: &str) -> bool {
    if name == container && !name.is_empty() {
        // Java, C#, C++, Kotlin secondary, Dart constructors.
        return true;
    }
    match language {
        "python" => name.len() > 4 && name.starts_with("__") && name.ends_with("__"),
        "javascript" | "typescript" | "tsx" => {
            matches!(name, "constructor" | "toString" | "valueOf" | "toJSON" | "then")
        }
        "go" => matches!(
            name,
            "ServeHTTP"
                | "String"
                | "GoString"
                | "Error"
                | "Unwrap"
                | "Is"
                | "As"
                | "Format"
                | "Read"
                | "Write"
                | "Close"
                | "Len"
                | "Less"
                | "Swap"
                | "Scan"
                | "Value"
                | "MarshalJSON"
                | "UnmarshalJSON"
                | "MarshalText"
                | "UnmarshalText"
                | "MarshalYAML"
                | "UnmarshalYAML"
        ),
        "rust" => matches!(
            name,
            "fmt"
                | "drop"
                | "from"
                | "try_from"
                | "from_str"
                | "eq"
                | "ne"
                | "partial_cmp"
                | "cmp"
                | "hash"
                | "clone"
                | "default"
                | "deref"
                | "deref_mut"
                | "index"
                | "index_mut"
                | "next"
                | "next_back"
                | "into_iter"
                | "as_ref"
                | "as_mut"
                | "borrow"
                | "borrow_mut"
                | "add"
                | "sub"
                | "mul"
                | "div"
                | "rem"
                | "neg"
                | "not"
                | "add_assign"
                | "sub_assign"
                | "poll"
                | "write_str"
                | "serialize"
                | "deserialize"
        ),
        "java" | "kotlin" | "scala" => matches!(
            name,
            "<init>"
                | "init"
                | "equals"
                | "hashCode"
                | "toString"
                | "compareTo"
                | "close"
                | "iterator"
                | "run"
                | "call"
        ),
        "csharp" => matches!(
            name,
            "Equals" | "GetHashCode" | "ToString" | "CompareTo" | "Dispose" | "GetEnumerator"
        ),
        "ruby" => matches!(
            name,
            "initialize" | "to_s" | "each" | "<=>" | "==" | "call" | "method_missing"
        ),
        "php" => name.starts_with("__"),
        "swift" => matches!(name, "init" | "deinit" | "description" | "hash" | "makeIterator"),
        "cpp" | "c" => name.starts_with("operator") || name.starts_with('~'),
        _ => false,
    }
}

/// Python decorators that make a method an attribute read or write (`obj.name`).
pub fn is_property_decorator(name: &str) -> bool {
    matches!(
        name,
        "property" | "cached_property" | "setter" | "getter" | "deleter"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_and_protocols_are_implicit() {
        assert!(invoked_implicitly("python", "__init__", "Flask"));
        assert!(invoked_implicitly("python", "__set__", "ConfigAttribute"));
        assert!(!invoked_implicitly("python", "dispatch_request", "Flask"));
        assert!(!invoked_implicitly("python", "__", "X"));
        assert!(invoked_implicitly("javascript", "constructor", "Option"));
        assert!(invoked_implicitly("go", "ServeHTTP", "Router"));
        assert!(!invoked_implicitly("go", "Match", "Router"));
        assert!(invoked_implicitly("java", "Parser", "Parser"));
        assert!(invoked_implicitly("rust", "fmt", "Version"));
        assert!(!invoked_implicitly("rust", "parse", "Version"));
    }
}
