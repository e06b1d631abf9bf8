//! `Paging`: every list answer is paged the same way — an offset carried in an opaque cursor,
//! a count limit, and a token budget (`max_tokens`, cl100k) that the serialized items must fit.
//! The first item is always returned, so a page never comes back empty while items remain.

use serde::Serialize;

use super::ApiError;
use crate::context::count_tokens;

/// Where a page sits in the whole answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PageInfo {
    /// Items in the whole answer as far as it was computed: ranked lists are computed to one
    /// past this page, so a larger total means a next page exists.
    pub total: usize,
    /// Index of this page's first item.
    pub offset: usize,
    pub returned: usize,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
    /// The page stopped early because `max_tokens` was reached.
    pub truncated_by_tokens: bool,
}

/// The largest token budget a request may ask for.
pub const MAX_TOKENS_CAP: usize = 200_000;

/// The smallest token budget a request may ask for: nothing useful fits in less.
pub const MIN_MAX_TOKENS: usize = 50;

#[derive(Debug, Clone, Copy)]
pub struct Paging {
    offset: usize,
    limit: usize,
    max_tokens: Option<usize>,
}

impl Paging {
    /// `limit` defaults to `default` and must be 1..=`max`; `max_tokens` at least
    /// [`MIN_MAX_TOKENS`].
    pub fn new(
        cursor: Option<&str>,
        limit: Option<usize>,
        default: usize,
        max: usize,
        max_tokens: Option<usize>,
    ) -> Result<Paging, ApiError> {
        let limit = check_limit("limit", limit, default, max)?;
        let offset = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix('p')
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    ApiError::invalid("cursor", format!("{c:?} is not a cursor this server gave"))
                })?,
        };
        Ok(Paging {
            offset,
            limit,
            max_tokens: check_tokens(max_tokens)?,
        })
    }

    /// The items a page should be computed over at least (offset plus limit).
    pub fn needed(&self) -> usize {
        self.offset.saturating_add(self.limit)
    }

    /// Cuts `items` (the whole ranked answer, or at least [`Paging::needed`] of it, `total`
    /// in all) to this page.
    pub fn apply<T: Serialize>(&self, mut items: Vec<T>, total: usize) -> (Vec<T>, PageInfo) {
        let start = self.offset.min(items.len());
        items.drain(..start);
        items.truncate(self.limit);
        let mut truncated = false;
        if let Some(budget) = self.max_tokens {
            let mut used = 0usize;
            let mut keep = 0usize;
            for it in &items {
                let t = serde_json::to_string(it).map(|s| count_tokens(&s)).unwrap_or(0);
                if keep > 0 && used + t > budget {
                    truncated = true;
                    break;
                }
                used += t;
                keep += 1;
            }
            items.truncate(keep);
        }
        let end = start + items.len();
        let info = PageInfo {
            total,
            offset: start,
            returned: items.len(),
            next_cursor: (end < total).then(|| format!("p{end}")),
            truncated_by_tokens: truncated,
        };
        (items, info)
    }
}

/// A count argument: default when absent, refused when 0 or above `max`.
pub fn check_limit(name: &str, given: Option<usize>, default: usize, max: usize) -> Result<usize, ApiError> {
    match given {
        None => Ok(default),
        Some(n) if n == 0 || n > max => Err(ApiError::invalid(
            name,
            format!("must be between 1 and {max}, not {n}"),
        )),
        Some(n) => Ok(n),
    }
}

/// A token budget: at least [`MIN_MAX_TOKENS`], at most [`MAX_TOKENS_CAP`].
pub fn check_tokens(given: Option<usize>) -> Result<Option<usize>, ApiError> {
    match given {
        Some(n) if n < MIN_MAX_TOKENS => Err(ApiError::invalid(
            "max_tokens",
            format!("{n} is below the minimum of {MIN_MAX_TOKENS}"),
        )),
        Some(n) if n > MAX_TOKENS_CAP => Err(ApiError::invalid(
            "max_tokens",
            format!("{n} is above the maximum of {MAX_TOKENS_CAP}"),
        )),
        other => Ok(other),
    }
}

/// Longest query or task text used; the rest is dropped with a note.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// The text to use for a query, and a note when it was cut.
pub fn cap_query(argument: &str, text: &str) -> Result<(String, Option<String>), ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::invalid(argument, "is empty"));
    }
    if text.contains('\0') {
        return Err(ApiError::invalid(argument, "contains a NUL byte"));
    }
    if text.len() <= MAX_QUERY_BYTES {
        return Ok((text.to_string(), None));
    }
    let cut = text.floor_char_boundary(MAX_QUERY_BYTES);
    let note = format!(
        "{argument} is {} bytes; only its first {} bytes were used",
        text.len(),
        cut
    );
    Ok((text[..cut].to_string(), Some(note)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_the_whole_list_with_cursors() {
        let items: Vec<u32> = (0..10).collect();
        let p = Paging::new(None, Some(4), 20, 100, None).unwrap();
        let (a, info) = p.apply(items.clone(), 10);
        assert_eq!(a, vec![0, 1, 2, 3]);
        let next = info.next_cursor.unwrap();
        let p = Paging::new(Some(&next), Some(4), 20, 100, None).unwrap();
        let (b, info) = p.apply(items.clone(), 10);
        assert_eq!(b, vec![4, 5, 6, 7]);
        let p = Paging::new(info.next_cursor.as_deref(), Some(4), 20, 100, None).unwrap();
        let (c, info) = p.apply(items, 10);
        assert_eq!(c, vec![8, 9]);
        assert!(info.next_cursor.is_none());
    }

    #[test]
    fn token_budget_cuts_a_page_but_keeps_one_item() {
        let items: Vec<String> = (0..50)
            .map(|i| format!("item number {i} with some words"))
            .collect();
        let p = Paging::new(None, Some(50), 20, 100, Some(50)).unwrap();
        let (a, info) = p.apply(items, 50);
        assert!(!a.is_empty() && a.len() < 50, "{}", a.len());
        assert!(info.truncated_by_tokens);
        assert_eq!(info.next_cursor, Some(format!("p{}", a.len())));
    }

    #[test]
    fn zero_huge_and_foreign_arguments_are_refused() {
        assert!(Paging::new(None, Some(0), 20, 100, None).is_err());
        assert!(Paging::new(None, Some(10_000_000), 20, 100, None).is_err());
        assert!(Paging::new(Some("zz"), None, 20, 100, None).is_err());
        assert!(Paging::new(None, None, 20, 100, Some(0)).is_err());
    }

    #[test]
    fn long_queries_are_cut_on_a_char_boundary_with_a_note() {
        let q = "é".repeat(MAX_QUERY_BYTES);
        let (used, note) = cap_query("query", &q).unwrap();
        assert!(used.len() <= MAX_QUERY_BYTES);
        assert!(note.unwrap().contains("query is"));
        assert!(cap_query("query", "  ").is_err());
    }
}
