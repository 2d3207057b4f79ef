//! Source files and positions: every loaded DSL node can point back to `file:line:col`,
//! and every diagnostic (load error, assertion failure) is rendered from here, the same
//! way for the console, JUnit bodies and JSON.

use std::fmt;
use std::sync::Arc;

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use serde::Serialize;

/// A loaded text file, shared by every node that points into it.
#[derive(Debug)]
pub struct SourceFile {
    /// Path as the user named it (or `builtin:NAME` for embedded packs).
    pub name: String,
    pub text: String,
    /// How reports name the file when its path is not the reader's (a remote pack's file
    /// in the cache folder: `platform@v1.2.0 packs/platform/pack.yaml`).
    pub shown: Option<String>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Self> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
            shown: None,
        })
    }

    /// The same file, shown in reports and diagnostics as `shown`.
    pub fn shown_as(self: &Arc<Self>, shown: String) -> Arc<Self> {
        Arc::new(SourceFile {
            name: self.name.clone(),
            text: self.text.clone(),
            shown: Some(shown),
        })
    }

    /// The file as reports and diagnostics name it.
    pub fn shown_name(&self) -> &str {
        self.shown.as_deref().unwrap_or(&self.name)
    }

    /// The lines of the text, as the YAML parser counts them (positions are its).
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        lines(&self.text)
    }

    /// Byte offset of a 1-based line/column (column counted in characters).
    pub fn offset(&self, line: u32, col: u32) -> usize {
        let mut offset = 0;
        for (index, text_line) in lines_with_breaks(&self.text).enumerate() {
            if index + 1 == line as usize {
                let chars = col.saturating_sub(1) as usize;
                let within: usize = text_line
                    .char_indices()
                    .nth(chars)
                    .map(|(i, _)| i)
                    .unwrap_or(text_line.trim_end_matches(['\n', '\r']).len());
                return offset + within;
            }
            offset += text_line.len();
        }
        self.text.len()
    }

    /// Byte range of the token starting at line/col: up to the end of the word or line.
    fn token_range(&self, line: u32, col: u32) -> std::ops::Range<usize> {
        let start = self.offset(line, col).min(self.text.len());
        let rest = &self.text[start..];
        let line_end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let token = &rest[..line_end];
        if let Some(quote) = token.chars().next().filter(|c| *c == '"' || *c == '\'')
            && let Some(end) = token[1..].find(quote)
        {
            return start..start + end + 2;
        }
        let len = token
            .find([':', ',', '}', ']'])
            .filter(|&i| i > 0)
            .unwrap_or(token.trim_end().len());
        // Nothing to underline (blank, or Unicode white space such as NEL or LS, which
        // YAML reads as content): the one character there, whatever its UTF-8 length; a
        // byte count would end inside it.
        let len = match len {
            0 => rest.chars().next().map_or(0, char::len_utf8),
            len => len,
        };
        start..start + len
    }
}

/// The lines of `text` with their line breaks, as YAML 1.2 counts them: LF, CRLF, and
/// a CR alone (NEL, LS and PS are content). Rust's `lines` takes a lone CR for content,
/// and errors on a file with CR line ends pointed at its first line.
fn lines_with_breaks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = match rest.find(['\n', '\r']) {
            Some(i) if rest[i..].starts_with("\r\n") => i + 2,
            Some(i) => i + 1,
            None => rest.len(),
        };
        let (line, after) = rest.split_at(end);
        rest = after;
        Some(line)
    })
}

/// The lines of `text` as YAML 1.2 counts them, without their line breaks.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    lines_with_breaks(text).map(|l| l.trim_end_matches('\n').trim_end_matches('\r'))
}

/// Largest input file mcpspec reads (scenario, pack, schema file, baseline, rules,
/// config, snapshot, report): far above any real one, low enough that a mistaken path
/// (a log, a disk image) fails at once instead of filling memory.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Why an input file could not be read.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// A FIFO, device, socket or folder: reading it could block forever or never end.
    NotAFile(&'static str),
    TooLarge(u64),
    /// Not UTF-8: the first bad byte, its 1-based line and column (in characters), and
    /// the text decoded lossily (for the snippet).
    NotUtf8 {
        byte: u8,
        line: u32,
        col: u32,
        text: String,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotAFile(kind) => {
                write!(
                    f,
                    "not a regular file (it is a {kind}); only regular files are read"
                )
            }
            ReadError::TooLarge(len) => write!(
                f,
                "file too large ({len} bytes; the limit is {} MiB)",
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
            ReadError::NotUtf8 {
                byte, line, col, ..
            } => write!(
                f,
                "not valid UTF-8 (byte 0x{byte:02X} at line {line}, column {col})"
            ),
        }
    }
}

