//! An error of reading YAML: a message and, when known, where (line and column, 1-based).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The text, as serde or the reader wrote it (what `Display` shows).
    pub message: String,
    /// What went wrong, for the messages people read (`read.rs`): known without parsing
    /// [`Error::message`] back.
    pub kind: ErrorKind,
    /// 0 when the position is not known.
    pub line: u32,
    pub col: u32,
}

/// The mistakes a reader of a typed document is told about in its own words.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorKind {
    /// A key the type does not have.
    UnknownField {
        field: String,
        expected: &'static [&'static str],
    },
    /// A value none of the enum's names.
    UnknownVariant {
        variant: String,
        expected: &'static [&'static str],
    },
    /// A required key absent.
    MissingField(&'static str),
    /// A value of the wrong shape: serde's words for what was found and what was wanted.
    InvalidType { found: String, expected: String },
    /// A key twice in one mapping.
    DuplicateKey(String),
    /// Anything else: the message says it all.
    Other,
}

impl Error {
    pub fn at(message: impl Into<String>, line: u32, col: u32) -> Self {
        Error {
            message: message.into(),
            kind: ErrorKind::Other,
            line,
            col,
        }
    }

    /// An error of `kind`, its message as serde would write it.
    fn of(kind: ErrorKind, message: String) -> Self {
        Error {
            kind,
            ..Error::at(message, 0, 0)
        }
    }

    pub(super) fn duplicate_key(key: &str, line: u32, col: u32) -> Self {
        Error {
            kind: ErrorKind::DuplicateKey(key.to_string()),
            ..Error::at(format!("duplicate mapping key: {key}"), line, col)
        }
    }

    /// Where the error is, when known.
    pub fn location(&self) -> Option<(u32, u32)> {
        (self.line > 0).then_some((self.line, self.col))
    }

    /// The error, placed at `line:col` unless a node inside placed it already (the
    /// innermost node a mistake is found in is where it is).
    pub(super) fn or_at(mut self, line: u32, col: u32) -> Self {
        if self.line == 0 {
            self.line = line;
            self.col = col;
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location() {
            Some((line, col)) => write!(f, "{} at line {line}, column {col}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// serde's own text for each (its default methods call `custom` with these words), kept as
/// the message; the kind says the same for the code that explains it.
impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error::at(message.to_string(), 0, 0)
    }

    fn invalid_type(found: serde::de::Unexpected, expected: &dyn serde::de::Expected) -> Self {
        Error::of(
            ErrorKind::InvalidType {
                found: found.to_string(),
                expected: expected.to_string(),
            },
            format!("invalid type: {found}, expected {expected}"),
        )
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let message = serde::de::value::Error::unknown_variant(variant, expected).to_string();
        Error::of(
            ErrorKind::UnknownVariant {
                variant: variant.to_string(),
                expected,
            },
            message,
        )
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let message = serde::de::value::Error::unknown_field(field, expected).to_string();
        Error::of(
            ErrorKind::UnknownField {
                field: field.to_string(),
                expected,
            },
            message,
        )
    }

    fn missing_field(field: &'static str) -> Self {
        Error::of(
            ErrorKind::MissingField(field),
            format!("missing field `{field}`"),
        )
    }
}
