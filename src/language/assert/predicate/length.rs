//! `length`.

use serde_json::Value;

use super::{Nodes, length_holds};
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::language::dsl::document::LengthSpec;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, spec: &LengthSpec) -> Result<(), Finding> {
    let Nodes {
        src,
        matches,
        singular,
        ..
    } = *n;
    let len = if singular {
        match matches {
            [] => return Err(n.nothing()),
            [one] => match one {
                Value::Array(a) => a.len(),
                Value::String(s) => s.chars().count(),
                Value::Object(o) => o.len(),
                other => {
                    return Err(Finding {
                        message: format!(
                            "`{src}` is {}, which has no length",
                            json_type_name(other)
                        ),
                        expected: None,
                        actual: Some(compact(other, 200)),
                    });
                }
            },
            _ => matches.len(),
        }
    } else {
        matches.len()
    } as u64;
    let (ok, wanted) = length_holds(spec, len, n.ctx).map_err(Finding::message)?;
    if ok {
        Ok(())
    } else {
        Err(Finding {
            message: format!("`{src}` has length {len}, expected {wanted}"),
            expected: Some(wanted),
            actual: Some(len.to_string()),
        })
    }
}