/// The one way input files are read: only regular files (a FIFO would block, `/dev/zero`
/// never ends), at most [`MAX_INPUT_BYTES`], UTF-8 with the position of a bad byte.
pub fn read_text(path: &std::path::Path) -> Result<String, ReadError> {
    use std::io::Read;
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotAFile(file_kind(&kind)));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The cap holds even when the file grows between the check and the read.
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let bad = e.utf8_error().valid_up_to();
        let valid = &bytes[..bad];
        let valid = std::str::from_utf8(valid).expect("valid up to here");
        // The position as YAML counts lines (a CR alone ends one too).
        let last = lines_with_breaks(valid).last().unwrap_or("");
        let ended = last.ends_with(['\n', '\r']);
        let count = lines_with_breaks(valid).count().max(1) + usize::from(ended);
        let column = if ended { 0 } else { last.chars().count() };
        ReadError::NotUtf8 {
            byte: bytes[bad],
            line: u32::try_from(count).unwrap_or(u32::MAX),
            col: u32::try_from(column + 1).unwrap_or(u32::MAX),
            text: String::from_utf8_lossy(bytes).into_owned(),
        }
    })
}

/// What a non-regular file is, for the error (FIFOs, devices and sockets are told apart
/// where the platform can: [`crate::ground::platform::special_file_kind`]).
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "folder";
    }
    crate::ground::platform::special_file_kind(kind)
}

/// A position in a source file (1-based line and column).
#[derive(Clone)]
pub struct Pos {
    pub file: Arc<SourceFile>,
    pub line: u32,
    pub col: u32,
}

impl Pos {
    pub fn new(file: &Arc<SourceFile>, line: u32, col: u32) -> Self {
        Pos {
            file: file.clone(),
            line: line.max(1),
            col: col.max(1),
        }
    }

    /// The file's path (to read files beside it).
    pub fn file_name(&self) -> &str {
        &self.file.name
    }

    /// The file as reports and diagnostics name it (see [`SourceFile::shown`]).
    pub fn shown_file(&self) -> &str {
        self.file.shown_name()
    }

    /// Render a rustc-style snippet pointing at this position.
    pub fn snippet(&self, severity: Severity, title: &str, label: &str) -> String {
        render_snippet(self, severity, title, label, None, &[])
    }

    pub fn snippet_with_help(
        &self,
        severity: Severity,
        title: &str,
        label: &str,
        help: &str,
    ) -> String {
        render_snippet(self, severity, title, label, Some(help), &[])
    }

    /// A snippet with an optional help line and notes (e.g. where a group was called).
    pub fn snippet_with_notes(
        &self,
        severity: Severity,
        title: &str,
        label: &str,
        help: Option<&str>,
        notes: &[String],
    ) -> String {
        render_snippet(self, severity, title, label, help, notes)
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.shown_name(), self.line, self.col)
    }
}

