//! `unique`.

use super::{Nodes, PredFail};
use crate::ground::json::sort_keys;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), PredFail> {
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
        (true, false) => Err((
            format!("`{src}` has duplicates: {}", dups.join(", ")),
            Some("distinct values".into()),
            Some(dups.join(", ")),
        )),
        (false, true) => Err((
            format!("`{src}` has no duplicates"),
            Some("duplicates".into()),
            None,
        )),
        _ => Ok(()),
    }
}
