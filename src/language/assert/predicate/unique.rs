//! `unique`.

use super::Nodes;
use crate::ground::json::sort_keys;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), Finding> {
    let Nodes { src, matches, .. } = *n;
    let mut seen: Vec<String> = Vec::new();
    let mut dups: Vec<String> = Vec::new();
    for m in matches {
        let key = sort_keys((*m).clone()).to_string();
        if seen.contains(&key) {
            if !dups.contains(&key) {
                dups.push(key);
            }
        } else {
            seen.push(key);
        }
    }
    match (want, dups.is_empty()) {
        (true, false) => Err(Finding {
            message: format!("`{src}` has duplicates: {}", dups.join(", ")),
            expected: Some("distinct values".into()),
            actual: Some(dups.join(", ")),
        }),
        (false, true) => Err(Finding {
            message: format!("`{src}` has no duplicates"),
            expected: Some("duplicates".into()),
            actual: None,
        }),
        _ => Ok(()),
    }
}
