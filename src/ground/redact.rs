//! Secrets never reach an output: what mcpspec treats as a secret, and the one way text
//! is made safe to show.
//!
//! Two kinds of secret are hidden behind [`MASK`]:
//! - known values: the bearer token, credential headers, credential-named `--env` values,
//!   secret parameters — and the forms they take once JSON-escaped;
//! - secret-shaped values, whoever sent them: `NAME=value` / `"NAME": "value"` with a
//!   credential-like name, `Bearer …`, JWTs, PEM blocks, cloud key formats.
//!
//! Text is always redacted *before* it is shortened ([`Redactor::shorten`]): cutting first
//! leaves a prefix of the secret that no longer matches anything. Full redaction runs
//! only where text is written (reporters, snapshot and init files) and where text is cut;
//! nothing here runs per request.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, LazyLock, RwLock};

use regex::{Captures, Regex};
use serde_json::Value;

/// What a redacted secret is replaced with.
pub const MASK: &str = "***";

/// Parts of a name that mark its value as a credential. The one list behind
/// [`is_sensitive_name`], [`is_sensitive_header`] and the `NAME=value` pattern.
const SENSITIVE_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "api-key",
    "api_key",
    "apikey",
    "auth",
    "credential",
    "private-key",
    "private_key",
    "access-key",
    "access_key",
];

/// Header names whose values are credentials (`Authorization`, `Cookie`, `*token*`,
/// `*key*`…). Their values are secrets, never written to a generated file, and never sent
/// to another origin on a redirect. (A header named `*key*` is a credential; a JSON field
/// named so is not, so `key` is not one of the [`SENSITIVE_WORDS`].)
pub fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "cookie"
        || n == "set-cookie"
        || n == "proxy-authorization"
        || n.contains("key")
        || is_sensitive_name(&n)
}

/// Names that suggest a credential (`API_KEY`, `x-auth-token`, `SECRET`, …).
pub fn is_sensitive_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SENSITIVE_WORDS.iter().any(|w| n.contains(w))
}

/// Parameters and scenario variables whose values are secrets whatever their source (a
/// pack `default`, `--set`, `MCPSPEC_PARAM_<NAME>`, `parameters:` in mcpspec.yaml, a
/// scenario's `vars`): names ending in `_token`, `_secret`, `_key` or `_password`, and
/// `password` itself (any case). Exact suffixes, so `progressToken` (camelCase, MCP's own
/// `_meta` key) and `max_tokens` stay visible. The book's secrets chapter lists the same.
pub fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "password"
        || ["_token", "_secret", "_key", "_password"]
            .iter()
            .any(|s| n.ends_with(s))
}

/// The text a secret value takes in outputs (a string as is, anything else as JSON), or
/// `None` when there is nothing to hide.
pub fn secret_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Whole matches that are secrets: JWTs, PEM blocks, cloud and SaaS key formats.
static SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        // JWT (the signature may be empty: `alg: none`).
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
        // PEM block (to the end of the text when its END line is cut off).
        r"|-----BEGIN [A-Z0-9 ]{1,40}-----(?s:.*?)(?:-----END [A-Z0-9 ]{1,40}-----|\z)",
        // AWS access key ids.
        r"|(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?-u:\b)",
        // GitHub tokens.
        r"|(?-u:\b)gh[pousr]_[A-Za-z0-9]{30,}|(?-u:\b)github_pat_[A-Za-z0-9_]{22,}",
        // Slack tokens.
        r"|(?-u:\b)xox[abposre]-[A-Za-z0-9-]{10,}",
        // OpenAI / Anthropic style keys, Stripe keys, Google API keys.
        r"|(?-u:\b)sk-[A-Za-z0-9_-]{20,}|(?-u:\b)[rs]k_(?:live|test)_[A-Za-z0-9]{10,}|(?-u:\b)AIza[0-9A-Za-z_-]{35}",
    ))
    .expect("secret patterns compile")
});

/// `Bearer <credential>` (any case): the credential is masked, the scheme kept.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(bearer|basic)([ \t]+)([A-Za-z0-9._~+/=-]{8,})").expect("compiles")
});

