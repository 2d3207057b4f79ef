//! `validSchema`.

use super::{Nodes, PredFail};
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), PredFail> {
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
        let problem = if !m.is_object() {
            Some(format!("{} is not a schema object", json_type_name(m)))
        } else {
            jsonschema::meta::validate(m).err().map(|e| e.to_string())
        };
        match (want, problem) {
            (true, Some(p)) => {
                return Err((
                    format!("`{src}` is not a valid JSON Schema: {p}"),
                    Some("a JSON Schema 2020-12 object".into()),
                    Some(compact(m, 300)),
                ));
            }
            (false, None) => {
                return Err((
                    format!("`{src}` is a valid JSON Schema"),
                    Some("an invalid schema".into()),
                    Some(compact(m, 300)),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
