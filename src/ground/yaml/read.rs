//! Reading YAML: the reader's errors ([`super::tree`], [`super::de`]) rewritten for people — `file:line:col`, a snippet, what was expected in the
//! words of the file format, "did you mean", and every structural error of a file at once.

use std::sync::{Arc, LazyLock};

use regex::Regex;

use crate::ground::load_error::{LoadError, did_you_mean};
use crate::ground::source::{Pos, SourceFile};

use super::error::{Error, ErrorKind};

static TYPE_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:struct|enum|tuple struct|unit struct|untagged enum) ([A-Z][A-Za-z0-9]*)")
        .unwrap()
});

pub(super) fn yaml_error(file: &Arc<SourceFile>, e: &Error) -> LoadError {
    let raw = e.message.trim();
    let (mut message, mut help) = explain(&e.kind, raw);
    if let Some((line, col)) = e.location()
        && let Some((m, h)) = explain_by_key(file, raw, line, col)
    {
        (message, help) = (m, Some(h));
    }
    if help.is_none()
        && let Some((line, _)) = e.location()
    {
        help = explain_indentation(file, raw, line);
    }
    let error = match e.location() {
        Some((line, col)) => LoadError::at(Pos::new(file, line, col), message),
        None => LoadError::file(&file.name, message),
    };
    match help {
        Some(h) => error.with_help(h),
        None => error,
    }
}

/// The parser's words for a line indented where no mapping or list continues.
const INDENTATION_ERRORS: [&str; 3] = [
    "did not find expected key",
    "did not find expected '-' indicator",
    "mapping values are not allowed",
];

/// A YAML indentation mistake: the parser names the line, not what to do. Say which key
/// above it the line probably belongs with (the nearest one, with its column), so the fix
/// is to indent it like that key.
fn explain_indentation(file: &SourceFile, message: &str, line: u32) -> Option<String> {
    if !INDENTATION_ERRORS.iter().any(|m| message.contains(m)) {
        return None;
    }
    let lines: Vec<&str> = file.lines().collect();
    let here = *lines.get(line.checked_sub(1)? as usize)?;
    if here.starts_with('\t') {
        return Some("YAML indents with spaces, never tabs: replace the tab".into());
    }
    // Column of a line's key: after its indentation and any `- ` item markers.
    let key_of = |text: &str| -> Option<(usize, String)> {
        let body = text.trim_start();
        if body.is_empty() || body.starts_with('#') {
            return None;
        }
        let mut col = text.len() - body.len();
        let mut rest = body;
        while let Some(r) = rest.strip_prefix("- ") {
            col += 2 + (r.len() - r.trim_start().len());
            rest = r.trim_start();
        }
        let key = rest.split_once(':')?.0;
        (!key.is_empty() && !key.contains([' ', '{', '[', '"', '\'']))
            .then(|| (col, key.to_string()))
    };
    let (col, key) = key_of(here)?;
    let (above, (want, other)) = (0..line as usize - 1)
        .rev()
        .find_map(|i| key_of(lines[i]).map(|k| (i + 1, k)))?;
    if want == col {
        return None;
    }
    Some(format!(
        "check the indentation: `{key}` starts at column {}, `{other}` on line {above} at column {}; \
         to be a key beside `{other}`, indent it by {want} spaces, as that line is",
        col + 1,
        want + 1
    ))
}

/// A scalar where the DSL takes a list (`eras: legacy`), or a value that is not a
/// boolean: say so in DSL words, naming the key, with the fix written out from the user's
/// own value.
fn explain_by_key(
    file: &SourceFile,
    message: &str,
    line: u32,
    col: u32,
) -> Option<(String, String)> {
    let list = message == "expected sequence start" || message.contains("expected a sequence");
    let boolean = message == "invalid boolean";
    if !list && !boolean {
        return None;
    }
    let text = file.lines().nth(line.checked_sub(1)? as usize)?;
    let start = text.char_indices().nth(col.checked_sub(1)? as usize)?.0;
    let key = text[..start].trim_end().strip_suffix(':')?;
    let key = key
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    let mut value = text[start..].split(" #").next()?;
    if text[..start].contains(['{', '[']) {
        // In a flow collection the value ends at the next comma.
        value = value.split(',').next()?;
    }
    let value = value.trim().trim_end_matches([',', '}']).trim();
    if key.is_empty() || value.is_empty() {
        return None;
    }
    if boolean {
        return Some((
            format!("`{key}` takes `true` or `false`, not `{value}`"),
            format!("write `{key}: true` or `{key}: false`"),
        ));
    }
    let what = match key {
        "eras" => "a list of eras",
        "tags" => "a list of tags",
        "paths" => "a list of files, folders or packs",
        "supportedVersions" => "a list of revisions",
        _ => "a list",
    };
    Some((
        format!("`{key}` takes {what}, e.g. [{value}]"),
        format!("write `{key}: [{value}]`"),
    ))
}

/// Rephrase serde's messages in DSL terms and add "did you mean".
fn explain(kind: &ErrorKind, message: &str) -> (String, Option<String>) {
    match kind {
        ErrorKind::UnknownField { field, expected } if !expected.is_empty() => {
            unknown("key", field, expected)
        }
        ErrorKind::UnknownVariant { variant, expected } if !expected.is_empty() => {
            unknown("value", variant, expected)
        }
        ErrorKind::DuplicateKey(key) => (
            format!("duplicate key `{key}`"),
            Some("each key may appear once in a mapping".into()),
        ),
        ErrorKind::MissingField(field) => (format!("missing required key `{field}`"), None),
        ErrorKind::InvalidType { found, expected } => {
            let help = (found == "sequence" && expected.contains("ScenarioDoc")).then(|| {
                "a scenario file is a mapping: `scenario: NAME`, then the list of steps under `steps:`"
                    .to_string()
            });
            (
                format!(
                    "expected {}, found {}",
                    in_yaml_words(expected),
                    in_yaml_words(found)
                ),
                help,
            )
        }
        _ => explain_message(message),
    }
}

