//! Whether a scenario applies on its connection: the era it was refused, its eras and
//! `requires` against what was negotiated.

use crate::language::dsl::Scenario;
use crate::protocol::era::{Era, EraSelector};
use crate::run::client::Connection;

/// A modern scenario that requires `supportedVersions: { includes: [...] }` on a server
/// that refused the modern era (its `server/discover` answered an error, listed other
/// versions, or ended the process while `initialize` works): the requirement is unmet —
/// the server does not speak that era — and the scenario is skipped with the server's
/// refusal (`message`, cut), not a setup error. (A legacy-only server is no dual-era one:
/// the cross-era pack does not apply to it.)
pub(super) fn era_refused_unmet(scenario: &Scenario, era: &Era, message: &str) -> Option<String> {
    use crate::protocol::era::EraRequest;
    if !matches!(era.request, EraRequest::Modern(_))
        || scenario.requires.versions_include.is_empty()
    {
        return None;
    }
    // The refusal itself, without the advice for a run pinned to the era.
    let prefix = format!("the server did not accept protocol {}: ", era.label);
    let said = message.strip_prefix(&prefix).unwrap_or(message);
    let said = said.split(" (a legacy-only server?").next().unwrap_or(said);
    Some(format!(
        "the server does not speak {}: {}",
        era.label,
        crate::ground::redact::shorten(said, 300)
    ))
}

/// Why the whole scenario does not apply: its `requires` are unmet, or (for `auto` runs)
/// the negotiated era is outside the scenario's `eras`.
pub(super) fn era_mismatch(scenario: &Scenario, conn: &Connection) -> Option<String> {
    let n = &conn.negotiated;
    if let Some(why) = scenario
        .pack_requires
        .as_ref()
        .and_then(|r| r.unmet(n.kind, &n.revision, &n.capabilities))
    {
        return Some(why);
    }
    if let Some(why) = scenario.requires.unmet(n, conn.is_http()) {
        return Some(why);
    }
    if scenario.eras.is_empty()
        || scenario
            .eras
            .iter()
            .any(|s| s.matches_negotiated(n.kind, &n.revision))
    {
        return None;
    }
    Some(format!(
        "the scenario applies to eras [{}]; the connection negotiated {} ({})",
        scenario
            .eras
            .iter()
            .map(EraSelector::label)
            .collect::<Vec<_>>()
            .join(", "),
        n.kind.as_str(),
        n.revision
    ))
}
