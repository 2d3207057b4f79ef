//! `exists`.

use super::{Nodes, PredFail};
use crate::language::assert::describe::compact;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), PredFail> {
    let Nodes { src, matches, .. } = *n;
    let got = !matches.is_empty();
    match (want, got) {
        (true, false) => Err((
            format!("`{src}` matched nothing, expected it to exist"),
            Some("exists".into()),
            Some("absent".into()),
        )),
        (false, true) => Err((
            format!("`{src}` exists, expected it to be absent"),
            Some("absent".into()),
            Some(compact(&*n.single_as(false)?, 500)),
        )),
        _ => Ok(()),
    }
}
