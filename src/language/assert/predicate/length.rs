//! `length`.

use serde_json::Value;

use super::{Nodes, PredFail, length_holds};
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::language::dsl::document::LengthSpec;

pub(super) fn check(n: &Nodes, spec: &LengthSpec) -> Result<(), PredFail> {
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
                    return Err((
                        format!("`{src}` is {}, which has no length", json_type_name(other)),
                        None,
                        Some(compact(other, 200)),
                    ));
                }
            },
            _ => matches.len(),
        }
    } else {
        matches.len()
    } as u64;
    let (ok, wanted) = length_holds(spec, len, n.ctx).map_err(|why| (why, None, None))?;
    if ok {
        Ok(())
    } else {
        Err((
            format!("`{src}` has length {len}, expected {wanted}"),
            Some(wanted),
            Some(len.to_string()),
        ))
    }
}
