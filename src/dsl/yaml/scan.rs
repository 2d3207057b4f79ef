//! A hand-written scanner for the strict, common subset of YAML that scenario files use.
//!
//! `granit-parser`'s event machinery (token queue, simple-key bookkeeping, large event
//! values moved through several layers) was about half the load time of a big scenario
//! file. This scanner builds the same [`Node`] tree — same kinds, scalar text, `plain`
//! flags, positions and entry order — straight from the text, for a subset of YAML whose
//! meaning is unambiguous and easy to get right:
//!
//! - one document: no `---`/`...`, directives or BOM; `\n` line ends, no tabs, no control
//!   or non-printable characters;
//! - full-line and trailing (` #`) comments;
//! - block mappings with single-line plain or quoted keys, block sequences (`- item`,
//!   compact `- key: value` mappings, sequences at their parent key's indentation);
//! - single-line flow collections, nested, without trailing commas or empty values (a
//!   quoted key's value may follow its `:` directly, as in JSON);
//! - single-line plain scalars, single-quoted scalars and double-quoted scalars with the
//!   common escapes; empty values (`key:`, `-`).
//!
//! Anything else — anchors, aliases, tags, `?` keys, block scalars, multi-line scalars or
//! flow collections, and any invalid input — makes [`scan`] return `None`, and the caller
//! parses the text with `granit-parser` as before: the scanner never reports an error
//! itself. Differential tests (`tests::scanner_agrees_with_granit_*`) compare both trees on
//! the repository's YAML files and on a generated corpus.

use std::borrow::Cow;

use super::{Kind, Node, check_keys};

/// Deeper nesting is left to `granit-parser` (which has its own limits); this also
/// bounds the scanner's recursion.
pub(super) const MAX_DEPTH: usize = 64;

/// `granit-parser` drops a simple-key candidate after 1024 characters; keys this long
/// (in bytes, which are never fewer than characters) are left to it.
const MAX_KEY_BYTES: usize = 1000;

/// The node tree of `text`, or `None` when the text is outside the subset.
pub(super) fn scan(text: &str) -> Option<Node<'_>> {
    let ascii = check_chars(text)?;
    let mut scanner = Scanner {
        text,
        b: text.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
        ascii,
        cur: None,
        depth: 0,
        items: Vec::new(),
        entries: Vec::new(),
    };
    scanner.skip_to_content()?;
    let indent = scanner.cur?;
    let root = scanner.block_node(indent)?;
    // The root must be the whole document.
    match scanner.cur {
        None => Some(root),
        Some(_) => None,
    }
}

/// Whether every character is one the subset allows; `Some(true)` when all are ASCII
/// (columns are then byte offsets).
fn check_chars(text: &str) -> Option<bool> {
    let mut ascii = true;
    for &b in text.as_bytes() {
        if (b < 0x20 && b != b'\n') || b == 0x7f {
            return None;
        }
        ascii &= b < 0x80;
    }
    if !ascii {
        // Printable per YAML, minus NEL, BOM and the Unicode line separators.
        let printable = |c: char| {
            c.is_ascii()
                || (matches!(c as u32, 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..)
                    && !matches!(c, '\u{FEFF}' | '\u{2028}' | '\u{2029}'))
        };
        if !text.chars().all(printable) {
            return None;
        }
    }
    Some(ascii)
}