/// `NAME=value`, `NAME: value`, `"NAME": "value"` (also JSON-escaped, `\"NAME\": \"value\"`)
/// where NAME holds one of [`SENSITIVE_WORDS`]: the value (visible ASCII, no quotes or
/// brackets, so `NAME=…` and `NAME=<VALUE>` placeholders stay) is masked, the name kept.
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    // `auth` only where a name part starts (`AUTH_TOKEN`, `x-auth`, `authorization`), not
    // inside a word: prose such as "unauthenticated: a request" is no credential.
    let words: Vec<String> = SENSITIVE_WORDS
        .iter()
        .map(|w| match *w {
            "auth" => r"(?-u:\b)(?:[A-Za-z0-9_.-]*[_.-])?auth".to_string(),
            w => format!("[A-Za-z0-9_.-]*{}", regex::escape(w)),
        })
        .collect();
    Regex::new(&format!(
        r#"(?i)((?:{})[A-Za-z0-9_.-]*(?:\\*")?[ \t]*[:=][ \t]*(?:\\*")?)((?:(?:bearer|basic)[ \t]+)?[\x21-\x7e&&[^"'`\\,;&(){{}}\[\]<>]]+)"#,
        words.join("|")
    ))
    .expect("compiles")
});

/// The password of a URL's userinfo (`https://alice:PASS@host`): masked, the user kept.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)([a-z][a-z0-9+.-]{0,30}://[^/?#\s@:]*:)([^/?#\s@]+)@")
        .expect("compiles")
});

/// A URL as mcpspec records and shows it (report targets, `init`'s mcpspec.yaml): without
/// userinfo (`alice:PASS@`), and credential-looking query values (`?token=…`) masked by
/// the same patterns as every other text ([`redact_shapes`]).
pub fn safe_url(url: &str) -> String {
    redact_shapes(&without_userinfo(url)).into_owned()
}

/// `url` without its userinfo (`scheme://user:pass@host/…` → `scheme://host/…`).
pub fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{tail}")
        }
        None => url.to_string(),
    }
}

/// Known secret values, with pattern redaction on top. At each position the longest
/// matching value wins, so a secret that contains another is hidden whole; the mask
/// written for one is never matched again.
#[derive(Debug, Default)]
pub struct Redactor {
    /// The secrets and their JSON-escaped forms, longest first.
    values: Vec<String>,
    /// `values` as one alternation (longest first, so the longest match wins).
    matcher: Option<Regex>,
}

impl Redactor {
    pub fn new(secrets: &[String]) -> Self {
        let mut values: Vec<String> = Vec::new();
        for secret in secrets.iter().filter(|s| !s.is_empty()) {
            let once = json_escape(secret);
            let twice = json_escape(&once);
            for variant in [secret.clone(), once, twice] {
                if !values.contains(&variant) {
                    values.push(variant);
                }
            }
        }
        values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let matcher = (!values.is_empty()).then(|| {
            let alternation: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
            regex::RegexBuilder::new(&alternation.join("|"))
                .size_limit(64 << 20)
                .build()
                .expect("escaped literals compile")
        });
        Redactor { values, matcher }
    }

    /// The known values (JSON-escaped forms included).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `text` with every known secret and every secret-shaped value masked.
    pub fn redact(&self, text: &str) -> String {
        let known = match &self.matcher {
            Some(m) => m.replace_all(text, MASK),
            None => Cow::Borrowed(text),
        };
        redact_shapes(&known).into_owned()
    }

    /// `line` redacted, and `span` (a byte range of `line`) moved to where its text lands
    /// in it: what a source snippet shows, pointing where it pointed before. A span that
    /// starts or ends inside a secret starts or ends with its mask.
    pub fn redact_keeping(&self, line: &str, span: Range<usize>) -> (String, Range<usize>) {
        let redacted = self.redact(line);
        if redacted == line {
            return (redacted, span);
        }
        let map = kept_pieces(line, &redacted);
        let start = map_offset(&map, span.start, false, redacted.len());
        let end = map_offset(&map, span.end, true, redacted.len()).max(start);
        (redacted, start..end)
    }

    /// At most `max` characters of `text`, redacted *before* it is cut (`…` marks a cut).
    /// Text that fits is returned as it is: whoever writes it redacts it whole.
    pub fn shorten(&self, text: &str, max: usize) -> String {
        if text.len() <= max || text.chars().count() <= max {
            return text.to_string();
        }
        // A secret that starts before the cut ends within the window: redact only that.
        let longest = self.values.first().map_or(0, String::len);
        let window = max + longest.max(SHAPE_MARGIN);
        let end = text
            .char_indices()
            .nth(window)
            .map_or(text.len(), |(i, _)| i);
        let redacted = self.redact(&text[..end]);
        if end == text.len() && redacted.chars().count() <= max {
            return redacted;
        }
        let mut cut: String = redacted.chars().take(max).collect();
        cut.push('…');
        cut
    }

