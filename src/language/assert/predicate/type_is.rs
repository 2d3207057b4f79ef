//! `type`.

use super::{Nodes, has_type, type_label};
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::language::dsl::document::JsonType;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, t: &JsonType) -> Result<(), Finding> {
    let Nodes {
        src,
        matches,
        singular,
        ..
    } = *n;
    if matches.is_empty() {
        // Every match must hold: vacuously true for a multi-node path.
        return if singular { Err(n.nothing()) } else { Ok(()) };
    }
    for m in matches {
        if !has_type(m, *t) {
            return Err(Finding {
                message: format!(
                    "`{src}` is {} ({}), expected type {}",
                    json_type_name(m),
                    compact(m, 80),
                    type_label(*t)
                ),
                expected: Some(type_label(*t).into()),
                actual: Some(json_type_name(m).into()),
            });
        }
    }
    Ok(())
}