/// `,[]{}`: the flow indicators, which end plain scalars in flow collections.
fn is_flow(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    /// The 1-based line of `pos`, and the offset where that line starts.
    line: u32,
    line_start: usize,
    ascii: bool,
    /// The indentation of the content line the cursor is on (at its first non-space
    /// character), or `None` at the end of the text.
    cur: Option<usize>,
    depth: usize,
    /// The items and entries of the open collections, innermost last: a finished
    /// collection takes its own off the top into a vector of exactly their number
    /// (growing a vector per collection cost reallocations and twice the memory).
    items: Vec<Node<'a>>,
    entries: Vec<(Node<'a>, Node<'a>)>,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.b.get(self.pos + offset).copied()
    }

    /// `(line, column)` of the cursor, as the granit path reports positions (1-based,
    /// columns in characters).
    fn here(&self) -> (u32, u32) {
        let col = if self.ascii {
            self.pos - self.line_start
        } else {
            self.text[self.line_start..self.pos].chars().count()
        };
        (self.line, col as u32 + 1)
    }

    fn spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.pos += 1;
        }
    }

    fn newline_at(&mut self, at: usize) {
        self.pos = at + 1;
        self.line += 1;
        self.line_start = self.pos;
    }

    /// From the start of a line, skip blank and comment-only lines to the first content
    /// character, setting [`Self::cur`].
    fn skip_to_content(&mut self) -> Option<()> {
        loop {
            let indent = self.b[self.pos..]
                .iter()
                .take_while(|&&b| b == b' ')
                .count();
            let at = self.pos + indent;
            match self.b.get(at) {
                None => {
                    self.pos = at;
                    self.cur = None;
                    return Some(());
                }
                Some(b'\n') => self.newline_at(at),
                Some(b'#') => match self.b[at..].iter().position(|&b| b == b'\n') {
                    Some(n) => self.newline_at(at + n),
                    None => {
                        self.pos = self.b.len();
                        self.cur = None;
                        return Some(());
                    }
                },
                Some(_) => {
                    let rest = &self.b[at..];
                    if indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) {
                        return None;
                    }
                    self.pos = at;
                    self.cur = Some(indent);
                    return Some(());
                }
            }
        }
    }

    /// Whether only spaces and perhaps a comment are left on the line (the cursor is
    /// after content).
    fn at_line_end(&self) -> bool {
        let rest = &self.b[self.pos..];
        let spaces = rest.iter().take_while(|&&b| b == b' ').count();
        match rest.get(spaces) {
            None | Some(b'\n') => true,
            Some(b'#') => spaces > 0,
            _ => false,
        }
    }

    /// After a node: only spaces and a comment may end the line; then move on to the
    /// next content line.
    fn end_line(&mut self) -> Option<()> {
        let start = self.pos;
        self.spaces();
        match self.peek() {
            None => {}
            Some(b'\n') => self.newline_at(self.pos),
            Some(b'#') if self.pos > start => {
                match self.b[self.pos..].iter().position(|&b| b == b'\n') {
                    Some(n) => self.newline_at(self.pos + n),
                    None => self.pos = self.b.len(),
                }
            }
            _ => return None,
        }
        self.skip_to_content()
    }

    /// A `- ` (or `-` at the end of the line) block sequence entry at the cursor.
    fn at_entry_dash(&self) -> bool {
        self.peek() == Some(b'-') && matches!(self.peek_at(1), None | Some(b' ' | b'\n'))
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A node starting at the cursor, at the start of its own line (indentation `indent`)
    /// or after `- `.
    fn block_node(&mut self, indent: usize) -> Option<Node<'a>> {
        if self.at_entry_dash() {
            self.block_seq(indent, false)
        } else {
            self.compact_node(indent)
        }
    }

    /// A block mapping when the scalar at the cursor is a key, else a scalar or flow
    /// collection alone on the rest of its line. `indent` is the cursor's column.
    fn compact_node(&mut self, indent: usize) -> Option<Node<'a>> {
        if matches!(self.peek(), Some(b'[' | b'{')) {
            let node = self.flow()?;
            self.end_line()?;
            return Some(node);
        }
        let start = self.pos;
        let scalar = self.scalar(false)?;
        if self.colon_follows(start) {
            return self.block_map(indent, scalar);
        }
        self.end_line()?;
        Some(scalar)
    }

    /// After a key that started at `start`: consume `:` when it is a value indicator.
    fn colon_follows(&mut self, start: usize) -> bool {
        let at = self.pos
            + self.b[self.pos..]
                .iter()
                .take_while(|&&b| b == b' ')
                .count();
        let is_value = self.b.get(at) == Some(&b':')
            && matches!(self.b.get(at + 1), None | Some(b' ' | b'\n'))
            && at - start <= MAX_KEY_BYTES;
        if is_value {
            self.pos = at + 1;
        }
        is_value
    }

    /// A block mapping at column `indent` whose first key has been read (with its `:`).
    fn block_map(&mut self, indent: usize, first_key: Node<'a>) -> Option<Node<'a>> {
        self.enter()?;
        let (line, col) = (first_key.line, first_key.col);
        let base = self.entries.len();
        let mut key = first_key;
        loop {
            let value = self.block_value(indent)?;
            self.entries.push((key, value));
            match self.cur {
                Some(n) if n == indent && !self.at_entry_dash() => {}
                Some(n) if n >= indent => return None,
                _ => break,
            }
            let start = self.pos;
            key = self.scalar(false)?;
            if !self.colon_follows(start) {
                return None;
            }
        }
        self.depth -= 1;
        let node = Node {
            line,
            col,
            kind: Kind::Map(self.entries.drain(base..).collect()),
        };
        check_keys(&node).ok()?;
        Some(node)
    }

    /// The value after a block mapping key's `:` (the cursor is just after it); granit
    /// puts an empty value at the `:`.
    fn block_value(&mut self, indent: usize) -> Option<Node<'a>> {
        let colon = (self.line, self.here().1 - 1);
        if !self.at_line_end() {
            self.spaces();
            if self.at_entry_dash() {
                return None;
            }
            let node = self.inline_node()?;
            self.end_line()?;
            return Some(node);
        }
        self.end_line()?;
        match self.cur {
            Some(n) if n > indent => self.block_node(n),
            // A sequence may sit at its key's indentation.
            Some(n) if n == indent && self.at_entry_dash() => self.block_seq(n, true),
            _ => Some(empty(colon)),
        }
    }

    /// A block sequence at column `indent`; the cursor is on its first `-`. granit puts
    /// a sequence at its first `-`, but one at its key's indentation (`key:\n- x`) where
    /// its first entry starts (see [`Self::entry`]).
    fn block_seq(&mut self, indent: usize, at_key_indent: bool) -> Option<Node<'a>> {
        self.enter()?;
        let dash = self.here();
        let mut start = None;
        let base = self.items.len();
        loop {
            let entry = self.entry();
            start.get_or_insert(if at_key_indent { entry } else { dash });
            if matches!(self.peek(), None | Some(b'\n')) {
                self.end_line()?;
                let item = match self.cur {
                    Some(n) if n > indent => self.block_node(n)?,
                    _ => empty(entry),
                };
                self.items.push(item);
            } else {
                // `- - x` is left to granit.
                if self.at_entry_dash() {
                    return None;
                }
                let item = self.compact_node(self.pos - self.line_start)?;
                self.items.push(item);
            }
            match self.cur {
                Some(n) if n == indent && self.at_entry_dash() => {}
                Some(n) if n > indent => return None,
                _ => break,
            }
        }
        self.depth -= 1;
        let (line, col) = start?;
        Some(Node {
            line,
            col,
            kind: Kind::Seq(self.items.drain(base..).collect()),
        })
    }

    /// Past a `-` entry indicator and the spaces after it, and past a comment to the end
    /// of the line; returns that position, which is where granit puts an empty entry.
    fn entry(&mut self) -> (u32, u32) {
        self.pos += 1;
        self.spaces();
        if self.peek() == Some(b'#') {
            self.pos += self.b[self.pos..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(self.b.len() - self.pos);
        }
        self.here()
    }

    /// A scalar or flow collection on the rest of the line (block context).
    fn inline_node(&mut self) -> Option<Node<'a>> {
        match self.peek() {
            Some(b'[' | b'{') => self.flow(),
            _ => self.scalar(false),
        }
    }

    /// A single-line flow collection at the cursor (`[` or `{`).
    fn flow(&mut self) -> Option<Node<'a>> {
        self.enter()?;
        let (line, col) = self.here();
        let open = self.peek()?;
        self.pos += 1;
        self.spaces();
        let kind = if open == b'[' {
            let base = self.items.len();
            if self.peek() == Some(b']') {
                self.pos += 1;
            } else {
                loop {
                    let item = self.flow_item()?;
                    self.items.push(item);
                    if self.flow_separator(b']')? {
                        break;
                    }
                }
            }
            Kind::Seq(self.items.drain(base..).collect())
        } else {
            let base = self.entries.len();
            if self.peek() == Some(b'}') {
                self.pos += 1;
            } else {
                loop {
                    let start = self.pos;
                    let key = self.scalar(true)?;
                    // After a quoted ("JSON-like") key the value may follow the `:`
                    // directly: `{"a":1}`.
                    let json_like = matches!(key.kind, Kind::Scalar { plain: false, .. });
                    self.spaces();
                    if self.peek() != Some(b':')
                        || !(json_like || self.peek_at(1) == Some(b' '))
                        || self.pos - start > MAX_KEY_BYTES
                    {
                        return None;
                    }
                    self.pos += 1;
                    self.spaces();
                    let value = self.flow_item()?;
                    self.entries.push((key, value));
                    if self.flow_separator(b'}')? {
                        break;
                    }
                }
            }
            Kind::Map(self.entries.drain(base..).collect())
        };
        self.depth -= 1;
        let node = Node { line, col, kind };
        check_keys(&node).ok()?;
        Some(node)
    }

    /// After a flow entry: `,` and the next entry (`false`), or the closing bracket (`true`).
    fn flow_separator(&mut self, close: u8) -> Option<bool> {
        self.spaces();
        match self.peek()? {
            b',' => {
                self.pos += 1;
                self.spaces();
                // A trailing comma is left to granit.
                (self.peek()? != close).then_some(false)
            }
            b if b == close => {
                self.pos += 1;
                Some(true)
            }
            _ => None,
        }
    }

    fn flow_item(&mut self) -> Option<Node<'a>> {
        match self.peek()? {
            b'[' | b'{' => self.flow(),
            _ => self.scalar(true),
        }
    }

    /// A single-line scalar at the cursor; the cursor ends just after its content.
    fn scalar(&mut self, flow: bool) -> Option<Node<'a>> {
        let (line, col) = self.here();
        let (text, plain) = match self.peek()? {
            b'\'' => (self.single_quoted()?, false),
            b'"' => (self.double_quoted()?, false),
            _ => (Cow::Borrowed(self.plain(flow)?), true),
        };
        Some(Node {
            line,
            col,
            kind: Kind::Scalar { text, plain },
        })
    }

    /// A plain scalar: it ends at `: `, ` #`, the end of the line, and in flow context at
    /// a flow indicator or a `:` before one. Text that cannot start a plain scalar, or
    /// that starts one only in some contexts (`?`, `:`), is declined.
    fn plain(&mut self, flow: bool) -> Option<&'a str> {
        let first = self.peek()?;
        if b"[]{},#&*!|>'\"%@`?: \n".contains(&first) {
            return None;
        }
        if first == b'-' && matches!(self.peek_at(1), None | Some(b' ' | b'\n')) {
            return None;
        }
        if first == b'-' && flow && self.peek_at(1).is_some_and(is_flow) {
            return None;
        }
        let start = self.pos;
        let mut end = start + 1;
        let mut i = end;
        while let Some(&b) = self.b.get(i) {
            match b {
                b'\n' => break,
                b' ' => {
                    let next = i + self.b[i..].iter().take_while(|&&b| b == b' ').count();
                    if matches!(self.b.get(next), None | Some(b'\n' | b'#')) {
                        break;
                    }
                    i = next;
                }
                b':' => {
                    if match self.b.get(i + 1) {
                        None | Some(b' ' | b'\n') => true,
                        Some(&n) => flow && is_flow(n),
                    } {
                        break;
                    }
                    i += 1;
                    end = i;
                }
                b if flow && is_flow(b) => break,
                _ => {
                    i += 1;
                    end = i;
                }
            }
        }
        self.pos = end;
        Some(&self.text[start..end])
    }

    /// `'...'` on one line, `''` standing for `'`.
    fn single_quoted(&mut self) -> Option<Cow<'a, str>> {
        let mut owned: Option<String> = None;
        let mut segment = self.pos + 1;
        let mut i = segment;
        loop {
            match *self.b.get(i)? {
                b'\n' => return None,
                b'\'' if self.b.get(i + 1) == Some(&b'\'') => {
                    owned
                        .get_or_insert_with(String::new)
                        .push_str(&self.text[segment..=i]);
                    i += 2;
                    segment = i;
                }
                b'\'' => break,
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        Some(joined(owned, &self.text[segment..i]))
    }

    /// `"..."` on one line with the common escapes; others are left to granit.
    fn double_quoted(&mut self) -> Option<Cow<'a, str>> {
        let mut owned: Option<String> = None;
        let mut segment = self.pos + 1;
        let mut i = segment;
        loop {
            match *self.b.get(i)? {
                b'\n' => return None,
                b'"' => break,
                b'\\' => {
                    let text = owned.get_or_insert_with(String::new);
                    text.push_str(&self.text[segment..i]);
                    let (c, len) = escape(&self.b[i + 1..])?;
                    text.push(c);
                    i += 1 + len;
                    segment = i;
                }
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        Some(joined(owned, &self.text[segment..i]))
    }
}

/// A quoted scalar's text: the source slice itself when nothing was unescaped, else the
/// unescaped text so far with the last segment appended.
fn joined<'a>(owned: Option<String>, last: &'a str) -> Cow<'a, str> {
    match owned {
        None => Cow::Borrowed(last),
        Some(mut text) => {
            text.push_str(last);
            Cow::Owned(text)
        }
    }
}

