//! `notEquals`.

use super::{Nodes, PredFail};
use crate::ground::json::json_eq;
use crate::ground::yaml::value::TValue;
use crate::language::assert::describe::{compact, pretty};

pub(super) fn check(n: &Nodes, v: &TValue) -> Result<(), PredFail> {
    let Nodes { src, .. } = *n;
    let expected = n.render(v)?;
    let actual = n.single_as(!expected.is_array())?;
    if json_eq(&expected, &actual) {
        Err((
            format!(
                "`{src}` equals {}, expected a different value",
                compact(&actual, 120)
            ),
            Some(format!("not {}", compact(&expected, 200))),
            Some(pretty(&actual)),
        ))
    } else {
        Ok(())
    }
}
