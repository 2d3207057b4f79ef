//! `notEquals`.

use super::Nodes;
use crate::ground::json::json_eq;
use crate::ground::yaml::value::TValue;
use crate::language::assert::describe::{compact, pretty};
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, v: &TValue) -> Result<(), Finding> {
    let Nodes { src, .. } = *n;
    let expected = n.render(v)?;
    let actual = n.single_as(!expected.is_array())?;
    if json_eq(&expected, &actual) {
        Err(Finding {
            message: format!(
                "`{src}` equals {}, expected a different value",
                compact(&actual, 120)
            ),
            expected: Some(format!("not {}", compact(&expected, 200))),
            actual: Some(pretty(&actual)),
        })
    } else {
        Ok(())
    }
}