    /// The last `max` characters of `text`, redacted before it is cut (`…` marks a cut).
    pub fn shorten_start(&self, text: &str, max: usize) -> String {
        if text.len() <= max || text.chars().count() <= max {
            return text.to_string();
        }
        let longest = self.values.first().map_or(0, String::len);
        let window = max + longest.max(SHAPE_MARGIN);
        let n = text.chars().count();
        let start = match n.checked_sub(window) {
            Some(skip) if skip > 0 => text.char_indices().nth(skip).map_or(0, |(i, _)| i),
            _ => 0,
        };
        let redacted = self.redact(&text[start..]);
        let len = redacted.chars().count();
        if start == 0 && len <= max {
            return redacted;
        }
        let tail: String = redacted.chars().skip(len.saturating_sub(max)).collect();
        format!("…{tail}")
    }

    /// Redact every string of a JSON value in place (keys and numbers untouched, so the
    /// structure survives any secret).
    pub fn redact_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let r = self.redact(s);
                if r != *s {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }
}

/// The text `redacted` kept from `original` (which it is with some stretches replaced by
/// [`MASK`]): each piece between masks as (its offset in `original`, in `redacted`, its
/// length), found in order. A piece found at a wrong place only moves a snippet's marker.
fn kept_pieces(original: &str, redacted: &str) -> Vec<(usize, usize, usize)> {
    let pieces: Vec<&str> = redacted.split(MASK).collect();
    let mut kept = Vec::with_capacity(pieces.len());
    let (mut in_original, mut in_redacted) = (0, 0);
    for (i, piece) in pieces.iter().enumerate() {
        let found = if i == 0 {
            Some(0)
        } else if i + 1 == pieces.len() {
            // The last piece ends the text; every masked stretch holds a character at least.
            (original.ends_with(piece) && original.len() - piece.len() > in_original)
                .then(|| original.len() - piece.len())
        } else {
            let from = original[in_original..]
                .chars()
                .next()
                .map_or(original.len(), |c| in_original + c.len_utf8());
            original[from..].find(piece).map(|at| from + at)
        };
        let Some(at) = found else { break };
        kept.push((at, in_redacted, piece.len()));
        in_original = at + piece.len();
        in_redacted += piece.len() + MASK.len();
    }
    kept
}

/// Where `offset` of the original text is in the redacted one ([`kept_pieces`]): inside a
/// kept piece, the same character; inside a masked stretch, the mask's start (or its end,
/// for the `end` of a range).
fn map_offset(kept: &[(usize, usize, usize)], offset: usize, end: bool, len: usize) -> usize {
    for &(original, redacted, piece) in kept {
        if offset < original {
            // In the masked stretch before this piece.
            return if end { redacted } else { redacted - MASK.len() };
        }
        if offset < original + piece || (end && offset == original + piece) {
            return redacted + (offset - original);
        }
    }
    len
}

/// How far past a cut secret-shaped values are looked for (a PEM key block fits).
const SHAPE_MARGIN: usize = 8 * 1024;

/// The process's known secrets: registered by the command that learned them, read where
/// text is cut deep inside the engine and the transports (which know no secrets of
/// their own). Only ever grows.
static KNOWN: LazyLock<RwLock<Arc<Redactor>>> =
    LazyLock::new(|| RwLock::new(Arc::new(Redactor::default())));

/// Add `secrets` to the process's known secrets.
pub fn remember(secrets: &[String]) {
    if secrets.iter().all(String::is_empty) {
        return;
    }
    let mut known = KNOWN.write().unwrap_or_else(|e| e.into_inner());
    let mut all = known.values.clone();
    all.extend(secrets.iter().cloned());
    *known = Arc::new(Redactor::new(&all));
}

