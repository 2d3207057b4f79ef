//! `type`.

use super::{Nodes, PredFail, has_type, type_label};
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::language::dsl::document::JsonType;

pub(super) fn check(n: &Nodes, t: &JsonType) -> Result<(), PredFail> {
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
            return Err((
                format!(
                    "`{src}` is {} ({}), expected type {}",
                    json_type_name(m),
                    compact(m, 80),
                    type_label(*t)
                ),
                Some(type_label(*t).into()),
                Some(json_type_name(m).into()),
            ));
        }
    }
    Ok(())
}