impl fmt::Debug for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Pos {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Pos", 3)?;
        st.serialize_field("file", self.file.shown_name())?;
        st.serialize_field("line", &self.line)?;
        st.serialize_field("column", &self.col)?;
        st.end()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

fn render_snippet(
    pos: &Pos,
    severity: Severity,
    title: &str,
    label: &str,
    help: Option<&str>,
    notes: &[String],
) -> String {
    let range = pos.file.token_range(pos.line, pos.col);
    let level = match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    // Only the line pointed at is shown, with its secrets masked (`Authorization: "Bearer
    // …"` in a header map) before annotate-snippets cuts it to the terminal's width: a
    // secret cut first would match nothing. A lone CR is a line break to YAML, and the
    // renderer splits at LF only: it becomes an LF, byte for byte, so the line is the one
    // the position is on.
    let text = lone_crs_as_lfs(&pos.file.text);
    let text = text.as_ref();
    let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[range.start..]
        .find('\n')
        .map_or(text.len(), |i| range.start + i)
        .max(range.end);
    let line = &text[line_start..line_end];
    let (shown, span) = crate::ground::redact::known()
        .redact_keeping(line, range.start - line_start..range.end - line_start);
    let snippet = Snippet::source(shown.as_str())
        .line_start(pos.line as usize)
        .path(pos.file.shown_name().to_string())
        .fold(true)
        .annotation(AnnotationKind::Primary.span(span.clone()).label(label));
    let mut group = level.primary_title(title).element(snippet);
    if let Some(help) = help {
        group = group.element(Level::HELP.message(help));
    }
    for note in notes {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    let rendered = Renderer::plain().render(&[group]);
    // annotate-snippets prints `path:line:col` from the span; keep one trailing newline.
    let rendered = rendered.trim_end().to_string();
    // A mask before the span moves it: the column said is the file's.
    let column = |text: &str, at: usize| text[..at].chars().count() + 1;
    let (said, col) = (
        column(&shown, span.start),
        column(line, range.start - line_start),
    );
    if said == col {
        return rendered;
    }
    rendered.replacen(
        &format!(":{}:{said}\n", pos.line),
        &format!(":{}:{col}\n", pos.line),
        1,
    )
}

/// `text` with each CR not followed by an LF replaced by an LF (same length).
fn lone_crs_as_lfs(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
    if !(0..bytes.len()).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    let replaced: Vec<u8> = (0..bytes.len())
        .map(|i| if lone(i) { b'\n' } else { bytes[i] })
        .collect();
    std::borrow::Cow::Owned(String::from_utf8(replaced).expect("an ASCII byte for another"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position on a character YAML reads as content but Rust as white space (NEL, LS,
    /// PS), alone at the end of its line: the snippet underlines that character, not a
    /// byte inside it (a panic before, issue #40).
    #[test]
    fn a_snippet_underlines_whole_characters() {
        for separator in ['\u{85}', '\u{2028}', '\u{2029}'] {
            let file = SourceFile::new("s.yaml", format!("a: [b]{separator}"));
            let range = file.token_range(1, 7);
            assert_eq!(range, 6..6 + separator.len_utf8());
            let shown = Pos::new(&file, 1, 7).snippet(Severity::Error, "bad", "here");
            assert!(shown.contains("s.yaml:1:7"), "{shown}");
        }
    }

    #[test]
    fn read_text_points_at_the_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.yaml");
        // Column in characters: `é` and `→` are one column each.
        std::fs::write(&path, b"a: 1\nb: \xc3\xa9\xe2\x86\x92x\xff\xfe\nc: 2\n").unwrap();
        match read_text(&path) {
            Err(ReadError::NotUtf8 {
                byte,
                line,
                col,
                text,
            }) => {
                assert_eq!((byte, line, col), (0xff, 2, 7));
                assert!(text.starts_with("a: 1\nb: é→x\u{fffd}"), "{text}");
                assert!(text.ends_with("c: 2\n"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, "ok: é\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "ok: é\n");
    }

    /// A lone CR ends a line, as it does to the YAML parser: positions, offsets and
    /// snippets agree with it (issue #40: CR-only files showed line 1 for every error).
    #[test]
    fn lines_end_at_cr_lf_and_crlf() {
        let text = "a: 1\rb: 2\r\nc: 3\nd: \u{85}4\u{2028}\r";
        assert_eq!(
            lines(text).collect::<Vec<_>>(),
            ["a: 1", "b: 2", "c: 3", "d: \u{85}4\u{2028}"]
        );
        let file = SourceFile::new("s.yaml", text);
        assert_eq!(&file.text[file.offset(3, 1)..][..4], "c: 3");
        assert_eq!(&file.text[file.offset(2, 4)..][..1], "2");
        let shown = Pos::new(&file, 2, 4).snippet(Severity::Error, "bad", "here");
        assert!(shown.contains("2 | b: 2"), "{shown}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.yaml");
        std::fs::write(&path, b"a: 1\rb: x\xff\r").unwrap();
        match read_text(&path) {
            Err(ReadError::NotUtf8 { line, col, .. }) => assert_eq!((line, col), (2, 5)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn read_text_reads_only_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_text(dir.path()),
            Err(ReadError::NotAFile("folder"))
        ));
        #[cfg(unix)]
        assert!(matches!(
            read_text(std::path::Path::new("/dev/zero")),
            Err(ReadError::NotAFile("device"))
        ));
        assert!(matches!(
            read_text(&dir.path().join("missing")),
            Err(ReadError::Io(_))
        ));
        let big = dir.path().join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        assert!(matches!(read_text(&big), Err(ReadError::TooLarge(_))));
    }
}
