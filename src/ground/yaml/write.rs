//! Writing YAML scalars: plain where every YAML reader reads them back as the same string,
//! double-quoted (JSON escapes are valid YAML escapes) everywhere else.

use super::value::{TKind, TValue};

/// A string as a YAML scalar: plain when it is unambiguous (`echo`, `tools/list`,
/// `2026-07-28`), else double-quoted (JSON escapes are valid YAML escapes).
pub fn scalar(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// A string as a double-quoted YAML scalar.
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Whether `s` reads back as the same string when written plain, in flow and block
/// context alike, with YAML 1.1 and 1.2 readers.
fn is_plain_safe(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let keyword = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf",
    ]
    .contains(&lower.as_str());
    let numeric = s.parse::<f64>().is_ok()
        || lower.starts_with("0x")
        || lower.starts_with("0o")
        || lower.starts_with("0b")
        || s.chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.');
    !keyword && !numeric
}

/// A string as the item of a block list (`  - ITEM`): plain whenever the reader reads the
/// item back as that very string (`tools@legacy:lists the tools`), else [`quoted`]. Wider
/// than [`scalar`], which must also hold in flow context; used for baseline entries, which
/// people read and edit.
pub fn block_item(text: &str) -> String {
    let plain = crate::ground::yaml::from_str::<TValue>(&format!("- {text}\n"))
        .ok()
        .is_some_and(|v| match v.kind {
            TKind::Seq(items) => items.len() == 1 && items[0].as_str() == Some(text),
            _ => false,
        });
    if plain && !text.contains('\n') {
        text.to_string()
    } else {
        quoted(text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Parse `key: <text>` back with the project's YAML reader.
    fn read_back(text: &str) -> Value {
        let doc: std::collections::BTreeMap<String, Value> =
            crate::ground::yaml::from_str(&format!("k: {text}\n")).expect("valid YAML");
        doc["k"].clone()
    }

    #[test]
    fn scalars_read_back_as_the_same_string() {
        for s in [
            "echo",
            "tools/list",
            "2026-07-28",
            "true",
            "No",
            "123",
            "1e5",
            "0x1F",
            "",
            " lead",
            "a: b",
            "#x",
            "a, b",
            "it's",
            "say \"hi\"",
            "line\nbreak",
            "{x}",
            "-dash",
            "é",
            "~",
            "null",
            "1.2.3",
        ] {
            assert_eq!(read_back(&scalar(s)), json!(s), "{s:?} as {}", scalar(s));
        }
        assert_eq!(scalar("get_weather"), "get_weather");
        assert_eq!(scalar("2026-07-28"), "2026-07-28");
        assert_eq!(scalar("true"), "\"true\"");
    }

    #[test]
    fn block_items_are_plain_when_they_read_back() {
        assert_eq!(
            block_item("tools@legacy:lists the tools"),
            "tools@legacy:lists the tools"
        );
        for text in ["tools: x", "#x", "true", "", " lead", "a\nb", "- x", "[x]"] {
            let item = block_item(text);
            assert_ne!(item, text, "{text:?} must be quoted");
            let doc: Vec<String> = crate::ground::yaml::from_str(&format!("- {item}\n")).unwrap();
            assert_eq!(doc, [text]);
        }
    }
}
