//! `oneOf`.

use serde_json::Value;

use super::Nodes;
use crate::ground::json::{json_eq, json_type_name};
use crate::ground::yaml::value::TValue;
use crate::language::assert::describe::compact;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, options: &TValue) -> Result<(), Finding> {
    let Nodes {
        src,
        matches,
        singular,
        ..
    } = *n;
    let options: Vec<Value> = match n.render(options)? {
        Value::Array(items) => items,
        other => {
            return Err(Finding {
                message: format!("`oneOf` rendered to {}, not a list", json_type_name(&other)),
                expected: Some("a list of values".into()),
                actual: Some(compact(&other, 200)),
            });
        }
    };
    if matches.is_empty() {
        // Every match must hold: vacuously true for a multi-node path.
        return if singular { Err(n.nothing()) } else { Ok(()) };
    }
    for m in matches {
        if !options.iter().any(|o| json_eq(o, m)) {
            let list = Value::Array(options.clone());
            return Err(Finding {
                message: format!(
                    "`{src}` is {}, expected one of {}",
                    compact(m, 120),
                    compact(&list, 200)
                ),
                expected: Some(compact(&list, 500)),
                actual: Some(compact(m, 500)),
            });
        }
    }
    Ok(())
}