/// A key or value that is none of `expected`: the list, and the nearest one.
fn unknown(what: &str, name: &str, expected: &[&str]) -> (String, Option<String>) {
    let list = expected
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let help = match did_you_mean(name, expected.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? expected one of {list}"),
        None => format!("expected one of {list}"),
    };
    (format!("unknown {what} `{name}`"), Some(help))
}

/// The errors whose text is all there is: the reader's limits, serde's words for untagged
/// enums, the parser's.
fn explain_message(message: &str) -> (String, Option<String>) {
    // The reader's depth limit, and the parser's own nesting limit on flow collections.
    if message == "the document nests too deeply" || message.contains("recursion limit exceeded") {
        return (
            "the document nests too deeply".into(),
            Some(format!(
                "mcpspec reads YAML nested at most {} levels deep",
                super::tree::MAX_DEPTH
            )),
        );
    }
    if message.starts_with("the aliases of the file stand for more than") {
        return (
            message.to_string(),
            Some("an anchor repeated by aliases counts once per alias: repeat less, or write the values out".into()),
        );
    }
    if message.starts_with("the file holds more than") {
        return (
            message.to_string(),
            Some("mcpspec reads at most that many in one file: split it into several".into()),
        );
    }
    if message.contains("data did not match any variant of untagged enum CodeSpec") {
        return (
            "invalid code".into(),
            Some("expected an integer code or a list of integer codes".into()),
        );
    }
    if message.contains("untagged enum Sanitizer") {
        return (
            "invalid sanitizer".into(),
            Some("expected `timestamps`, `uuids`, `jwts`, `{path: \"$..id\"}` or `{regex: \"…\", replace: \"<id>\"}` (with an optional `replace`)".into()),
        );
    }
    if message.contains("untagged enum LengthSpec") {
        return (
            "invalid length".into(),
            Some("expected a number or a comparison such as `{gte: 1}`".into()),
        );
    }
    if message.contains("did not match any variant of untagged enum") {
        return (
            "invalid value: none of the forms this key takes fits".into(),
            None,
        );
    }
    if TYPE_NAME.is_match(message) {
        return (in_yaml_words(message), None);
    }
    (message.to_string(), None)
}

/// serde's words for YAML shapes and the reader's Rust type names, in the words of the
/// files: an error never names an internal type (`ScenarioDoc`).
fn in_yaml_words(text: &str) -> String {
    let text = match text {
        "sequence" => return "a list".into(),
        "map" => return "a mapping".into(),
        "unit value" => return "null".into(),
        _ => text,
    };
    let text = text.replace("a sequence", "a list");
    TYPE_NAME
        .replace_all(&text, |c: &regex::Captures| {
            match &c[1] {
                "ScenarioDoc" => "a scenario (a mapping with `scenario:` and `steps:`)",
                "StepDoc" => {
                    "a step (a mapping with `name:` and `request:`, `check:` or another step kind)"
                }
                name if name.ends_with("Spec")
                    || c[0].starts_with("enum")
                    || c[0].starts_with("untagged") =>
                {
                    "one of the forms this key takes"
                }
                _ => "a mapping",
            }
            .to_string()
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's type names never reach the user: a bare list of steps is told how a
    /// scenario file is laid out (#38 item 20).
    #[test]
    fn type_names_are_said_in_dsl_words() {
        let invalid = |found: &str, expected: &str| ErrorKind::InvalidType {
            found: found.into(),
            expected: expected.into(),
        };
        let (message, help) = explain(&invalid("sequence", "struct ScenarioDoc"), "");
        assert_eq!(
            message,
            "expected a scenario (a mapping with `scenario:` and `steps:`), found a list"
        );
        assert!(help.unwrap().contains("under `steps:`"));
        for (kind, raw) in [
            (invalid("integer `3`", "struct StepDoc"), ""),
            (invalid("sequence", "struct Request"), ""),
            (invalid("string \"x\"", "enum Kind"), ""),
            (
                ErrorKind::Other,
                "data did not match any variant of untagged enum Whatever",
            ),
            (ErrorKind::Other, "expected struct Request"),
        ] {
            let (message, _) = explain(&kind, raw);
            assert!(
                !TYPE_NAME.is_match(&message) && !message.contains("Request"),
                "{raw} -> {message}"
            );
        }
    }

    /// Past the depth limit, the error says so in mcpspec's words, with a position.
    #[test]
    fn too_deep_is_said_plainly() {
        let text = format!("a: {}1{}\n", "[".repeat(70), "]".repeat(70));
        let file = SourceFile::new("t.yaml", &text);
        let e = super::super::tree::read(&file.text).expect_err("over the limit");
        let error = yaml_error(&file, &e);
        assert_eq!(error.message, "the document nests too deeply", "{error:?}");
        assert_eq!(error.pos.as_ref().map(|p| p.line), Some(1), "{error:?}");
        assert!(
            error.help.as_deref().unwrap_or("").contains("64"),
            "{error:?}"
        );
    }
}