/// The process's known secrets.
pub fn known() -> Arc<Redactor> {
    KNOWN.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `text` with the known `secrets` and every secret-shaped value masked and control
/// characters escaped: for one-off messages to the terminal (reporters keep one
/// [`Redactor`]).
pub fn for_terminal(text: &str, secrets: &[String]) -> String {
    escape_controls(&Redactor::new(secrets).redact(text)).into_owned()
}

/// The largest character boundary of `text` at or before byte `max` (`str::floor_char_boundary`,
/// which is newer than the crate's minimum Rust).
pub fn char_floor(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Redact-then-truncate with the process's known secrets: the one way an excerpt is made.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    known().shorten(text, max)
}

/// How many characters of its input an error message quotes.
pub const EXCERPT_CHARS: usize = 120;

/// The one way an error quotes what it was given (a pattern, a path, a value, a URL):
/// redacted, then cut to [`EXCERPT_CHARS`] with `…` — a 20 MB input never makes a 20 MB
/// error, and no secret survives the cut.
pub fn excerpt(text: &str) -> String {
    shorten(text, EXCERPT_CHARS)
}

/// [`Redactor::shorten_start`] with the process's known secrets.
pub fn shorten_start(text: &str, max: usize) -> String {
    known().shorten_start(text, max)
}

/// How many masks `text` shows (what a report counts as "redacted").
pub fn count_masks(text: &str) -> usize {
    text.matches(MASK).count()
}

/// Mask secret-shaped values (see the module doc).
pub fn redact_shapes(text: &str) -> Cow<'_, str> {
    let text = match USERINFO.replace_all(text, format!("${{1}}{MASK}@").as_str()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(s) => Cow::Owned(s),
    };
    let text = match SHAPED.replace_all(&text, MASK) {
        Cow::Borrowed(_) => text,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let text = match BEARER.replace_all(&text, |c: &Captures| {
        if is_parameter_name(&c[3]) {
            c[0].to_string()
        } else {
            format!("{}{}{MASK}", &c[1], &c[2])
        }
    }) {
        Cow::Borrowed(_) => text,
        Cow::Owned(s) => Cow::Owned(s),
    };
    match NAMED.replace_all(&text, |c: &Captures| {
        let value = &c[2];
        let credential = value.rsplit([' ', '\t']).next().unwrap_or(value);
        if is_literal(value)
            || is_parameter_name(credential)
            || is_protocol_word(&c[1], value)
            || is_file_name(&c[1])
            || is_word_under_vague_name(&c[1], value)
        {
            c[0].to_string()
        } else {
            format!("{}{MASK}", &c[1])
        }
    }) {
        Cow::Borrowed(_) => text,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// Protocol words that only look like `NAME: value` credentials: MCP's own `progressToken`
/// (a request's progress id, which mcpspec sends itself), and prose such as
/// "authentication: HTTP 401" (the value is the word `HTTP`).
fn is_protocol_word(name: &str, value: &str) -> bool {
    let name = name.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    name.starts_with("progressToken")
        || ["HTTP", "HTTPS"].iter().any(|w| {
            value.eq_ignore_ascii_case(w)
                || value.to_ascii_uppercase().starts_with(&format!("{w}/"))
        })
}

/// [`SENSITIVE_WORDS`] that name a credential only sometimes: `auth-method: oauth`,
/// `grant_type: client_credentials`, a resource's prose "credentials: see below".
const VAGUE_WORDS: &[&str] = &["auth", "credential"];

/// Under a name whose only credential word is vague ([`VAGUE_WORDS`]), a plain word — letters
/// with `-` or `_`, one case (or capitalised), at most 24 characters — is no secret: a secret
/// has digits, mixed case, symbols or length (`x-auth-user: bob42` stays masked, as does
/// every value of `*token*`, `*password*`, `*secret*`…).
fn is_word_under_vague_name(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let strong = SENSITIVE_WORDS
        .iter()
        .any(|w| !VAGUE_WORDS.contains(w) && n.contains(w));
    if strong || value.len() > 24 {
        return false;
    }
    let letters = value.trim_matches(['-', '_']);
    let word = !letters.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_');
    let rest = letters.get(1..).unwrap_or("");
    let one_case = rest.chars().all(|c| !c.is_ascii_uppercase())
        || letters.chars().all(|c| !c.is_ascii_lowercase());
    word && one_case
}

/// File extensions that make a `NAME` a file name: `auth.yaml:12:7` is a position in a
/// scenario file, and `secret.json: no such file` a message about one, never a credential.
const FILE_EXTENSIONS: &[&str] = &[
    "yaml", "yml", "json", "jsonl", "toml", "xml", "csv", "md", "txt", "html", "log", "py", "js",
    "ts", "rs", "sh",
];

/// `NAME` (with the separator and quotes the pattern took after it) names a file: it ends
/// in one of the [`FILE_EXTENSIONS`].
fn is_file_name(name: &str) -> bool {
    let name = name.trim_end_matches([':', '=', '"', '\\', ' ', '\t']);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// `realm=` in `Bearer realm="…"`: an auth parameter, not a credential.
fn is_parameter_name(value: &str) -> bool {
    value
        .strip_suffix('=')
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
}

/// JSON literals and numbers (`"max_tokens": 100`): not credentials.
/// Values that are no credential: JSON literals and numbers, a mask, and mcpspec's own
/// `env:VAR` reference (the secret stays in the variable).
fn is_literal(value: &str) -> bool {
    let v = value.trim_start_matches('\\');
    matches!(v, "true" | "false" | "null")
        || v.parse::<f64>().is_ok()
        || v.ends_with(MASK)
        || v.strip_prefix("env:")
            .is_some_and(|var| var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

fn json_escape(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(&quoted)
        .to_string()
}

/// Text safe for a terminal or an XML document: control characters other than newline
/// and tab (ESC, OSC, NUL, CR, C1…) and the non-characters XML 1.0 forbids are shown as
/// `\u{…}`, so a server cannot drive the terminal or break the report.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        Redactor::new(&[]).redact(text)
    }

    #[test]
    fn known_values_longest_first() {
        let red = Redactor::new(&["abc".to_string(), "abcdef".to_string(), String::new()]);
        assert_eq!(red.redact("x abcdef y abc z"), "x *** y *** z");
        assert_eq!(red.redact("nothing here"), "nothing here");
        assert_eq!(red.redact("abcabc"), "******");
        assert_eq!(Redactor::new(&[]).redact("héllo abc"), "héllo abc");
        assert_eq!(Redactor::new(&["é".to_string()]).redact("héllo"), "h***llo");
        // Regex metacharacters are literal.
        assert_eq!(
            Redactor::new(&["a.b*".to_string()]).redact("axb a.b*"),
            "axb ***"
        );
    }

    #[test]
    fn a_span_keeps_pointing_at_its_text_once_secrets_are_masked() {
        let red = Redactor::new(&["hunter22".to_string()]);
        let line = r#"h: { Authorization: "Bearer sk-live-abcdefghij", k: hunter22, bogus: 1 }"#;
        let at = line.find("bogus").unwrap();
        let (shown, span) = red.redact_keeping(line, at..at + 5);
        assert_eq!(
            shown,
            r#"h: { Authorization: "Bearer ***", k: ***, bogus: 1 }"#
        );
        assert_eq!(&shown[span], "bogus");
        // A span on a secret covers its mask; one that ends where a secret starts does not.
        let at = line.find("hunter22").unwrap();
        let (shown, span) = red.redact_keeping(line, at + 2..at + 4);
        assert_eq!(&shown[span], "***");
        let (shown, span) = red.redact_keeping(line, at - 3..at);
        assert_eq!(&shown[span], "k: ");
        // Nothing to mask: the same line and span.
        let (shown, span) = red.redact_keeping("a: 1", 3..4);
        assert_eq!((shown.as_str(), span), ("a: 1", 3..4));
    }

    #[test]
    fn json_escaped_forms_are_known() {
        let red = Redactor::new(&["a\"b".to_string()]);
        assert!(red.values().contains(&"a\\\"b".to_string()));
        assert!(red.values().contains(&"a\\\\\\\"b".to_string()));
        assert!(Redactor::new(&[String::new()]).values().is_empty());
    }

    #[test]
    fn shorten_redacts_before_cutting() {
        let red = Redactor::new(&["s3cr3tTOKEN-9f8e7d6c5b4a".to_string()]);
        let text = "got s3cr3tTOKEN-9f8e7d6c5b4a back and more text";
        let cut = red.shorten(text, 10);
        assert_eq!(cut, "got *** ba…");
        for n in 4..10 {
            assert!(!cut.contains(&"s3cr3tTOKEN"[..n]), "{cut}");
        }
        // Short text is returned as is; its writer redacts it.
        assert_eq!(red.shorten("short", 30), "short");
        // A cut JWT is still recognized as one.
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
        let cut = Redactor::new(&[]).shorten(&format!("token is {jwt} ok"), 20);
        assert_eq!(cut, "token is *** ok");
        let cut = Redactor::new(&[]).shorten(&format!("the jwt {jwt}"), 14);
        assert_eq!(cut, "the jwt ***");
        let cut = Redactor::new(&[]).shorten(&format!("the jwt {jwt} and more"), 10);
        assert_eq!(cut, "the jwt **…");
        // From the end: the secret's suffix does not survive either.
        assert_eq!(
            red.shorten_start("x s3cr3tTOKEN-9f8e7d6c5b4a end", 8),
            "… *** end"
        );
        assert_eq!(red.shorten_start("short", 8), "short");
    }

    #[test]
    fn secret_shapes_are_masked() {
        assert_eq!(r("id AKIAIOSFODNN7EXAMPLE."), "id ***.");
        assert_eq!(
            r("ghp_abcdefghijklmnopqrstuvwxyz0123456789 xoxb-1234567890-abcdef"),
            "*** ***"
        );
        assert_eq!(r("key sk-proj-abcdefghijklmnopqrstuvwxyz"), "key ***");
        assert_eq!(
            r("-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE KEY----- after"),
            "*** after"
        );
        assert_eq!(r("-----BEGIN PRIVATE KEY-----\nMIIEow"), "***");
        assert_eq!(
            r("Authorization: Bearer abcdefgh12345"),
            "Authorization: Bearer ***"
        );
        assert_eq!(r("Authorization: abcdefgh12345"), "Authorization: ***");
        assert_eq!(
            r("the header is bearer abcdefgh12345"),
            "the header is bearer ***"
        );
        assert_eq!(
            r(r#"WWW-Authenticate: Bearer resource_metadata="x""#),
            r#"WWW-Authenticate: Bearer resource_metadata="x""#
        );
    }

    #[test]
    fn credential_named_values_are_masked() {
        assert_eq!(r("API_KEY=abc123 HOME=/root"), "API_KEY=*** HOME=/root");
        assert_eq!(
            r(r#"{"GITHUB_TOKEN": "xyz", "PATH": "/bin"}"#),
            r#"{"GITHUB_TOKEN": "***", "PATH": "/bin"}"#
        );
        assert_eq!(
            r(r#"{\"DB_PASSWORD\": \"hunter2\", \"USER\": \"me\"}"#),
            r#"{\"DB_PASSWORD\": \"***\", \"USER\": \"me\"}"#
        );
        assert_eq!(
            r("https://x/cb?access_token=abc&x=1"),
            "https://x/cb?access_token=***&x=1"
        );
        assert_eq!(
            r(r#""authorization":"Bearer s3cr3tTOKEN-9f8e7d6c5b4a""#),
            r#""authorization":"Bearer ***""#
        );
        // `auth` inside a word is prose, not a credential name; at a name part it is.
        assert_eq!(
            r("endpoint is unauthenticated: a request without credentials got HTTP 200"),
            "endpoint is unauthenticated: a request without credentials got HTTP 200"
        );
        assert_eq!(
            r("MY_AUTH=abc123 X_Y_AUTH_KEY=zz9"),
            "MY_AUTH=*** X_Y_AUTH_KEY=***"
        );
        assert_eq!(r("x-auth-user: bob42"), "x-auth-user: ***");
        // A plain word under a vague name (`auth`, `credential`) is no secret (issue 39 §10);
        // a secret-like value under it, and any value under a strong name, still is.
        assert_eq!(r(r#""auth-method": "oauth""#), r#""auth-method": "oauth""#);
        assert_eq!(
            r("auth-method=client_credentials"),
            "auth-method=client_credentials"
        );
        assert_eq!(r("credentials: none"), "credentials: none");
        assert_eq!(r("Credentials: Required"), "Credentials: Required");
        assert_eq!(r("credentials: hunter2"), "credentials: ***");
        assert_eq!(r("auth: aBcDeFgHiJ"), "auth: ***");
        assert_eq!(r("auth_token: abcdefgh"), "auth_token: ***");
        assert_eq!(r("password: changeme"), "password: ***");
        assert_eq!(
            r("(--set other_user_token=env:VAR)"),
            "(--set other_user_token=env:VAR)"
        );
        // Numbers, literals, objects: not credentials.
        assert_eq!(
            r(r#""max_tokens": 100, "auth": null"#),
            r#""max_tokens": 100, "auth": null"#
        );
        assert_eq!(
            r(r#""token": {"type":"string"}"#),
            r#""token": {"type":"string"}"#
        );
        assert_eq!(r("nothing secret here"), "nothing secret here");
        assert_eq!(r("(--set api_token=…)"), "(--set api_token=…)");
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            safe_url("http://alice:PASS@127.0.0.1:8080/mcp?token=abc&x=1"),
            "http://127.0.0.1:8080/mcp?token=***&x=1"
        );
        assert_eq!(safe_url("https://bob@h/p"), "https://h/p");
        assert_eq!(safe_url("http://h/a@b"), "http://h/a@b");
        assert_eq!(safe_url("http://127.0.0.1/mcp"), "http://127.0.0.1/mcp");
        assert_eq!(
            r("target http://alice:PASS@host/mcp and ftp://u:p4ss@h"),
            "target http://alice:***@host/mcp and ftp://u:***@h"
        );
        assert_eq!(r("see http://host:8080/mcp"), "see http://host:8080/mcp");
    }

    #[test]
    fn secret_params() {
        for n in [
            "api_token",
            "GITHUB_TOKEN",
            "client_secret",
            "api_key",
            "password",
            "db_password",
        ] {
            assert!(is_secret_param(n), "{n}");
        }
        for n in [
            "progressToken",
            "max_tokens",
            "token_count",
            "keys",
            "HTTP",
            "url",
            "passwords",
        ] {
            assert!(!is_secret_param(n), "{n}");
        }
        assert_eq!(secret_text(&serde_json::json!(42)), Some("42".into()));
        assert_eq!(secret_text(&serde_json::json!("")), None);
    }

    #[test]
    fn sensitive_names() {
        for n in [
            "Authorization",
            "Cookie",
            "X-Api-Key",
            "x-auth-token",
            "X-Key",
            "MY_SECRET",
        ] {
            assert!(is_sensitive_header(n), "{n}");
        }
        for n in ["Accept", "Content-Type", "Mcp-Session-Id", "X-Trace"] {
            assert!(!is_sensitive_header(n), "{n}");
        }
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(
            escape_controls("a\u{1b}[31mb\u{7}\0c\r\n\td"),
            "a\\u{1B}[31mb\\u{7}\\u{0}c\\u{D}\n\td"
        );
        assert_eq!(escape_controls("\u{9b}x\u{FFFF}"), "\\u{9B}x\\u{FFFF}");
        assert!(matches!(escape_controls("plain é\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn protocol_words_are_not_secrets() {
        let r = |t: &str| redact_shapes(t).into_owned();
        assert_eq!(
            r("the server requires authentication: HTTP 401"),
            "the server requires authentication: HTTP 401"
        );
        assert_eq!(r("auth: HTTP/1.1 403"), "auth: HTTP/1.1 403");
        assert_eq!(
            r(r#"{"_meta": {"progressToken": "mcpspec-progress-7"}}"#),
            r#"{"_meta": {"progressToken": "mcpspec-progress-7"}}"#
        );
        assert_eq!(r("progressToken=abc-123"), "progressToken=abc-123");
        // Credentials next to them still go.
        assert_eq!(r("x-auth-token: abcdefgh12345"), "x-auth-token: ***");
        assert_eq!(r("auth: HTTPS-like-secret-9"), "auth: ***");
    }

    #[test]
    fn file_names_and_positions_are_not_secrets() {
        let r = |t: &str| redact_shapes(t).into_owned();
        for name in [
            "auth.yaml",
            "secret.yaml",
            "password-reset.yaml",
            "api-token-refresh.yaml",
            "specs/auth/token.yml",
            "AUTH.JSON",
        ] {
            for text in [
                format!(" --> {name}:12:7"),
                format!("{name}:12"),
                format!("{name}: no such file"),
                format!(r#"file="{name}" line="12""#),
            ] {
                assert_eq!(r(&text), text);
            }
        }
        // A credential-named value whose name only looks like a file stays masked.
        assert_eq!(r("auth.token: abcdefgh12345"), "auth.token: ***");
        assert_eq!(
            r("AUTH_TOKEN=abcdefgh12345 auth.yaml:3"),
            "AUTH_TOKEN=*** auth.yaml:3"
        );
    }
}
