//! `exists`.

use super::Nodes;
use crate::language::assert::describe::compact;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), Finding> {
    let Nodes { src, matches, .. } = *n;
    let got = !matches.is_empty();
    match (want, got) {
        (true, false) => Err(Finding {
            message: format!("`{src}` matched nothing, expected it to exist"),
            expected: Some("exists".into()),
            actual: Some("absent".into()),
        }),
        (false, true) => Err(Finding {
            message: format!("`{src}` exists, expected it to be absent"),
            expected: Some("absent".into()),
            actual: Some(compact(&*n.single_as(false)?, 500)),
        }),
        _ => Ok(()),
    }
}
