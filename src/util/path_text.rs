//! Repository paths as text (`/`-separated, relative): joining with `.`/`..` resolved, and
//! JavaScript/TypeScript extensions.

/// Joins a relative path onto a folder, resolving `.` and `..`.
pub fn join_relative(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// `a/b.ts` -> `a/b`, `a/b.d.ts` -> `a/b`; other paths unchanged.
pub fn strip_js_ext(p: &str) -> &str {
    for ext in [".d.ts", ".tsx", ".ts", ".jsx", ".mjs", ".cjs", ".js"] {
        if let Some(s) = p.strip_suffix(ext) {
            return s;
        }
    }
    p
}
