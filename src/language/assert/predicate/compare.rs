//! `compare`.

use super::Nodes;
use crate::language::assert::describe::compact;
use crate::language::dsl::document::Num;
use crate::language::dsl::scenario::expect::CompareOp;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, op: &CompareOp, bound: &Num<f64>) -> Result<(), Finding> {
    let bound = &bound.resolve(n.ctx, "a number").map_err(Finding::message)?;
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
        match m.as_f64() {
            Some(n) if op.holds(n, *bound) => {}
            _ => {
                return Err(Finding {
                    message: format!(
                        "`{src}` is {}, expected {} {bound}",
                        compact(m, 120),
                        op.symbol()
                    ),
                    expected: Some(format!("{} {bound}", op.symbol())),
                    actual: Some(compact(m, 500)),
                });
            }
        }
    }
    Ok(())
}
