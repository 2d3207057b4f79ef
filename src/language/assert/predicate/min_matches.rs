//! `minMatches`: the path matched at least this many nodes (so that every-match
//! predicates cannot pass on none).

use super::{Nodes, PredFail};

pub(super) fn check(n: &Nodes, min: u64) -> Result<(), PredFail> {
    let Nodes { src, matches, .. } = *n;
    let got = matches.len() as u64;
    if got >= min {
        return Ok(());
    }
    Err((
        format!("`{src}` matched {got} value(s), expected at least {min} (`minMatches: {min}`)"),
        Some(format!("at least {min} match(es)")),
        Some(format!("{got} match(es)")),
    ))
}
