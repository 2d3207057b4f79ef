//! Load errors of every input file (scenario, pack, config, baseline, rules): always
//! `file:line:col`, a source snippet, and what was expected.

use std::fmt;

use std::path::Path;
use std::sync::Arc;

use crate::ground::source::{Pos, ReadError, Severity, SourceFile};

/// An invalid scenario, pack or flag value. Renders rustc-style.
#[derive(Debug, Clone)]
pub struct LoadError {
    pub pos: Option<Pos>,
    /// File name when there is no precise position (unreadable file).
    pub file: Option<String>,
    pub message: String,
    /// What would have been valid / a suggestion.
    pub help: Option<String>,
    /// Context, e.g. the line that called the step group where the error is.
    pub notes: Vec<String>,
}

/// A message as a load or usage error keeps it: every `quoted` part cut to an excerpt
/// ([`crate::ground::redact::excerpt`]), so a message that quotes a 20 MB value (a pattern, a
/// parameter, a path, an unknown name) stays a line; the snippet shows where the value is.
pub fn bounded(message: String) -> String {
    let long = |part: &str| {
        part.chars()
            .nth(crate::ground::redact::EXCERPT_CHARS)
            .is_some()
    };
    let parts: Vec<&str> = message.split('`').collect();
    if parts.len() < 3 || !parts.iter().skip(1).step_by(2).any(|p| long(p)) {
        return message;
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 && i + 1 < parts.len() && long(part) {
                crate::ground::redact::excerpt(part)
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

impl LoadError {
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        LoadError {
            pos: Some(pos),
            file: None,
            message: bounded(message.into()),
            help: None,
            notes: Vec::new(),
        }
    }

    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Self {
        // A file named in a file (`scenarios:` of a pack) may be a 5 MiB name.
        let file = file.into();
        let file = match file.chars().nth(crate::ground::redact::EXCERPT_CHARS) {
            Some(_) => crate::ground::redact::excerpt(&file),
            None => file,
        };
        LoadError {
            pos: None,
            file: Some(file),
            message: bounded(message.into()),
            help: None,
            notes: Vec::new(),
        }
    }

    /// An input file that could not be read (as [`read_source`] reads it): text that is
    /// not UTF-8 points at its first bad byte, with the text around it.
    pub fn unreadable(name: &str, e: ReadError) -> Self {
        match e {
            ReadError::NotUtf8 {
                byte,
                line,
                col,
                text,
            } => {
                let file = SourceFile::new(name, text);
                LoadError::at(
                    Pos::new(&file, line, col),
                    format!("invalid UTF-8: byte 0x{byte:02X} is not part of a UTF-8 character"),
                )
                .with_help("mcpspec reads UTF-8 text; re-save the file as UTF-8")
            }
            e => LoadError::file(name, format!("cannot read: {e}")),
        }
    }

    /// An error about a file that another one names (an imported pack, a rules file): an
    /// error without a position of its own is moved to the line that names the file; one
    /// inside the file gets a note with that line.
    pub fn referenced_at(mut self, pos: Pos, what: &str) -> Self {
        if self.pos.is_none() {
            let file = self.file.take().unwrap_or_default();
            self.message = format!("{what} `{file}`: {}", self.message);
            self.pos = Some(pos);
        } else {
            self.notes.push(format!("{what} named at {pos}"));
        }
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// With the help "did you mean `X`?" when `unknown` is close to one of `candidates`.
    pub fn suggesting<'a>(
        self,
        unknown: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        match did_you_mean(unknown, candidates) {
            Some(s) => self.with_help(format!("did you mean `{s}`?")),
            None => self,
        }
    }

    /// Plain-text rendering with the snippet (what the console and reports show).
    pub fn render(&self) -> String {
        match &self.pos {
            Some(pos) => pos.snippet_with_notes(
                Severity::Error,
                &self.message,
                "here",
                self.help.as_deref(),
                &self.notes,
            ),
            None => {
                let mut s = format!(
                    "error: {}\n --> {}",
                    self.message,
                    self.file.as_deref().unwrap_or("<input>")
                );
                if let Some(help) = &self.help {
                    s.push_str(&format!("\n  = help: {help}"));
                }
                for note in &self.notes {
                    s.push_str(&format!("\n  = note: {note}"));
                }
                s
            }
        }
    }
}

impl LoadError {
    /// The error as data (`validate --format json`): where, what, the help, and the
    /// rendered text with its snippet.
    pub fn to_json(&self) -> serde_json::Value {
        let file = match &self.pos {
            Some(pos) => pos.shown_file().to_string(),
            None => self.file.clone().unwrap_or_else(|| "<input>".into()),
        };
        serde_json::json!({
            "file": file,
            "line": self.pos.as_ref().map(|p| p.line),
            "column": self.pos.as_ref().map(|p| p.col),
            "message": self.message,
            "help": self.help,
            "notes": self.notes,
            "rendered": self.render(),
        })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pos {
            Some(pos) => write!(f, "{pos}: {}", self.message),
            None => write!(
                f,
                "{}: {}",
                self.file.as_deref().unwrap_or("<input>"),
                self.message
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Read an input file (scenario, pack, baseline, rules, config) with the one safe reader.
pub fn read_source(path: &Path) -> Result<Arc<SourceFile>, LoadError> {
    let name = path.display().to_string();
    match crate::ground::source::read_text(path) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(e) => Err(LoadError::unreadable(&name, e)),
    }
}

/// Several load errors at once (validation reports all it finds, not just the first).
#[derive(Debug, Default)]
pub struct LoadErrors(pub Vec<LoadError>);

impl LoadErrors {
    pub fn push(&mut self, e: LoadError) {
        self.0.push(e);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Array(self.0.iter().map(LoadError::to_json).collect())
    }
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = self.0.iter().map(LoadError::render).collect();
        parts.push(format!(
            "{} error{} found",
            self.0.len(),
            if self.0.len() == 1 { "" } else { "s" }
        ));
        parts.join("\n\n")
    }
}

impl From<LoadError> for LoadErrors {
    fn from(e: LoadError) -> Self {
        LoadErrors(vec![e])
    }
}

/// Longest name "did you mean" compares: a longer one is no typo of a name, and the edit
/// distance costs the product of the two lengths (a 1 MiB `rule:` against every rule id
/// took minutes).
pub const SUGGESTED_CHARS: usize = 256;

/// "did you mean" for an unknown name among candidates (Levenshtein distance ≤ 1/3 of length).
/// Names past [`SUGGESTED_CHARS`] are not compared, nor those whose lengths alone put them
/// too far apart (the distance is at least the difference of the lengths).
pub fn did_you_mean<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    if unknown.len() > SUGGESTED_CHARS * 4 || unknown.chars().count() > SUGGESTED_CHARS {
        return None;
    }
    let unknown = unknown.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for cand in candidates {
        if cand.len() > SUGGESTED_CHARS * 4 {
            continue;
        }
        let limit = (cand.len().max(unknown.len()) / 3).max(1);
        if cand.len().abs_diff(unknown.len()) > limit * 4 {
            continue;
        }
        // Optimal string alignment: an adjacent transposition is one edit (`ctiy` → `city`).
        let d = strsim::osa_distance(&unknown, &cand.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {

    #[test]
    fn quoted_values_are_cut() {
        let long = "v".repeat(20_000);
        let m = super::bounded(format!("expected a string, got `{long}` at `x`"));
        assert!(m.len() < 400, "{m}");
        assert!(m.ends_with("…` at `x`"), "{m}");
        assert_eq!(super::bounded("a `b` c".into()), "a `b` c");
        assert_eq!(super::bounded("odd ` tick".into()), "odd ` tick");
    }

    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let keys = ["name", "request", "expect", "capture"];
        assert_eq!(did_you_mean("expct", keys), Some("expect"));
        assert_eq!(did_you_mean("reqest", keys), Some("request"));
        assert_eq!(did_you_mean("zzzzzz", keys), None);
        assert_eq!(did_you_mean("ctiy", ["city", "era"]), Some("city"));
    }

    #[test]
    fn long_names_are_not_compared() {
        let long = "expect".repeat(100_000);
        assert_eq!(did_you_mean(&long, ["expect"]), None);
        assert_eq!(did_you_mean("expect", [long.as_str()]), None);
        let near = format!("{}x", "a".repeat(SUGGESTED_CHARS - 1));
        let name = "a".repeat(SUGGESTED_CHARS);
        assert_eq!(did_you_mean(&near, [name.as_str()]), Some(name.as_str()));
    }
}
