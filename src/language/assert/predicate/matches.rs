//! `matches`.

use regex::Regex;

use super::Nodes;
use crate::ground::json::json_type_name;
use crate::language::assert::describe::compact;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, re: &Regex) -> Result<(), Finding> {
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
        match m.as_str() {
            Some(s) if re.is_match(s) => {}
            None => {
                return Err(Finding {
                    message: format!(
                        "`{src}` is {} ({}), not a string to match /{}/",
                        json_type_name(m),
                        compact(m, 80),
                        re.as_str()
                    ),
                    expected: Some(format!("a string matching /{}/", re.as_str())),
                    actual: Some(compact(m, 500)),
                });
            }
            _ => {
                return Err(Finding {
                    message: format!(
                        "`{src}` value {} does not match /{}/",
                        compact(m, 120),
                        re.as_str()
                    ),
                    expected: Some(format!("/{}/", re.as_str())),
                    actual: Some(compact(m, 500)),
                });
            }
        }
    }
    Ok(())
}
