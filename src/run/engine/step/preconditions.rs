//! The preconditions of a step that depend on the connection: its transport, era, rule
//! and `requires`, and those that need a probe of their own.

use crate::language::dsl::Step;
use crate::protocol::era::EraSelector;
use crate::run::client::Connection;
use crate::run::engine::pool::Pool;

/// The preconditions that need a probe of their own (`legacyHandshake`): checked after
/// the others hold, on another legacy connection to the same target (noted in the
/// transcript; a warm one from the pool when there is one: its handshake completed).
pub(in crate::run::engine) async fn probe_unmet(
    requires: &crate::language::dsl::Requires,
    conn: &mut Connection,
    pool: &Pool,
) -> Option<String> {
    for method in &requires.served {
        match conn.serves(method).await {
            Ok(true) => {}
            Ok(false) => {
                return Some(format!(
                    "the server does not serve {method} (-32601 method not found): no rule obliges it to"
                ));
            }
            // A transport failure is for the steps themselves to report.
            Err(_) => {}
        }
    }
    let wanted = requires.legacy_handshake?;
    let target = conn.target().clone();
    let completed = match pool
        .borrow(&target, "legacy", &crate::protocol::era::EraRequest::Legacy)
        .await
    {
        Ok(probe) => {
            let revision = probe.negotiated.revision.clone();
            conn.adopt(pool.give_back(probe, "the `legacyHandshake` probe").await);
            Ok(revision)
        }
        Err(e) => Err(e.message),
    };
    conn.note(match &completed {
        Ok(revision) => format!("probe: a legacy initialize handshake completed ({revision})"),
        Err(why) => format!("probe: no legacy initialize handshake: {why}"),
    });
    match (wanted, completed) {
        (true, Err(why)) => Some(format!(
            "the server completes no legacy initialize handshake ({why})"
        )),
        (false, Ok(revision)) => Some(format!(
            "the server completes a legacy initialize handshake ({revision}): it serves legacy clients, whatever server/discover lists"
        )),
        _ => None,
    }
}

pub(super) fn step_era_skip(step: &Step, conn: &Connection) -> Option<String> {
    use crate::language::dsl::document::TransportKind;
    match (step.transport, conn.is_http()) {
        (Some(TransportKind::Http), false) => {
            return Some("step applies to the HTTP transport".into());
        }
        (Some(TransportKind::Stdio), true) => {
            return Some("step applies to the stdio transport".into());
        }
        _ => {}
    }
    if let Some(why) = step.requires.unmet(&conn.negotiated, conn.is_http()) {
        return Some(why);
    }
    // The rule table: where the negotiated revision has no such rule, no check.
    if let Some(why) = step
        .rule
        .and_then(|r| r.not_a_rule_at(&conn.negotiated.revision))
    {
        return Some(why);
    }
    let eras = step.eras.as_ref()?;
    let n = &conn.negotiated;
    if eras
        .iter()
        .any(|s| s.matches_negotiated(n.kind, &n.revision))
    {
        return None;
    }
    Some(format!(
        "step applies to eras [{}]; the connection speaks {} ({})",
        eras.iter()
            .map(EraSelector::label)
            .collect::<Vec<_>>()
            .join(", "),
        n.kind.as_str(),
        n.revision
    ))
}
