//! A step's transcript as text, one message a line (the console, JUnit and HTML show it so),
//! and the one-line form of a message.

use crate::results::exchange::{Direction, TranscriptEntry};

/// Transcript of a step, one entry per line: `--> {json}` for sent messages, `<-- {json}`
/// for received ones (prefixed with `[HTTP …]` when HTTP details are known) and `# note`
/// for transport notes. Multi-line JSON bodies are compacted, other multi-line bodies have
/// their newlines escaped, so each entry stays on one line. Not redacted.
pub fn format_transcript(entries: &[TranscriptEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        out.push_str(match entry.direction {
            Direction::Sent => "-->",
            Direction::Received => "<--",
            Direction::Note => "#",
        });
        if let Some(http) = entry.http.as_deref().filter(|h| !h.trim().is_empty()) {
            let http = one_line(http);
            if http.starts_with("HTTP") {
                out.push_str(&format!(" [{http}]"));
            } else {
                out.push_str(&format!(" [HTTP {http}]"));
            }
        }
        let body = one_line_body(&entry.body);
        if !body.is_empty() {
            out.push(' ');
            out.push_str(&body);
        }
        out.push('\n');
    }
    out
}

fn one_line_body(body: &str) -> String {
    let body = body.trim_end_matches(['\n', '\r']);
    if !body.contains('\n') {
        return body.to_string();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body)
        && let Ok(compact) = serde_json::to_string(&value)
    {
        return compact;
    }
    body.replace("\r\n", "\\n").replace('\n', "\\n")
}

/// Collapse a text onto one line (for messages and attributes).
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.trim().lines().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(line.trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_is_one_entry_per_line() {
        let entries = vec![
            TranscriptEntry {
                direction: Direction::Sent,
                at_ms: 0,
                body: r#"{"id":1}"#.into(),
                http: Some("POST /mcp".into()),
            },
            TranscriptEntry {
                direction: Direction::Received,
                at_ms: 1,
                body: "{\n  \"id\": 1\n}\n".into(),
                http: Some("200".into()),
            },
            TranscriptEntry {
                direction: Direction::Received,
                at_ms: 1,
                body: "not\njson".into(),
                http: None,
            },
            TranscriptEntry {
                direction: Direction::Note,
                at_ms: 2,
                body: "timeout".into(),
                http: None,
            },
        ];
        assert_eq!(
            format_transcript(&entries),
            "--> [HTTP POST /mcp] {\"id\":1}\n<-- [HTTP 200] {\"id\":1}\n<-- not\\njson\n# timeout\n"
        );
    }
}