/// The character a double-quoted escape (after its `\`) stands for, and the escape's
/// length.
fn escape(after: &[u8]) -> Option<(char, usize)> {
    let hex = |digits: usize| -> Option<u32> {
        let digits = after.get(1..=digits)?;
        digits.iter().try_fold(0u32, |value, &d| {
            Some(value * 16 + (d as char).to_digit(16)?)
        })
    };
    Some(match *after.first()? {
        b'0' => ('\0', 1),
        b'a' => ('\x07', 1),
        b'b' => ('\x08', 1),
        b't' => ('\t', 1),
        b'n' => ('\n', 1),
        b'v' => ('\x0b', 1),
        b'f' => ('\x0c', 1),
        b'r' => ('\r', 1),
        b'e' => ('\x1b', 1),
        b'"' => ('"', 1),
        b'/' => ('/', 1),
        b'\\' => ('\\', 1),
        b'x' => (char::from_u32(hex(2)?)?, 3),
        // Surrogates (pairs included) are left to granit.
        b'u' => (char::from_u32(hex(4)?)?, 5),
        _ => return None,
    })
}

/// The null that `granit-parser` emits for a missing value, at its position.
fn empty<'a>((line, col): (u32, u32)) -> Node<'a> {
    Node {
        line,
        col,
        kind: Kind::Scalar {
            text: Cow::Borrowed("~"),
            plain: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::parse_events;
    use super::*;

    /// Whether the scanner accepts `text`; when it does, its tree must be granit's.
    fn agrees(text: &str) -> bool {
        let Some(tree) = scan(text) else {
            return false;
        };
        match parse_events(text) {
            Ok(reference) => assert_eq!(
                format!("{tree:?}"),
                format!("{reference:?}"),
                "scanner and granit differ on {text:?}"
            ),
            Err(_) => panic!("scanner accepted what granit rejects: {text:?}"),
        }
        true
    }

    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }

    #[test]
    fn scanner_agrees_with_granit_on_repository_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["specs", "examples", "tests"] {
            yaml_files(&root.join(dir), &mut files);
        }
        files.sort();
        assert!(files.len() > 20, "found only {} files", files.len());
        let mut declined = Vec::new();
        for file in &files {
            // tests/invalid/bad-utf8.yaml is not text: the loader refuses it before parsing.
            let Ok(text) = String::from_utf8(std::fs::read(file).unwrap()) else {
                continue;
            };
            if !agrees(&text) {
                declined.push(file.strip_prefix(root).unwrap().display().to_string());
            }
        }
        errln!(
            "scanner declined {} of {} files: {declined:#?}",
            declined.len(),
            files.len()
        );
        // The scanner must carry the load.
        assert!(
            declined.len() * 10 <= files.len(),
            "scanner declined {} of {} files: {declined:#?}",
            declined.len(),
            files.len()
        );
    }

    /// The shape of the 10,000-step benchmark file (`BENCHMARKS.md`).
    #[test]
    fn scanner_accepts_the_benchmark_shape() {
        let mut text = String::from("scenario: bench\neras: [2026-07-28]\nsteps:\n");
        for i in 0..50 {
            text += &format!(
                "  - name: call {i}\n    request: {{ method: tools/call, params: {{ name: echo, \
                 arguments: {{ text: \"hi {i}\" }} }} }}\n    expect:\n      - {{ path: \
                 \"$.content[0].text\", equals: \"hi {i}\" }}\n"
            );
        }
        assert!(agrees(&text), "declined the benchmark shape");
    }

    #[test]
    fn positions_of_empty_nodes_and_sequences() {
        for text in [
            "a:\nb:   # c\nc: 1\n",
            "k:\n-\n- x\n",
            "k:\n-   # c\n- x\n",
            "k:\n-    y\n",
            "k:\n-\n  - z\n",
            "-    \n-  # c\n- \n   x\n",
            "k:\n -    \"q\"\n",
            "- a: 1\n  b:\n  c: 2\n",
            "k:\n-",
            "a: é\nb: [é, \"é\"]\nc:\n- é\n-\n",
            "{\"a\":1, 'b':[x], \"c\" :{\"d\":\"e\"}}\n",
        ] {
            assert!(agrees(text), "declined {text:?}");
        }
    }

    #[test]
    fn long_keys_and_deep_nesting() {
        let key = "k".repeat(MAX_KEY_BYTES);
        assert!(agrees(&format!("{key}: 1\n")));
        assert!(agrees(&format!("{{{key}: 1}}\n")));
        assert!(agrees(&format!("'{}': 1\n", "é".repeat(499))));
        assert!(scan(&format!("{key}k: 1\n")).is_none());
        assert!(scan(&format!("{{{key}k: 1}}\n")).is_none());
        // Long values are no keys: any length.
        let long = "x".repeat(3000);
        for text in [
            format!("a: {long}\n"),
            format!("a: \"{long}\"\n"),
            format!("- {long}\n- '{long}'\n"),
            format!("a: {{b: {long}, c: [{long}, \"{long}\"]}}\n"),
            format!("{long}\n"),
        ] {
            assert!(agrees(&text));
        }
        let deep = |n: usize| format!("{}a{}\n", "[".repeat(n), "]".repeat(n));
        assert!(agrees(&deep(MAX_DEPTH)));
        assert!(scan(&deep(MAX_DEPTH + 1)).is_none());
        let mut nested = String::new();
        for depth in 0..=MAX_DEPTH {
            nested += &format!("{}k:\n", " ".repeat(depth));
        }
        assert!(scan(&nested).is_none());
        nested.clear();
        for depth in 0..MAX_DEPTH {
            nested += &format!("{}k:\n", " ".repeat(depth));
        }
        assert!(agrees(&nested));
    }

    #[test]
    fn outside_the_subset_is_declined() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "? a\n: b\n",
            "a: |\n  x\n",
            "a: >\n  x\n",
            "a: b\n  c\n",
            "a: 'b\n  c'\n",
            "a: [b,\n  c]\n",
            "---\na: 1\n",
            "a: 1\n...\n",
            "%YAML 1.2\n---\na: 1\n",
            "\u{feff}a: 1\n",
            "a: 1\r\n",
            "a:\t1\n",
            "a: [b,]\n",
            "a: {b}\n",
            "a: {b:1}\n",
            "a: {b:[1]}\n",
            "a: [\"b\":1]\n",
            "\"a\":1\n",
            "a: \"\\U0001F600\"\n",
            "a: \"\\ud83d\\ude00\"\n",
            "- - x\n",
            "a: 1\na: 2\n",
            "",
            "# only a comment\n",
        ] {
            assert!(scan(text).is_none(), "accepted {text:?}");
        }
    }

    /// A small deterministic generator (splitmix64) of YAML-ish documents.
    struct Gen {
        state: u64,
        out: String,
        /// How often (in percent) a scalar comes from the tricky pools; per document.
        tricky: usize,
    }

    /// Everyday scalars, which keep many generated documents in the subset.
    const SAFE: &[&str] = &[
        "a",
        "b c",
        "x1",
        "tools/call",
        "echo",
        "1",
        "-2",
        "1.5",
        "true",
        "~",
        "é",
        "2026-07-28",
        "😀 x",
    ];

    const PLAIN: &[&str] = &[
        "a",
        "a\u{a0}b",
        "\u{a0}",
        "x\u{85}y",
        "a\u{2028}b",
        "\u{feff}",
        "a;b=c&d",
        "'a",
        "\"a",
        "b c",
        "a:b",
        "a #b",
        "a#b",
        "-1",
        "- x",
        ":x",
        "x:",
        "[a]",
        "{a}",
        "it's",
        "true",
        "~",
        "1.5",
        "a,b",
        "http://x/y?q=1",
        "-",
        "?x",
        "?",
        "a: b",
        "é",
        "ü x",
        "a  b",
        "#x",
        "&a",
        "*a",
        "!t",
        "|",
        ">",
        "%x",
        "@x",
        "`x",
        "a]",
        "a}",
        "a, b",
        "--",
        "---",
        "...",
        "a\"b",
        "x\\y",
        "1:2",
        "a :b",
        "a : b",
        "-a",
        "-[",
        "-,",
        "a:[b]",
        "a:,",
        "tools/call",
        "$.content[0].text",
        "2026-07-28",
        "x y z",
        "a\tb",
        "-é",
        "é:x",
    ];
    const KEYS: &[&str] = &[
        "a[0]", "k{x}", "k\u{a0}", "\"k\"", "name", "a", "b", "k1", "path", "a b", "x:y", "é",
        "-k", "k#1", "<<", "1", "-", "?k", "[k]", "k ", "a,b", "kk", "c", "d",
    ];
    const TEXT: &[&str] = &[
        "", "a", " ", "it's", "a b", "é", "\"", "'", "\\", "#", ": ", " # ", ",", "[", "}", "x\ty",
        "😀",
    ];
    const ESCAPES: &[&str] = &[
        "\\\"",
        "\\\\",
        "\\/",
        "\\n",
        "\\t",
        "\\r",
        "\\0",
        "\\b",
        "\\f",
        "\\e",
        "\\a",
        "\\v",
        "\\x41",
        "\\xe9",
        "\\u00e9",
        "\\u263A",
        "\\ud83d\\ude00",
        "\\U0001F600",
        "\\q",
        "\\x4",
        "\\N",
        "\\_",
        "\\ ",
        "\\x01",
    ];

    impl Gen {
        fn next(&mut self) -> u64 {
            self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }

        fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
            from[self.below(from.len())]
        }

        fn scalar(&mut self, keys: bool) {
            match self.below(10) {
                0..=5 => {
                    let plain = if !self.chance(self.tricky) {
                        self.pick(SAFE)
                    } else if keys {
                        self.pick(KEYS)
                    } else {
                        self.pick(PLAIN)
                    };
                    self.out.push_str(plain);
                }
                6 | 7 => {
                    self.out.push('\'');
                    for _ in 0..self.below(4) {
                        let text = if self.chance(self.tricky) {
                            self.pick(TEXT)
                        } else {
                            self.pick(SAFE)
                        };
                        let text = text.replace('\'', "''");
                        self.out.push_str(&text);
                    }
                    if self.chance(3) {
                        self.out.push('\'');
                    }
                    self.out.push('\'');
                }
                _ => {
                    self.out.push('"');
                    for _ in 0..self.below(4) {
                        if !self.chance(self.tricky) {
                            let text = self.pick(SAFE);
                            self.out.push_str(text);
                        } else if self.chance(50) {
                            let text = self.pick(TEXT).replace(['"', '\\'], "");
                            self.out.push_str(&text);
                        } else {
                            let escape = self.pick(ESCAPES);
                            self.out.push_str(escape);
                        }
                    }
                    self.out.push('"');
                }
            }
        }

        fn spaces(&mut self, max: usize) {
            for _ in 0..self.below(max + 1) {
                self.out.push(' ');
            }
        }

        fn flow(&mut self, depth: usize) {
            let seq = self.chance(50);
            self.out.push(if seq { '[' } else { '{' });
            self.spaces(1);
            let n = self.below(4);
            for i in 0..n {
                if i > 0 {
                    self.spaces(1);
                    self.out.push(',');
                    self.spaces(2);
                }
                if !seq {
                    self.scalar(true);
                    self.spaces(1);
                    self.out.push(':');
                    if self.chance(95) {
                        self.out.push(' ');
                    }
                    self.spaces(1);
                }
                self.flow_node(depth);
            }
            if n > 0 && self.chance(3) {
                self.out.push(',');
            }
            self.spaces(1);
            self.out.push(if seq { ']' } else { '}' });
        }

        fn flow_node(&mut self, depth: usize) {
            if depth < 3 && self.chance(25) {
                self.flow(depth + 1);
            } else {
                self.scalar(false);
            }
        }

        /// The end of a line after content: trailing spaces, a comment, blank and comment
        /// lines.
        fn eol(&mut self) {
            match self.below(8) {
                0 => self.spaces(3),
                1 => {
                    self.spaces(2);
                    self.out.push_str(" # c: é");
                }
                2 => self.out.push_str("#x"),
                _ => {}
            }
            self.out.push('\n');
            match self.below(12) {
                0 => self.out.push('\n'),
                1 => {
                    self.spaces(6);
                    self.out.push_str("# comment\n");
                }
                2 => self.out.push_str("   \n"),
                _ => {}
            }
        }

        fn indent(&mut self, n: usize) {
            self.out.extend(std::iter::repeat_n(' ', n));
        }

        /// A block value after `key:` or `-` (the cursor is right after the indicator).
        fn block_value(&mut self, indent: usize, depth: usize, in_map: bool) {
            let choice = if depth >= 4 {
                self.below(3)
            } else {
                self.below(7)
            };
            match choice {
                0 => {
                    // Empty.
                    self.eol();
                }
                1 => {
                    self.out.push(' ');
                    self.spaces(1);
                    self.scalar(false);
                    self.eol();
                }
                2 => {
                    self.out.push(' ');
                    self.flow(0);
                    self.eol();
                }
                3 => {
                    self.eol();
                    let inner = indent + 1 + self.below(3);
                    self.map(inner, depth + 1);
                }
                4 => {
                    self.eol();
                    // At the key's indentation or deeper.
                    let inner = if in_map && self.chance(50) {
                        indent
                    } else {
                        indent + 1 + self.below(3)
                    };
                    self.seq(inner, depth + 1);
                }
                5 if !in_map => {
                    // A compact mapping.
                    self.out.push(' ');
                    let extra = self.below(2);
                    self.spaces(extra);
                    self.map_entries(indent + 2 + extra, depth + 1, true);
                }
                _ => {
                    self.eol();
                    let inner = indent + 1 + self.below(3);
                    self.indent(inner);
                    if self.chance(50) {
                        self.scalar(false);
                    } else {
                        self.flow(0);
                    }
                    self.eol();
                }
            }
        }

        fn map(&mut self, indent: usize, depth: usize) {
            self.indent(indent);
            self.map_entries(indent, depth, false);
        }

        /// Entries of a block mapping at `indent`; the first key's indentation is written.
        fn map_entries(&mut self, indent: usize, depth: usize, _compact: bool) {
            for i in 0..1 + self.below(4) {
                if i > 0 {
                    // Occasionally mis-indent.
                    let indent = match self.below(40) {
                        0 => indent + 1,
                        1 => indent.saturating_sub(1),
                        _ => indent,
                    };
                    self.indent(indent);
                }
                self.scalar(true);
                self.spaces(1);
                self.out.push(':');
                self.block_value(indent, depth, true);
            }
        }

        fn seq(&mut self, indent: usize, depth: usize) {
            for _ in 0..1 + self.below(4) {
                self.indent(indent);
                self.out.push('-');
                self.block_value(indent, depth, false);
            }
        }

        fn document(&mut self) -> String {
            self.out.clear();
            self.tricky = [0, 2, 5, 20, 50][self.below(5)];
            if self.chance(10) {
                self.out.push_str("# leading comment\n\n");
            }
            let indent = if self.chance(10) {
                1 + self.below(2)
            } else {
                0
            };
            match self.below(10) {
                0 => {
                    self.indent(indent);
                    self.flow(0);
                    self.eol();
                }
                1 => {
                    self.indent(indent);
                    self.scalar(false);
                    self.eol();
                }
                2..=4 => self.seq(indent, 0),
                _ => self.map(indent, 0),
            }
            if self.chance(10) {
                self.out.pop();
            }
            self.out.clone()
        }

        /// A random small edit of `text`.
        fn mutate(&mut self, text: &str) -> String {
            if self.chance(20) {
                // Indent or dedent one line by a column.
                let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
                let line = self.below(lines.len());
                if lines[line].starts_with(' ') && self.chance(50) {
                    lines[line].remove(0);
                } else {
                    lines[line].insert(0, ' ');
                }
                return lines.join("\n");
            }
            let mut chars: Vec<char> = text.chars().collect();
            let at = self.below(chars.len() + 1);
            match self.below(3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 if at < chars.len() => {
                    let other = self.below(chars.len());
                    chars.swap(at, other);
                }
                _ => {
                    const INSERT: &[char] = &[
                        ' ', '-', ':', '#', '\t', '\r', '\'', '"', '[', ']', '{', '}', ',', '\n',
                        '&', '*', '!', '|', '>', '?', 'x', 'é', '\\', '%', '@',
                    ];
                    chars.insert(at, INSERT[self.below(INSERT.len())]);
                }
            }
            chars.into_iter().collect()
        }
    }

    /// Thousands of generated documents (and small edits of them): whenever the scanner
    /// accepts one, its tree is granit's.
    #[test]
    fn scanner_agrees_with_granit_on_generated_documents() {
        let mut generator = Gen {
            state: 0x5EED,
            out: String::new(),
            tricky: 0,
        };
        let (mut documents, mut accepted, mut mutants, mut mutants_accepted) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let text = generator.document();
            documents += 1;
            accepted += usize::from(agrees(&text));
            for _ in 0..2 {
                let mutant = generator.mutate(&text);
                mutants += 1;
                mutants_accepted += usize::from(agrees(&mutant));
            }
        }
        errln!(
            "accepted {accepted} of {documents} documents and {mutants_accepted} of {mutants} \
             mutants"
        );
        // The generator must exercise the scanner, not just its declines.
        assert!(accepted * 4 >= documents, "accepted only {accepted}");
        assert!(
            mutants_accepted * 10 >= mutants,
            "accepted only {mutants_accepted}"
        );
    }
}
