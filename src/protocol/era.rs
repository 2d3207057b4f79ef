//! Protocol eras and revisions: what a run asks for, and what scenarios/steps apply to.

use std::fmt;

/// The modern revision (no handshake, `_meta` on every request).
pub const MODERN_REVISION: &str = "2026-07-28";
/// The newest legacy revision (initialize handshake).
pub const LATEST_LEGACY_REVISION: &str = "2025-11-25";
/// Legacy revisions mcpspec knows; a server may counter-offer any of these.
pub const LEGACY_REVISIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Legacy (initialize + session) or modern (stateless, per-request `_meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EraKind {
    Legacy,
    Modern,
}

impl EraKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EraKind::Legacy => "legacy",
            EraKind::Modern => "modern",
        }
    }

    /// The era a revision date belongs to.
    pub fn of_revision(revision: &str) -> EraKind {
        if revision >= MODERN_REVISION {
            EraKind::Modern
        } else {
            EraKind::Legacy
        }
    }
}

/// How a connection is asked to speak, as given by `--era` or a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EraRequest {
    /// `legacy`: offer the latest legacy revision, accept the server's counter-offer.
    Legacy,
    /// A pinned legacy revision: offer only it, fail on another answer.
    PinnedLegacy(String),
    /// `modern` or a modern revision date: no handshake, no fallback.
    Modern(String),
    /// `auto`: probe `server/discover`, fall back to legacy.
    Auto,
}

impl EraRequest {
    /// Parse `legacy`, `modern`, `auto` or `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Result<EraRequest, String> {
        match text {
            "legacy" => Ok(EraRequest::Legacy),
            "modern" => Ok(EraRequest::Modern(MODERN_REVISION.to_string())),
            "auto" => Ok(EraRequest::Auto),
            date if is_revision_date(date) => Ok(match EraKind::of_revision(date) {
                EraKind::Modern => EraRequest::Modern(date.to_string()),
                EraKind::Legacy => EraRequest::PinnedLegacy(date.to_string()),
            }),
            other => Err(not_an_era(other)),
        }
    }
}

/// An era as labelled by the user (kept verbatim for ids like `scenario@legacy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Era {
    pub label: String,
    pub request: EraRequest,
}

impl Era {
    pub fn parse(label: &str) -> Result<Era, String> {
        Ok(Era {
            label: label.to_string(),
            request: EraRequest::parse(label)?,
        })
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// A selector in a scenario's or step's `eras:` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EraSelector {
    Legacy,
    Modern,
    Auto,
    Revision(String),
}

impl EraSelector {
    pub fn parse(text: &str) -> Result<EraSelector, String> {
        match text {
            "legacy" => Ok(EraSelector::Legacy),
            "modern" => Ok(EraSelector::Modern),
            "auto" => Ok(EraSelector::Auto),
            date if is_revision_date(date) => Ok(EraSelector::Revision(date.to_string())),
            other => Err(not_an_era(other)),
        }
    }

    /// Whether a run requested as `era` may apply (decided before connecting; `auto`
    /// runs are decided after negotiation with [`EraSelector::matches_negotiated`]).
    pub fn matches_request(&self, era: &EraRequest) -> bool {
        match (self, era) {
            (_, EraRequest::Auto) | (EraSelector::Auto, _) => true,
            (EraSelector::Legacy, EraRequest::Legacy | EraRequest::PinnedLegacy(_)) => true,
            (EraSelector::Modern, EraRequest::Modern(_)) => true,
            (EraSelector::Revision(r), EraRequest::PinnedLegacy(p) | EraRequest::Modern(p)) => {
                r == p
            }
            (EraSelector::Revision(r), EraRequest::Legacy) => {
                EraKind::of_revision(r) == EraKind::Legacy
            }
            _ => false,
        }
    }

    /// Whether a connection that negotiated `revision` in `kind` matches.
    pub fn matches_negotiated(&self, kind: EraKind, revision: &str) -> bool {
        match self {
            EraSelector::Auto => true,
            EraSelector::Legacy => kind == EraKind::Legacy,
            EraSelector::Modern => kind == EraKind::Modern,
            EraSelector::Revision(r) => r == revision,
        }
    }

    pub fn label(&self) -> String {
        match self {
            EraSelector::Legacy => "legacy".into(),
            EraSelector::Modern => "modern".into(),
            EraSelector::Auto => "auto".into(),
            EraSelector::Revision(r) => r.clone(),
        }
    }
}

/// The era names besides revision dates, for did-you-mean on a typo (`modren`).
/// What `auto`'s note says on a connection that reused the run's decision (the console
/// prints each reason once, with or without it).
pub const DECIDED_ONCE: &str = " (decided once for this run)";

pub const NAMES: [&str; 3] = ["legacy", "modern", "auto"];

fn not_an_era(text: &str) -> String {
    format!(
        "`{text}` is not an era: expected `legacy`, `modern`, `auto` or a revision date such as `2025-11-25` or `2026-07-28`"
    )
}

/// A revision is a real calendar date `YYYY-MM-DD` (`2026-13-45` is a typo, not an era).
fn is_revision_date(text: &str) -> bool {
    let b = text.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return false;
    }
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// What the connection speaks, and how it got there.
#[derive(Debug, Clone)]
pub struct Negotiated {
    pub requested: String,
    pub kind: EraKind,
    pub revision: String,
    pub note: Option<String>,
    pub server_info: Option<serde_json::Value>,
    pub capabilities: serde_json::Value,
    pub supported_versions: Vec<String>,
    pub instructions: Option<String>,
    /// The handshake result as received: `initialize` (legacy) or `server/discover` (modern).
    pub handshake: Option<serde_json::Value>,
    /// HTTP: the handshake response's headers (lower-case names); `None` over stdio.
    pub handshake_headers: Option<Vec<(String, String)>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_eras() {
        assert_eq!(EraRequest::parse("legacy"), Ok(EraRequest::Legacy));
        assert_eq!(
            EraRequest::parse("2025-06-18"),
            Ok(EraRequest::PinnedLegacy("2025-06-18".into()))
        );
        assert_eq!(
            EraRequest::parse("modern"),
            Ok(EraRequest::Modern(MODERN_REVISION.into()))
        );
        assert!(EraRequest::parse("2026-7-28").is_err());
        assert!(EraRequest::parse("2026-13-45").is_err());
        assert!(EraRequest::parse("2025-02-29").is_err());
        assert!(EraRequest::parse("2024-02-29").is_ok());
        assert!(EraSelector::parse("2026-00-10").is_err());
        assert!(
            EraRequest::parse("new")
                .unwrap_err()
                .contains("expected `legacy`")
        );
    }

    #[test]
    fn selectors_match_requests() {
        let legacy = EraSelector::parse("legacy").unwrap();
        assert!(legacy.matches_request(&EraRequest::PinnedLegacy("2025-06-18".into())));
        assert!(!legacy.matches_request(&EraRequest::Modern(MODERN_REVISION.into())));
        let modern = EraSelector::parse("2026-07-28").unwrap();
        assert!(modern.matches_request(&EraRequest::Modern(MODERN_REVISION.into())));
        assert!(modern.matches_request(&EraRequest::Auto));
        assert!(!modern.matches_negotiated(EraKind::Legacy, "2025-11-25"));
    }
}
