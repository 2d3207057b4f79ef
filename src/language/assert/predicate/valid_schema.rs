//! `validSchema`.

use super::Nodes;
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), Finding> {
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
                return Err(Finding {
                    message: format!("`{src}` is not a valid JSON Schema: {p}"),
                    expected: Some("a JSON Schema 2020-12 object".into()),
                    actual: Some(compact(m, 300)),
                });
            }
            (false, None) => {
                return Err(Finding {
                    message: format!("`{src}` is a valid JSON Schema"),
                    expected: Some("an invalid schema".into()),
                    actual: Some(compact(m, 300)),
                });
            }
            _ => {}
        }
    }
    Ok(())
}
