//! `equals`.

use super::Nodes;
use crate::ground::json::json_eq;
use crate::ground::yaml::value::TValue;
use crate::language::assert::describe::{compact, pretty};
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, v: &TValue) -> Result<(), Finding> {
    let Nodes {
        src,
        matches,
        singular,
        ..
    } = *n;
    let expected = n.render(v)?;
    let actual = n.single_as(!expected.is_array())?;
    if json_eq(&expected, &actual) {
        Ok(())
    } else {
        // Several (or no) matches against a single value: say how to check each.
        let hint = if !singular && !expected.is_array() && matches.len() != 1 {
            format!(
                " (the path matched {} nodes, compared as a list; `oneOf: [{}]` checks each match)",
                matches.len(),
                compact(&expected, 60)
            )
        } else {
            String::new()
        };
        Err(Finding {
            message: format!(
                "`{src}` is {}, expected {}{hint}",
                compact(&actual, 120),
                compact(&expected, 120)
            ),
            expected: Some(pretty(&expected)),
            actual: Some(pretty(&actual)),
        })
    }
}
