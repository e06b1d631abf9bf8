//! Rendezvous (highest random weight) hashing of repositories onto shard groups: every
//! process computes the same owner from the group list alone, and adding a group moves only
//! the repositories the new group wins (about 1/n of them).

use super::FleetError;

/// The group that owns `repo` among `groups` (none when there are no groups).
pub fn owner<'a>(repo: &str, groups: &'a [String]) -> Option<&'a str> {
    groups
        .iter()
        .max_by_key(|g| {
            let mut h = blake3::Hasher::new();
            h.update(g.as_bytes());
            h.update(&[0]);
            h.update(repo.as_bytes());
            let bytes = h.finalize();
            let mut first = [0u8; 8];
            first.copy_from_slice(&bytes.as_bytes()[..8]);
            (u64::from_le_bytes(first), g.as_str())
        })
        .map(String::as_str)
}

/// `g0,g1,g2`: distinct names usable as NATS subject tokens.
pub fn parse_groups(list: &str) -> Result<Vec<String>, FleetError> {
    let mut groups: Vec<String> = Vec::new();
    for g in list.split(',').map(str::trim).filter(|g| !g.is_empty()) {
        if !g
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            || g.len() > 64
        {
            return Err(FleetError::Invalid(format!(
                "shard group {g:?}: letters, digits, '-' and '_' only"
            )));
        }
        if groups.iter().any(|x| x == g) {
            return Err(FleetError::Invalid(format!("shard group {g:?} is listed twice")));
        }
        groups.push(g.to_string());
    }
    if groups.is_empty() {
        return Err(FleetError::Invalid(
            "no shard groups given (--groups g0,g1)".to_string(),
        ));
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("g{i}")).collect()
    }

    #[test]
    fn adding_a_group_moves_only_what_it_wins_and_about_one_in_n() {
        let repos: Vec<String> = (0..4000).map(|i| format!("example.com/team/repo{i}")).collect();
        let (four, five) = (names(4), names(5));
        let mut moved = 0;
        for r in &repos {
            let (before, after) = (owner(r, &four), owner(r, &five));
            if before != after {
                // A repository only ever moves to the new group.
                assert_eq!(after, Some("g4"), "{r}");
                moved += 1;
            }
        }
        let share = moved as f64 / repos.len() as f64;
        assert!((0.15..0.25).contains(&share), "moved {share}");
        // The load is spread: each of five groups owns 15-25%.
        for g in &five {
            let n = repos.iter().filter(|r| owner(r, &five) == Some(g)).count();
            assert!((600..1000).contains(&n), "{g}: {n}");
        }
    }

    #[test]
    fn the_owner_does_not_depend_on_the_order_groups_are_listed() {
        let a = names(3);
        let mut b = a.clone();
        b.reverse();
        for i in 0..200 {
            let r = format!("r{i}");
            assert_eq!(owner(&r, &a), owner(&r, &b));
        }
        assert_eq!(owner("r", &[]), None);
    }

    #[test]
    fn group_lists_are_checked() {
        assert_eq!(parse_groups("g0, g1").unwrap(), vec!["g0", "g1"]);
        assert!(parse_groups("g0,g0").is_err());
        assert!(parse_groups("a.b").is_err());
        assert!(parse_groups(" , ").is_err());
    }
}
