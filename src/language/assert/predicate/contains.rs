//! `contains`.

use super::{Nodes, contains};
use crate::ground::json::{json_eq, subset_of};
use crate::ground::yaml::value::TValue;
use crate::language::assert::describe::{compact, pretty};
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, v: &TValue) -> Result<(), Finding> {
    let Nodes { src, matches, .. } = *n;
    let expected = n.render(v)?;
    if matches.is_empty() {
        return Err(n.nothing());
    }
    let found = if matches.len() > 1 {
        matches
            .iter()
            .any(|m| json_eq(m, &expected) || (expected.is_object() && subset_of(&expected, m)))
    } else {
        contains(matches[0], &expected)
    };
    if found {
        Ok(())
    } else {
        let actual = n.single_as(false)?;
        Err(Finding {
            message: format!("`{src}` does not contain {}", compact(&expected, 120)),
            expected: Some(format!("contains {}", compact(&expected, 500))),
            actual: Some(pretty(&actual)),
        })
    }
}
