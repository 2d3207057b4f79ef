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
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Self> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
        })
    }

    /// Byte offset of a 1-based line/column (column counted in characters).
    pub fn offset(&self, line: u32, col: u32) -> usize {
        let mut offset = 0;
        for (index, text_line) in self.text.split_inclusive('\n').enumerate() {
            if index + 1 == line as usize {
                let chars = col.saturating_sub(1) as usize;
                let within: usize = text_line
                    .char_indices()
                    .nth(chars)
                    .map(|(i, _)| i)
                    .unwrap_or(text_line.trim_end_matches('\n').len());
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
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let token = &rest[..line_end];
        if let Some(quote) = token.chars().next().filter(|c| *c == '"' || *c == '\'')
            && let Some(end) = token[1..].find(quote)
        {
            return start..start + end + 2;
        }
        let len = token
            .find([':', ',', '}', ']'])
            .filter(|&i| i > 0)
            .unwrap_or(token.trim_end().len())
            .max(1)
            .min(line_end.max(1));
        start..(start + len).min(self.text.len())
    }
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

    pub fn file_name(&self) -> &str {
        &self.file.name
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
        write!(f, "{}:{}:{}", self.file.name, self.line, self.col)
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
        st.serialize_field("file", &self.file.name)?;
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
    let path = pos.file.name.clone();
    let snippet = Snippet::source(pos.file.text.as_str())
        .path(path)
        .fold(true)
        .annotation(AnnotationKind::Primary.span(range).label(label));
    let mut group = level.primary_title(title).element(snippet);
    if let Some(help) = help {
        group = group.element(Level::HELP.message(help));
    }
    for note in notes {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    let rendered = Renderer::plain().render(&[group]);
    // annotate-snippets prints `path:line:col` from the span; keep one trailing newline.
    rendered.trim_end().to_string()
}
