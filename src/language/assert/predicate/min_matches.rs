//! `minMatches`: the path matched at least this many nodes (so that every-match
//! predicates cannot pass on none).

use super::Nodes;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, min: u64) -> Result<(), Finding> {
    let Nodes { src, matches, .. } = *n;
    let got = matches.len() as u64;
    if got >= min {
        return Ok(());
    }
    Err(Finding {
        message: format!(
            "`{src}` matched {got} value(s), expected at least {min} (`minMatches: {min}`)"
        ),
        expected: Some(format!("at least {min} match(es)")),
        actual: Some(format!("{got} match(es)")),
    })
}
